#include "cli/args.hpp"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <utility>

#include "base/file.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "deploy/flag_json.hpp"
#include "engine/compilation_config_keys.hpp"
#include "engine/flag_versions.hpp"
#include "engine/human_readable_int.hpp"
#include "model/json_key_order.hpp"

namespace preflight::cli {

namespace {

// Issue 19 (hard32): a flag's value quoted in its error, cut as --env cuts a name (a 100 KB --variant was echoed to the
// 8 KB limit of every message).
std::string echoed(const std::string& text) { return one_line(text, 60); }

// Issue 19 (hard32): decimal digits with an optional sign, as the real flags take (is_decimal_number); strtoll alone also
// skipped leading spaces (" 4" read as 4, "4 " refused).
bool is_decimal_integer(const std::string& text) {
  const size_t digits_from = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  return text.size() > digits_from && text.find_first_not_of("0123456789", digits_from) == std::string::npos;
}

Expected<int64_t> parse_int(const std::string& name, const std::string& text) {
  const auto refused = [&] { return make_error(ErrorKind::invalid_argument, fmt::format("--{}: expected an integer, got '{}'", name, echoed(text))); };
  if (!is_decimal_integer(text)) return refused();
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return refused();
  return static_cast<int64_t>(parsed);
}

// Issue 19: a number flag takes decimal digits only: an optional sign, digits with at most one point, and an optional
// exponent of decimal digits (1, 0.9, .5, 2e3). strtod alone also reads hex ("0x10" as 16), "inf", "nan" and leading
// spaces, which no flag means; every real flag goes through here.
bool is_decimal_number(const std::string& text) {
  size_t i = 0, digits = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) ++digits;
  if (i < text.size() && text[i] == '.')
    for (++i; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) ++digits;
  if (digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    size_t exponent_digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) ++exponent_digits;
    if (exponent_digits == 0) return false;
  }
  return i == text.size();
}

Expected<double> parse_real(const std::string& name, const std::string& text) {
  if (!is_decimal_number(text)) return make_error(ErrorKind::invalid_argument, fmt::format("--{}: expected a decimal number, got '{}'", name, echoed(text)));
  errno = 0;
  char* end = nullptr;
  const double parsed = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0') return make_error(ErrorKind::invalid_argument, fmt::format("--{}: expected a number, got '{}'", name, echoed(text)));
  return parsed;
}

Status check_int(const std::string& name, int64_t v, IntRange range) {
  if (v < range.least || v > range.most) return make_error(ErrorKind::invalid_argument, fmt::format("--{} must be between {} and {}, found {}", name, range.least, range.most, v));
  return Ok{};
}

}  // namespace

Expected<int64_t> parse_int_in_range(const std::string& name, const std::string& text, IntRange range) {
  PF_TRY(v, parse_int(name, text));
  PF_TRY(ok, check_int(name, v, range));
  (void)ok;
  return v;
}

Option switch_flag(std::string name, bool& into, std::string help) {
  return {std::move(name), "", std::move(help), [&into](const std::string&) -> Status {
            into = true;
            return Ok{};
          }};
}

Option text_flag(std::string name, std::string value, std::optional<std::string>& into, std::string help, std::vector<std::string> choices) {
  return {name, std::move(value), std::move(help), [&into, name, choices](const std::string& text) -> Status {
            if (!choices.empty() && std::find(choices.begin(), choices.end(), text) == choices.end()) {
              const std::string all = choices.size() == 1 ? choices[0] : fmt::format("{} or {}", fmt::join(choices.begin(), choices.end() - 1, ", "), choices.back());
              return make_error(ErrorKind::invalid_argument, fmt::format("--{}: expected {}, got '{}'", name, all, echoed(text)));
            }
            into = text;
            return Ok{};
          }};
}

Option models_dir_flag(std::optional<std::string>& into, std::string help) {
  return {"models", "DIR", std::move(help), [&into](const std::string& text) -> Status {
            struct stat st {};
            if (::stat(text.c_str(), &st) != 0)
              return make_error(ErrorKind::invalid_argument, fmt::format("--models: '{}': {}", one_line(text, 1024), errno == ENOENT ? "no such directory" : std::strerror(errno)), "--models");
            if (!S_ISDIR(st.st_mode)) return make_error(ErrorKind::invalid_argument, fmt::format("--models: '{}': expected a directory, found {}", one_line(text, 1024), file_type_name(st.st_mode)), "--models");
            into = text;
            return Ok{};
          }};
}

