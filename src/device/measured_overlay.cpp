#include "device/measured_overlay.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/file.hpp"
#include "base/json_writer.hpp"
#include "base/units.hpp"

namespace preflight::device {

namespace {

Json measurement_to_json(const BandwidthMeasurement& run) {
  return Json{{"median_bytes_per_s", run.median_bytes_per_s}, {"min_bytes_per_s", run.min_bytes_per_s}, {"max_bytes_per_s", run.max_bytes_per_s},
              {"repeats", run.repeats}, {"warmup", run.warmup}, {"buffer_bytes", run.buffer_bytes}, {"device_index", run.device_index},
              {"date", run.date}, {"tool", run.tool}, {"method", run.method}};
}

// An exclusive flock on "<path>.lock", held for the whole read-merge-write. flock locks belong to
// the open file description, so two processes (or two threads with their own descriptors) saving
// at once take turns and each merges into what the other wrote. The lock file is never removed:
// removing it would let a third saver lock a new inode while the second still holds the old one.
class OverlayLock {
 public:
  ~OverlayLock() {
    if (m_fd >= 0) ::close(m_fd);  // closing the descriptor releases the lock
  }
  OverlayLock(const OverlayLock&) = delete;
  OverlayLock& operator=(const OverlayLock&) = delete;
  OverlayLock(OverlayLock&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
  OverlayLock& operator=(OverlayLock&&) = delete;

  static Expected<OverlayLock> acquire(const std::string& path) {
    const std::string lock_path = path + ".lock";
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return make_error(ErrorKind::io, format("cannot create directory %s: %s", parent.c_str(), ec.message().c_str()), path);
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return make_error(ErrorKind::io, format("cannot open the lock file: %s", std::strerror(errno)), lock_path);
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return make_error(ErrorKind::io, format("cannot lock: %s", std::strerror(err)), lock_path);
    }
    return OverlayLock(fd);
  }

 private:
  explicit OverlayLock(int fd) : m_fd(fd) {}
  int m_fd = -1;
};

}  // namespace

Expected<std::string> save_measured_copy_bandwidth(const std::string& path, const DeviceCatalog& catalog, const std::string& device_name,
                                                   const BandwidthMeasurement& run) {
  PF_TRY(device, find_device(catalog, device_name));
  PF_TRY(lock, OverlayLock::acquire(path));
  (void)lock;
  Json root = Json{{"schema_version", 1}, {"devices", Json::array()}};
  if (path_exists(path)) {
    PF_TRY(existing, load_json_file(path));
    // Refuse to replace a file we could not read back: the user's other entries would be lost.
    DeviceCatalog probe = catalog;
    PF_TRY(valid, apply_device_overlay(probe, existing, path));
    (void)valid;
    root = std::move(existing);
  }
  Json& list = root["devices"];
  Json* entry = nullptr;
  for (auto& item : list) {
    const DeviceSpec* named = catalog.find(item.value("id", ""));
    if (named && named->id == device.id) {
      entry = &item;
      break;
    }
  }
  if (!entry) {
    list.push_back(Json{{"id", device.id}, {"source", format("preflight bw --save, %s", run.date.c_str())}});
    entry = &list.back();
  }
  (*entry)["measured_copy_bandwidth_bytes_per_s"] = run.median_bytes_per_s;
  (*entry)["measured_copy_bandwidth"] = measurement_to_json(run);

  DeviceCatalog check = catalog;
  PF_TRY(merged_ok, apply_device_overlay(check, root, path));
  (void)merged_ok;
  PF_TRY(written, write_text_file_atomically(path, dump_json(root, 2) + "\n"));
  (void)written;
  return device.id;
}

}  // namespace preflight::device
