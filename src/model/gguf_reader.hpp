// model/gguf_reader: reads a GGUF file's header, metadata key-values and tensor infos (name, shape,
// ggml type, offset), never the tensor data. Exact bytes per tensor follow from the ggml type's block
// size. Every count and length is checked against caps and the bytes left in the file.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "model/model_spec.hpp"

namespace preflight::model {

struct GgufTensor {
  std::string name;
  std::vector<uint64_t> shape;
  uint32_t ggml_type = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint64_t elements = 0;
};

struct GgufFile {
  uint32_t version = 0;
  uint64_t alignment = 32;
  // Scalar metadata as text or number; arrays keep only their length (e.g. tokenizer.ggml.tokens).
  std::map<std::string, std::string> strings;
  std::map<std::string, double> numbers;
  std::map<std::string, uint64_t> array_lengths;
  std::vector<GgufTensor> tensors;
  uint64_t bytes_read = 0;
  uint64_t file_size = 0;
};

const char* ggml_type_name(uint32_t type);
// Block size of a ggml type by its name, either case ("q8_0", "F16"): the names llama.cpp's --cache-type-k takes.
struct GgmlTypeSize {
  uint32_t block_elements = 1;
  uint32_t block_bytes = 0;
};
std::optional<GgmlTypeSize> ggml_type_size_by_name(const std::string& name);

// Parses from an in-memory buffer (fuzzing) or a file.
Expected<GgufFile> parse_gguf(const uint8_t* data, size_t size, const std::string& origin);

// Reading a GGUF header from a prefix of the file (a file read, a range request, a header stub):
// start with k_gguf_first_read_bytes and grow x4 while the error is gguf_prefix_too_short, up to
// k_gguf_max_header_bytes. `file_size` is the real size: every tensor's data must end within it.
inline constexpr uint64_t k_gguf_first_read_bytes = 1ull << 20;
inline constexpr uint64_t k_gguf_max_header_bytes = 256ull << 20;
Expected<GgufFile> parse_gguf_prefix(const uint8_t* data, size_t size, uint64_t file_size, const std::string& origin);
// True when the error says the prefix ended inside the header (more bytes would help).
bool gguf_prefix_too_short(const Error& error);
Expected<GgufFile> load_gguf(const std::string& path);

// ModelSpec from GGUF metadata ({arch}.block_count, .embedding_length, .attention.head_count, ...)
// with exact weight bytes from the tensor infos.
Expected<ModelSpec> model_spec_from_gguf(const GgufFile& file, const std::string& origin);

}  // namespace preflight::model
