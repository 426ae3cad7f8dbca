// cli/cmd_calibrate: `preflight calibrate`: refits one multiplicative speed-model efficiency per
// (engine, device) from the stored benchmark runs that carry a prediction, and shows the median
// absolute error before and after.
#pragma once

#include <string>
#include <vector>

#include "cli/help.hpp"

namespace preflight::cli {

int cmd_calibrate(const std::vector<std::string>& argv);
// calibrate's text and flags, for --help.
CommandHelp calibrate_help();

}  // namespace preflight::cli
