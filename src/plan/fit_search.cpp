#include "plan/fit_search.hpp"

#include <algorithm>
#include <optional>
#include <vector>

#include "base/units.hpp"
#include "model/context_length.hpp"
#include "model/quant_variant.hpp"

namespace preflight::plan {

namespace {

constexpr const char* k_tp_instead_of_pp =
    "tensor parallelism instead of pipeline parallelism: the engine's max_model_len check under PP counts every stage's layers against one stage";

// Issue 15: where the engine checks the whole model's KV against one PP stage (vLLM 0.14-0.15), tensor
// parallelism over the same cards checks each rank's share of every layer instead: that layout to try.
std::optional<estimate::Deployment> tp_instead_of_pp(const estimate::Deployment& dep, const estimate::FitEstimate& base) {
  if (base.failure != estimate::Failure::max_model_len_too_large || !base.pp_whole_model_check || !dep.stage_devices.empty()) return std::nullopt;
  auto d = dep;
  d.tensor_parallel_size = std::max<int64_t>(1, dep.tensor_parallel_size) * base.pipeline_parallel_size;
  d.pipeline_parallel_size = 1;
  d.pp_layer_partition.clear();
  return d;
}

// Issues 15/16: a ModelSlim checkpoint the engine built unquantized (no --quantization and a version that does not
// detect quant_model_description.json, estimate::try_estimate_fit): the same deployment with the flag.
std::optional<estimate::Deployment> with_ascend_flag(const model::ModelSpec& m, const estimate::Deployment& dep, const estimate::FitEstimate& base) {
  if (!estimate::modelslim_without_quantization_flag(m, dep) || !base.quantization.empty()) return std::nullopt;
  auto d = dep;
  d.quantization = "ascend";
  return d;
}

// The fits a search runs again: the verdict and the numbers only, no explanatory text (Deployment::explain).
struct Tries {
  const model::ModelSpec& m;
  const device::DeviceSpec& dev;
  const engine::EngineProfile& eng;
  const engine::Overheads& oh;
  estimate::FitEstimate operator()(estimate::Deployment d) const {
    d.explain = false;
    return estimate::estimate_fit(m, dev, eng, oh, d);
  }
};

// A tensor-parallel size with the fit of the deployment at it.
using TpFit = std::pair<int64_t, estimate::FitEstimate>;

// The first tensor-parallel size from `from`, doubling up to 16, that divides the model's attention heads and at which
// `d` fits, with that fit; nullopt when none does. `refused` (when given) receives the sizes tried before it, with their
// fits, in the order tried.
std::optional<TpFit> wider_tp_that_fits(const Tries& try_fit, estimate::Deployment d, int64_t from, std::vector<TpFit>* refused = nullptr) {
  for (int64_t tp = from; tp <= 16; tp *= 2) {
    if (try_fit.m.num_attention_heads % tp != 0) continue;
    d.tensor_parallel_size = tp;
    auto r = try_fit(d);
    if (r.fits) return std::make_pair(tp, std::move(r));
    if (refused) refused->emplace_back(tp, std::move(r));
  }
  return std::nullopt;
}

// Session 30 (Qwen3.5-27B W8A8 on 910B4 at its 262,144-token default: only TP 4 was offered, while TP 2 loads the
// weights and holds 201,850 tokens at 32,768): among the TP sizes below the one that holds the deployment's max_model_len
// (`refused`: wider_tp_that_fits's, smallest first), the first at which the weights load and the KV cache holds a
// shorter context, with `--max-model-len N` (N: largest_context_held, as the variant fixes take it), sized again at N.
// After the same-context fix, as fit's variant fixes order theirs: fewer cards, less context.
void shorter_context_on_fewer_devices(FitSearch& out, const Tries& try_fit, const estimate::Deployment& dep, const estimate::FitEstimate& base,
                                      const std::vector<TpFit>& refused) {
  for (const auto& [tp, r] : refused) {
    if (r.failure != estimate::Failure::max_model_len_too_large) continue;
    const int64_t len = largest_context_held(try_fit.m, r);
    if (len <= 0) continue;
    auto d = dep;
    d.tensor_parallel_size = tp;
    d.max_model_len = len;
    const auto at_len = try_fit(d);
    if (!at_len.fits) continue;
    out.fixes.push_back(format("--tensor-parallel-size %lld --max-model-len %lld on %lld x %s: %s KV tokens, %.2fx, the largest context its KV cache holds for one "
                               "request (%s tokens do not fit)",
                               static_cast<long long>(tp), static_cast<long long>(len), static_cast<long long>(tp * base.pipeline_parallel_size), try_fit.dev.id.c_str(),
                               with_thousands(at_len.kv_tokens).c_str(), at_len.max_concurrency, with_thousands(r.max_model_len).c_str()));
    out.fix_flags.push_back(format("--tensor-parallel-size %lld --max-model-len %lld", static_cast<long long>(tp), static_cast<long long>(len)));
    return;
  }
}

// A quantization the engine refuses (fp8 / AWQ on an NPU): each method it accepts, as the checkpoint that fix names.
void refused_quantization_fixes(FitSearch& out, const Tries& try_fit, const estimate::Deployment& dep, const estimate::FitEstimate& base) {
  const model::ModelSpec& m = try_fit.m;
  const auto& variants = model::load_variant_catalog();
  for (const auto& q : try_fit.eng.supported_quantization) {
    if (q == "*" || q == base.quantization || q == "deepseek_v4_fp8") continue;
    // ux28: the checkpoint each fix names is sized as that format, from the variant list (data/variants/quant_variants.json):
    // with the refused one's storage (AWQ int4 under --quantization ascend) a W8A8 Qwen3.6-27B was said to fit one 910B4,
    // the deployment the seed saw run out of memory four times (seeds/000 4.3.1: 33.6 GiB of weights on 29.5 GiB).
    // The variant the fix names: msModelSlim W8A8 for ascend, llm-compressor's INT8 W8A8 for compressed-tensors (the NPU
    // recipe), else the first variant of the list read with that --quantization.
    const model::QuantVariant* named = nullptr;
    if (variants) {
      const std::string id = q == "ascend" ? "w8a8" : q == "compressed-tensors" ? "ct_w8a8_int8" : "";
      for (const auto& v : variants->variants)
        if (id.empty() ? v.engine_quantization == q : v.id == id) {
          named = &v;
          break;
        }
    }
    auto d = dep;
    d.quantization = q;
    if (named) d.quant_scheme = named->scheme;
    const auto r = try_fit(d);
    if (r.failure == estimate::Failure::unsupported_quantization) continue;
    // A checkpoint that loads but whose KV cache holds less than max_model_len fits at the largest context it holds
    // (what fit does when no --max-model-len is given); one whose weights do not load, on the fewest cards that hold it.
    std::string verdict = r.fits ? "fits" : "does not fit on its own";
    const int64_t holds = r.failure == estimate::Failure::max_model_len_too_large ? largest_context_held(m, r) : 0;
    if (!r.fits && holds > 0) verdict = format("fits with --max-model-len %lld", static_cast<long long>(holds));
    if (!r.fits && holds <= 0)
      if (const auto wider = wider_tp_that_fits(try_fit, d, dep.tensor_parallel_size * 2))
        verdict = format("does not fit on %lld x %s; fits with --tensor-parallel-size %lld", static_cast<long long>(base.tensor_parallel_size * base.pipeline_parallel_size),
                         try_fit.dev.id.c_str(), static_cast<long long>(wider->first));
    const std::string what = q == "ascend" ? "a ModelSlim W8A8 export with quant_model_description.json"
                             : q == "compressed-tensors" ? "an llm-compressor INT8 W8A8 export"
                             : named ? "a " + named->name + " checkpoint" : "a checkpoint in that format";
    const std::string sized = named ? ", sized as --variant " + named->id : "";
    out.fixes.push_back(format("use a checkpoint the engine accepts: --quantization %s (%s%s; %s)", q.c_str(), what.c_str(), sized.c_str(), verdict.c_str()));
    out.fix_flags.push_back("--quantization " + q);
  }
}

}  // namespace

int64_t largest_context_held(const model::ModelSpec& m, const estimate::FitEstimate& fit) {
  const int64_t held = estimate::kv_capacity_tokens(fit);
  // Capped at vLLM's derived max_model_len (issue 15/16, plan28), above which vLLM refuses a --max-model-len.
  const int64_t model_max = model::max_model_len_of(m, 0);
  return model_max > 0 ? std::min<int64_t>(held, model_max) : held;
}

FitSearch search_fixes(const model::ModelSpec& m, const device::DeviceSpec& dev, const engine::EngineProfile& eng, const engine::Overheads& oh,
                       const estimate::Deployment& dep, const estimate::FitEstimate& base) {
  FitSearch out;
  out.largest_context = largest_context_held(m, base);
  if (base.fits) return out;
  const Tries try_fit{m, dev, eng, oh};
  // A flag that changes the profile run: listed, with the KV it leaves, when the deployment then fits.
  auto offer = [&](const estimate::Deployment& d, const std::string& flag, const std::string& why) {
    const auto r = try_fit(d);
    if (!r.fits) return false;
    out.fixes.push_back(format("%s: %s; %s KV tokens, %.2fx", flag.c_str(), why.c_str(), with_thousands(r.kv_tokens).c_str(), r.max_concurrency));
    out.fix_flags.push_back(flag);
    return true;
  };

  if (base.failure == estimate::Failure::max_model_len_too_large && out.largest_context > 0) {
    out.fixes.push_back(format("--max-model-len %lld (the largest context the KV budget holds)", static_cast<long long>(out.largest_context)));
    out.fix_flags.push_back(format("--max-model-len %lld", static_cast<long long>(out.largest_context)));
  }
  if (const auto q = with_ascend_flag(m, dep, base)) offer(*q, "--quantization ascend", "the engine reads the checkpoint's quant_model_description.json (int8 weights)");
  if (const auto tp = tp_instead_of_pp(dep, base))
    offer(*tp, format("--tensor-parallel-size %lld --pipeline-parallel-size 1", static_cast<long long>(tp->tensor_parallel_size)), k_tp_instead_of_pp);
  if (base.failure == estimate::Failure::kv_negative || base.failure == estimate::Failure::max_model_len_too_large) {
    for (double util = base.gpu_memory_utilization + 0.01; util <= 0.985; util += 0.01) {
      auto d = dep;
      d.gpu_memory_utilization = util;
      if (const auto r = try_fit(d); r.fits) {
        // ux28: with what it holds, as every other fix says; a band whose low end is under one request is marginal
        // (Qwen3-14B on a 910B4 at 2,048 tokens: 0.98 holds 3,456 tokens, band 384 - 6,400).
        const std::string margin = r.kv_tokens_low < base.max_model_len
                                       ? format(" (band low %s tokens, under one %s-token request: marginal)", with_thousands(r.kv_tokens_low).c_str(),
                                                with_thousands(base.max_model_len).c_str())
                                       : std::string();
        out.fixes.push_back(format("--gpu-memory-utilization %.2f: %s KV tokens, %.2fx%s", util, with_thousands(r.kv_tokens).c_str(), r.max_concurrency, margin.c_str()));
        out.fix_flags.push_back(format("--gpu-memory-utilization %.2f", util));
        break;
      }
    }
  }
  if (base.failure == estimate::Failure::kv_negative || base.failure == estimate::Failure::max_model_len_too_large) {
    // Flags that shrink the profile run itself, tried where that run sets the peak: fewer sequences when the
    // sampler's logits dominate (the largest count that fits keeps the most throughput), fewer batched tokens
    // when the text forward does, and no encoder profiling for a vision model.
    const double text_peak = base.activation_text_bytes;
    if (base.activation_sampler_bytes > text_peak && base.activation_sampler_bytes > base.activation_vision_bytes) {
      for (int64_t seqs = 512; seqs >= 16; seqs /= 2) {
        if (seqs >= base.max_num_seqs) continue;
        auto d = dep;
        d.max_num_seqs = seqs;
        const auto r = try_fit(d);
        if (r.fits) {
          out.fixes.push_back(format("--max-num-seqs %lld: the profile's sampler run over %lld rows of logits takes %.2f GiB instead of %.2f; %s KV tokens, %.2fx",
                                     static_cast<long long>(seqs), static_cast<long long>(seqs), bytes_to_gib(r.activation_sampler_bytes),
                                     bytes_to_gib(base.activation_sampler_bytes), with_thousands(r.kv_tokens).c_str(), r.max_concurrency));
          out.fix_flags.push_back(format("--max-num-seqs %lld", static_cast<long long>(seqs)));
          break;
        }
      }
    } else if (text_peak > base.activation_vision_bytes && base.max_num_batched_tokens > 2048) {
      auto d = dep;
      d.max_num_batched_tokens = 2048;
      offer(d, "--max-num-batched-tokens 2048", "a smaller profile forward (longer prompts prefill in more chunks)");
    }
    if (base.encoder_profiles_video) {
      // The dummy video grows with max_model_len: no video, or a shorter context (the largest power-of-two
      // fraction that fits).
      auto d = dep;
      d.no_video = true;
      offer(d, "--limit-mm-per-prompt '{\"video\": 0}'", "the profile run encodes the largest image instead of a dummy video (no video input)");
      if (base.failure == estimate::Failure::kv_negative) {
        for (int64_t len = base.max_model_len / 2; len >= 2048; len /= 2) {
          auto shorter = dep;
          shorter.max_model_len = len;
          if (offer(shorter, format("--max-model-len %lld", static_cast<long long>(len)), "a shorter context profiles a smaller dummy video")) break;
        }
      }
    }
    if (base.activation_vision_bytes > 0 && !dep.skip_mm_profiling) {
      auto d = dep;
      d.skip_mm_profiling = true;
      offer(d, "--skip-mm-profiling", "no encoder pass in the profile run (images at serve time use the memory above the utilization)");
    }
  }
  if (base.failure == estimate::Failure::unsupported_quantization) refused_quantization_fixes(out, try_fit, dep, base);
  out.more_devices_at = out.fixes.size();
  if (base.failure != estimate::Failure::invalid_layout && base.failure != estimate::Failure::unsupported_quantization) {
    std::vector<TpFit> refused;
    const auto wider = wider_tp_that_fits(try_fit, dep, base.tensor_parallel_size * 2, &refused);
    if (wider) {
      const auto& [tp, r] = *wider;
      out.fixes.push_back(format("--tensor-parallel-size %lld on %lld x %s: %s KV tokens, %.2fx", static_cast<long long>(tp), static_cast<long long>(tp * base.pipeline_parallel_size),
                                 dev.id.c_str(), with_thousands(r.kv_tokens).c_str(), r.max_concurrency));
      out.fix_flags.push_back(format("--tensor-parallel-size %lld", static_cast<long long>(tp)));
    }
    shorter_context_on_fewer_devices(out, try_fit, dep, base, refused);
    if (dev.platform != "npu" && base.kv_cache_dtype == "auto" && base.failure != estimate::Failure::weights_oom) {
      auto d = dep;
      d.kv_cache_dtype = "fp8";
      const auto r = try_fit(d);
      if (r.fits) {
        out.fixes.push_back(format("--kv-cache-dtype fp8: %s KV tokens", with_thousands(r.kv_tokens).c_str()));
        out.fix_flags.push_back("--kv-cache-dtype fp8");
      }
    }
  }
  return out;
}

}  // namespace preflight::plan
