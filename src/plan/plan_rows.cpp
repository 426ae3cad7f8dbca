// A plan row's parts that fit, plan and DP+EP share: the variant's rank, the published label, the context a candidate
// is sized at, its interconnect and note, the row's fit fields and the Deployment it is sized with. Split out of planner.cpp.
#include "plan/planner.hpp"

#include <algorithm>
#include <cmath>

#include "base/shared_text_memo.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/deployment.hpp"
#include "model/context_length.hpp"

namespace preflight::plan {

int variant_rank(const model::QuantVariant& v) {
  using model::WeightFormat;
  for (const WeightFormat f : {v.scheme.linear_format, v.scheme.expert_format})
    if (f == WeightFormat::int4_group || f == WeightFormat::nvfp4 || f == WeightFormat::mxfp4 || f == WeightFormat::modelslim_w4a8_dynamic ||
        f == WeightFormat::bnb_nf4)
      return 2;
  return 1;
}

std::string published_label(const model::ModelSpec& m) {
  if (!m.quant.quantized()) return std::string(model::dtype_name(m.dtype)) + " as published";
  const auto& catalog = model::load_variant_catalog();
  const model::QuantVariant* v = catalog ? model::variant_of_checkpoint(*catalog, m.quant) : nullptr;
  return v ? v->name : m.quant.detail;
}

bool refuses_long_context(const std::string& engine) { return engine != "llama.cpp"; }

int64_t candidate_context(const model::ModelSpec& m, const PlanTargets& t, const std::string& engine, std::string& reason) {
  const int64_t model_max = model::max_model_len_of(m, 32768);
  if (t.context_tokens && *t.context_tokens > model_max && refuses_long_context(engine)) {
    std::vector<std::string> allowed;  // the assumption of an allowed length: the plan's, said once by its caller
    if (auto ok = deploy::check_max_model_len(m, deploy::Given<int64_t>{*t.context_tokens, "--context"}, t.long_max_model_len, allowed); !ok)
      reason = ok.error().message;
    else if (m.derived_max_model_len <= 0)  // no length in the config: the default 32,768 is plan's own, not vLLM's
      reason = format("the model states no context length; plan sizes it at most %lld tokens, below the %lld-token target", static_cast<long long>(model_max),
                      static_cast<long long>(*t.context_tokens));
    return *t.context_tokens;
  }
  return t.context_tokens.value_or(std::min<int64_t>(32768, model_max));
}

engine::Interconnect candidate_interconnect(const PlanTargets& t, const engine::Overheads& oh, const device::DeviceSpec& dev, int64_t tp) {
  if (t.interconnect) return *t.interconnect;
  const engine::NcclBuffers* nb = oh.nccl_buffers.get();
  const engine::InterconnectDefault* rule = nb ? nb->default_for(dev.form_factor, tp) : nullptr;
  return rule ? rule->interconnect : engine::Interconnect::unknown;
}

void note_interconnect(Candidate& c, const PlanTargets& t, const engine::EngineProfile& eng, const engine::Overheads& oh, const device::DeviceSpec& dev) {
  const engine::NcclBuffers* nb = oh.nccl_buffers.get();
  if (!nb || !nb->counted_by(eng, c.tensor_parallel_size)) return;
  thread_local SharedTextMemo interconnect_names;  // planfast14: a few names, one block per thread each
  if (t.interconnect) {
    c.interconnect = interconnect_names.of(engine::interconnect_name(*t.interconnect));
    c.interconnect_basis = SharedText("--interconnect " + c.interconnect.str());
    return;
  }
  if (const engine::InterconnectDefault* rule = nb->default_for(dev.form_factor, c.tensor_parallel_size)) {
    c.interconnect = interconnect_names.of(engine::interconnect_name(rule->interconnect));
    c.interconnect_basis = deploy::interconnect_assumption(dev, *rule, c.tensor_parallel_size);
    return;
  }
  c.interconnect = interconnect_names.of(engine::interconnect_name(engine::Interconnect::unknown));
  c.interconnect_basis = deploy::no_interconnect_default(dev, eng, c.tensor_parallel_size);
}

RowFit row_fit(const estimate::FitEstimate& f, const SharedText& engine_id, const SharedText& device_id) {
  thread_local SharedTextMemo kv_cache_dtypes;  // planfast14: a few texts, one block per thread each
  return RowFit{.engine_id = engine_id == f.engine_id ? engine_id : SharedText(f.engine_id),
                .device_id = device_id == f.device_id ? device_id : SharedText(f.device_id),
                .decode_context_parallel_size = f.decode_context_parallel_size,
                .drafter_layers = f.drafter_layers,
                .drafter_weights_bytes = f.drafter_weights_bytes,
                .gpu_memory_utilization = f.gpu_memory_utilization,
                .kv_cache_dtype = kv_cache_dtypes.of(f.kv_cache_dtype),
                .weight_scheme = f.weight_scheme,
                .total_bytes = f.total_bytes,
                .requested_bytes = f.requested_bytes,
                .weights_bytes = f.weights_bytes,
                .nccl_buffer_bytes = f.nccl_buffer_bytes,
                .available_kv_bytes = f.available_kv_bytes,
                .activation_vision_bytes = f.activation_vision_bytes,
                .encoder_profiles_video = f.encoder_profiles_video,
                .fits = f.fits,
                .failure = f.failure,
                .num_blocks = f.num_blocks,
                .kv_tokens = f.kv_tokens,
                .kv_bytes_per_token_rank = f.kv_bytes_per_token_rank,
                .max_concurrency = f.max_concurrency,
                .failure_message = f.failure_message,
                .verdict_depends_on = f.verdict_depends_on};
}

estimate::Deployment candidate_deployment(const Candidate& c, const model::QuantVariant* v, const PlanTargets& t) {
  estimate::Deployment d = t.engine_settings;  // issue 15/16 (plan28): the settings fit takes, the layout below
  d.tensor_parallel_size = c.tensor_parallel_size;
  d.pipeline_parallel_size = c.pipeline_parallel_size;
  d.data_parallel_size = c.data_parallel_size;
  d.enable_expert_parallel = c.expert_parallel;
  d.decode_context_parallel_size = t.decode_context_parallel_size;
  d.max_model_len = c.context_tokens;
  d.quantization = c.quantization_flag;
  if (v) d.quant_scheme = v->scheme;
  if (t.gpu_memory_utilization) d.gpu_memory_utilization = t.gpu_memory_utilization;
  d.speculative = t.speculative;  // issue 15: plan --speculative-config
  d.graph_capture = t.graph_capture;  // issue 15: plan --compilation-config
  d.interconnect = t.interconnect.value_or(engine::Interconnect::unknown);  // the card's default: candidate_interconnect
  if (d.graph_capture.mode == estimate::CudagraphMode::none) d.mode = estimate::ExecutionMode::eager;
  d.explain = false;
  d.rank_tree = false;
  d.memory_terms = false;  // issue 19: no plan output shows the itemized budget (RowFit)
  return d;
}


}  // namespace preflight::plan
