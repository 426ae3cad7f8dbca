#include "cli/serve_line_flags.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/quote.hpp"
#include "base/text.hpp"
#include "deploy/flag_json.hpp"
#include "engine/flag_versions.hpp"
#include "doctor/doctor.hpp"
#include "plan/launch.hpp"

namespace preflight::cli {

namespace {

Option recorded(ServeLineFlags& flags, std::string name, std::string value, std::string help) {
  return {name, std::move(value), std::move(help), [&flags, name](const std::string& text) -> Status {
            // vLLM's --port is an int; a port is 1 - 65535 (read by the integer flags' parser, cli/args).
            if (name == "port" && !parse_int_in_range("port", text, IntRange{.least = 1, .most = 65535}))
              return make_error(ErrorKind::invalid_argument, fmt::format("--port: expected a port number 1 - 65535, found '{}'", one_line(text, 40)));
            flags.given.push_back("--" + name);
            const bool is_switch = name == "trust-remote-code" || name == "enable-auto-tool-choice";
            flags.serve_args.push_back(is_switch ? "--" + name : "--" + name + " " + plan::shell_word(text));
            return Ok{};
          }};
}

// A flag whose value vLLM reads with json.loads as a dict (EngineArgs / FrontendArgs optional_type(json.loads)): text that
// is not a JSON object stops `vllm serve` at argument parsing, before anything loads. Kept as given in `into`.
// Issue 19 (hard34): read within the JSON flags' size and depth bounds (deploy/flag_json), as the other JSON flags are.
Option json_object_flag(ServeLineFlags& flags, std::string name, std::string help, std::optional<std::string> ServeLineFlags::*into) {
  return {name, "JSON", std::move(help), [&flags, name, into](const std::string& text) -> Status {
            PF_TRY(j, deploy::read_flag_json(text, "--" + name));
            if (j.is_discarded() || !j.is_object())
              return make_error(ErrorKind::invalid_argument,
                                fmt::format("--{}: expected a JSON object, found '{}' (vLLM reads it with json.loads)", name, one_line(text, 80)));
            flags.*into = text;
            flags.given.push_back("--" + name);
            flags.serve_args.push_back("--" + name + " " + plan::shell_single_quoted(text));
            return Ok{};
          }};
}

}  // namespace

std::vector<Option> serve_line_options(ServeLineFlags& flags) {
  std::vector<Option> out = {
      recorded(flags, "trust-remote-code", "", "as vLLM takes it; changes no number here"),
      recorded(flags, "host", "H", "as vLLM takes it; changes no number here"),
      recorded(flags, "port", "N", "as vLLM takes it; changes no number here"),
      recorded(flags, "served-model-name", "NAME", "as vLLM takes it; changes no number here"),
      // ux33: plan --workload agent's start lines carry them (data/engines/launch.json agent-tools-*, agent-reasoning-*).
      recorded(flags, "enable-auto-tool-choice", "", "as vLLM takes it; changes no number here"),
      recorded(flags, "tool-call-parser", "NAME", "as vLLM takes it (hermes, llama3_json, ...); changes no number here"),
      recorded(flags, "reasoning-parser", "NAME", "as vLLM takes it (qwen3, deepseek_r1, ...); changes no number here"),
      json_object_flag(flags, "additional-config",
                       "vLLM-Ascend's settings ('{\"ascend_compilation_config\": {\"fuse_qknorm_rope\": false}}'): checked as\n"
                       "JSON, not sized; a key the engine does not read is said so",
                       &ServeLineFlags::additional_config),
      // ux33: plan's own start commands carry it (data/engines/launch.json qwen3-thinking-off) and seed 001 section 8 starts
      // with it, so a start line plan printed pastes back into fit. vLLM reads it with json.loads (FrontendArgs
      // default_chat_template_kwargs: dict) and passes it to the chat template as keyword arguments.
      json_object_flag(flags, "default-chat-template-kwargs",
                       "vLLM >= 0.14: keyword arguments for the chat template ('{\"enable_thinking\": false}'): checked as JSON,\n"
                       "not sized; an older version's argparse refuses it",
                       &ServeLineFlags::default_chat_template_kwargs)};
  return under("from a `vllm serve` line, accepted so that it pastes whole (no effect on the estimate):", std::move(out));
}

std::string serve_line_version_refusal(const ServeLineFlags& flags, const engine::EngineProfile& engine) {
  if (!flags.default_chat_template_kwargs) return "";
  const auto& catalog = engine::shipped_flag_versions();
  if (!catalog) return "";
  return engine::flag_version_refusal(*catalog, engine.engine, engine.rule_version(), "--default-chat-template-kwargs",
                                      "--default-chat-template-kwargs " + one_line(plan::shell_single_quoted(*flags.default_chat_template_kwargs), 200));
}

void add_serve_line_notes(const ServeLineFlags& flags, const std::string& engine, std::vector<std::string>& notes) {
  std::vector<std::string> plain;
  for (const auto& g : flags.given)
    if (g != "--additional-config") plain.push_back(g);
  if (!plain.empty()) notes.push_back(fmt::format("{}: as vLLM takes them; no effect on memory or speed", fmt::join(plain, ", ")));
  if (!flags.additional_config) return;
  // The fusion switch where vllm-ascend does not read it: doctor's check of a deploy script, on the flag's text.
  if (engine == "vllm-ascend" && doctor::names_misplaced_fusion_key(*flags.additional_config))
    notes.push_back(std::string("--additional-config: ascend_fusion_config.fuse_qknorm_rope is not read there (AscendFusionConfig takes it into **kwargs), so "
                                "the qknorm-rope fusion pass stays on; write ") + doctor::k_fusion_key_fix);
  notes.push_back("--additional-config: passed to the engine as given; not sized (no number here changes with it)");
}

}  // namespace preflight::cli
