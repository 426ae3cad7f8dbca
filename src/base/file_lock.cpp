#include "base/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/units.hpp"

namespace preflight {

Expected<FileLock> FileLock::acquire(const std::string& path) {
  const std::string lock_path = path + ".lock";
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) return make_error(ErrorKind::environment, format("%s: cannot create its directory: %s", path.c_str(), ec.message().c_str()), path);
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) return make_error(ErrorKind::environment, format("%s: cannot open the lock file: %s", lock_path.c_str(), std::strerror(errno)), lock_path);
  while (::flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    ::close(fd);
    return make_error(ErrorKind::environment, format("%s: cannot lock: %s", lock_path.c_str(), std::strerror(err)), lock_path);
  }
  return FileLock(fd);
}

FileLock::~FileLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing the descriptor releases the lock
}

}  // namespace preflight