Option int_flag(std::string name, std::string value, std::optional<int64_t>& into, IntRange range, std::string help) {
  return {name, std::move(value), std::move(help), [&into, name, range](const std::string& text) -> Status {
            PF_TRY(v, parse_int_in_range(name, text, range));
            into = v;
            return Ok{};
          }};
}

Option real_flag(std::string name, std::string value, std::optional<double>& into, RealRange range, std::string help) {
  return {name, std::move(value), std::move(help), [&into, name, range](const std::string& text) -> Status {
            PF_TRY(v, parse_real(name, text));
            const std::string unit = range.unit.empty() ? "" : " " + range.unit;
            if (range.lower == RealRange::Lower::positive) {
              if (!(v > 0)) return make_error(ErrorKind::invalid_argument, fmt::format("--{} must be positive", name));
              if (v > range.most) return make_error(ErrorKind::invalid_argument, fmt::format("--{} must be at most {:g}{}, found {:g}", name, range.most, unit, v));
            } else if (!(v >= range.least && v <= range.most)) {
              return make_error(ErrorKind::invalid_argument, fmt::format("--{} must be between {:g} and {:g}{}, found {:g}", name, range.least, range.most, unit, v));
            }
            into = v;
            return Ok{};
          }};
}

Option int_list_flag(std::string name, std::string value, std::optional<std::vector<int64_t>>& into, IntRange range, std::string help) {
  return {name, std::move(value), std::move(help), [&into, name, range](const std::string& text) -> Status {
            std::vector<int64_t> out;
            for (const auto& item : split(text, ',')) {
              const std::string p = trim(item);
              char* end = nullptr;
              errno = 0;
              const long long v = std::strtoll(p.c_str(), &end, 10);
              if (p.empty() || *end != '\0' || errno == ERANGE || v < 1)
                return make_error(ErrorKind::invalid_argument, fmt::format("--{}: expected positive integers like 1,4,16,64, found \"{}\"", name, echoed(text)));
              PF_TRY(ok, check_int(name, v, range));
              (void)ok;
              out.push_back(v);
            }
            into = std::move(out);
            return Ok{};
          }};
}

Option given_int(std::string name, std::string value, std::optional<deploy::Given<int64_t>>& into, std::string help) {
  return {name, std::move(value), std::move(help), [&into, name](const std::string& text) -> Status {
            PF_TRY(v, parse_int(name, text));
            into = deploy::Given<int64_t>{v, "--" + name};
            return Ok{};
          }};
}

Option given_tokens(std::string name, std::string value, std::optional<deploy::Given<int64_t>>& into, std::string help) {
  return {name, std::move(value), std::move(help), [&into, name](const std::string& text) -> Status {
            PF_TRY(human, engine::parse_human_readable_int("--" + name, text));
            if (human) {  // the origin keeps the text as written: the engine version decides whether its parser takes it
              into = deploy::Given<int64_t>{*human, "--" + name + " " + echoed(trim(text))};
              return Ok{};
            }
            PF_TRY(v, parse_int(name, trim(text)));  // int(value) strips spaces as human_readable_int does
            into = deploy::Given<int64_t>{v, "--" + name};
            return Ok{};
          }};
}

std::string speculative_flag_version_refusal(const deploy::Flags& f, const engine::EngineProfile& engine) {
  if (!f.speculative_config) return "";
  const auto& catalog = engine::shipped_flag_versions();
  if (!catalog) return "";
  for (const auto& flag : split(f.speculative_config->origin, ' ')) {
    if (flag.rfind("--", 0) != 0) continue;
    const std::string as_written = flag == "--speculative-config" ? flag + " '" + one_line(f.speculative_config->value, 200) + "'" : flag;
    if (std::string why = engine::flag_version_refusal(*catalog, engine.engine, engine.rule_version(), flag, as_written); !why.empty()) return why;
  }
  return "";
}

