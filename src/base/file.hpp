// base/file: reading files with limits. Every read states the most bytes it accepts, so a hostile
// path (a device, a huge file) can never make us allocate without bound. Errors name the path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace preflight {

inline constexpr uint64_t k_max_text_file_bytes = 64ull * 1024 * 1024;

// Whole file as text; io error when unreadable, invalid_argument when larger than max_bytes.
// Opened like FileReader::open, so a FIFO or device is refused instead of blocking.
Expected<std::string> read_text_file(const std::string& path, uint64_t max_bytes = k_max_text_file_bytes);

// A random-access reader that counts the bytes it has read (tests assert header-only reads).
class FileReader {
 public:
  // The one way src/ opens a file to read it. The open never blocks (O_NONBLOCK: a FIFO with no
  // writer would otherwise wait forever), then fstat refuses anything but a regular file with an
  // invalid_argument error naming the path and what it is ("a FIFO", "a directory", "a device").
  // not_found when the path does not exist; io for other failures (a symlink loop says so).
  static Expected<FileReader> open(const std::string& path);
  FileReader(FileReader&& other) noexcept;
  FileReader& operator=(FileReader&& other) noexcept;
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
  ~FileReader();

  uint64_t size_bytes() const { return m_size_bytes; }
  uint64_t bytes_read() const { return m_bytes_read; }
  const std::string& path() const { return m_path; }

  // Reads exactly `length` bytes at `offset`; corrupt error when the file is shorter.
  Expected<std::vector<uint8_t>> read_at(uint64_t offset, uint64_t length);

 private:
  FileReader(std::string path, int fd, uint64_t size_bytes);
  std::string m_path;
  int m_fd = -1;
  uint64_t m_size_bytes = 0;
  uint64_t m_bytes_read = 0;
};

// Replaces `path` with `text` so that a reader sees the old file or the new one, never a mix: writes a
// temporary file in the same directory, flushes it to disk, then renames it over `path`; a failed write
// removes the temporary file and leaves `path` as it was. Missing parent directories are created; an
// existing file's permission bits are kept (a new file: 0666 less the umask). A symbolic link is followed
// and its target replaced (the link stays). invalid_argument naming the path for a target that is not a
// regular file (a FIFO is never opened, so never waited on; a directory; a device), a dangling link or a
// link loop; environment (exit 3) naming the path and the system's reason when the place cannot be written.
Status write_text_file_atomically(const std::string& path, const std::string& text);
// The target checks write_text_file_atomically makes before it writes, for a caller that writes several files as one
// result (mindie's config.json and start.sh) and must refuse them all before it writes any.
Status check_write_target(const std::string& path);

bool path_exists(const std::string& path);
bool is_directory(const std::string& path);
// Entries (names only) of a directory, sorted; io error naming the directory when it cannot be
// opened or an entry cannot be read (a model directory that cannot be listed must not look empty).
Expected<std::vector<std::string>> read_directory_names(const std::string& path);
// The same, empty when unreadable (for callers where a missing listing is harmless).
std::vector<std::string> list_directory(const std::string& path);
// Whether resolving `path` fails with ELOOP (a symbolic link that points, directly or through
// others, back at itself).
bool is_symlink_loop(const std::string& path);
// "a FIFO", "a directory", "a character device", ... for a stat mode (used in messages).
const char* file_type_name(unsigned mode);
std::string join_path(const std::string& a, const std::string& b);
std::string base_name(const std::string& path);

}  // namespace preflight
