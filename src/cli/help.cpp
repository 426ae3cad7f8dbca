#include "cli/help.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace preflight::cli {

namespace {

constexpr size_t k_help_column = 30;

}  // namespace

std::string render_help(const CommandHelp& help) {
  std::string out = help.text.usage + "\n";
  if (!help.text.prose.empty()) out += "\n" + help.text.prose + "\n";
  if (!help.options.empty()) out += "\n";
  for (const auto& o : help.options) {
    if (!o.heading.empty()) out += o.heading + "\n";
    const std::string left = "  --" + o.name + (o.value.empty() ? "" : " " + o.value);
    std::string text = o.help;
    for (size_t at = 0; (at = text.find('\n', at)) != std::string::npos; at += k_help_column + 1) text.insert(at + 1, std::string(k_help_column, ' '));
    if (left.size() + 2 > k_help_column) out += left + "\n" + std::string(k_help_column, ' ') + text + "\n";
    else out += fmt::format("{:<{}}{}\n", left, k_help_column, text);
  }
  if (!help.text.notes.empty()) out += "\n" + help.text.notes + "\n";
  out += "\n" + help.text.exit_codes + "\n";
  return out;
}

std::string render_command_list(const std::vector<Command>& commands) {
  std::string out = "commands:\n";
  for (const auto& c : commands) {
    for (const auto& [synopsis, summary] : c.listing) {
      const std::string left = "  " + synopsis;
      if (summary.empty()) out += left + "\n";
      else if (left.size() + 1 > 28) out += left + "\n" + std::string(27, ' ') + summary + "\n";
      else out += fmt::format("{:<{}}{}\n", left, std::max<size_t>(27, left.size() + 1), summary);
    }
  }
  return out;
}

std::string command_usage(const std::string& command) {
  const Command* c = find_command(command);
  if (!c || !c->help) return "usage: preflight " + command;
  return c->help().text.usage + "\n(preflight " + c->name + " --help explains each flag)";
}

Option json_flag(bool& into) { return switch_flag("json", into, "one JSON document on stdout"); }

}  // namespace preflight::cli
