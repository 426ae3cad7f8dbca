// The fit's entry points around try_estimate_fit (declared in fit.hpp): estimate_fit, which gives a verdict for any
// input (an overflow is a refused deployment), refused_fit, the retry without the encoder's profiling pass, whether two
// devices give the same fit (plan's catalogue sweep) and the ModelSlim checkpoint without --quantization. Split out of
// fit.cpp (issue 19, fitcopy36: that file over 800 lines).
#include "estimate/fit.hpp"

#include <algorithm>

namespace preflight::estimate {

using model::ModelSpec;

bool modelslim_without_quantization_flag(const ModelSpec& m, const Deployment& dep) {
  return m.quant.method == "ascend" && dep.quantization.empty() && !dep.quant_scheme;
}

bool same_fit_device(const device::DeviceSpec& a, const device::DeviceSpec& b, const engine::EngineProfile& engine) {
  // What try_estimate_fit and its terms read of the device: usable_total_bytes() (runtime total, else the memory class's
  // rule, else nominal; the last two also in an explain-only assumption), the family (batch defaults, Marlin FP8 fallback,
  // KV budget divisor, MoE all-gather, MC2 note) and the id (MXFP4 layout; the graph capture ceiling and FlashInfer's
  // TRTLLM devices, issue 15; otherwise only the recorded device_id and explain text).
  const auto& trtllm = engine.flashinfer_uniform_batch_devices;
  const auto listed = [&](const std::string& id) { return std::find(trtllm.begin(), trtllm.end(), id) != trtllm.end(); };
  return a.platform == b.platform && a.family == b.family && a.memory_bytes == b.memory_bytes && a.runtime_total_bytes == b.runtime_total_bytes &&
         a.class_runtime_total_bytes == b.class_runtime_total_bytes && engine.mxfp4_layout_for(a.id, a.family) == engine.mxfp4_layout_for(b.id, b.family) &&
         engine.cudagraph_default_ceiling(a.id) == engine.cudagraph_default_ceiling(b.id) && listed(a.id) == listed(b.id);
}

FitEstimate estimate_fit(const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& oh,
                         const Deployment& dep) {
  auto e = try_estimate_fit(m, device, engine, oh, dep);
  if (e) return std::move(*e);
  return refused_fit(device, engine, dep, e.error());
}

FitEstimate refused_fit(const device::DeviceSpec& device, const engine::EngineProfile& engine, const Deployment& dep, const Error& error) {
  // A model whose sizes overflow cannot be laid out on any device: refused, with the field named.
  FitEstimate refused;
  refused.engine_id = engine.id;
  refused.device_id = device.id;
  refused.tensor_parallel_size = std::max<int64_t>(1, dep.tensor_parallel_size);
  refused.pipeline_parallel_size = std::max<int64_t>(1, dep.pipeline_parallel_size);
  refused.failure = Failure::invalid_layout;
  refused.failure_message = error.message;
  return refused;
}

std::optional<FitEstimate> fit_without_encoder_pass(const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                                    const engine::Overheads& oh, const Deployment& dep, const FitEstimate& base) {
  if (base.fits || dep.skip_mm_profiling || base.failure != Failure::max_model_len_too_large || base.activation_vision_bytes <= 0) return std::nullopt;
  Deployment without = dep;
  without.skip_mm_profiling = true;
  auto alt = estimate_fit(m, device, engine, oh, without);
  if (!alt.fits) return std::nullopt;
  return alt;
}

}  // namespace preflight::estimate
