#include "hub/metadata_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "base/file.hpp"
#include "base/units.hpp"

namespace preflight::hub {

namespace fs = std::filesystem;

namespace {
constexpr const char* k_manifest = "manifest.json";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

Status write_whole_file(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(ErrorKind::environment, format("%s: cannot create: %s", path.c_str(), std::strerror(errno)), path);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return make_error(ErrorKind::environment, format("%s: cannot write: %s", path.c_str(), std::strerror(err)), path);
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return make_error(ErrorKind::environment, format("%s: cannot write: %s", path.c_str(), std::strerror(errno)), path);
  return Ok{};
}
}  // namespace

std::string metadata_cache_root(const std::string& override_root) {
  if (!override_root.empty()) return override_root;
  std::string base = env("XDG_CACHE_HOME");
  if (base.empty()) base = join_path(env("HOME").empty() ? "/root" : env("HOME"), ".cache");
  return join_path(base, "preflight/hub");
}

std::string metadata_entry_dir(const std::string& root, const std::string& endpoint, const HubRef& ref) {
  std::string leaf = ref.revision;
  if (!ref.gguf_file.empty()) {
    leaf += "@";
    for (char c : ref.gguf_file) leaf += (c == '/') ? std::string("--") : std::string(1, c);
  }
  return join_path(join_path(join_path(root, endpoint_host(endpoint)), ref.repo), leaf);
}

bool metadata_entry_complete(const std::string& dir) { return path_exists(join_path(dir, k_manifest)); }

EntryStaging::EntryStaging(std::string entry_dir, std::string temp_dir, std::vector<std::string> created_dirs)
    : m_entry_dir(std::move(entry_dir)), m_temp_dir(std::move(temp_dir)), m_created_dirs(std::move(created_dirs)) {}

EntryStaging::EntryStaging(EntryStaging&& other) noexcept
    : m_entry_dir(std::move(other.m_entry_dir)), m_temp_dir(std::move(other.m_temp_dir)), m_created_dirs(std::move(other.m_created_dirs)),
      m_committed(other.m_committed) {
  other.m_committed = true;  // the moved-from object owns nothing to clean up
}

Expected<EntryStaging> EntryStaging::begin(const std::string& entry_dir) {
  std::error_code ec;
  const fs::path parent = fs::path(entry_dir).parent_path();
  // The folders this entry adds to the cache (the root, the endpoint's, the repo's), deepest first:
  // a failed fetch removes them again, so it leaves no empty folder behind (issue 19).
  std::vector<std::string> created;
  for (fs::path p = parent; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) {
    created.push_back(p.string());
    if (p == p.parent_path()) break;
  }
  std::random_device rd;
  const std::string temp = entry_dir + format(".tmp-%d-%08x", static_cast<int>(::getpid()), static_cast<unsigned>(rd()));
  // A second try when another process's failed fetch removed an empty parent between the two calls.
  for (int attempt = 0; attempt < 2; ++attempt) {
    fs::create_directories(parent, ec);
    if (ec) {
      for (const auto& d : created) ::rmdir(d.c_str());  // what create_directories made before it failed
      return make_error(ErrorKind::environment, format("%s: cannot create the metadata cache directory: %s", parent.c_str(), ec.message().c_str()), parent.string());
    }
    fs::create_directory(temp, ec);
    if (ec != std::errc::no_such_file_or_directory) break;
  }
  if (ec) {
    for (const auto& d : created) ::rmdir(d.c_str());
    return make_error(ErrorKind::environment, format("%s: cannot create a staging directory: %s", temp.c_str(), ec.message().c_str()), temp);
  }
  return EntryStaging(entry_dir, temp, std::move(created));
}

EntryStaging::~EntryStaging() {
  if (m_committed) return;
  std::error_code ec;
  fs::remove_all(m_temp_dir, ec);
  // rmdir removes only an empty folder: one another process has since put an entry in stays.
  for (const auto& d : m_created_dirs) {
    if (::rmdir(d.c_str()) != 0) break;
  }
}

Status EntryStaging::write_file(const std::string& name, const std::string& bytes) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return make_error(ErrorKind::invalid_argument, format("file name '%s' cannot be stored in the metadata cache", name.c_str()), name);
  }
  return write_whole_file(join_path(m_temp_dir, name), bytes);
}

Status EntryStaging::commit(const std::string& manifest_json) {
  PF_TRY(written, write_whole_file(join_path(m_temp_dir, k_manifest), manifest_json));
  (void)written;
  std::error_code ec;
  std::string old;
  if (fs::exists(m_entry_dir, ec)) {
    std::random_device rd;
    old = m_entry_dir + format(".old-%d-%08x", static_cast<int>(::getpid()), static_cast<unsigned>(rd()));
    fs::rename(m_entry_dir, old, ec);
    if (ec) return make_error(ErrorKind::environment, format("%s: cannot replace the cached entry: %s", m_entry_dir.c_str(), ec.message().c_str()), m_entry_dir);
  }
  fs::rename(m_temp_dir, m_entry_dir, ec);
  if (ec) {
    // Another process committed the same entry first: keep theirs, drop ours.
    if (metadata_entry_complete(m_entry_dir)) return Ok{};
    return make_error(ErrorKind::environment, format("%s: cannot commit the cached entry: %s", m_entry_dir.c_str(), ec.message().c_str()), m_entry_dir);
  }
  m_committed = true;
  if (!old.empty()) fs::remove_all(old, ec);
  return Ok{};
}

}  // namespace preflight::hub
