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

// Who refuses a name outside a release's list (quantization_methods.json `parser`): argparse, whose --quantization has
// choices up to vLLM 0.12 ("invalid choice", exit 2); or, from 0.13 (ModelConfig.quantization is `QuantizationMethods |
// str`, so argparse gets a metavar), ModelConfig's "Unknown quantization method: X. Must be one of [...]".
enum class QuantizationParser { argparse, model_config };

// The choices of one vLLM release (and the patch releases of its range).
struct QuantizationMethodList {
  std::string id;
  Version version_min, version_max;
  QuantizationParser parser = QuantizationParser::argparse;
  std::vector<std::string> methods;  // vLLM's QUANTIZATION_METHODS
  // Issue 16 (quant33): DEPRECATED_QUANTIZATION_METHODS of the release (from v0.14.0; optional key "deprecated"): a listed
  // method vLLM refuses unless --allow-deprecated-quantization is given (a name here need not be in `methods`: tpu_int8
  // stayed in the list after it left QuantizationMethods, where "Unknown quantization method" comes first).
  std::vector<std::string> deprecated;
  std::string choices;               // as printed: inside "(choose from ...)" (argparse), inside "[...]" (model_config)
  std::string source;
};

// A method an engine's platform adds to vLLM's choices from a version on (vLLM-Ascend's "ascend").
struct PluginQuantizationMethod {
  std::string method, engine;
  Version version_min;
  std::string choice;  // as argparse prints it after vLLM's choices: "'ascend'"
  std::string source;
};

// A quant_method a checkpoint's config names that vLLM reads as a listed method from a version on (its config class's
// override_quantization_method: "auto-round" -> "inc" from 0.15.0, when "auto-round" left the list).
struct CheckpointMethodOverride {
  std::string method, read_as;
  Version version_min;
  std::string source;
};

struct QuantizationMethodCatalog {
  std::vector<QuantizationMethodList> lists;
  std::vector<PluginQuantizationMethod> plugin_methods;
  std::vector<CheckpointMethodOverride> checkpoint_overrides;
  std::string origin;
};

// corrupt naming `origin` and the record: an unknown key, a missing source, a duplicate id, a bad version range, lists
// whose ranges overlap, an empty method list, a choices text that does not name every method.
Expected<QuantizationMethodCatalog> parse_quantization_methods(const Json& root, const std::string& origin);
// The embedded data/engines/quantization_methods.json, parsed once.
const Expected<QuantizationMethodCatalog>& shipped_quantization_methods();

// What `vllm serve` prints when it refuses `--quantization method` on engine `engine_name` (vllm, vllm-ascend) at
// `version`, or "" when it takes it: argparse's line, or from vLLM 0.13 ModelConfig's ValidationError (the list's
// `parser`), the plugin methods after vLLM's in either. A version a list covers takes that list's methods and its
// engine's plugin methods from their version on, nothing else (compared as vLLM does: exactly, case and all). A
// version no list covers is refused only a plugin method it does not take (a platform's method is never one of
// plain vLLM's choices), with the choices of the nearest list, said as such. Other engines: "" (the flag is not theirs).
// Whether the command line passes vLLM's --allow-deprecated-quantization (from v0.14.0): a deprecated method then loads
// with a warning instead of raising.
enum class DeprecatedQuantization { refused, allowed };

std::string quantization_choice_refusal(const QuantizationMethodCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& method,
                                        DeprecatedQuantization deprecated = DeprecatedQuantization::refused);

// Issue 16 (quant33): what ModelConfig._verify_quantization raises for a method the version's list deprecates
// (vllm/config/model.py v0.14.0 - v0.23.0: `raise ValueError("The quantization method %s is deprecated and will be removed
// in future versions of vLLM. To bypass, set `--allow-deprecated-quantization`.", self.quantization)`: the format string and
// the name as two arguments, which str() prints as a tuple, inside pydantic's ValidationError), or "" when the version
// does not deprecate `method`, no list covers the version, or `deprecated` is allowed.
std::string deprecated_quantization_refusal(const QuantizationMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                            const std::string& method, DeprecatedQuantization deprecated = DeprecatedQuantization::refused);

// What `vllm serve` without --quantization prints for a checkpoint whose config names quant_method `method`, or "" when it
// loads it: ModelConfig's "Unknown quantization method: X. Must be one of [...]" when neither the version's list nor a
// checkpoint override of that version takes it (no argparse: no flag is passed). A version no list covers: "".
std::string checkpoint_method_refusal(const QuantizationMethodCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& method,
                                      DeprecatedQuantization deprecated = DeprecatedQuantization::refused);

// quantization_choice_refusal of the shipped list for `engine` at its rule version; "" when the shipped list does not
// load (the catalogue tests and fit's --quantization check report that) or takes the method. What fit's variant rules,
// plan's rows and DP+EP rows and the servable check ask.
std::string shipped_quantization_refusal(const EngineProfile& engine, const std::string& method,
                                         DeprecatedQuantization deprecated = DeprecatedQuantization::refused);

// The refusal a start command of variant `variant_id` meets: where every published checkpoint, conversion and load-time
// record of the variant in data/engines/quantized_checkpoints.json serves it without --quantization (AWQ, GPTQ, AutoRound:
// vLLM reads quant_method from the checkpoint), checkpoint_method_refusal of `method`; else shipped_quantization_refusal.
std::string shipped_variant_refusal(const EngineProfile& engine, const std::string& variant_id, const std::string& method,
                                    DeprecatedQuantization deprecated = DeprecatedQuantization::refused);

}  // namespace preflight::engine
