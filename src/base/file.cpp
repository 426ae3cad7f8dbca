#include "base/file.hpp"
#include "base/file_mode.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/checked.hpp"
#include "base/units.hpp"

namespace preflight {

Expected<std::string> read_text_file(const std::string& path, uint64_t max_bytes) {
  PF_TRY(reader, FileReader::open(path));
  if (reader.size_bytes() > max_bytes) {
    return make_error(ErrorKind::invalid_argument,
                      format("file is %llu bytes, more than the %llu accepted for a text file",
                             static_cast<unsigned long long>(reader.size_bytes()),
                             static_cast<unsigned long long>(max_bytes)),
                      path);
  }
  PF_TRY(bytes, reader.read_at(0, reader.size_bytes()));
  return std::string(bytes.begin(), bytes.end());
}

const char* file_type_name(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
  }
}

Expected<FileReader> FileReader::open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading blocks until a writer appears, which may be never.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP) return make_error(ErrorKind::io, format("%s: symbolic link loop (ELOOP)", path.c_str()), path);
    return make_error(err == ENOENT ? ErrorKind::not_found : ErrorKind::io, format("cannot open: %s", std::strerror(err)), path);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return make_error(ErrorKind::io, format("cannot stat: %s", std::strerror(err)), path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorKind::invalid_argument,
                      format("%s: expected a regular file, found %s", path.c_str(), file_type_name(st.st_mode)), path);
  }
  // Back to blocking reads (a regular file never blocks, but pread should not see EAGAIN).
  if (const int flags = ::fcntl(fd, F_GETFL); flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return FileReader(path, fd, static_cast<uint64_t>(st.st_size));
}

FileReader::FileReader(std::string path, int fd, uint64_t size_bytes)
    : m_path(std::move(path)), m_fd(fd), m_size_bytes(size_bytes) {}

FileReader::FileReader(FileReader&& other) noexcept
    : m_path(std::move(other.m_path)), m_fd(other.m_fd), m_size_bytes(other.m_size_bytes),
      m_bytes_read(other.m_bytes_read) {
  other.m_fd = -1;
}

FileReader& FileReader::operator=(FileReader&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_path = std::move(other.m_path);
    m_fd = other.m_fd;
    m_size_bytes = other.m_size_bytes;
    m_bytes_read = other.m_bytes_read;
    other.m_fd = -1;
  }
  return *this;
}

FileReader::~FileReader() {
  if (m_fd >= 0) ::close(m_fd);
}

Expected<std::vector<uint8_t>> FileReader::read_at(uint64_t offset, uint64_t length) {
  const auto end = checked_add(offset, length);
  if (!end || *end > m_size_bytes) {
    return make_error(ErrorKind::corrupt,
                      format("read of %llu bytes at offset %llu runs past the end of the file (%llu bytes)",
                             static_cast<unsigned long long>(length), static_cast<unsigned long long>(offset),
                             static_cast<unsigned long long>(m_size_bytes)),
                      m_path);
  }
  std::vector<uint8_t> out(length);
  uint64_t done = 0;
  while (done < length) {
    const ssize_t got = ::pread(m_fd, out.data() + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorKind::io, format("read failed: %s", std::strerror(errno)), m_path);
    }
    if (got == 0) return make_error(ErrorKind::corrupt, "unexpected end of file", m_path);
    done += static_cast<uint64_t>(got);
  }
  m_bytes_read += length;
  return out;
}

namespace {

// Where a write to `path` lands: `path` itself, or the file a symbolic link at `path` resolves to (the link stays a
// link, as with a shell's '>'). A dangling link, a link loop, and an existing target that is not a regular file (a
// FIFO a plain open would wait on, a directory, a device) are refused: invalid_argument naming the path and what it is.
Expected<std::string> write_target(const std::string& path) {
  if (path.empty()) return make_error(ErrorKind::invalid_argument, "an empty file name cannot be written", path);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return path;  // nothing there yet
  std::string target = path;
  if (S_ISLNK(st.st_mode)) {
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr) {
      const int err = errno;
      if (err == ELOOP) return make_error(ErrorKind::invalid_argument, format("%s: symbolic link loop (ELOOP), nothing written", path.c_str()), path);
      if (err != ENOENT) return make_error(ErrorKind::environment, format("%s: cannot resolve the symbolic link: %s", path.c_str(), std::strerror(err)), path);
      char link[PATH_MAX];
      const ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
      const std::string to = n > 0 ? std::string(link, static_cast<size_t>(n)) : std::string("?");
      return make_error(ErrorKind::invalid_argument,
                        format("%s: a symbolic link to '%s', which does not exist (or a directory on its way is missing); nothing written", path.c_str(), to.c_str()),
                        path);
    }
    target = resolved;
    if (::stat(target.c_str(), &st) != 0) return target;
  }
  if (!S_ISREG(st.st_mode))
    return make_error(ErrorKind::invalid_argument, format("%s: expected a regular file to write, found %s; nothing written", path.c_str(), file_type_name(st.st_mode)), path);
  return target;
}

}  // namespace

