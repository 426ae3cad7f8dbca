// cli/args: each command's flags declared once, as records in the style of llama.cpp's common_arg:
// {name, value name, help, setter}. The setter parses the text, checks it (type, range, choices) and
// writes the value straight into the command's typed request. The parser, `--help` and the tests all
// read the same records. Flags are --name value or --name=value (an underscore reads as a dash);
// switches take no value. An unknown flag is a usage error (exit 2) with the nearest declared flag.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "deploy/deployment.hpp"

namespace preflight::cli {

struct Option {
  std::string name;     // without dashes: "max-model-len"
  std::string value;    // the value's name in the help ("N", "U"); empty for a switch
  std::string help;     // one line; "\n" continues it under the help column
  std::function<Status(const std::string& text)> set;  // parse, check, store; a switch gets ""
  std::string heading;  // a section title printed before this flag in --help, or empty
  // vLLM's short spellings ("-cc", "-O"): -cc VALUE, -O3 (a two-letter short name takes its value attached), -O=3.
  std::vector<std::string> short_names;
  // vLLM's dotted forms of a JSON flag (--compilation-config.key value, -cc.key=value): key after the first dot, value.
  std::function<Status(const std::string& key, const std::string& value)> set_dotted;
  // Issue 19 (hard32): whether the flag may be given more than once (--env NAME=VALUE); every other flag is refused the
  // second time, by any of its spellings (the dotted forms of a JSON flag merge keys and do not count).
  enum class Repeat { once, many } repeat = Repeat::once;
};

// Inclusive bounds of an integer flag.
struct IntRange {
  int64_t least = 1;
  int64_t most = INT64_MAX;
};

// Bounds of a real flag: (0, most] when positive is set, else [least, most]; unit follows the bound.
struct RealRange {
  double least = 0;
  double most = 1e300;
  enum class Lower { inclusive, positive } lower = Lower::positive;
  std::string unit;
};

// Typed declarations. Errors name the flag: "--size: expected an integer, got 'x'",
// "--warmup must be between 0 and 65536, found 70000", "--target: expected host, cuda or npu, got 'tpu'".
Option switch_flag(std::string name, bool& into, std::string help);
Option text_flag(std::string name, std::string value, std::optional<std::string>& into, std::string help, std::vector<std::string> choices = {});
// Issue 19: --models DIR: a directory that exists (links followed). A path that does not exist, is a file or a
// symbolic-link loop is invalid_argument naming the flag and the path, not a directory skipped in silence.
Option models_dir_flag(std::optional<std::string>& into, std::string help);
Option int_flag(std::string name, std::string value, std::optional<int64_t>& into, IntRange range, std::string help);
// An integer flag's text as int_flag reads it (decimal digits with an optional sign, no overflow) within range; the
// error names --NAME.
Expected<int64_t> parse_int_in_range(const std::string& name, const std::string& text, IntRange range);
Option real_flag(std::string name, std::string value, std::optional<double>& into, RealRange range, std::string help);
// A comma-separated list of integers within range ("1,4,16").
Option int_list_flag(std::string name, std::string value, std::optional<std::vector<int64_t>>& into, IntRange range, std::string help);

// vLLM's deployment flags: each stores the value with its flag as origin; deploy::check_flags checks them
// (one set of checks for fit, plan, logs and validate).
Option given_int(std::string name, std::string value, std::optional<deploy::Given<int64_t>>& into, std::string help);
// Issue 16 (arch31): a token count as vLLM's human_readable_int reads it (engine/human_readable_int: 32k = 32,000, 32K =
// 32,768); a suffixed value keeps its text in the origin ("--max-model-len 32k") for human_readable_flag_refusal.
Option given_tokens(std::string name, std::string value, std::optional<deploy::Given<int64_t>>& into, std::string help);
// argparse's refusal of a suffixed --max-model-len / --max-num-batched-tokens by an engine version that parses it as a
// plain integer, or "".
std::string human_readable_flag_refusal(const deploy::Flags& f, const engine::EngineProfile& engine);
// Issue 15 (arch32): argparse's "unrecognized arguments" for a speculative flag the engine version's parser lacks
// (--speculative-config before vLLM 0.8.2; --speculative-model, --num-speculative-tokens,
// --speculative-draft-tensor-parallel-size after it: engine/flag_versions), or "".
std::string speculative_flag_version_refusal(const deploy::Flags& f, const engine::EngineProfile& engine);
// Issue 19 (hard35b): `vllm serve`'s refusal of a --compilation-config key that the engine version's CompilationConfig
// lacks (engine/compilation_config_keys: pydantic's extra_forbidden from vLLM 0.13.0, 0.9.0's TypeError), prefixed with
// the flag as given, or "" (a version that ignores unknown keys, or every key known).
std::string compilation_config_refusal(const deploy::Flags& f, const engine::EngineProfile& engine);
// Issue 15 (arch32): the assumption a speculative deployment on vLLM's V0 (before 0.8.0) carries, or "".
std::string v0_speculative_note(const deploy::Flags& f, const engine::EngineProfile& engine);
Option given_real(std::string name, std::string value, std::optional<deploy::Given<double>>& into, std::string help);
Option given_text(std::string name, std::string value, std::optional<deploy::Given<std::string>>& into, std::string help);
// A JSON-valued flag vLLM reads with json.loads (--speculative-config, --compilation-config): kept as text, within the JSON
// flags' size and depth bounds (deploy::read_flag_json; issue 19, attack36).
Option given_json_text(std::string name, std::string value, std::optional<deploy::Given<std::string>>& into, std::string help);
Option given_switch(std::string name, std::optional<deploy::Given<bool>>& into, std::string help);
Option given_switch_off(std::string name, std::optional<deploy::Given<bool>>& into, std::string help);  // sets false
// Issue 15: --compilation-config (with -cc and the dotted forms) and --optimization-level (-O<n>) into `flags`.
Option compilation_config_option(deploy::Flags& flags);
Option optimization_level_option(deploy::Flags& flags);
// Issue 15 (dcp): --decode-context-parallel-size with vLLM's short name -dcp.
Option decode_context_parallel_option(deploy::Flags& flags);
// vLLM's layout, parallel and graph flags of deploy::Flags, with their help (the engine settings fit shares with plan:
// cli/engine_flags).
std::vector<Option> deployment_options(deploy::Flags& flags);

// A heading placed before the first of `options`.
std::vector<Option> under(std::string heading, std::vector<Option> options);
std::vector<Option> join(std::vector<std::vector<Option>> groups);

// Applies argv to the options; returns the positional arguments. A token that starts with one dash is an option's short
// name (with its dotted and attached forms) where one declares it, else positional. invalid_argument for an unknown flag
// (with "did you mean"), a missing value, a value its setter rejects, a flag given twice that is not Repeat::many
// (issue 19, hard32: "--variant w8a8 --variant awq" sized awq in silence; vLLM's argparse keeps the last too, but a
// prediction taken from one of two values is a guess), and a switch given with its --no- opposite.
Expected<std::vector<std::string>> parse_options(const std::vector<std::string>& argv, const std::vector<Option>& options);

// The value of the last --engine E / --engine=E in argv, empty when none: what the prescans that send fit and plan to the
// llama.cpp or MindIE model read (issue 19: "--engine mindie --engine vllm-ascend" ran MindIE's model); each of those
// commands' own parse_options then refuses a repeated --engine (hard32).
std::string last_engine_argument(const std::vector<std::string>& argv);

}  // namespace preflight::cli
