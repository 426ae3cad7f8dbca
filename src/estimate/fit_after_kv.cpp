// What a start needs outside the KV budget after KV sizing, and the verdict it gives (issue 15): the KV tensors a
// vLLM-Ascend version allocates more than once for a hybrid model (engines.json hybrid_kv_tensor_copies) and graph
// capture where the version does not subtract it first, and the square attention mask a version makes at its first
// forward (engines.json square_attention_mask: vLLM-Ascend 310P), against what is left above the KV pool.
#include <algorithm>
#include <cmath>

#include "base/units.hpp"
#include "device/device_spec.hpp"
#include "estimate/fit_terms.hpp"

namespace preflight::estimate::terms {

namespace {

// What the start needs outside the budget after KV sizing (reference 1.1 step 5, 4.2): the KV tensors are
// allocated, then compile_or_warm_up_model captures graphs and runs the sampler warm-up.
// - KV tensors: the pool the budget sized, plus what a vLLM-Ascend version allocates twice for a hybrid model
//   (engines.json hybrid_kv_tensor_copies, hybrid_kv_extra_bytes); certain, no band.
// - Graph capture: outside the budget where the version does not subtract a pre-capture estimate
//   (vLLM < 0.21, vLLM-Ascend except 0.21/0.22): the fitted graph term +/- its band must fit in total x (1 - util).
// - Sampler warm-up: the same dummy sampler run the profile run measured, whose peak is subtracted: by the budget's
//   arithmetic the peak's space holds it once the graphs fit, so no margin (issue 15, warmup33: its deaths within that
//   space, on the allocator's fragments, are not predicted; docs/memory-model.md 'The sampler warm-up').
// - All-to-all buffers: none after KV sizing. vLLM-Ascend's MoE token dispatchers fetch their MC2 and EP
//   communicators' names at model construction (token_dispatcher.py get_hccl_comm_name), which creates them and
//   their HCCL buffers before the profile run; they are in the budget (estimate_ep_communicators).
// - Square attention mask (issue 15, acc30): vLLM-Ascend's 310P metadata builder (AttentionMaskBuilder310, from PR #6803 in
//   v0.15.0rc1) makes a max_model_len x max_model_len fp16 causal mask at the first forward with attention metadata, which
//   the profile run does not build; estimate_square_attention_mask sizes its peak.
struct AfterKvMargin {
  double low = 0, high = 0, headroom = 0;
  double graph = 0;
  double kv_copies = 0;
  double mask_low = 0, mask_high = 0;
  double pool = 0;  // the KV pool the budget sized: group_size tensors of num_blocks x page bytes
};

// Issue 15: bytes vLLM-Ascend allocates for a hybrid model's KV cache beyond the pool the budget sized. vLLM shares
// group_size tensors of num_blocks x page bytes, tensor i by layer i of every KV group (kv_cache_utils.py,
// _get_kv_cache_config_uniform_page_size); _allocate_kv_cache_tensors (model_runner_v1.py) gives each layer its own
// tensor (per_layer: all layers x tensor in all, v0.10.2rc1 - v0.11.0) or one tensor to the linear-attention layers
// and one K/V pair of the same total to the attention layers (per_kind: twice each tensor holding both kinds,
// v0.12.0rc1 - v0.15.0rc1). Tensor i holds kind k when i < k's layers (groups are filled in order, the last padded).
// 0 without both kinds, or where no rule covers the version.
double hybrid_kv_extra_bytes(const FitEstimate& e, const engine::EngineProfile& engine) {
  const auto* rule = engine.hybrid_kv_copy_rule();
  if (!rule || e.num_blocks <= 0 || e.group_size <= 0) return 0;
  int64_t state = 0, attention = 0;
  for (const auto& g : e.groups) (g.kind == "state" ? state : attention) += std::max<int64_t>(0, g.layers);
  if (state == 0 || attention == 0) return 0;
  const double tensor = static_cast<double>(e.num_blocks) * static_cast<double>(e.page_bytes);
  if (rule->copies == engine::EngineProfile::HybridKvCopies::per_layer)
    return static_cast<double>(std::max<int64_t>(0, state + attention - e.group_size)) * tensor;
  return static_cast<double>(std::min({e.group_size, state, attention})) * tensor;
}

AfterKvMargin after_kv_margin(const FitEstimate& e, const engine::EngineProfile& engine, const engine::Overheads& oh, const Deployment& dep) {
  AfterKvMargin m;
  // Where the worker divides its budget (vLLM-Ascend's 310P worker from 0.18: engines.json kv_budget_divisor), the KV pool
  // is the divided budget, and the rest of the budget stays free beside the 1 - util share ("reserve reasonable memory").
  m.headroom = e.total_bytes - e.requested_bytes + e.available_kv_bytes * std::max(0.0, e.kv_budget_divisor - 1.0);
  // llama.cpp sizes its KV buffer from --ctx-size, not from a utilization: no profile run, nothing sized before capture.
  if (engine.engine == "llama.cpp") return m;
  m.kv_copies = hybrid_kv_extra_bytes(e, engine);
  m.pool = static_cast<double>(e.group_size) * static_cast<double>(e.num_blocks) * static_cast<double>(e.page_bytes);
  if (dep.mode == ExecutionMode::graph && !e.graph_in_budget) m.graph = e.graph_bytes;
  m.mask_low = e.after_kv_mask_low_bytes;
  m.mask_high = e.after_kv_mask_high_bytes;
  m.low = m.kv_copies + m.graph * (1.0 - oh.band_fraction) + m.mask_low;
  m.high = m.kv_copies + m.graph * (1.0 + oh.band_fraction) + m.mask_high;
  return m;
}

// The side of the square mask: max_model_len rounded up to the FRACTAL_NZ tile of 16 (vllm_ascend/utils.py nd_to_nz_2d).
double mask_side(int64_t max_model_len) { return std::ceil(static_cast<double>(max_model_len) / 16.0) * 16.0; }

// The longest max_model_len whose mask peak fits in `bytes`, to 16 tokens (0 when none does).
int64_t mask_length_for(double bytes, const engine::EngineProfile::SquareAttentionMask& mask) {
  if (bytes <= 0) return 0;
  const double side = std::sqrt(bytes / (mask.element_bytes * mask.peak_copies));
  return static_cast<int64_t>(std::floor(side / 16.0)) * 16;
}

// "the square attention mask of ascend-310p (max_model_len 32768: 32768 x 32768 x 2 B, 3 copies live ..., 6.00 GiB at the peak, ...)".
std::string mask_text(const FitEstimate& e, const engine::EngineProfile& engine, const engine::EngineProfile::SquareAttentionMask& mask) {
  const double side = mask_side(e.max_model_len);
  std::string families;
  for (const auto& f : mask.families) families += (families.empty() ? "" : ", ") + f;
  return format("the square attention mask of %s (max_model_len %lld: %.0f x %.0f x %g B, %g copies live while it is made and cast to FRACTAL_NZ, "
                "%.2f GiB at the peak, %.2f GiB kept; engines.json square_attention_mask, %s %s - %s)",
                families.c_str(), static_cast<long long>(e.max_model_len), side, side, mask.element_bytes, mask.peak_copies,
                bytes_to_gib(e.after_kv_mask_high_bytes), bytes_to_gib(side * side * mask.element_bytes), engine.engine.c_str(),
                mask.rule.version_min.text().c_str(), mask.rule.version_max.text().c_str());
}

// The highest utilization (to 0.01) that leaves the high end of the margin free. With extra KV copies the margin
// grows with the pool, and the pool with the utilization (one for one against the total): copies c = kv_copies /
// pool, graph g: g + c x (pool + (u - u0) x total) <= (1 - u) x total, so u <= (total - g - c x (pool - u0 x total)) / ((1 + c) x total).
double utilization_for_margin(const FitEstimate& e, const AfterKvMargin& m, const engine::Overheads& oh) {
  const double total = e.total_bytes;
  const double graph_high = m.graph * (1.0 + oh.band_fraction);
  double u = 1.0 - m.high / total;
  if (m.kv_copies > 0 && m.pool > 0) {
    const double c = m.kv_copies / m.pool;
    u = (total - graph_high - c * (m.pool - e.gpu_memory_utilization * total)) / ((1.0 + c) * total);
  }
  return std::floor(u * 100.0 + 1e-9) / 100.0;
}

// "graph capture ~G GiB (low - high)": the capture term with its band.
std::string graph_capture_text(const AfterKvMargin& m, const engine::Overheads& oh) {
  return format("graph capture ~%.2f GiB (%.2f - %.2f)", bytes_to_gib(m.graph), bytes_to_gib(m.graph * (1.0 - oh.band_fraction)),
                bytes_to_gib(m.graph * (1.0 + oh.band_fraction)));
}

// Issue 15 (acc30): the verdict where the version makes a square attention mask after KV sizing. The mask's side grows
// with max_model_len, so the fix is a shorter context: the longest whose peak fits beside what else the warm-up needs.
void decide_square_mask(FitEstimate& e, const engine::EngineProfile& engine, const AfterKvMargin& m, const Deployment& dep) {
  if (!e.fits) return;
  const bool fails = m.headroom < m.low;
  if (!fails && !dep.explain) return;  // the texts below only for a failure or an explained fit (a plan sizes every 310P row)
  const auto& mask = *engine.square_attention_mask;
  const std::string what = mask_text(e, engine, mask);
  const int64_t len = mask_length_for(m.headroom - (m.high - m.mask_high), mask);
  const std::string fix = len > 0 ? format("fix: --max-model-len %lld or lower", static_cast<long long>(len)) : std::string("fix: a card with more memory");
  if (fails) {
    e.fits = false;
    e.failure = Failure::after_kv_oom;
    e.failure_message = format("RuntimeError: NPU out of memory at the first forward with attention, after the KV cache was sized: %s needs more than the %.2f GiB "
                               "left beside the KV cache pool%s. (%s)",
                               what.c_str(), bytes_to_gib(m.headroom), m.high > m.mask_high ? " and what else the warm-up needs" : "", fix.c_str());
    return;
  }
  const std::string torch_npu = mask.compressed_when.empty()
                                    ? std::string()
                                    : "; the torch_npu build decides it (not an input): where " + mask.compressed_when + ", a fixed 2048 x 2048 compressed mask instead";
  if (m.headroom < m.high)
    e.assumptions.push_back(format("after KV sizing, %s must fit in the %.2f GiB left beside the KV cache pool: the low end fits, the high end does not (%s)%s",
                                   what.c_str(), bytes_to_gib(m.headroom), fix.c_str(), torch_npu.c_str()));
  else
    e.assumptions.push_back(format("after KV sizing, %s fits in the %.2f GiB left beside the KV cache pool%s", what.c_str(), bytes_to_gib(m.headroom), torch_npu.c_str()));
}

}  // namespace

// Issue 15 (acc30): the peak of the square attention mask the version makes on this card's family at its first forward
// with attention, for max_model_len `len` (0 where no rule applies).
void estimate_square_attention_mask(FitEstimate& e, const engine::EngineProfile& engine, const device::DeviceSpec& device, int64_t len) {
  e.after_kv_mask_low_bytes = e.after_kv_mask_high_bytes = 0;
  const auto& mask = engine.square_attention_mask;
  if (!mask || len <= 0 || !engine.rule_applies(mask->rule)) return;
  if (std::find(mask->families.begin(), mask->families.end(), device.family) == mask->families.end()) return;
  const double side = mask_side(len);
  e.after_kv_mask_high_bytes = side * side * mask->element_bytes * mask->peak_copies;
  e.after_kv_mask_low_bytes = mask->compressed_when.empty() ? e.after_kv_mask_high_bytes : 0.0;
}

// The after-KV verdict: a certain failure when even the low end of the margin exceeds the headroom (the
// engine's own wording: torch's OutOfMemoryError on CUDA, RuntimeError on NPU, and vLLM's capture advice),
// a stated risk when only the high end does.
void decide_after_kv(FitEstimate& e, const engine::EngineProfile& engine, const engine::Overheads& oh, const Deployment& dep) {
  const AfterKvMargin m = after_kv_margin(e, engine, oh, dep);
  e.after_kv_needed_low_bytes = m.low;
  e.after_kv_needed_high_bytes = m.high;
  e.after_kv_headroom_bytes = m.headroom;
  if (m.kv_copies > 0 && dep.explain)
    e.assumptions.push_back(format("%s allocates the hybrid KV cache tensors more than once, after KV sizing: %.2f GiB beyond the pool, outside the budget "
                                   "(engines.json hybrid_kv_tensor_copies: %s)",
                                   engine.id.c_str(), bytes_to_gib(m.kv_copies), engine.hybrid_kv_copy_rule()->rule.source.c_str()));
  if (m.mask_high > 0) {
    decide_square_mask(e, engine, m, dep);
    return;
  }
  if (!e.fits || m.high <= 0 || m.headroom >= m.high) return;
  const double util = utilization_for_margin(e, m, oh);
  const bool npu = engine.platform == "npu";
  if (m.kv_copies > 0) {
    const auto* rule = engine.hybrid_kv_copy_rule();
    std::string what = format("the KV cache tensors, allocated %s (%.2f GiB more than the %.2f GiB pool the budget sized; %s _allocate_kv_cache_tensors %s - %s, "
                              "engines.json hybrid_kv_tensor_copies)",
                              rule->copies == engine::EngineProfile::HybridKvCopies::per_layer ? "once per layer sharing them" : "once per layer kind sharing them",
                              bytes_to_gib(m.kv_copies), bytes_to_gib(m.pool),
                              engine.engine.c_str(), rule->rule.version_min.text().c_str(), rule->rule.version_max.text().c_str());
    if (m.graph > 0) what += ", then " + graph_capture_text(m, oh);
    const std::string fix = format("fix: --gpu-memory-utilization %.2f or lower (--enforce-eager does not help: the copies are KV tensors)", util);
    if (m.headroom < m.low) {
      e.fits = false;
      e.failure = Failure::after_kv_oom;
      e.failure_message = format("%s out of memory in initialize_from_config, after the KV cache was sized: %s need more than the %.2f GiB left above "
                                 "gpu_memory_utilization %.2f. (%s)",
                                 npu ? "RuntimeError: NPU" : "torch.OutOfMemoryError: CUDA", what.c_str(), bytes_to_gib(m.headroom), e.gpu_memory_utilization, fix.c_str());
    } else if (dep.explain) {
      e.assumptions.push_back(format("after KV sizing, %s must fit in the %.2f GiB left above gpu_memory_utilization: the low end fits, the high end does not (%s)",
                                     what.c_str(), bytes_to_gib(m.headroom), fix.c_str()));
    }
    return;
  }
  const std::string what = graph_capture_text(m, oh);
  const std::string fix = format("fix: --gpu-memory-utilization %.2f or lower, or --enforce-eager (no graphs)", util);
  if (m.headroom < m.low) {
    e.fits = false;
    e.failure = Failure::after_kv_oom;
    e.failure_message = format("%s out of memory during graph capture, after the KV cache was sized (%s): %s needs more than the %.2f GiB left above "
                               "gpu_memory_utilization %.2f. If out-of-memory error occurs during cudagraph capture, consider decreasing "
                               "`gpu_memory_utilization` or switching to eager mode. (%s)",
                               npu ? "RuntimeError: NPU" : "torch.OutOfMemoryError: CUDA", npu ? "ACL graph capture, FULL_DECODE_ONLY included" : "capture_model",
                               what.c_str(), bytes_to_gib(m.headroom), e.gpu_memory_utilization, fix.c_str());
  } else if (dep.explain) {
    e.assumptions.push_back(format("after KV sizing, %s must fit in the %.2f GiB left above gpu_memory_utilization: the low end fits, the high end does not, "
                                   "so the start may die in graph capture (%s)",
                                   what.c_str(), bytes_to_gib(m.headroom), fix.c_str()));
  }
}

}  // namespace preflight::estimate::terms
