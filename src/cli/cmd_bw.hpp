// cli/cmd_bw: `preflight bw`, memory bandwidth of the host or of an accelerator, measured the way the
// seed report measured its 910B3 before choosing a model, optionally saved to the measured-device file.
#pragma once

#include <string>
#include <vector>

#include "cli/help.hpp"

namespace preflight::cli {

// Returns the exit code: 0 measured, 1 the measurement failed (no runtime, a runtime call failed),
// 2 usage or bad input.
int cmd_bw(const std::vector<std::string>& argv);
// bw's text and flags, for --help.
CommandHelp bw_help();

}  // namespace preflight::cli
