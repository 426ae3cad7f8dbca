// cli/cmd_plan: `preflight plan` (what this hardware runs / what this model needs) and the speed
// section `preflight fit` adds to its estimate.
#pragma once

#include <string>
#include <vector>

#include "cli/args.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/speed.hpp"
#include "model/model_spec.hpp"

namespace preflight::cli {

int cmd_plan(const std::vector<std::string>& argv);

// Flags fit accepts for its speed section.
std::vector<FlagSpec> speed_flags();
// Speed of a deployment fit has sized, from --concurrency, --input-len, --decode-context, --bandwidth.
Expected<estimate::SpeedEstimate> speed_for_fit(const Args& args, const model::ModelSpec& model, const device::DeviceSpec& device,
                                                const engine::EngineProfile& engine, const estimate::Deployment& deployment,
                                                const estimate::FitEstimate& fit);

}  // namespace preflight::cli
