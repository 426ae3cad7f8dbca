#pragma once

#include <string>
#include <vector>

#include "cli/help.hpp"

namespace preflight::cli {

// The catalogue commands (`preflight models | devices | engines`) and `version`: --json only.
int cmd_models(const std::vector<std::string>& argv);
int cmd_devices(const std::vector<std::string>& argv);
int cmd_engines(const std::vector<std::string>& argv);
int cmd_version(const std::vector<std::string>& argv);
CommandHelp catalogue_help();
CommandHelp version_help();

}  // namespace preflight::cli
