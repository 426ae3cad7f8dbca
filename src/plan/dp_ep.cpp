#include "plan/dp_ep.hpp"

#include <algorithm>
#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/deployment.hpp"
#include "deploy/engine_settings.hpp"
#include "deploy/model_dtype.hpp"
#include "engine/model_support.hpp"
#include "engine/quantization_methods.hpp"
#include "model/quant_variant.hpp"
#include "plan/launch.hpp"
#include "plan/plan_variants.hpp"
#include "plan/row_ranking.hpp"

namespace preflight::plan {

namespace {

std::string layout_name(const Candidate& c) {
  return format("DP %lld x TP %lld%s%s", static_cast<long long>(c.data_parallel_size), static_cast<long long>(c.tensor_parallel_size),
                c.pipeline_parallel_size > 1 ? format(" x PP %lld", static_cast<long long>(c.pipeline_parallel_size)).c_str() : "", c.expert_parallel ? " + EP" : "");
}

// Whether evaluate_layout writes the start commands of a layout that meets the targets.
enum class LayoutLaunch { build, leave_to_caller };

// The candidate's identity: model, device, layout and variant.
Candidate skeleton(const model::ModelSpec& m, const device::DeviceSpec& dev, const model::QuantVariant* v, const DpEpLayout& l) {
  Candidate c;
  c.model_id = m.id;
  c.device_id = dev.id;
  c.variant = published_label(m);
  if (v) {
    c.variant_id = v->id;
    c.variant = v->name;
    c.variant_rank = variant_rank(*v);
    c.quantization_flag = v->engine_quantization;
  }
  c.num_devices = l.num_devices;
  c.tensor_parallel_size = l.tensor_parallel_size;
  c.pipeline_parallel_size = l.pipeline_parallel_size;
  c.data_parallel_size = l.data_parallel_size;
  c.expert_parallel = l.expert_parallel;
  c.params = static_cast<double>(model::count_params(m).total);
  return c;
}

// Speed per replica at its share of the streams; the aggregate over every replica.
void add_speed(Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& dev, const engine::SpeedProfile& sp, const PlanInputs& in,
               const estimate::Deployment& d, const PlanTargets& t) {
  estimate::SpeedWorkload w;
  const int64_t per_replica = std::max<int64_t>(1, (t.concurrency + c.data_parallel_size - 1) / c.data_parallel_size);
  w.concurrency = {per_replica};
  w.context_tokens = std::min(t.decode_context_tokens.value_or(c.context_tokens), c.context_tokens);
  w.bandwidth_bytes_per_s = t.bandwidth_bytes_per_s;
  w.devices_per_node = dev.node_devices();  // ux29: the card's server (16 dies on an Atlas 800 A3), replicas inside it
  w.engine_version = deploy::stated_engine_version(in.engine, in.engine_version);  // misc21: the version plan_engine_input selects the profile by
  estimate::Deployment speed_dep = d;
  speed_dep.explain = in.detail == RowDetail::every_row;
  c.speed = estimate::estimate_speed(m, dev, sp, *in.speeds, speed_dep, w);
  if (c.speed.points.empty()) return;
  c.tokens_per_s = c.speed.points.front().per_stream_tokens_per_s;
  c.aggregate_tokens_per_s = c.speed.points.front().aggregate_tokens_per_s * static_cast<double>(c.data_parallel_size);
}

// The start commands: one replica's vllm serve, turned into native data parallel over the replicas with
// expert parallel (one node: --data-parallel-size; several: the head and --headless nodes).
void add_launch(Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& dev, const engine::EngineProfile& eng, const PlanInputs& in) {
  if (!in.launch_rules) return;
  Candidate replica = dp_replica(c);
  // ux28: replicas over several nodes export each node's interface, as a layout over nodes on Ray does.
  const int64_t node = dev.node_devices();
  const NodeSpan span = c.num_devices > node ? NodeSpan::several : NodeSpan::replica;
  replica.launch = build_launch(m, replica, eng, *in.launch_rules, node,
                                {.workload = in.workload,
                                 .node_span = span,
                                 .speculative_config = in.speculative_config,
                                 .compilation_config = in.compilation_config,
                                 .device_family = dev.family,
                                 .engine_args = &in.engine_args,
                                 .half_precision = card_half_precision(dev),
                                 .device_platform = dev.platform});
  auto dp = with_data_parallel(replica, node, {.size = c.data_parallel_size, .expert_parallel = true});
  if (dp) c.launch = std::move(*dp);
  else c.launch = replica.launch;
}

}  // namespace

std::vector<DpEpLayout> dp_ep_layouts(const model::ModelSpec& m, int64_t n, int64_t devices_per_node) {
  std::vector<DpEpLayout> out;
  if (m.num_experts <= 0 || n < 2 || n > m.num_experts) return out;
  for (const int64_t tp : {1, 2, 4, 8}) {
    if (tp > devices_per_node || n % tp != 0 || n / tp < 2) continue;
    if (m.num_attention_heads > 0 && m.num_attention_heads % tp != 0) continue;
    out.push_back({n, n / tp, tp});
  }
  return out;
}

Candidate dp_replica(const Candidate& c) {
  Candidate r = c;
  r.num_devices = std::max<int64_t>(1, c.tensor_parallel_size * c.pipeline_parallel_size);
  r.data_parallel_size = 1;
  return r;
}

namespace {

// evaluate_dp_ep, and data_parallel_row with its launch left to the caller.
Candidate evaluate_layout(const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const std::string& variant, const DpEpLayout& l,
                          const PlanTargets& t, UnservableAnswers& unservable, LayoutLaunch launch) {
  const model::QuantVariant* v = nullptr;
  if (!variant.empty()) {
    const auto& catalog = model::load_variant_catalog();
    if (catalog)
      if (auto found = model::find_variant(*catalog, variant)) v = *found;
  }
  Candidate c = skeleton(m, dev, v, l);
  const auto eng = plan_engine(in, dev);
  if (!eng) {
    c.reason = eng.error().describe();
    return c;
  }
  c.engine_id = eng->id;
  if (!v) c.quantization_flag = published_quantization_flag(m, *eng);  // issue 16 (planq32), as prepare_variant
  const engine::Overheads* oh = in.engines->overheads_for(*eng, dev.platform);
  const engine::SpeedProfile* sp = in.speeds->find(eng->engine, dev.platform, dev.id);
  if (!eng->runs_on(dev.platform) || !oh || !sp || eng->engine == "llama.cpp") {
    c.reason = layout_name(c) + ": " + eng->id + " has no native data parallel" + (l.expert_parallel ? " with expert parallel" : "") + " on " + dev.platform;
    return c;
  }
  // Issues 15/16 (arch31): the engine version's model registry lacks the architecture, as on the TP/PP rows.
  if (auto arch = engine::shipped_architecture_check(*eng, m.architecture); arch.verdict == engine::ArchitectureVerdict::unsupported) {
    c.reason = layout_name(c) + ": engine rejects it: " + arch.message;
    return c;
  }
  // Issue 16: the engine version's argument parser refuses a --quantization it has no choice for before anything else,
  // as on the TP/PP rows (planner.cpp prepare_variant) and in fit.
  if (std::string refusal = v ? engine::shipped_variant_refusal(*eng, v->id, v->engine_quantization) : std::string(); !refusal.empty()) {
    c.reason = layout_name(c) + ": engine rejects it: " + refusal;
    return c;
  }
  // Issue 16: the variant's engine rule (a published checkpoint's: its own variant's), as the TP/PP rows apply it;
  // without it mxfp4 on a Turing card (vLLM: minimum capability 80) was a recommended DP+EP row.
  const model::QuantVariant* rules_of = v;
  if (const auto& catalog = model::load_variant_catalog(); !rules_of && m.quant.quantized() && catalog) rules_of = model::variant_of_checkpoint(*catalog, m.quant);
  if (const model::VariantRule* rule = rules_of ? model::variant_rule(*rules_of, "rejected", eng->engine, eng->rule_version().text(), dev.family, m.num_experts > 0,
                                                                              c.tensor_parallel_size)
                                                          : nullptr) {
    c.reason = layout_name(c) + ": engine rejects it: " + rule->message;
    return c;
  }
  std::string too_long;
  c.context_tokens = candidate_context(m, t, eng->engine, too_long);  // a target above the model's maximum is not lowered
  if (!too_long.empty()) {
    c.reason = layout_name(c) + ": " + too_long;
    return c;
  }
  if (std::string why = deploy::npu_only_setting_refusal(t.engine_settings, dev); !why.empty()) {  // plan28, as the TP/PP rows
    c.reason = layout_name(c) + ": " + why;
    return c;
  }
  if (std::string why = deploy::model_dtype_refusal(t.model_dtype, "--dtype", dev); !why.empty()) {  // planq32, as the TP/PP rows
    c.reason = layout_name(c) + ": " + why;
    return c;
  }
  estimate::Deployment d = candidate_deployment(c, v, t);
  d.interconnect = candidate_interconnect(t, *oh, dev, c.tensor_parallel_size);
  c.fit = row_fit(estimate::estimate_fit(m, dev, *eng, *oh, d), c.engine_id);
  note_interconnect(c, t, *eng, *oh, dev);  // misc21: the interconnect the NCCL term was sized for, on the row
  if (!c.fit.fits) {
    std::string message = c.fit.failure_message;
    std::replace(message.begin(), message.end(), '\n', ' ');
    c.reason = layout_name(c) + ": " + message;
    return c;
  }
  // Issue 16: as the TP/PP rows, a variant that fits but that no start command can serve (plan::unservable_reason)
  // is not recommended.
  if (v && in.launch_rules) {
    auto& gap = c.tensor_parallel_size > 1 ? unservable.tp_many : unservable.tp1;
    if (!gap) gap = unservable_reason(m, c, *eng, in.launch_rules->quantized);
    if (!gap->empty()) {
      c.reason = layout_name(c) + ": " + *gap;
      return c;
    }
  }
  const double replicas = static_cast<double>(l.data_parallel_size);
  const double total_concurrency = c.fit.max_concurrency * replicas;
  if (total_concurrency + 1e-9 < static_cast<double>(t.concurrency)) {
    c.reason = format("%s: %lld replicas x %.2f requests at %lld tokens = %.2f; %lld wanted", layout_name(c).c_str(), static_cast<long long>(l.data_parallel_size),
                      c.fit.max_concurrency, static_cast<long long>(c.context_tokens), total_concurrency, static_cast<long long>(t.concurrency));
    return c;
  }
  add_speed(c, m, dev, *sp, in, d, t);
  if (t.min_tokens_per_s && (c.speed.points.empty() || c.tokens_per_s < *t.min_tokens_per_s)) {
    c.reason = format("%s: decodes %.1f tok/s per stream, below the %.1f wanted", layout_name(c).c_str(), c.tokens_per_s, *t.min_tokens_per_s);
    return c;
  }
  c.meets = true;
  const int64_t streams_per_replica = std::max<int64_t>(1, (t.concurrency + l.data_parallel_size - 1) / l.data_parallel_size);  // ux31: "1 stream"
  const int64_t expert_ranks = l.data_parallel_size * l.tensor_parallel_size;
  const std::string experts = m.num_experts <= 0 ? std::string()
                              : l.expert_parallel
                                  ? format("; routed experts whole over %lld ranks (%lld of %lld per rank)", static_cast<long long>(expert_ranks),
                                           static_cast<long long>(m.num_experts / expert_ranks), static_cast<long long>(m.num_experts))
                                  : format("; each routed expert split over %lld ranks (no expert parallel: vLLM's TP flattened over DP x TP)",
                                           static_cast<long long>(expert_ranks));
  c.reason = format("%s: %lld replicas of %lld device(s), each with its own KV cache (%.2f requests at %lld tokens, %.2f in all)%s; tok/s per stream at %lld "
                    "stream%s per replica",
                    layout_name(c).c_str(), static_cast<long long>(l.data_parallel_size),
                    static_cast<long long>(l.tensor_parallel_size * l.pipeline_parallel_size), c.fit.max_concurrency, static_cast<long long>(c.context_tokens),
                    total_concurrency, experts.c_str(), static_cast<long long>(streams_per_replica), streams_per_replica == 1 ? "" : "s");
  if (launch == LayoutLaunch::build) add_launch(c, m, dev, *eng, in);  // every DP+EP row that meets the targets: there are few, and one may come first
  return c;
}

}  // namespace

Candidate evaluate_dp_ep(const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const std::string& variant, const DpEpLayout& l,
                         const PlanTargets& t, UnservableAnswers& unservable) {
  return evaluate_layout(m, dev, in, variant, l, t, unservable, LayoutLaunch::build);
}

Candidate data_parallel_row(const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const Candidate& row, const DpEpLayout& l,
                            const PlanTargets& t) {
  UnservableAnswers unservable;
  return evaluate_layout(m, dev, in, row.variant_id, l, t, unservable, LayoutLaunch::leave_to_caller);
}

namespace {

// The variants plan tries, in its order (plan --variant's one, else every one the engine takes).
std::vector<std::string> variants_for(const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in) {
  if (!in.variant.empty()) return {in.variant == "bf16" ? std::string() : in.variant};
  const auto eng = plan_engine(in, dev);
  return eng ? quantization_variants(m, *eng, nullptr, dev.family) : std::vector<std::string>{""};
}

// The best DP+EP row of `n` devices: the layout meeting the targets with the most requests at once over all
// replicas, variants in plan's order (the first variant with a meeting layout); the others go to `rejected`.
std::optional<Candidate> best_at(const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const PlanTargets& t, int64_t n,
                                 CandidateList& rejected) {
  for (const auto& variant : variants_for(m, dev, in)) {
    std::optional<Candidate> best;
    UnservableAnswers unservable;
    for (const auto& l : dp_ep_layouts(m, n, dev.node_devices())) {
      Candidate c = evaluate_dp_ep(m, dev, in, variant, l, t, unservable);
      if (!c.meets) {
        rejected.push_back(std::move(c));
        continue;
      }
      const auto total = [](const Candidate& x) { return x.fit.max_concurrency * static_cast<double>(x.data_parallel_size); };
      if (!best || total(c) > total(*best)) best = std::move(c);
    }
    if (best) return best;
  }
  return std::nullopt;
}

// Why `dp` is cheaper than `base` (the device's TP/PP row), or empty when it is not (see dp_ep.hpp).
std::string cheaper_than(const Candidate& dp, const Candidate* base, int64_t max_devices) {
  const double dp_total = dp.fit.max_concurrency * static_cast<double>(dp.data_parallel_size);
  if (!base)
    return format("no TP/PP layout of up to %lld %s meets the targets; DP+EP does on %lld", static_cast<long long>(max_devices), dp.device_id.c_str(),
                  static_cast<long long>(dp.num_devices));
  if (dp.num_devices < base->num_devices)
    return format("%lld devices instead of %lld for TP %lld%s", static_cast<long long>(dp.num_devices), static_cast<long long>(base->num_devices),
                  static_cast<long long>(base->tensor_parallel_size),
                  base->pipeline_parallel_size > 1 ? format(" x PP %lld", static_cast<long long>(base->pipeline_parallel_size)).c_str() : "");
  if (dp.num_devices == base->num_devices && dp.variant_rank <= base->variant_rank && dp_total > base->fit.max_concurrency + 1e-9)
    return format("the same %lld devices serve %.2f requests at once at %lld tokens instead of %.2f (TP %lld%s)", static_cast<long long>(dp.num_devices), dp_total,
                  static_cast<long long>(dp.context_tokens), base->fit.max_concurrency, static_cast<long long>(base->tensor_parallel_size),
                  base->pipeline_parallel_size > 1 ? format(" x PP %lld", static_cast<long long>(base->pipeline_parallel_size)).c_str() : "");
  return "";
}

}  // namespace

void add_dp_ep_rows_for_device(PlanResult& r, const std::vector<model::ModelSpec>& models, const device::DeviceSpec& dev, const PlanInputs& in,
                               const PlanTargets& t) {
  CandidateList rows;
  rows.reserve(r.recommended.size());
  bool any = false;
  for (auto& row : r.recommended) {
    const auto m = std::find_if(models.begin(), models.end(), [&](const model::ModelSpec& x) { return x.id == row.model_id; });
    if (row.data_parallel_size == 1 && m != models.end() && m->num_experts > 0) {
      std::optional<Candidate> best;
      UnservableAnswers unservable;
      for (const auto& l : dp_ep_layouts(*m, row.num_devices, dev.node_devices())) {
        Candidate c = evaluate_dp_ep(*m, dev, in, row.variant_id, l, t, unservable);
        const auto total = [](const Candidate& x) { return x.fit.max_concurrency * static_cast<double>(x.data_parallel_size); };
        if (c.meets && (!best || total(c) > total(*best))) best = std::move(c);
      }
      if (best) {
        any = true;
        best->cheaper = cheaper_than(*best, &row, row.num_devices);
        if (best->cheaper.empty()) {
          best->meets = false;
          best->reason = best->reason.str() + format("; not cheaper than TP %lld on %lld devices (%.2f requests at once)", static_cast<long long>(row.tensor_parallel_size),
                                 static_cast<long long>(row.num_devices), row.fit.max_concurrency);
          best->launch = {};
          r.rejected.push_back(std::move(*best));
        } else {
          best->reason = best->reason.str() + "; cheaper: " + best->cheaper.str();
          rows.push_back(std::move(*best));
        }
      }
    }
    rows.push_back(std::move(row));
  }
  r.recommended = std::move(rows);
  if (any)
    r.assumptions.push_back("MoE: a DP+EP layout of the same devices (DP x TP, whole experts over every rank) is a row of its own before the TP/PP "
                            "row where it serves more requests at once (replicas x each one's concurrency)");
}

void add_dp_ep_candidates(PlanResult& r, const model::ModelSpec& m, const std::vector<device::DeviceSpec>& devices, const PlanInputs& in, const PlanTargets& t,
                          int64_t max_devices) {
  if (m.num_experts <= 0) return;
  for (const auto& dev : devices) {
    const auto base_it = std::find_if(r.recommended.begin(), r.recommended.end(),
                                      [&](const Candidate& c) { return c.device_id == dev.id && c.data_parallel_size == 1; });
    const Candidate* base = base_it == r.recommended.end() ? nullptr : &*base_it;
    const int64_t most = base ? std::min(base->num_devices, max_devices) : max_devices;
    for (const int64_t n : {2, 4, 8, 16}) {
      if (n > most) break;
      auto best = best_at(m, dev, in, t, n, r.rejected);
      if (!best) continue;
      best->cheaper = cheaper_than(*best, base, max_devices);
      if (best->cheaper.empty()) {
        best->meets = false;
        best->reason = best->reason.str() + format("; not cheaper than TP %lld on %lld devices (%.2f requests at once)", static_cast<long long>(base->tensor_parallel_size),
                               static_cast<long long>(base->num_devices), base->fit.max_concurrency);
        best->launch = {};
        r.rejected.push_back(std::move(*best));
        break;
      }
      best->reason = best->reason.str() + "; cheaper: " + best->cheaper.str();
      // Before its device's TP/PP row, then ordered by device count as plan_for_model orders its rows.
      const auto at = base ? base_it - r.recommended.begin() : static_cast<std::ptrdiff_t>(r.recommended.size());
      r.recommended.insert(r.recommended.begin() + at, std::move(*best));
      std::stable_sort(r.recommended.begin(), r.recommended.end(), [](const Candidate& a, const Candidate& b) { return a.num_devices < b.num_devices; });
      break;
    }
  }
  r.assumptions.push_back("MoE: DP+EP layouts (DP x TP over 2, 4, 8, 16 devices, whole experts over every rank) are rows of their own where cheaper: fewer "
                          "devices than the TP/PP row, or as many serving more requests at once (replicas x each one's concurrency)");
}

}  // namespace preflight::plan
