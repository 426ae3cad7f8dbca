// engine/flag_versions: vLLM command-line flags that exist only in a range of releases (data/engines/flag_versions.json,
// issue 15 arch32): --speculative-config from 0.8.2; --speculative-model, --num-speculative-tokens and
// --speculative-draft-tensor-parallel-size up to 0.8.2. Outside its range `vllm serve`'s argparse stops with
// "vllm serve: error: unrecognized arguments: FLAG ...", exit 2. vLLM-Ascend X.Y parses as vLLM X.Y.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct FlagVersions {
  std::string flag;  // "--speculative-config"
  std::string short_name;  // "-dpa"; empty when it has none
  Version version_min, version_max;
  std::string replacement;  // what the versions outside the range take instead
  std::string source;
};

// quant34 (issue 16): how vLLM before --speculative-config took one group of speculative methods (the file's
// "speculative_legacy" section): V0's EngineArgs has no method, it takes --speculative-model and reads the drafter's kind from
// the draft checkpoint's config.
struct LegacySpeculativeMethod {
  std::string id;                        // "deepseek_mtp"
  std::vector<std::string> methods;      // the --speculative-config "method" values it serves: "mtp", "deepseek_mtp"
  Version version_min;                   // the first release whose V0 spec_decode runs them
  std::string speculative_model;         // --speculative-model's value: "{model}" (the config's "model"), "[ngram]", or "" (none)
  std::vector<std::string> model_types;  // the target config.json model_type values it runs for; empty: any
  std::vector<std::string> required;     // --speculative-config keys its flags need (ngram: prompt_lookup_max)
  std::string source;
};
// One --speculative-config key and the V0 flag it came from ("num_speculative_tokens", "--num-speculative-tokens").
struct LegacySpeculativeKey {
  std::string key, flag;
  bool switch_flag = false;  // spec35: a store_true flag, written alone for true and left out for false
};

struct FlagVersionCatalog {
  std::vector<FlagVersions> records;
  std::vector<LegacySpeculativeKey> legacy_speculative_keys;        // optional section "speculative_legacy"
  std::vector<LegacySpeculativeMethod> legacy_speculative_methods;
  std::string origin;
  const FlagVersions* find(const std::string& flag) const;
};

// corrupt naming `origin` and the record: an unknown key, an empty source or replacement, a duplicate id, a bad version,
// version_max below version_min.
Expected<FlagVersionCatalog> parse_flag_versions(const Json& root, const std::string& origin);
// The embedded data/engines/flag_versions.json, parsed once per process.
const Expected<FlagVersionCatalog>& shipped_flag_versions();

// The speculative method vLLM's SpeculativeConfig.__post_init__ infers for a config without "method" from the drafter's
// name: "eagle3" when the name contains it (any case), else "eagle", else "draft_model". deploy's --speculative-config
// reading and speculative_serve_args take it from here.
std::string speculative_method_from_model(const std::string& drafter);

// argparse's refusal of `flag` given as `as_written` (the flag and its value) on `engine_name` (vllm, vllm-ascend) at
// `version`, with the range that has it and its replacement; "" when that version parses it, the flag has no record, or
// the engine is another.
// A flag as given on a command line, for the refusal of several at once.
struct GivenFlag {
  std::string flag;   // "--data-parallel-address"
  std::string value;  // "10.0.0.1"; empty for a switch (--headless)
};
// argparse's refusal of every given flag the version's parser lacks, in the order given ("vllm: error: unrecognized
// arguments: --headless --data-parallel-start-rank 1"); "" when it has them all or the engine is not vLLM's.
std::string unrecognized_flags_refusal(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version,
                                       const std::vector<GivenFlag>& given);
// quant34 (issue 16): the `vllm serve` arguments that start the speculative decoding `config_text` (--speculative-config's
// JSON object, as given) on `engine_name` (vllm, vllm-ascend) at `version`, for a target whose config.json model_type is
// `model_type`: {"--speculative-config", config_text} where the version's parser has that flag (and for any other engine);
// before it, V0's flags from the "speculative_legacy" section (--speculative-model M / '[ngram]', --num-speculative-tokens
// N, ... by key name), values unquoted. unsupported errors, naming the version, the reason and the file: a
// method with no V0 form there (eagle3 at 0.7.3, MTP before 0.7.3), a target model_type the form does not run for (MTP of
// a model other than DeepSeek-V3's), a key the form needs missing (ngram without prompt_lookup_max) or a key no V0 flag takes;
// invalid_argument: text that is not a JSON object.
Expected<std::vector<GivenFlag>> speculative_serve_args(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version,
                                                        const std::string& config_text, const std::string& model_type);

std::string flag_version_refusal(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& flag,
                                 const std::string& as_written);

}  // namespace preflight::engine
