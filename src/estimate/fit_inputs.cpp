// Flag and config readings of the fit (declared in fit.hpp): vLLM's DCP checks, cudagraph mode and failure names,
// speculative methods, the scheme a --quantization flag names, KV cache dtype bytes, a weight's per-rank share, the
// sized model and the KV capacity of one request. Split out of fit.cpp.
#include "estimate/fit.hpp"


#include <algorithm>
#include <cmath>

#include "base/checked.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/speculative_methods.hpp"
#include "model/quant_variant.hpp"

namespace preflight::estimate {

// vLLM's checks, read at 45f526d65 (2026-03-17, the tree whose kv_cache_utils.py line numbers match vLLM 0.18.0's printed
// ones). vllm/config/parallel.py ParallelConfig (since d334dd26c, #33239; in EngineArgs before it, since ac201a0ea, #23734):
// DCP reuses the TP group's ranks, so TP must be a multiple of it (the engine's message, its missing space included).
// vllm/config/model.py verify_with_parallel_config for a model without MLA (since ea97940d6, #24864, DCP for GQA): TP above
// the KV heads, D at most TP // KV heads, D dividing the query heads per KV head. vllm/v1/kv_cache_interface.py
// SlidingWindowSpec.max_memory_usage_bytes asserts "DCP not support sliding window." at KV sizing.
std::string decode_context_parallel_rejection(const model::ModelSpec& m, int64_t tp, int64_t dcp) {
  if (dcp <= 1) return {};
  if (tp % dcp != 0) return format("ValueError: tp_size=%lld must be divisible bydcp_size=%lld.", static_cast<long long>(tp), static_cast<long long>(dcp));
  bool mla = false, sliding = false;
  for (const auto& l : m.layers) {
    mla = mla || l.kind == model::LayerKind::mla_attention;
    sliding = sliding || (l.kind == model::LayerKind::sliding_attention && !l.kv_shared);
  }
  if (sliding) return "AssertionError: DCP not support sliding window. (the model has sliding-window layers)";
  const int64_t kv = m.num_key_value_heads;
  if (mla || kv <= 0) return {};
  if (tp <= kv)
    return format("AssertionError: tensor parallel size %lld must be greater than total num kv heads %lld when enable decode context parallel for GQA/MQA",
                  static_cast<long long>(tp), static_cast<long long>(kv));
  if (const int64_t max_dcp = tp / kv; dcp > max_dcp)
    return format("AssertionError: decode context parallel size must less than or equal to (tensor parallel size %lld // total num kv heads %lld) = %lld, but got %lld",
                  static_cast<long long>(tp), static_cast<long long>(kv), static_cast<long long>(max_dcp), static_cast<long long>(dcp));
  if (const int64_t q_per_kv = m.num_attention_heads / kv; m.num_attention_heads > 0 && q_per_kv % dcp != 0)
    return format("AssertionError: Total number of q per kv attn heads (%lld) must be divisible by dcp world size when enable decode context parallel for GQA (%lld).",
                  static_cast<long long>(q_per_kv), static_cast<long long>(dcp));
  return {};
}

using model::LayerKind;
using model::ModelSpec;
using model::Shard;
using model::WeightFormat;

// vllm/config/compilation.py CUDAGraphMode member names, in the enum's order.
constexpr const char* k_cudagraph_mode_names[] = {"NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE"};
static_assert(std::size(k_cudagraph_mode_names) == k_cudagraph_mode_count, "one name per CudagraphMode");

const char* cudagraph_mode_name(CudagraphMode mode) { return k_cudagraph_mode_names[static_cast<int>(mode)]; }

std::optional<CudagraphMode> parse_cudagraph_mode(const std::string& name) {
  const std::string upper = to_upper(name);
  for (int i = 0; i < k_cudagraph_mode_count; ++i)
    if (upper == k_cudagraph_mode_names[i]) return static_cast<CudagraphMode>(i);
  return std::nullopt;
}

const char* failure_name(Failure failure) {
  switch (failure) {
    case Failure::none: return "none";
    case Failure::invalid_layout: return "invalid_layout";
    case Failure::unsupported_quantization: return "unsupported_quantization";
    case Failure::weights_oom: return "weights_oom";
    case Failure::kv_negative: return "kv_negative";
    case Failure::max_model_len_too_large: return "max_model_len_too_large";
    case Failure::after_kv_oom: return "after_kv_oom";
    case Failure::mc2_transport: return "mc2_transport";
  }
  return "unknown";
}

const std::vector<std::string>& speculative_methods() {
  // spec35: the newest list of data/engines/speculative_methods.json (vLLM only ever adds names, v0.9.1 - v0.23.0, so it
  // holds every release's); deploy checks the list of the engine's own version once the version is resolved.
  static const std::vector<std::string> k_methods = [] {
    const auto& catalog = engine::shipped_speculative_methods();
    if (!catalog || catalog->lists.empty()) return std::vector<std::string>{};  // the catalogue tests report the load error
    const auto newest = std::max_element(catalog->lists.begin(), catalog->lists.end(),
                                         [](const auto& a, const auto& b) { return a.version_max < b.version_max; });
    return newest->methods;
  }();
  return k_methods;
}

bool SpeculativeConfig::mtp() const { return method == "mtp" || ends_with(method, "_mtp"); }

bool SpeculativeConfig::separate_checkpoint() const {
  return method == "eagle" || method == "eagle3" || method == "draft_model" || method == "dflash";
}

bool SpeculativeConfig::has_drafter_layers() const {
  return !method.empty() && method != "ngram" && method != "ngram_gpu" && method != "suffix";
}

model::QuantScheme scheme_for_flag(const std::string& raw, const model::QuantScheme& checkpoint) {
  const std::string q = to_lower(raw);
  if (q.empty() || q == to_lower(checkpoint.method) || (q == "ascend" && checkpoint.method == "ascend")) return checkpoint;
  // One variant list (data/variants/quant_variants.json) sizes a --quantization flag on a checkpoint that is not
  // that format: the variant the flag most often means, with the modules its tool keeps in the model dtype.
  static const std::map<std::string, std::string> k_flag_variant = {
      {"ascend", "w8a8"},          {"fp8", "fp8_block"},      {"fbgemm_fp8", "fp8_channel"}, {"ptpc_fp8", "fp8_channel"},
      {"awq", "awq"},              {"awq_marlin", "awq"},     {"gptq", "gptq"},              {"gptq_marlin", "gptq"},
      {"compressed-tensors", "ct_w8a8_int8"}, {"mxfp4", "mxfp4"}, {"modelopt_fp4", "modelopt_nvfp4"}, {"nvfp4", "modelopt_nvfp4"},
      {"modelopt", "modelopt_fp8"}, {"auto-round", "autoround"}, {"bitsandbytes", "bnb_4bit"}};
  if (const auto it = k_flag_variant.find(q); it != k_flag_variant.end()) {
    if (const auto& catalog = model::load_variant_catalog(); catalog) {
      if (auto v = model::find_variant(*catalog, it->second); v) {
        model::QuantScheme s = (*v)->scheme;
        s.method = q;
        s.source = "--quantization " + raw + " (variant " + (*v)->id + " of " + catalog->origin + ")";
        s.detail = (*v)->name + " assumed (no checkpoint descriptor read)";
        return s;
      }
    }
  }
  // A flag the list has no variant for: sized in the model dtype, and said so.
  model::QuantScheme s;
  s.method = q;
  s.source = "--quantization " + raw;
  s.detail = "quantization '" + raw + "' not modelled; weights in model dtype";
  return s;
}

int cache_dtype_bytes(const std::string& kv_cache_dtype, const ModelSpec& m) {
  if (kv_cache_dtype == "auto") return model::dtype_bits(m.dtype) / 8;  // the default, as below without a lowercased copy (issue 19)
  const std::string k = to_lower(kv_cache_dtype);
  if (k.rfind("fp8", 0) == 0 || k == "int8") return 1;
  if (k == "fp16" || k == "bf16" || k == "float16" || k == "bfloat16") return 2;
  return model::dtype_bits(m.dtype) / 8;
}

double weight_rank_share(const model::WeightGroup& g, int64_t tp) {
  switch (g.shard) {
    case Shard::replicated: return 1.0;
    case Shard::kv_heads: {
      if (g.kv_heads <= 0) return 1.0 / static_cast<double>(tp);
      const double per_rank = std::max<double>(1.0, static_cast<double>(g.kv_heads) / static_cast<double>(tp));
      return per_rank / static_cast<double>(g.kv_heads);
    }
    default: return 1.0 / static_cast<double>(tp);
  }
}

bool is_layer_weight(const model::WeightGroup& g) { return g.module.find("layers.*") != std::string::npos; }

ModelSpec sized_model(const ModelSpec& m, const Deployment& dep) {
  ModelSpec sized = m;
  sized.quant = dep.quant_scheme ? *dep.quant_scheme : scheme_for_flag(dep.quantization, m.quant);
  return sized;
}

int64_t kv_capacity_tokens(const FitEstimate& e) {
  if (e.num_blocks <= 0 || e.groups.empty()) return 0;
  // Largest L whose per-request blocks fit in num_blocks.
  int64_t lo = 0, hi = std::max<int64_t>(1, e.num_blocks) * std::max<int64_t>(1, e.block_size) + 1;
  auto demand = [&](int64_t L) {
    int64_t blocks = 0;
    for (const auto& g : e.groups) {
      const int64_t n_groups = ceil_div(static_cast<uint64_t>(g.layers), static_cast<uint64_t>(std::max<int64_t>(1, e.group_size)));
      if (g.kind == "state") blocks += n_groups * g.blocks_per_request;
      else blocks += n_groups * static_cast<int64_t>(ceil_div(static_cast<uint64_t>(L), static_cast<uint64_t>(e.block_size)));
    }
    return blocks;
  };
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (demand(mid) <= e.num_blocks) lo = mid;
    else hi = mid - 1;
  }
  // Issue 15: the engine's whole-model PP check admits no longer context than its estimated maximum.
  if (e.pp_whole_model_check) lo = std::min(lo, e.pp_whole_model_max_len);
  return lo;
}

}  // namespace preflight::estimate
