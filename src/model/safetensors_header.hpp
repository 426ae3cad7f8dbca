// model/safetensors_header: reads only the header of a .safetensors file: an 8-byte little-endian
// length N, then N bytes of JSON mapping tensor names to {dtype, shape, data_offsets}. Weight bytes
// are never read. Every length and offset is checked against the file size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "model/dtype.hpp"

namespace preflight::model {

inline constexpr uint64_t k_max_safetensors_header_bytes = 100ull * 1024 * 1024;

// What preflight keeps of a tensor: its name (MTP tensors are told by it), dtype and byte range. The shape is checked
// against the range while the header is read and not kept (issue 19, hard32: memory per input).
struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::bf16;
  uint64_t data_begin = 0;  // relative to the end of the header
  uint64_t data_end = 0;
  uint64_t bytes() const { return data_end - data_begin; }
};

struct SafetensorsHeader {
  uint64_t header_length = 0;
  uint64_t file_size = 0;
  std::vector<TensorInfo> tensors;
  uint64_t data_bytes() const;
};

// `header_json` is the N header bytes; `data_size` = file_size - 8 - N. Corrupt errors name
// `origin` and the tensor: unknown dtype, offsets out of range or overlapping, size mismatch,
// duplicate names, a key one tensor (or __metadata__) repeats. Read as a stream, one tensor's tree at a time: memory is
// the tensor table (about 100 bytes a tensor), never a tree of the whole header (issue 19, hard32).
Expected<SafetensorsHeader> parse_safetensors_header(std::string_view header_json, uint64_t data_size, const std::string& origin);

// The header length N from a file's first 8 bytes, checked against the 100 MiB cap and against
// `file_size` (corrupt error: "header length 9.2 GiB exceeds file size 4.1 GiB"; bytes below 1 MiB).
Expected<uint64_t> parse_safetensors_header_length(const uint8_t* first8, uint64_t file_size, const std::string& origin);

// A header from the file's first `size` bytes (at least 8 + N) and the file's real size; what a
// range request or a header stub (model/header_stub) provides.
Expected<SafetensorsHeader> parse_safetensors_prefix(const uint8_t* data, size_t size, uint64_t file_size, const std::string& origin);

// Reads 8 + N bytes of `path`. `bytes_read` (optional) receives how many bytes were read.
Expected<SafetensorsHeader> load_safetensors_header(const std::string& path, uint64_t* bytes_read = nullptr);

}  // namespace preflight::model
