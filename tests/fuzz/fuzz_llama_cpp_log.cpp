// libFuzzer target: arbitrary text through the llama.cpp start-up log reader (logs/llama_cpp_log).
#include <string>

#include "logs/llama_cpp_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)preflight::logs::is_llama_cpp_log(text);
  const auto log = preflight::logs::parse_llama_cpp_log(text);
  (void)log.total("model");
  return 0;
}
