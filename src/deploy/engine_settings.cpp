#include "deploy/engine_settings.hpp"

#include "base/units.hpp"

namespace preflight::deploy {

std::string npu_only_setting_refusal(const estimate::Deployment& d, const device::DeviceSpec& device) {
  if (device.platform == "npu") return "";
  // CANN's HCCL reads HCCL_BUFFSIZE (CANN environment variable reference, "HCCL_BUFFSIZE"); vLLM on CUDA or ROCm talks
  // through NCCL / RCCL, which never read it, and no npu-smi driver exists there.
  const char* flag = d.hccl_buffsize_bytes ? "--hccl-buffsize" : !d.npu_driver_version.empty() ? "--npu-driver-version" : nullptr;
  if (!flag) return "";
  const char* what = d.hccl_buffsize_bytes ? "HCCL_BUFFSIZE sizes the buffers of CANN's HCCL, which only an Ascend NPU's engine reads"
                                           : "the Ascend HDK driver version (npu-smi info) decides only an Ascend NPU's expert-parallel transport";
  return format("%s: %s; %s is a %s device", flag, what, device.id.c_str(), device.platform.c_str());
}

}  // namespace preflight::deploy
