// libFuzzer target (issue 19, attack37): the input's lines as validation case lines (shared/validation/*.jsonl's schema)
// through validate's whole reading of a case: its fields (stage_devices, num_devices, the engine and its version, flags,
// observed figures), the model and device it names, the deployment resolved from them and the fit compared, then the
// report's summary and JSON. The catalogues are loaded once. Only local resolution happens (the catalogue; no --models
// directory, no hub).
#include <sstream>
#include <string>

#include "validate/validation.hpp"
#include "validate/validation_line.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto catalogs = preflight::validate::load_validation_catalogs();
  if (!catalogs) return 0;
  const preflight::validate::ValidateOptions options;
  preflight::validate::ValidationReport report;
  std::istringstream lines(std::string(reinterpret_cast<const char*>(data), size));
  std::string line;
  for (int line_no = 1; std::getline(lines, line) && line_no <= 16; ++line_no)
    if (!preflight::validate::run_validation_line(line, "fuzz.jsonl", line_no, **catalogs, options, report)) break;
  (void)preflight::validate::validation_to_json(report);
  return 0;
}
