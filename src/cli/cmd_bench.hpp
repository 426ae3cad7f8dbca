// cli/cmd_bench: `preflight bench`: measure a live OpenAI-compatible server at one or more load
// levels, store every finished request, and set the measurement beside preflight's prediction.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "cli/help.hpp"

namespace preflight::cli {

int cmd_bench(const std::vector<std::string>& argv);
// bench's text and flags, for --help.
CommandHelp bench_help();
// The API key held by the environment variable --api-key-env names; invalid_argument naming the variable (never the
// key) when it is unset, empty or holds a control character (a CR or LF would inject an HTTP header).
Expected<std::string> api_key_from_env(const std::string& variable);

}  // namespace preflight::cli
