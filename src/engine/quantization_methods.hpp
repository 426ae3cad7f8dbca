// engine/quantization_methods: the names `--quantization` takes, by engine version (data/engines/quantization_methods.json,
// issue 16). vLLM hands argparse a fixed list of choices, so a name outside it stops `vllm serve` before anything loads
// ("vllm serve: error: argument --quantization/-q: invalid choice: 'ascend' (choose from ...)", exit 2); vLLM-Ascend
// parses with the vLLM of its own version and adds its platform's methods (`ascend` from 0.9.0). fit, plan and
// validate refuse such a name with that line instead of sizing a deployment the engine never starts.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// The choices of one vLLM release (and the patch releases of its range).
struct QuantizationMethodList {
  std::string id;
  Version version_min, version_max;
  std::vector<std::string> methods;  // vLLM's QUANTIZATION_METHODS
  std::string choices;               // what argparse prints inside "(choose from ...)"
  std::string source;
};

// A method an engine's platform adds to vLLM's choices from a version on (vLLM-Ascend's "ascend").
struct PluginQuantizationMethod {
  std::string method, engine;
  Version version_min;
  std::string choice;  // as argparse prints it after vLLM's choices: "'ascend'"
  std::string source;
};

struct QuantizationMethodCatalog {
  std::vector<QuantizationMethodList> lists;
  std::vector<PluginQuantizationMethod> plugin_methods;
  std::string origin;
};

// corrupt naming `origin` and the record: an unknown key, a missing source, a duplicate id, a bad version range, lists
// whose ranges overlap, an empty method list, a choices text that does not name every method.
Expected<QuantizationMethodCatalog> parse_quantization_methods(const Json& root, const std::string& origin);
// The embedded data/engines/quantization_methods.json, parsed once.
const Expected<QuantizationMethodCatalog>& shipped_quantization_methods();

// The line `vllm serve` prints when argparse refuses `--quantization method` on engine `engine_name` (vllm,
// vllm-ascend) at `version`, or "" when it takes it. A version a list covers takes that list's methods and its
// engine's plugin methods from their version on, nothing else (compared as vLLM does: exactly, case and all). A
// version no list covers is refused only a plugin method it does not take (a platform's method is never one of
// plain vLLM's choices), with the choices of the nearest list, said as such. Other engines: "" (the flag is not theirs).
std::string quantization_choice_refusal(const QuantizationMethodCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& method);

// quantization_choice_refusal of the shipped list for `engine` at its rule version; "" when the shipped list does not
// load (the catalogue tests and fit's --quantization check report that) or takes the method. What fit's variant rules,
// plan's rows and DP+EP rows and the servable check ask.
std::string shipped_quantization_refusal(const EngineProfile& engine, const std::string& method);

}  // namespace preflight::engine
