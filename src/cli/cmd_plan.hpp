// cli/cmd_plan: `preflight plan` (what this hardware runs / what this model needs) and the speed
// section `preflight fit` adds to its estimate.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/help.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/speed.hpp"
#include "model/model_spec.hpp"

namespace preflight::cli {

int cmd_plan(const std::vector<std::string>& argv);
// plan's text and flags, for --help.
CommandHelp plan_help();

// The flags fit takes for its speed section.
struct SpeedFlags {
  std::optional<std::vector<int64_t>> concurrency;  // streams to predict
  std::optional<int64_t> input_len;                 // prompt length for TTFT
  std::optional<int64_t> decode_context;            // context during decode
  std::optional<double> bandwidth_gb_s;             // measured copy bandwidth, GB/s (decimal)
  std::optional<int64_t> nodes;                     // nodes the deployment spans (issue 20): TP/PP past a node use the NIC
  // The engine release that will run it, as --engine E@V states it (issue 20; misc21: one setting, the memory profile
  // too): older than graph-by-default decodes eager. fit folds it into its engine input (deploy::apply_engine_version).
  std::optional<std::string> engine_version;
};
std::vector<Option> speed_options(SpeedFlags& flags);
// Speed of a deployment fit has sized.
Expected<estimate::SpeedEstimate> speed_for_fit(const SpeedFlags& flags, const model::ModelSpec& model, const device::DeviceSpec& device,
                                                const engine::EngineProfile& engine, const estimate::Deployment& deployment,
                                                const estimate::FitEstimate& fit);
// ux29 (the seed's eager trap: 10.3 tok/s eager against 58.9 in graph mode, the same model and card): for a deployment that
// decodes eager (--enforce-eager, cudagraph_mode NONE, -O0) at `speed`, what the same deployment decodes in graph mode, the
// ratio, the graph capture memory that costs and the KV tokens left, as one sentence. Nothing where graph mode does not
// fit, the engine version decodes eager anyway, or the deployment already runs graphs.
std::optional<std::string> graph_mode_note(const estimate::SpeedEstimate& speed, const SpeedFlags& flags, const model::ModelSpec& model,
                                           const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& overheads,
                                           const estimate::Deployment& deployment, const estimate::FitEstimate& fit);

}  // namespace preflight::cli
