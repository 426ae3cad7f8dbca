// cli/cmd_logs: `preflight logs FILE` (alias `preflight explain FILE`): versions, engine args and
// printed memory lines of an engine log, the failure's root cause with evidence and fix, and for
// memory-related logs fit's prediction for the same deployment beside what the engine printed.
// `--emit-case` prints one validation-case line (../shared/validation/README.md schema).
#pragma once

#include <string>
#include <vector>

#include "cli/help.hpp"

namespace preflight::cli {

int cmd_logs(const std::vector<std::string>& argv);
// logs's text and flags, for --help.
CommandHelp logs_help();

}  // namespace preflight::cli