Status check_write_target(const std::string& path) {
  PF_TRY(target, write_target(path));
  (void)target;
  return Ok{};
}

namespace {

// `final_mode`: the bits the file gets; none keeps an existing file's bits (a new one: 0666 less the umask).
Status write_atomically(const std::string& path, const std::string& text, std::optional<mode_t> final_mode) {
  namespace fs = std::filesystem;
  PF_TRY(target_path, write_target(path));
  const fs::path target(target_path);
  // A failure from here on is the place, not the input: exit 3 (environment), naming the path and the reason.
  const auto failed = [&](const std::string& what, int err) {
    return make_error(ErrorKind::environment, format("%s: %s: %s", path.c_str(), what.c_str(), std::strerror(err)), path);
  };
  if (target.has_parent_path()) {
    std::error_code ec;
    fs::create_directories(target.parent_path(), ec);
    if (ec) return make_error(ErrorKind::environment, format("%s: cannot create directory %s: %s", path.c_str(), target.parent_path().c_str(), ec.message().c_str()), path);
  }
  // An existing file keeps its permission bits; a new one gets 0666 less the umask, as a shell's '>' would.
  const mode_t umask_bits = ::umask(022);
  ::umask(umask_bits);
  mode_t mode = 0666 & ~umask_bits;
  struct stat st {};
  if (::stat(target_path.c_str(), &st) == 0) mode = st.st_mode & 07777;
  if (final_mode) mode = *final_mode & 07777;
  // The temporary name is short and fixed in length, so a target whose name is near NAME_MAX still gets one.
  std::string temp = (target.has_parent_path() ? target.parent_path() / ".preflight-XXXXXX" : fs::path(".preflight-XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return failed("cannot create a temporary file beside it", errno);
  const char* data = text.data();
  size_t left = text.size();
  int err = 0;
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  if (!err && ::fchmod(fd, mode) != 0) err = errno;
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && ::rename(temp.c_str(), target_path.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(temp.c_str());  // the result is the old file or none, never a half-written one under its name
    return failed("cannot write", err);
  }
  return Ok{};
}

}  // namespace

Status write_text_file_atomically(const std::string& path, const std::string& text) { return write_atomically(path, text, std::nullopt); }

Status write_text_file_atomically(const std::string& path, const std::string& text, FileMode mode) {
  return write_atomically(path, text, static_cast<mode_t>(mode.permission_bits));
}

bool path_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

Expected<std::vector<std::string>> read_directory_names(const std::string& path) {
  std::vector<std::string> names;
  std::error_code ec;
  std::filesystem::directory_iterator it(path, ec);
  if (ec) return make_error(ErrorKind::io, format("%s: cannot list directory: %s", path.c_str(), ec.message().c_str()), path);
  for (const std::filesystem::directory_iterator end; it != end;) {
    names.push_back(it->path().filename().string());
    it.increment(ec);
    if (ec) return make_error(ErrorKind::io, format("%s: error while listing directory: %s", path.c_str(), ec.message().c_str()), path);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> list_directory(const std::string& path) {
  auto names = read_directory_names(path);
  return names ? std::move(*names) : std::vector<std::string>{};
}

bool is_symlink_loop(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) != 0 && errno == ELOOP;
}

std::string join_path(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (a.back() == '/') return a + b;
  return a + "/" + b;
}

std::string base_name(const std::string& path) {
  const auto pos = path.find_last_of('/');
  return pos == std::string::npos ? path : path.substr(pos + 1);
}

}  // namespace preflight