std::string compilation_config_refusal(const deploy::Flags& f, const engine::EngineProfile& engine) {
  if (!f.compilation_config) return "";
  const auto& catalog = engine::shipped_compilation_config_keys();
  if (!catalog) return "";
  const std::string& text = f.compilation_config->value;
  const Json config = Json::parse(text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return "";  // deploy::check_flags refuses it with its own message
  const auto order = [&](const std::vector<std::string>& path) {
    auto keys = model::object_keys_in_order(text, path, f.compilation_config->origin);
    return keys ? *keys : std::vector<std::string>{};
  };
  const std::string why = engine::compilation_config_refusal_text(*catalog, engine.engine, engine.rule_version(), config, order, text);
  return why.empty() ? "" : f.compilation_config->origin + ": " + why + " (" + engine.engine + " " + engine.rule_version().text() + ", " + catalog->origin + ")";
}

std::string v0_speculative_note(const deploy::Flags& f, const engine::EngineProfile& engine) {
  if (!f.speculative_config || (engine.engine != "vllm" && engine.engine != "vllm-ascend") || !(engine.rule_version() < engine::Version{0, 8, 0})) return "";
  return "speculative decoding on " + engine.engine + " " + engine.rule_version().text() +
         " (V0 spec_decode) sized as V1 sizes it (the drafter's layers in the KV bytes per token, its weights in the budget); "
         "V0's own accounting, which leaves the draft weights outside its profile, is not modelled (data/engines/flag_versions.json note)";
}

std::string human_readable_flag_refusal(const deploy::Flags& f, const engine::EngineProfile& engine) {
  for (const auto* given : {&f.max_model_len, &f.max_num_batched_tokens}) {
    if (!*given) continue;
    const std::string& origin = (*given)->origin;
    const size_t space = origin.find(' ');
    if (space == std::string::npos || origin.rfind("--", 0) != 0) continue;
    if (std::string why = engine::human_readable_refusal(engine.engine, engine.rule_version(), origin.substr(0, space), origin.substr(space + 1)); !why.empty())
      return why;
  }
  return "";
}

Option given_real(std::string name, std::string value, std::optional<deploy::Given<double>>& into, std::string help) {
  return {name, std::move(value), std::move(help), [&into, name](const std::string& text) -> Status {
            PF_TRY(v, parse_real(name, text));
            into = deploy::Given<double>{v, "--" + name};
            return Ok{};
          }};
}

Option given_text(std::string name, std::string value, std::optional<deploy::Given<std::string>>& into, std::string help) {
  return {name, std::move(value), std::move(help), [&into, name](const std::string& text) -> Status {
            into = deploy::Given<std::string>{text, "--" + name};
            return Ok{};
          }};
}

// Issue 19 (attack36): --speculative-config was parsed whole at any depth and size (60,000 levels
// under a key no check reads: "fits", exit 0), where its dotted forms and the other JSON flags stop at 64 levels and
// 131,071 bytes (deploy::read_flag_json) and vLLM's json.loads raises RecursionError long before.
Option given_json_text(std::string name, std::string value, std::optional<deploy::Given<std::string>>& into, std::string help) {
  return {name, std::move(value), std::move(help), [&into, name](const std::string& text) -> Status {
            // A text that is no JSON at all is refused with the flag's own words where it is read (hard33 quotes it cut).
            if (!Json::parse(text, nullptr, false).is_discarded()) {
              PF_TRY(parsed, deploy::read_flag_json(text, "--" + name));
              (void)parsed;
            }
            into = deploy::Given<std::string>{text, "--" + name};
            return Ok{};
          }};
}

Option given_switch(std::string name, std::optional<deploy::Given<bool>>& into, std::string help) {
  return {name, "", std::move(help), [&into, name](const std::string&) -> Status {
            into = deploy::Given<bool>{true, "--" + name};
            return Ok{};
          }};
}

Option given_switch_off(std::string name, std::optional<deploy::Given<bool>>& into, std::string help) {
  return {name, "", std::move(help), [&into, name](const std::string&) -> Status {
            into = deploy::Given<bool>{false, "--" + name};
            return Ok{};
          }};
}

// ux32 (issue 16): vLLM's short names (vllm/engine/arg_utils.py add_cli_args: "-tp", "-pp", "-dp", "-q"; "-cc", "-dcp", "-O"), as
// the seeds' users paste them from their `vllm serve` lines.
Option with_short_name(Option o, std::string short_name) {
  o.short_names = {std::move(short_name)};
  return o;
}

// Issue 15: --compilation-config JSON, -cc JSON, and the dotted forms vLLM's FlexibleArgumentParser merges into it
// (--compilation-config.max_cudagraph_capture_size 16, -cc.cudagraph_mode=PIECEWISE; -O.key=value as vLLM < 0.12 took it).
Option compilation_config_option(deploy::Flags& f) {
  Option o = with_short_name(given_text("compilation-config", "JSON", f.compilation_config,
                                        "'{\"cudagraph_capture_sizes\": [1, 2, 4, 8], \"max_cudagraph_capture_size\": 8,\n\"cudagraph_mode\": \"PIECEWISE\"}'; "
                                        "also -cc JSON, -cc.KEY=VALUE, --compilation-config.KEY VALUE"),
                             "-cc");
  auto& into = f.compilation_config;
  o.set_dotted = [&into](const std::string& key, const std::string& value) { return deploy::merge_dotted_json(into, key, value, "--compilation-config"); };
  return o;
}

// Issue 15 (dcp): --decode-context-parallel-size N and vLLM's short name -dcp N.
Option decode_context_parallel_option(deploy::Flags& f) {
  return with_short_name(given_int("decode-context-parallel-size", "N", f.decode_context_parallel_size,
                                   "ranks of a TP group that split each request's KV tokens (divides TP; GQA: at most\nTP / KV heads); the printed tokens x N; also -dcp N"),
                         "-dcp");
}

// Issue 15: --optimization-level N, -O N, -ON, -O=N (vLLM >= 0.12: the cudagraph_mode default of each level).
Option optimization_level_option(deploy::Flags& f) {
  Option o = with_short_name(given_int("optimization-level", "N", f.optimization_level,
                                       "vLLM >= 0.12: 0 no graphs, 1 PIECEWISE, 2 and 3 FULL_AND_PIECEWISE (the default); also -ON"),
                             "-O");
  auto& into = f.compilation_config;
  o.set_dotted = [&into](const std::string& key, const std::string& value) { return deploy::merge_dotted_json(into, key, value, "-O"); };
  return o;
}

// Issue 15 (arch32): vLLM <= 0.8.2's speculative flags, merged into --speculative-config's JSON the way vLLM 0.8.2's
// EngineArgs.create_speculative_config builds it from them ("model", "num_speculative_tokens",
// "draft_tensor_parallel_size", ...; V0's "[ngram]" drafter is method ngram). A --speculative-config given first wins, as
// vLLM ignores these flags then. The origin lists every such flag given, so a version whose parser lacks one refuses it
// by name (engine/flag_versions). spec35: each value as argparse reads it (vllm/engine/arg_utils.py v0.6.0 - v0.8.2:
// type=int, type=float, action='store_true'), argparse's message otherwise.
enum class LegacyValue { text, integer, real, store_true };

Option legacy_speculative_option(const std::string& name, const std::string& key, const std::string& value, deploy::Flags& f, const std::string& help,
                                 LegacyValue type = LegacyValue::text) {
  auto& into = f.speculative_config;
  return {name, type == LegacyValue::store_true ? "" : value, help, [&into, name, key, type](const std::string& given) -> Status {
            const std::string flag = "--" + name;
            const std::string text = type == LegacyValue::store_true ? "true" : given;
            const std::string word = trim(text);
            char* end = nullptr;
            if (type == LegacyValue::integer) {
              const bool digits = !word.empty() && word.find_first_not_of("0123456789", word[0] == '-' || word[0] == '+' ? 1 : 0) == std::string::npos &&
                                  word.size() > (word[0] == '-' || word[0] == '+' ? 1u : 0u);
              if (!digits) return make_error(ErrorKind::invalid_argument, "vllm serve: error: argument " + flag + ": invalid int value: '" + one_line(text, 80) + "'");
            }
            if (type == LegacyValue::real && (word.empty() || (std::strtod(word.c_str(), &end), end != word.c_str() + word.size())))
              return make_error(ErrorKind::invalid_argument, "vllm serve: error: argument " + flag + ": invalid float value: '" + one_line(text, 80) + "'");
            const bool config_first = into && into->origin.rfind("--speculative-config", 0) == 0;
            if (!config_first) {
              const bool ngram = key == "model" && text == "[ngram]";
              // The value as JSON: text quoted, a number as the number argparse read ("+3", "03" and ".5" are 3, 3 and 0.5).
              const long long integer = type == LegacyValue::integer ? std::strtoll(word.c_str(), nullptr, 10) : 0;
              const bool in_range = type != LegacyValue::integer || (integer != LLONG_MAX && integer != LLONG_MIN);
              const std::string json = type == LegacyValue::text          ? Json(text).dump()
                                       : type == LegacyValue::integer && in_range ? std::to_string(integer)
                                       : type == LegacyValue::real        ? Json(std::strtod(word.c_str(), nullptr)).dump()
                                                                          : word;
              PF_TRY(merged, deploy::merge_dotted_json(into, ngram ? "method" : key, ngram ? "ngram" : json, flag));
              (void)merged;
            }
            if (!into) into = deploy::Given<std::string>{"{}", flag};
            if (into->origin != flag && (" " + into->origin + " ").find(" " + flag + " ") == std::string::npos) into->origin += " " + flag;
            return Ok{};
          }};
}

std::vector<Option> deployment_options(deploy::Flags& f) {
  // vLLM's short names of the data-parallel flags (vllm/engine/arg_utils.py, vllm/entrypoints/cli/serve.py).
  return under("vLLM's flags, with vLLM's meanings (unset: that version's default):",
               {with_short_name(given_int("tensor-parallel-size", "N", f.tensor_parallel_size, "devices per pipeline stage; also -tp N"), "-tp"),
                with_short_name(given_int("pipeline-parallel-size", "N", f.pipeline_parallel_size, "pipeline stages; also -pp N"), "-pp"),
                decode_context_parallel_option(f),
                given_tokens("max-model-len", "L", f.max_model_len, "without it: vLLM's derived max_model_len (max_position_embeddings, rope-scaled),\nand the largest context that fits; 32k = 32,000, 32K = 32,768 (vLLM 0.8.4 and later)"),
                given_real("gpu-memory-utilization", "U", f.gpu_memory_utilization, "fraction of device memory the engine may use, in (0, 1]"),
                with_short_name(given_text("quantization", "Q", f.quantization, "a method the checkpoint does not state (the engine's accepted list is checked); also -q Q"), "-q"),
                given_text("dtype", "D", f.dtype, "auto|half|float16|bfloat16|float|float32: the model dtype (weights a quantization does\nnot pack, activations, an auto KV cache); auto: the config's"),
                with_short_name(given_int("data-parallel-size", "N", f.data_parallel_size,
                                          "engine replicas, each TP x PP ranks with its own KV cache; MoE experts split over DP x TP;\nalso -dp N"),
                                "-dp"),
                with_short_name(given_int("data-parallel-size-local", "N", f.data_parallel_size_local, "DP ranks on this node (multi-node; at least 1 on a --headless node); -dpl"), "-dpl"),
                given_switch("headless", f.headless, "this node runs its DP ranks' engines only, no API server (vLLM >= 0.9)"),
                with_short_name(given_int("data-parallel-start-rank", "R", f.data_parallel_start_rank, "the first DP rank of this node (a --headless node; vLLM >= 0.10 also hybrid LB); -dpr"), "-dpr"),
                with_short_name(given_text("data-parallel-address", "HOST", f.data_parallel_address, "the head node's address every node meets at (vLLM >= 0.9); -dpa"), "-dpa"),
                with_short_name(given_int("data-parallel-rpc-port", "PORT", f.data_parallel_rpc_port, "the head node's data-parallel RPC port (vLLM >= 0.9); -dpp"), "-dpp"),
                with_short_name(given_text("data-parallel-backend", "B", f.data_parallel_backend, "mp (default) or ray (vLLM >= 0.9.1); -dpb"), "-dpb"),
                given_switch("data-parallel-hybrid-lb", f.data_parallel_hybrid_lb, "each node's API server balances its own ranks (vLLM >= 0.10)"),
                given_switch("data-parallel-external-lb", f.data_parallel_external_lb, "one rank per start behind an external balancer (vLLM >= 0.11.1)"),
                with_short_name(given_int("api-server-count", "N", f.api_server_count, "API server processes (vLLM >= 0.9.1; none on a --headless node); -asc"), "-asc"),
                with_short_name(given_int("data-parallel-rank", "R", f.data_parallel_rank, "this start is DP rank R alone, behind an external balancer (vLLM >= 0.9.2); -dpn"), "-dpn"),
                with_short_name(given_int("nnodes", "N", f.nnodes, "nodes the DP x TP x PP ranks are split over evenly (vLLM >= 0.11.1); -n"), "-n"),
                with_short_name(given_int("node-rank", "R", f.node_rank, "this node's index of --nnodes; vLLM infers its DP ranks (vLLM >= 0.11.1); -r"), "-r"),
                given_text("master-addr", "HOST", f.master_addr, "the head node of --nnodes' torch.distributed group (vLLM >= 0.11.1)"),
                given_int("master-port", "PORT", f.master_port, "its port (vLLM >= 0.11.1)"),
                given_switch("enable-expert-parallel", f.enable_expert_parallel, "whole routed experts per rank over DP x TP ranks"),
                given_switch("allow-deprecated-quantization", f.allow_deprecated_quantization,
                             "load a quantization method the vLLM version deprecates (>= 0.14; without it\nModelConfig refuses the method)"),
                given_json_text("speculative-config", "JSON", f.speculative_config,
                           "'{\"method\": \"mtp\", \"num_speculative_tokens\": 2}' (mtp, eagle, eagle3, draft_model with model, ngram, suffix)"),
                legacy_speculative_option("speculative-model", "model", "M", f, "vLLM 0.8.2 and older: the drafter ([ngram] for n-gram); later --speculative-config"),
                legacy_speculative_option("num-speculative-tokens", "num_speculative_tokens", "N", f, "vLLM 0.8.2 and older: tokens drafted per step", LegacyValue::integer),
                with_short_name(legacy_speculative_option("speculative-draft-tensor-parallel-size", "draft_tensor_parallel_size", "N", f,
                                                          "vLLM 0.8.2 and older: the drafter's TP size; also -spec-draft-tp N", LegacyValue::integer),
                                "-spec-draft-tp"),
                // quant34: the n-gram window of V0's '[ngram]' drafter, which plan's start lines before 0.8.2 carry
                legacy_speculative_option("ngram-prompt-lookup-max", "prompt_lookup_max", "N", f, "vLLM 0.8.2 and older: the n-gram drafter's largest window", LegacyValue::integer),
                legacy_speculative_option("ngram-prompt-lookup-min", "prompt_lookup_min", "N", f, "vLLM 0.8.2 and older: the n-gram drafter's smallest window", LegacyValue::integer),
                // spec35: the rest of V0's speculative flags, as 0.8.2's create_speculative_config maps them
                legacy_speculative_option("speculative-model-quantization", "quantization", "Q", f, "vLLM 0.8.2 and older: the drafter's quantization method"),
                legacy_speculative_option("speculative-max-model-len", "max_model_len", "L", f, "vLLM 0.8.2 and older: the drafter's longest sequence", LegacyValue::integer),
                legacy_speculative_option("speculative-disable-by-batch-size", "disable_by_batch_size", "N", f,
                                          "vLLM 0.8.2 and older: no speculation above N queued requests (N > 1)", LegacyValue::integer),
                legacy_speculative_option("speculative-disable-mqa-scorer", "disable_mqa_scorer", "", f, "vLLM 0.6.3 - 0.8.2: batch expansion instead of the MQA scorer",
                                          LegacyValue::store_true),
                legacy_speculative_option("spec-decoding-acceptance-method", "acceptance_method", "M", f,
                                          "vLLM 0.8.2 and older: rejection_sampler or typical_acceptance_sampler"),
                legacy_speculative_option("typical-acceptance-sampler-posterior-threshold", "posterior_threshold", "P", f,
                                          "vLLM 0.8.2 and older: the typical acceptance sampler's threshold", LegacyValue::real),
                legacy_speculative_option("typical-acceptance-sampler-posterior-alpha", "posterior_alpha", "A", f,
                                          "vLLM 0.8.2 and older: the typical acceptance sampler's alpha", LegacyValue::real),
                compilation_config_option(f),
                optimization_level_option(f),
                given_text("attention-backend", "B", f.attention_backend,
                           "FLASHINFER, FLASH_ATTN, TRITON_ATTN, ... (FLASHINFER with speculative decoding: PIECEWISE graphs\nonly, outside B200/B300)"),
                given_text("interconnect", "I", f.interconnect,
                           "how the GPUs of a TP group reach each other: nvswitch|nvlink-direct|pcie|network\n(unset: the card's form factor decides, said as an assumption with a band); sizes the\nNCCL buffers vLLM < 0.11 counts"),
                given_text("pp-layer-partition", "L1,L2", f.pp_layer_partition,
                           "VLLM_PP_LAYER_PARTITION: decoder layers per pipeline stage; with --device A,B each\nstage on its own card (heterogeneous PP)")});
}

std::vector<Option> under(std::string heading, std::vector<Option> options) {
  if (!options.empty()) options.front().heading = std::move(heading);
  return options;
}

std::vector<Option> join(std::vector<std::vector<Option>> groups) {
  std::vector<Option> out;
  for (auto& g : groups) for (auto& o : g) out.push_back(std::move(o));
  return out;
}

namespace {

// One token that starts with a single dash, as vLLM's FlexibleArgumentParser reads it: a short name alone (its value is
// the next token), NAME.KEY=VALUE or NAME.KEY VALUE (dotted), NAME=VALUE, or a two-letter short name with its value
// attached (-O3). false: no option declares it (the token is positional).
// Issue 19 (hard32): the flags given so far and the text each took, so that a second one is refused.
class GivenFlags {
 public:
  Status note(const Option& o, const std::string& spelled, const std::string& value) {
    if (o.repeat == Option::Repeat::many) return Ok{};
    for (const auto& [option, first] : m_given) {
      if (option == &o)
        return make_error(ErrorKind::invalid_argument,
                          o.value.empty() ? fmt::format("{} is given twice; give it once", spelled)
                                          : fmt::format("{} is given twice ('{}', then '{}'); give it once (vLLM's argparse would keep the last, '{}'; preflight answers for "
                                                        "one value only)",
                                                        spelled, echoed(first), echoed(value), echoed(value)),
                          spelled);
      if (o.value.empty() && option->value.empty() && (option->name == "no-" + o.name || o.name == "no-" + option->name))
        return make_error(ErrorKind::invalid_argument, fmt::format("--{} and --{} contradict each other; give one", option->name, o.name), spelled);
    }
    m_given.emplace_back(&o, value);
    return Ok{};
  }

 private:
  std::vector<std::pair<const Option*, std::string>> m_given;
};

Expected<bool> apply_short(const std::vector<std::string>& argv, size_t& i, const std::vector<Option>& options, GivenFlags& given) {
  const std::string& a = argv[i];
  for (const auto& o : options) {
    for (const auto& sn : o.short_names) {
      if (a.rfind(sn, 0) != 0) continue;
      const std::string rest = a.substr(sn.size());
      if (rest.empty()) {
        if (i + 1 >= argv.size()) return make_error(ErrorKind::invalid_argument, fmt::format("{} needs a value", sn));
        PF_TRY(once, given.note(o, sn, argv[i + 1]));
        (void)once;
        PF_TRY(ok, o.set(argv[++i]));
        (void)ok;
        return true;
      }
      if (rest[0] == '.' && o.set_dotted) {
        std::string key = rest.substr(1), value;
        if (const auto eq = key.find('='); eq != std::string::npos) {
          value = key.substr(eq + 1);
          key = key.substr(0, eq);
        } else {
          if (i + 1 >= argv.size()) return make_error(ErrorKind::invalid_argument, fmt::format("{} needs a value", a));
          value = argv[++i];
        }
        PF_TRY(ok, o.set_dotted(key, value));
        (void)ok;
        return true;
      }
      if (rest[0] == '=' || sn.size() == 2) {
        PF_TRY(once, given.note(o, sn, rest[0] == '=' ? rest.substr(1) : rest));
        (void)once;
        PF_TRY(ok, o.set(rest[0] == '=' ? rest.substr(1) : rest));
        (void)ok;
        return true;
      }
    }
  }
  return false;
}

}  // namespace

Expected<std::vector<std::string>> parse_options(const std::vector<std::string>& argv, const std::vector<Option>& options) {
  std::vector<std::string> positional;
  GivenFlags given;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.size() >= 2 && a[0] == '-' && a[1] != '-') {
      PF_TRY(used, apply_short(argv, i, options, given));
      if (used) continue;
      // ux32: a dash and a letter no option declares is a flag this command lacks ("-tp" once was), never a second
      // MODEL: say so, as for --name, instead of the bare usage line. "-", negative numbers and a path that exists
      // (a folder named "-rf", hard30) stay positional.
      struct stat st {};
      if (std::isalpha(static_cast<unsigned char>(a[1])) && ::stat(a.c_str(), &st) != 0) {
        std::vector<std::string> names;
        for (const auto& o : options) {
          names.push_back("--" + o.name);
          for (const auto& sn : o.short_names) names.push_back(sn);
        }
        std::string message = fmt::format("unknown flag {}", one_line(a, 60));
        const auto near = nearest_names(a, names, 1);
        if (!near.empty()) message += "; did you mean " + near[0];
        return make_error(ErrorKind::invalid_argument, message);
      }
      positional.push_back(a);
      continue;
    }
    if (a.size() <= 2 || a.rfind("--", 0) != 0) {
      positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool inline_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    std::string dotted_key;
    if (const auto dot = name.find('.'); dot != std::string::npos) {
      dotted_key = name.substr(dot + 1);
      name = name.substr(0, dot);
    }
    for (auto& c : name) if (c == '_') c = '-';
    const Option* option = nullptr;
    for (const auto& o : options) if (o.name == name) option = &o;
    if (option && !dotted_key.empty()) {
      if (!option->set_dotted) return make_error(ErrorKind::invalid_argument, fmt::format("--{} takes no dotted keys (--{}.{})", name, name, dotted_key));
      if (!inline_value) {
        if (i + 1 >= argv.size()) return make_error(ErrorKind::invalid_argument, fmt::format("--{}.{} needs a value", name, dotted_key));
        value = argv[++i];
      }
      PF_TRY(ok, option->set_dotted(dotted_key, value));
      (void)ok;
      continue;
    }
    if (!option) {
      std::vector<std::string> names;
      for (const auto& o : options) names.push_back("--" + o.name);
      std::string message = fmt::format("unknown flag --{}", name);
      const auto near = nearest_names("--" + name, names, 1);
      if (!near.empty()) message += "; did you mean " + near[0];
      return make_error(ErrorKind::invalid_argument, message);
    }
    if (option->value.empty() && inline_value) {
      // Issue 19: a switch takes no value. "--enable-chunked-prefill=false" turned it on and "--fix=no" ran the fix;
      // vLLM's argparse refuses the same text ("ignored explicit argument").
      std::string opposite;
      const std::string other = starts_with(name, "no-") ? name.substr(3) : "no-" + name;
      for (const auto& o : options) if (o.name == other && o.value.empty()) opposite = fmt::format("; --{} is its opposite", other);
      return make_error(ErrorKind::invalid_argument, fmt::format("--{} is a switch and takes no value, found '{}'{}", name, one_line(a, 120), opposite));
    }
    if (!option->value.empty() && !inline_value) {
      if (i + 1 >= argv.size()) return make_error(ErrorKind::invalid_argument, fmt::format("--{} needs a value", name));
      value = argv[++i];
    }
    PF_TRY(once, given.note(*option, "--" + name, value));
    (void)once;
    PF_TRY(ok, option->set(option->value.empty() ? std::string() : value));
    (void)ok;
  }
  return positional;
}

std::string last_engine_argument(const std::vector<std::string>& argv) {
  std::string engine;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--engine" && i + 1 < argv.size()) engine = argv[++i];
    else if (argv[i].rfind("--engine=", 0) == 0) engine = argv[i].substr(9);
  }
  return engine;
}

}  // namespace preflight::cli
