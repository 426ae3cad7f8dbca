// cli/serve_line_flags: the `vllm serve` flags fit takes so that a user's whole start line pastes (ux32, issue 16: the
// seeds' lines carry --trust-remote-code, --host, --port, --served-model-name and --additional-config). None of them
// changes a number fit prints; each one given is said so in the assumptions, and --additional-config's JSON is checked
// as vLLM checks it (json.loads) and read for the one key the seeds got wrong.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::cli {

struct ServeLineFlags {
  std::vector<std::string> given;  // "--host", "--port", ... in the order given
  std::optional<std::string> additional_config;
  std::optional<std::string> default_chat_template_kwargs;  // ux33: the JSON as given
  // planq32: each flag as a start command carries it ("--port 8000", "--served-model-name qwen", "--trust-remote-code"),
  // values shell-quoted where needed; plan appends them to every `vllm serve` line.
  std::vector<std::string> serve_args;
};

// The flags, under one heading for --help. --additional-config that is not a JSON object is refused as it is parsed
// (invalid_argument: vLLM's argparse refuses it before loading anything), and --port outside 1 - 65535.
std::vector<Option> serve_line_options(ServeLineFlags& flags);

// ux33: argparse's refusal of --default-chat-template-kwargs on a vLLM / vLLM-Ascend version before the one that added it
// (data/engines/flag_versions.json), as `vllm serve` prints it; "" when the version takes it or it was not given.
std::string serve_line_version_refusal(const ServeLineFlags& flags, const engine::EngineProfile& engine);

// Adds to `assumptions` what fit says for the flags given, for an engine named `engine` ("vllm-ascend", "vllm").
void add_serve_line_notes(const ServeLineFlags& flags, const std::string& engine, std::vector<std::string>& assumptions);

}  // namespace preflight::cli
