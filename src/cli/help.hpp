// cli/help: each command's own help (`preflight fit --help`): what it answers, its flags with their
// meanings (vLLM's flag names where the flag is vLLM's), and its exit codes; and the flags each command
// accepts, kept beside that text so the parser and the help cannot name different flags.
#pragma once

#include <string>
#include <vector>

#include "cli/args.hpp"

namespace preflight::cli {

// The commands that have help of their own.
std::vector<std::string> documented_commands();

// The help text of `command` (an alias such as `explain` names its command), or nullptr when the
// command has none of its own.
const char* command_help(const std::string& command);

// The flags `command` accepts (empty for a command without help).
const std::vector<FlagSpec>& command_flags(const std::string& command);

// The usage lines of the help text, for usage errors, with a pointer to --help.
std::string command_usage(const std::string& command);

}  // namespace preflight::cli
