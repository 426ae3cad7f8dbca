// deploy/engine_settings: the engine settings that only one platform's stack reads. fit refuses such a setting on a
// device of another platform (exit 2); plan rejects a row on such a device with the same message, and refuses the
// whole plan where none of its devices can take it (issue 15/16, plan28: one message for both).
#pragma once

#include <string>

#include "device/device_spec.hpp"
#include "estimate/fit.hpp"

namespace preflight::deploy {

// Why `device` cannot take a setting of `deployment` that only an Ascend NPU's stack reads, or "" when it can (or none
// is set): --hccl-buffsize (HCCL_BUFFSIZE, read by CANN's HCCL collective library) and --npu-driver-version (the Ascend
// HDK version npu-smi prints). The message names the flag, the device and its platform.
std::string npu_only_setting_refusal(const estimate::Deployment& deployment, const device::DeviceSpec& device);

}  // namespace preflight::deploy
