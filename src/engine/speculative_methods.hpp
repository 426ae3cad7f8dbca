// engine/speculative_methods: the names --speculative-config's "method" takes, by vLLM version
// (data/engines/speculative_methods.json, issue 16 spec35). From vLLM 0.9.1 SpeculativeConfig is a pydantic dataclass
// whose method is a Literal, so another name stops `vllm serve` with pydantic's literal_error (exit 2); 0.8.2 - 0.9.0
// check no name. Before 0.11.0 a target's own MTP layers draft only for a few model types, under a model-specific
// name ("deepseek_mtp"); from 0.11.0 every model-specific MTP name is rewritten to "mtp". fit, logs and validate refuse
// a name the version refuses (deploy), and plan writes the name the version takes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// A target model_type whose own MTP layers draft without a "model", and the method vLLM's detection then sets.
struct OwnMtpTarget {
  std::string model_type;  // "deepseek_v3"
  std::string method;      // "deepseek_mtp"
};

// The names one range of vLLM releases takes.
struct SpeculativeMethodList {
  std::string id;
  Version version_min, version_max;
  bool checked = false;                       // pydantic refuses a name outside `methods` (from 0.9.1)
  std::vector<std::string> methods;           // SpeculativeMethod, flattened, in its order
  std::vector<OwnMtpTarget> own_mtp_targets;  // before 0.11.0: the targets drafting with their own MTP layers
  std::vector<std::string> mtp_aliases;       // from 0.11.0: the names rewritten to "mtp"
  std::string source;
  bool takes(const std::string& method) const;
};

// What a version raises for one speculative setting's value (the file's "value_checks"): a value below `minimum` or
// outside `choices`, given through `flag` (argparse's refusal) or, with no flag, however given (the config's check).
// specdraft35: `or_target_tp` also takes the target's tensor_parallel_size (draft_tensor_parallel_size from 0.6.4), and
// a config whose method or model is in `skip_methods` (ngram, suffix, ...: no drafter of its own) is not checked.
struct SpeculativeValueCheck {
  std::string id, key, flag;
  std::optional<int64_t> minimum;
  std::vector<std::string> choices;
  bool or_target_tp = false;
  std::vector<std::string> skip_methods;
  Version version_min, version_max;
  std::string message;  // "{value}": the value as Python prints it
  std::string source;
};

// hard36: --speculative-config's max_model_len against the drafter's and the target's lengths (the file's
// "max_model_len_checks"; vLLM's _maybe_override_draft_max_model_len): message_draft / message_target with {value},
// {draft}, {target}; a config whose method or model is in `skip_methods` has no draft model config and is not checked.
struct SpeculativeMaxLenCheck {
  std::string id;
  Version version_min, version_max;
  std::vector<std::string> skip_methods;
  std::string message_draft, message_target, source;
};

// attack37: the n-gram drafter's window (prompt_lookup_min / prompt_lookup_max, V0's --ngram-prompt-lookup-min/-max) as a
// version checks it (the file's "ngram_window_checks"). For a config whose method (else model) is in `methods`: a value
// absent is the other's ("copy", 0.8.2 on; both absent: 5 and 5) or, for the min, 1 ("min_1", V0, whose missing max
// flag_versions' speculative_legacy refuses); then each below 1 (max first where `max_first`) and min above max, with
// {min} and {max}. `field_minimum` (0.11.1 on): both fields are pydantic Field(ge=1), checked for every method before
// the rest, pydantic's greater_than_equal error per field below 1 (max's first, the class's field order).
struct SpeculativeNgramWindowCheck {
  std::string id;
  Version version_min, version_max;
  std::vector<std::string> methods;
  std::string missing;  // "copy" or "min_1"
  bool max_first = false, field_minimum = false;
  std::string message_min_low, message_max_low, message_order, source;
};

struct SpeculativeMethodCatalog {
  std::vector<SpeculativeMethodList> lists;
  std::vector<SpeculativeValueCheck> value_checks;
  std::vector<SpeculativeMaxLenCheck> max_len_checks;
  std::vector<SpeculativeNgramWindowCheck> ngram_window_checks;
  std::string origin;
};

// corrupt naming `origin` and the record: an unknown key, an empty source or method list, a bad or overlapping version
// range, an alias or a target method outside the record's methods (where checked).
Expected<SpeculativeMethodCatalog> parse_speculative_methods(const Json& root, const std::string& origin);
// The embedded data/engines/speculative_methods.json, parsed once per process.
const Expected<SpeculativeMethodCatalog>& shipped_speculative_methods();

// The list of `engine_name` (vllm, vllm-ascend: X.Y runs vLLM X.Y) at `version`; nullptr for another engine or a version
// no list covers (before 0.8.2, where V0's flags take the method: flag_versions.json speculative_legacy).
const SpeculativeMethodList* speculative_method_list(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version);

// What vLLM raises for `config_text` (--speculative-config's JSON) on a target of config.json model_type `model_type`, or
// "" when it starts: pydantic's literal_error for a method the version's list refuses (the names in its order), then,
// before 0.11.0, "ValueError: num_speculative_tokens was provided without speculative model." for a config with
// num_speculative_tokens, no "model" and a method other than ngram on a target that is not an own-MTP target. Each
// followed by the version, the name the version takes for the target's MTP where one exists, and the file.
std::string speculative_method_refusal(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                       const std::string& config_text, const std::string& model_type);

// Which value checks to run: argparse's (a check with a flag, when that flag gave the value), which come before
// anything else, or the config's own (no flag), which come after the method's check.
enum class SpeculativeValueStage { argparse, config };
// spec35: the first value check of `stage` for `engine_name` (vllm, vllm-ascend) at `version` that `config_text` fails,
// its message with the value, the version and the file; "" when none. `given_flags`: the V0 flags the config came from;
// `target_tp`: the target's tensor_parallel_size (vLLM's default 1), for an or_target_tp check.
std::string speculative_value_refusal(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                      const std::string& config_text, const std::vector<std::string>& given_flags, SpeculativeValueStage stage,
                                      int64_t target_tp = 1);

// hard36: what `engine_name` at `version` raises for --speculative-config's integer max_model_len above `draft_len` (the
// draft model config's length; nullopt when unknown) or above `target_len` (the target's max_model_len; nullopt when
// unknown), in that order, with the version and the file; "" when it takes it.
std::string speculative_max_len_refusal(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                        const std::string& config_text, std::optional<int64_t> draft_len, std::optional<int64_t> target_len);

// attack37: what `engine_name` at `version` raises for --speculative-config's n-gram window (integers only; another
// value is left to the engine), with the version and the file; "" when it takes it.
std::string speculative_ngram_window_refusal(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                             const std::string& config_text);
// The method name `method` is written as for `engine_name` at `version` on a target of `model_type`: "mtp" for any MTP
// name where the version takes "mtp" (from 0.11.0 it rewrites its mtp_aliases to "mtp" with a deprecation warning and
// refuses the rest); before it, a generic "mtp" or another MTP name as the own-MTP target's method; otherwise `method`
// unchanged (so too for unchecked lists, other engines and uncovered versions).
std::string speculative_method_for_version(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                           const std::string& method, const std::string& model_type);

// `config_text` with its "method" written as speculative_method_for_version takes it; the text unchanged when the method
// stays, is absent, or the text is not a JSON object.
std::string speculative_config_for_version(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                           const std::string& config_text, const std::string& model_type);

}  // namespace preflight::engine
