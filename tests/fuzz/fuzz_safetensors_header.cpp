// libFuzzer target: the safetensors header parser on arbitrary bytes.
#include <string>

#include "model/safetensors_header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string header(reinterpret_cast<const char*>(data), size);
  (void)preflight::model::parse_safetensors_header(header, 1u << 20, "fuzz.safetensors");
  return 0;
}
