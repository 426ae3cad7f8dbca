// cli/help: the commands and their help, generated from the declarations. Each command declares its
// text once (usage lines, what it answers, exit codes) and its flags once (cli/args.hpp records); its
// `--help`, its usage errors and the top-level usage's command list are rendered from them.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli/args.hpp"

namespace preflight::cli {

struct CommandText {
  std::string usage;       // the usage lines, "usage: preflight fit MODEL --device D [flags] [--json]"
  std::string prose;       // what the command answers (paragraphs); may be empty
  std::string notes;       // printed after the flags (argument forms); may be empty
  std::string exit_codes;  // "exit: 0 fits, 1 does not fit, 2 bad input ..."
};

// A command's help: its text and its flags, bound to a scratch request (the setters are never called).
struct CommandHelp {
  CommandText text;
  std::vector<Option> options;
};

// One command: the lines it adds to the top-level usage ({synopsis, summary}), its help and its entry point.
struct Command {
  std::string name;
  std::vector<std::pair<std::string, std::string>> listing;
  std::function<CommandHelp()> help;  // empty for a command without flags of its own (version)
  std::function<int(const std::vector<std::string>&)> run;
  std::vector<std::string> aliases;
};

// Every command, in the order of the top-level usage (defined in cli.cpp).
const std::vector<Command>& commands();
// The command named `name` or one of its aliases, or nullptr.
const Command* find_command(const std::string& name);

// `--help` of a command: usage, prose, each flag (with its value name) and its help under its heading,
// the notes and the exit codes.
std::string render_help(const CommandHelp& help);
// The command list of the top-level usage.
std::string render_command_list(const std::vector<Command>& commands);
// The usage lines with a pointer to --help, for usage errors (exit 2).
std::string command_usage(const std::string& command);
// The `--json` switch every command takes.
Option json_flag(bool& into);

}  // namespace preflight::cli
