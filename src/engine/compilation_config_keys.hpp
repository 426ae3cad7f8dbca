// engine/compilation_config_keys: the top-level keys vLLM's CompilationConfig takes in --compilation-config / -cc per
// version, and how a version refuses another key (data/engines/compilation_config_keys.json, issue 19 hard35b): from
// 0.13.0 pydantic's extra="forbid" ("Extra inputs are not permitted", through argparse), at 0.9.0 a standard-library
// dataclass's TypeError (argparse's "invalid <lambda> value"). Versions no record covers drop an unknown key silently
// (pydantic's extra="ignore"), and nothing is said.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct CompilationConfigKeys {
  std::string id;
  std::vector<std::string> engines;
  Version version_min, version_max;
  std::string refusal;   // "extra_forbidden" (pydantic) or "type_error" (0.9.0's dataclass)
  std::string argument;  // argparse's name of the flag: "--compilation-config/-cc"
  std::vector<std::string> keys;
  std::string source;
};

struct CompilationConfigKeyCatalog {
  std::vector<CompilationConfigKeys> records;
  std::string origin;
  // The record covering `engine_name` at `version`, or nullptr (the version ignores unknown keys).
  const CompilationConfigKeys* find(const std::string& engine_name, const Version& version) const;
};

// corrupt naming `origin` and the record: an unknown key or refusal, a duplicate id, a bad version range, an empty
// engine, key list or source.
Expected<CompilationConfigKeyCatalog> parse_compilation_config_keys(const Json& root, const std::string& origin);
// The embedded data/engines/compilation_config_keys.json, parsed once per process.
const Expected<CompilationConfigKeyCatalog>& shipped_compilation_config_keys();

// What `vllm serve` prints when `config` (the flag's JSON object; `text` as given, for argparse's repr and for the keys'
// order) holds a top-level key that `keys` lacks, or "" when every key is known. extra_forbidden: pydantic's
// ValidationError as repr() writes it, one entry per unknown key in the order the text gives them, input_value as
// pydantic_core writes it (Python's repr, over 50 bytes cut to its first 25 and last 24 with "..." between; the
// "For further information visit" line, which names the installed pydantic's version, left out).
std::string compilation_config_key_refusal(const CompilationConfigKeys& keys, const Json& config, const std::vector<std::string>& order, const std::string& text);

}  // namespace preflight::engine
