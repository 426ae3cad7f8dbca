// libFuzzer target: GGUF header, metadata and tensor infos, then the ModelSpec built from them.
#include "model/gguf_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = preflight::model::parse_gguf(data, size, "fuzz.gguf");
  if (file) (void)preflight::model::model_spec_from_gguf(*file, "fuzz.gguf");
  return 0;
}
