// engine/attention_backends: the names vLLM's --attention-backend takes (data/engines/attention_backends.json), by
// engine and version range, each record with its source. vLLM looks the flag's value up, upper-cased, in an enum of
// backend names and refuses a name that is no member at start-up; fit refuses it the same way instead of recording
// a name the engine would never run (issue 19).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// Issue 15 (eng31): what a version does with a name that is no member of its enum: refuse it at start-up (vLLM 0.10.1
// on, PR #22217), or ignore it and let the platform choose its own backend (before).
enum class UnknownBackend { refused, ignored };

struct AttentionBackendNames {
  std::string id;
  std::vector<std::string> engines;      // "vllm", "vllm-ascend"
  Version version_min, version_max;
  std::vector<std::string> names;        // upper case: every name some version of the range takes
  std::vector<std::string> valid_options;  // the list the engine's refusal prints (empty where nothing is refused)
  // The engine's message (refused) or what it does (ignored): {name} the upper-cased value, {valid} valid_options
  // joined by ", ", {valid_list} valid_options as Python prints a list (['A', 'B']).
  std::string rejection;
  UnknownBackend unknown = UnknownBackend::refused;  // "unknown" in the file; refused when absent
  std::string removed_suffix;  // removed from the value before the lookup ("_VLLM_V1" on 0.11 - 0.12); empty: none
  std::string source;
};

struct AttentionBackendCatalog {
  std::vector<AttentionBackendNames> records;
  std::string origin;
};

// corrupt naming `origin` and the record: an unknown key, a missing source, a duplicate id, a bad version range, a
// name that is not upper case, a valid option that is not among the names, an "unknown" other than refused / ignored, no
// valid_options where names are refused, a removed_suffix that is not upper case.
Expected<AttentionBackendCatalog> parse_attention_backends(const Json& root, const std::string& origin);
// Loads the embedded data/engines/attention_backends.json.
Expected<AttentionBackendCatalog> load_attention_backends();

// What the version `engine` runs (its engine name and engine.rule_version(), the version named or the profile's newest:
// issue 15, v0eng29) does with `value`, trimmed and upper-cased as vLLM does, by the record covering that version:
// - a name of the record: taken, "" (or, where the record removes a suffix first, the note that says so);
// - else, on a record that ignores unknown names: the note for the assumptions, what the engine does instead;
// - else invalid_argument naming `origin` with the engine's own message and list; where no version was named, the
//   message says which record's list it used (issue 15, eng31).
// "" when no record covers the engine (llama.cpp, MindIE: the flag is not theirs).
Expected<std::string> check_attention_backend(const AttentionBackendCatalog& catalog, const EngineProfile& engine, const std::string& value, const std::string& origin);
// The same for a command that has no profile yet (plan, over every card): the record of `engine_name` covering `version`
// when one is given, else the record of its newest versions (said in the message as above).
Expected<std::string> check_attention_backend_of(const AttentionBackendCatalog& catalog, const std::string& engine_name, const std::optional<Version>& version,
                                                 const std::string& value, const std::string& origin);

}  // namespace preflight::engine
