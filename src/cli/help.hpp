// cli/help: each command's own help (`preflight fit --help`): what it answers, its flags with their
// meanings (vLLM's flag names where the flag is vLLM's), and its exit codes.
#pragma once

#include <string>

namespace preflight::cli {

// The help text of `command` (an alias such as `explain` names its command), or nullptr when the
// command has none of its own.
const char* command_help(const std::string& command);

}  // namespace preflight::cli
