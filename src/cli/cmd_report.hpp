// cli/cmd_report: `preflight report --from-db DB [--run ID] --html FILE`: renders a stored
// benchmark sweep (and optionally a `preflight fit --json` memory breakdown) as one self-contained
// HTML file.
#pragma once

#include <string>
#include <vector>

#include "cli/help.hpp"

namespace preflight::cli {

int cmd_report(const std::vector<std::string>& argv);
// report's text and flags, for --help.
CommandHelp report_help();

}  // namespace preflight::cli
