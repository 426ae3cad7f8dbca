// cli/cmd_mindie: MindIE Service as an engine. `preflight fit MODEL --device D --engine mindie` prints MindIE's
// static KV pool per card (estimate/mindie) with its terms, block count, full-length requests and a verdict;
// `preflight plan MODEL --devices D --engine mindie [--config-out DIR]` picks the worldSize and writes the
// MindIE config.json and start.sh (plan/mindie_config). Flags take MindIE's config.json key names in kebab case
// (--npu-mem-size is ModelConfig.npuMemSize). `--json` carries the object `mindie`.
#pragma once

#include <string>
#include <vector>

namespace preflight::cli {

// True when argv names the MindIE engine (--engine mindie[@version] or --engine=mindie...).
bool mindie_engine_requested(const std::vector<std::string>& argv);
int cmd_fit_mindie(const std::vector<std::string>& argv);
int cmd_plan_mindie(const std::vector<std::string>& argv);
// `preflight fit|plan ... --engine mindie --help`: MindIE's own flags and exit codes (ux28: the help printed was vLLM's,
// which names none of them). `command` is "fit" or "plan".
std::string mindie_help_text(const std::string& command);

}  // namespace preflight::cli
