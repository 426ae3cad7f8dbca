// engine/quant_descriptor_checks: the --quantization methods whose config lives in a file of its own beside config.json
// (msModelSlim's quant_model_description.json for `--quantization ascend`), by engine and version, with what `vllm
// serve` prints when the checkpoint has neither that file nor a config.json quantization_config: a BF16 repository
// started with a converted checkpoint's flag (data/engines/quant_descriptor_checks.json; issue 16, user37).
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct QuantDescriptorCheck {
  std::string id;
  std::vector<std::string> engines;
  Version version_min, version_max;
  std::string method;   // the --quantization value, lowercase ("ascend")
  std::string file;     // the file the method's config is read from ("quant_model_description.json")
  std::string message;  // the engine's words; "{model}" stands for the model argument of the start
  std::string source;
};

struct QuantDescriptorChecks {
  std::vector<QuantDescriptorCheck> records;
  std::string origin;
  // The record of `method` (compared lowercase) on `engine` at its rule version, or nullptr.
  const QuantDescriptorCheck* record_for(const EngineProfile& engine, const std::string& method) const;
};

// The record's message for the start of `model` ("{model}" replaced).
std::string quant_descriptor_message(const QuantDescriptorCheck& check, const std::string& model);

// corrupt naming `origin` and the record: an unknown key, a duplicate id, a bad version range, an empty engine list, an
// empty method, file or message, a method not in lowercase, an empty source, two records of one engine and method whose
// version ranges overlap.
Expected<QuantDescriptorChecks> parse_quant_descriptor_checks(const Json& root, const std::string& origin);
// The embedded data/engines/quant_descriptor_checks.json, parsed once per process.
const Expected<QuantDescriptorChecks>& shipped_quant_descriptor_checks();

}  // namespace preflight::engine
