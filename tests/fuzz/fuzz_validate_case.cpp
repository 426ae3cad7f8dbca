// libFuzzer target (issue 19, attack37): one line of a validation case file (shared/validation/*.jsonl's schema) through
// validate's whole reading of a case: its fields (stage_devices, num_devices, the engine and its version, flags, observed
// figures), the model and device it names, the deployment resolved from them and the fit compared. The line is written to
// a file of this process's own, since run_validation reads files. Only local resolution happens (the catalogue; no
// --models directory, no hub).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "validate/validation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/preflight-fuzz-case-" + std::to_string(::getpid()) + ".jsonl";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  preflight::validate::ValidateOptions options;
  auto report = preflight::validate::run_validation({path}, options);
  if (report) (void)preflight::validate::validation_to_json(*report);
  return 0;
}
