// base/file_mode: writing a file that must carry given permission bits from the moment it has its
// name (a launch script 0750, a config 0640), for callers that would otherwise chmod after the write
// and leave a window in which the file had the default mode. Implemented in base/file.cpp beside the
// two-argument write_text_file_atomically.
#pragma once

#include <string>

#include "base/error.hpp"

namespace preflight {

// Permission bits, for example 0750 (only the 07777 bits are used; the umask does not apply).
struct FileMode {
  unsigned permission_bits = 0644;
};

// write_text_file_atomically (base/file.hpp) with the file's final mode set on the temporary file
// before the rename, so the name never points at a file with other bits; an existing file's bits are
// replaced by `mode`. Same errors.
Status write_text_file_atomically(const std::string& path, const std::string& text, FileMode mode);

}  // namespace preflight
