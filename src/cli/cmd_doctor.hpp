// cli/cmd_doctor: `preflight doctor [--json] [--root DIR] [--venv DIR] [--script FILE]
// [--cache-dir DIR[,DIR]] [--fix]`: the stack checks of the doctor module, each printed as
// ok / warn / fail / skip with evidence and fix; --fix removes only stale *.lock files, printing
// each path before removing it.
#pragma once

#include <string>
#include <vector>

#include "cli/help.hpp"

namespace preflight::cli {

int cmd_doctor(const std::vector<std::string>& argv);
// doctor's text and flags, for --help.
CommandHelp doctor_help();

}  // namespace preflight::cli
