// engine/attention_backends: the names vLLM's --attention-backend takes (data/engines/attention_backends.json), by
// engine and version range, each record with its source. vLLM looks the flag's value up, upper-cased, in an enum of
// backend names and refuses a name that is no member at start-up; fit refuses it the same way instead of recording
// a name the engine would never run (issue 19).
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct AttentionBackendNames {
  std::string id;
  std::vector<std::string> engines;      // "vllm", "vllm-ascend"
  Version version_min, version_max;
  std::vector<std::string> names;        // upper case: every name some version of the range takes
  std::vector<std::string> valid_options;  // the list the engine's refusal prints
  std::string rejection;                 // the engine's message; {name} the upper-cased value, {valid} valid_options
  std::string source;
};

struct AttentionBackendCatalog {
  std::vector<AttentionBackendNames> records;
  std::string origin;
};

// corrupt naming `origin` and the record: an unknown key, a missing source, a duplicate id, a bad version range, a
// name that is not upper case, a valid option that is not among the names.
Expected<AttentionBackendCatalog> parse_attention_backends(const Json& root, const std::string& origin);
// Loads the embedded data/engines/attention_backends.json.
Expected<AttentionBackendCatalog> load_attention_backends();

// invalid_argument naming `origin` with the engine's own message when `value` (trimmed, upper-cased as vLLM does) is
// not a name of the record that covers `engine` (its engine name and a version range holding engine.rule_version(),
// the version named or the profile's newest: issue 15, v0eng29);
// Ok when it is one, or when no record covers the engine (llama.cpp, MindIE: the flag is not theirs).
Status check_attention_backend(const AttentionBackendCatalog& catalog, const EngineProfile& engine, const std::string& value, const std::string& origin);
// The same for a command that has no profile yet (plan, over every version of `engine_name`): the records of that engine
// whatever their versions.
Status check_attention_backend_of(const AttentionBackendCatalog& catalog, const std::string& engine_name, const std::string& value, const std::string& origin);

}  // namespace preflight::engine
