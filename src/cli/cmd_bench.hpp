// cli/cmd_bench: `preflight bench`: measure a live OpenAI-compatible server at one or more load
// levels, store every finished request, and set the measurement beside preflight's prediction.
#pragma once

#include <string>
#include <vector>

#include "cli/help.hpp"

namespace preflight::cli {

int cmd_bench(const std::vector<std::string>& argv);
// bench's text and flags, for --help.
CommandHelp bench_help();

}  // namespace preflight::cli
