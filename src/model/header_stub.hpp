// model/header_stub: a header-only copy of a large model file, as the hub metadata cache keeps it.
// A stub named "<file>.header" holds the file's first bytes (a safetensors 8-byte length and JSON
// header, or a GGUF header, metadata and tensor infos) followed by a 16-byte trailer: the real file
// size as u64 little-endian, then the magic "PFSTUB01". Readers treat a stub exactly like the file
// it stands for, with the declared size in place of the size on disk.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace preflight::model {

inline constexpr const char* k_header_stub_suffix = ".header";
inline constexpr uint64_t k_max_header_stub_bytes = 256ull * 1024 * 1024;

struct HeaderStub {
  std::vector<uint8_t> prefix;   // the file's first bytes, exactly as served
  uint64_t file_size_bytes = 0;  // the real size of the file the prefix comes from
};

std::vector<uint8_t> serialize_header_stub(const HeaderStub& stub);

// Corrupt error naming `origin` when the trailer is missing or the prefix is longer than the
// declared size.
Expected<HeaderStub> parse_header_stub(const std::vector<uint8_t>& bytes, const std::string& origin);
Expected<HeaderStub> load_header_stub(const std::string& path);

}  // namespace preflight::model
