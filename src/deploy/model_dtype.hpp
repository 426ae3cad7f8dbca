// deploy/model_dtype: the card check of vLLM's --dtype that fit (deploy::resolve_deployment) and plan (each card of its
// rows) share, so that both refuse a card with the same words (issue 16, planq32). Defined in deployment.cpp.
#pragma once

#include <string>

#include "device/device_spec.hpp"

namespace preflight::deploy {

// vLLM's refusal of --dtype `value` (given as `origin`, "--dtype") on `dev`, as its worker raises it at start
// (vllm/v1/worker/gpu_worker.py _check_if_gpu_supports_dtype: bfloat16 on a CUDA card whose devices.json dtypes lack bf16);
// "" when the card takes it (auto and the other values always).
std::string model_dtype_refusal(const std::string& value, const std::string& origin, const device::DeviceSpec& dev);

}  // namespace preflight::deploy
