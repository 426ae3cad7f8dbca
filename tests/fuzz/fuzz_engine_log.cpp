// libFuzzer target: arbitrary text through the engine-log parser and root-cause classifier.
#include <string>

#include "logs/engine_log.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto signatures = preflight::logs::load_signatures();
  if (!signatures) return 0;
  (void)preflight::logs::parse_engine_log(std::string(reinterpret_cast<const char*>(data), size), *signatures);
  return 0;
}
