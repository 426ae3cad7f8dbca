// engine/compilation_config_keys: the top-level keys vLLM's CompilationConfig takes in --compilation-config / -cc per
// version, and how a version refuses another key (data/engines/compilation_config_keys.json, issue 19 hard35b): from
// 0.13.0 pydantic's extra="forbid" ("Extra inputs are not permitted", through argparse), at 0.9.0 a standard-library
// dataclass's TypeError (argparse's "invalid <lambda> value"). Versions no record covers drop an unknown key silently
// (pydantic's extra="ignore"), and nothing is said. hard36: pydantic_core's words for a dataclass's extra key are
// "Unexpected keyword argument [type=unexpected_keyword_argument]"; the nested configs vLLM validates as strictly
// (pass_config, dynamic_shapes_config: nested_records) and the CompilationMode names / values of "mode" (mode_records).
#pragma once

#include <functional>
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

// A nested config of CompilationConfig whose class forbids extra keys (pass_config: PassConfig).
struct NestedConfigKeys {
  std::string id;
  std::vector<std::string> engines;
  Version version_min, version_max;
  std::string field, class_name;
  std::vector<std::string> keys;
  // attack37: each key's annotation as pydantic's lax mode checks it, in keys' order (empty: not checked): "bool",
  // "int" or "float", with "|none" where null is taken (an Optional field, or one in the class's _skip_none_validation).
  std::vector<std::string> types;
  std::string source;
};

// CompilationConfig.mode: a CompilationMode name (any case) or its IntEnum value 0 .. values.size() - 1.
struct CompilationModeValues {
  std::string id;
  std::vector<std::string> engines;
  Version version_min, version_max;
  std::string argument;
  std::vector<std::string> values;
  std::string source;
};

struct CompilationConfigKeyCatalog {
  std::vector<CompilationConfigKeys> records;
  std::vector<NestedConfigKeys> nested;
  std::vector<CompilationModeValues> modes;
  std::string origin;
  // The record covering `engine_name` at `version`, or nullptr (the version ignores unknown keys).
  const CompilationConfigKeys* find(const std::string& engine_name, const Version& version) const;
  // The nested configs checked at that version (file order), and the mode record or nullptr.
  std::vector<const NestedConfigKeys*> nested_at(const std::string& engine_name, const Version& version) const;
  const CompilationModeValues* mode_at(const std::string& engine_name, const Version& version) const;
};

// corrupt naming `origin` and the record: an unknown key or refusal, a duplicate id, a bad version range, an empty
// engine, key list or source. nested_records and mode_records are optional lists.
Expected<CompilationConfigKeyCatalog> parse_compilation_config_keys(const Json& root, const std::string& origin);
// The embedded data/engines/compilation_config_keys.json, parsed once per process.
const Expected<CompilationConfigKeyCatalog>& shipped_compilation_config_keys();

// The keys of the flag's JSON object at `path` (empty: the top level) in the order the text gives them.
using JsonKeyOrder = std::function<std::vector<std::string>(const std::vector<std::string>& path)>;

// What `vllm serve` prints when `config` (the flag's JSON object; `text` as given, for argparse's repr) holds a
// key its version's CompilationConfig refuses, or "" when it takes them all. extra_forbidden: pydantic's
// ValidationError as repr() writes it: the fields' errors in the class's field order (a bad "mode", unknown
// pass_config / dynamic_shapes_config keys located "pass_config.KEY"), then one entry per unknown top-level key in
// the order the text gives them; input_value as pydantic_core writes it (Python's repr, over 50 bytes cut to its first
// 25 and last 24 with "..." between; the "For further information visit" line, which names the installed pydantic's
// version, left out). type_error (0.9.0): argparse's "invalid <lambda> value".
std::string compilation_config_refusal_text(const CompilationConfigKeyCatalog& catalog, const std::string& engine_name, const Version& version, const Json& config,
                                            const JsonKeyOrder& order, const std::string& text);

// Issue 19 (attack37): from vLLM 0.9.1 --compilation-config's whole text is read by pydantic's
// TypeAdapter(CompilationConfig).validate_json (CompilationConfig.from_cli, then arg_utils' parse_dataclass), whose JSON
// parser (pydantic-core's jiter) stops at a list or object nested past k_compilation_config_json_depth levels. The
// refusal as argparse prints it ("1 validation error for CompilationConfig\n  Invalid JSON: recursion limit exceeded at
// line L column C [type=json_invalid, ...]", L and C 1-based, C in bytes, where the first level too deep opens), or ""
// when `text` nests no deeper (or is no valid JSON, which the flag's own check refuses).
inline constexpr size_t k_compilation_config_json_depth = 201;
std::string compilation_config_depth_refusal(const std::string& text);

}  // namespace preflight::engine
