#include "plan/planner.hpp"
#include "plan/plan_notes.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <functional>
#include <memory>
#include <new>
#include <span>
#include <string_view>
#include <system_error>
#include <thread>

#include "base/text.hpp"
#include "base/fixed_text.hpp"
#include "base/memory.hpp"
#include "base/parallel_for.hpp"
#include "base/units.hpp"
#include "deploy/deployment.hpp"
#include "deploy/engine_core.hpp"
#include "deploy/engine_settings.hpp"
#include "deploy/model_dtype.hpp"
#include "engine/quantization_methods.hpp"
#include "model/context_length.hpp"
#include "estimate/fit_memo.hpp"
#include "estimate/held_texts.hpp"
#include "model/quant_variant.hpp"
#include "plan/dp_ep.hpp"
#include "plan/fit_copy.hpp"
#include "plan/fit_search.hpp"
#include "plan/launch.hpp"
#include "plan/llama_rows.hpp"
#include "plan/plan_variants.hpp"
#include "plan/prepared_variant.hpp"
#include "plan/row_reasons.hpp"
#include "plan/row_order.hpp"
#include "plan/row_ranking.hpp"

namespace preflight::plan {

const Launch& SharedLaunch::operator*() const {
  static const Launch none;
  return m_launch ? *m_launch : none;
}

namespace {

// Issue 15 (ux29): the node sizes of `devices` as the assumption line names them: "8", or "8 (910C: 16)" where a card's
// server holds another number (devices.json devices_per_node).
std::string node_sizes(const std::vector<device::DeviceSpec>& devices) {
  std::string others;
  for (const auto& dev : devices)
    if (dev.node_devices() != device::k_default_devices_per_node)
      others += format("%s%s: %lld", others.empty() ? "" : ", ", dev.id.c_str(), static_cast<long long>(dev.node_devices()));
  return std::to_string(device::k_default_devices_per_node) + (others.empty() ? "" : " (" + others + ")");
}

// Issue 16 (ux29): llama.cpp serves from one node; several hosts would be its RPC backend, which is not sized.
bool past_llama_cpp_node(const Expected<engine::EngineProfile>& eng, const device::DeviceSpec& dev, int64_t n) {
  return eng && eng->engine == "llama.cpp" && n > dev.node_devices();
}


}  // namespace

namespace {
// The variants a plan tries: plan --variant's one ("bf16" = the checkpoint as published), else every one
// the engine takes.
std::vector<std::string> variants_for(const model::ModelSpec& m, const PlanInputs& in, const Expected<engine::EngineProfile>& eng, const std::string& device_family) {
  if (!in.variant.empty()) return {in.variant == "bf16" ? std::string() : in.variant};
  return eng ? quantization_variants(m, *eng, in.launch_rules ? &in.launch_rules->quantized : nullptr, device_family) : std::vector<std::string>{""};
}

// The engine a plan uses on `dev`: --engine when given, else the platform's default, newest version;
// resolved by the same step as fit, logs, validate and bench (deploy::resolve_engine), with the V0 engine vLLM's V1
// oracle falls back to on this card (issue 15, eng31).
Expected<engine::EngineProfile> engine_for(const PlanInputs& in, const device::DeviceSpec& dev) { return plan_engine(in, dev); }
}  // namespace

namespace {
// The deployment of candidate `c` in `d`, a scratch that the counts of one (model, variant) share: equal to
// candidate_deployment(c, v, t) once `d` holds that of an earlier count of the same (model, variant) and targets
// (only the layout, the context and what evaluate_into changes differ), so the variant's scheme is copied once
// per (model, variant, device), not once per count (issue 19).
void refresh_deployment(estimate::Deployment& d, bool& filled, const Candidate& c, const model::QuantVariant* v, const PlanTargets& t) {
  if (!filled) {
    d = candidate_deployment(c, v, t);
    filled = true;
    return;
  }
  d.tensor_parallel_size = c.tensor_parallel_size;
  d.pipeline_parallel_size = c.pipeline_parallel_size;
  d.data_parallel_size = c.data_parallel_size;
  d.enable_expert_parallel = c.expert_parallel;
  d.max_model_len = c.context_tokens;
  d.no_video = t.engine_settings.no_video;  // what the settings ask for (plan28); fit_candidate's retries add to it
  d.skip_mm_profiling = t.engine_settings.skip_mm_profiling;
  d.explain = false;
}

// Planfast9: a card's refusals of the plan's engine settings under the run's engine ("" where it takes them), made once
// per card of a run: each row made them again (64,080 rows of the whole-catalogue plan, 20 M instructions).
struct CardRefusals {
  SharedText npu_only_setting;  // deploy::npu_only_setting_refusal
  SharedText kv_cache_dtype;    // deploy::kv_cache_dtype_refusal
  SharedText model_dtype;       // deploy::model_dtype_refusal (planq32: --dtype bfloat16 on a card without bf16)
};
CardRefusals card_refusals(const engine::EngineProfile& eng, const device::DeviceSpec& dev, const PlanTargets& t) {
  return {deploy::npu_only_setting_refusal(t.engine_settings, dev), deploy::kv_cache_dtype_refusal(eng, dev, t.engine_settings.kv_cache_dtype, "--kv-cache-dtype"),
          deploy::model_dtype_refusal(t.model_dtype, "--dtype", dev)};
}

// Issue 19: what a candidate takes from the others of its (model, variant, count) on other cards of its platform:
// the fit of one on a card with the same fit (copy_fit), the step traffic, and the start commands of one with the same
// launch (plan::same_launch). All empty: computed for this candidate alone.
struct Shared {
  const Candidate* fitted = nullptr;
  estimate::StepTrafficMemo* traffic = nullptr;
  // Candidates of this count whose start commands were built on cards whose families the launch rules treat as this
  // card's (its launch class: PlatformRun::launch_class).
  std::vector<const Candidate*>* launched = nullptr;
  LaunchMemo* launch_memo = nullptr;  // planfast6: the layout-free parts of those start commands (every launch class: planfast9)
  estimate::KvScanMemo* scans = nullptr;               // the model's KV layer passes (every count and card of the variant)
  // The terms before the KV budget, once per fit class of card (estimate/fit_memo.hpp), for this (model, variant, count).
  estimate::FitCoreMemo* cores = nullptr;
  // Issue 19 (round 21): the speed workload every row of the (model, variant) shares (finish_candidate sets its context
  // and traffic), made once rather than per row (a concurrency list and a version text per row). nullptr: made per row.
  estimate::SpeedWorkload* workload = nullptr;
  RowReasonMemo* reasons = nullptr;  // planfast7: the item's reasons, each distinct one made once (plan/row_reasons.hpp)
  const CardRefusals* refusals = nullptr;  // planfast9: card_refusals of this card under the candidate's engine; nullptr: made here
  // Planfast10: the card's fit class at this count's TP size (estimate::fit_class), made once per card and count of the
  // plan; nullptr (or one made for other inputs): made by the fit.
  const estimate::FitClass* fit_class = nullptr;
  // Planfast14: the weight-group bytes of every (model, deployed scheme) of the plan, shared by its platform runs;
  // nullptr: computed per (model, variant).
  estimate::GroupBytesMemo* group_bytes = nullptr;
  const SharedText* device_id = nullptr;  // planfast14: the card's id, one block per card of the plan; nullptr: made per row
  // Perfrank37: fit_interconnect of this card at this count, made once per card and count of the plan (66,495 calls,
  // 18 M of the whole-catalogue --json plan's instructions, before); nullptr: made here.
  const engine::Interconnect* interconnect = nullptr;
};

// The fit of candidate `c` in `d`, with the retries that serve it without the dummy video or without the
// encoder's profiling pass (each sets its flag on `c` and in `d`): computed in `f` (issue 19, planfast4: a scratch the
// caller reuses, whose vectors keep their blocks from one fit to the next), the row keeping its RowFit.
void fit_candidate(Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& dev, const engine::EngineProfile& eng, const engine::Overheads& oh,
                   estimate::Deployment& d, estimate::FitCoreMemo* cores, estimate::FitEstimate& f, const estimate::FitClass* cls) {
  // Moved once from the Expected (issue 19, round 13); on an error, estimate_fit's refused estimate, which names the field.
  if (cores) {  // issue 19: written in place, the terms before the budget once per fit class of card
    if (auto done = estimate::try_estimate_fit_into(f, *cores, m, dev, eng, oh, d, cls); !done) f = estimate::refused_fit(dev, eng, d, done.error());
  } else if (auto fit = estimate::try_estimate_fit(m, dev, eng, oh, d)) {
    f = std::move(*fit);
  } else {
    f = estimate::refused_fit(dev, eng, d, fit.error());
  }
  if (!f.fits && f.encoder_profiles_video && (f.failure == estimate::Failure::kv_negative || f.failure == estimate::Failure::max_model_len_too_large)) {
    // The profile run's dummy video (it grows with the context) is what leaves too little KV: serve images
    // only, and the run profiles the largest image instead.
    estimate::Deployment images = d;
    images.no_video = true;
    auto alt = estimate::estimate_fit(m, dev, eng, oh, images);
    if (alt.fits) {
      c.no_video = true;
      f = std::move(alt);
      d = images;
    }
  }
  // The encoder's profiling pass over its largest image is what leaves too little KV: the deployment
  // starts with --skip-mm-profiling (the launch says what that costs).
  if (auto alt = estimate::fit_without_encoder_pass(m, dev, eng, oh, d, f)) {
    c.skip_mm_profiling = true;
    c.fit_with_encoder_pass_tokens = f.kv_tokens;
    f = std::move(*alt);
    d.skip_mm_profiling = true;
  }
  c.fit = row_fit(f, c.engine_id, c.device_id);
}

// Issue 19: fit_candidate's outcome for `dev` taken from `fitted`, a candidate of the same (model, variant, count,
// targets) on a device with the same fit (estimate::same_fit_device) whose fit ran: the same fit but for the device
// id it records, the same retry flags (on `c` and in `d`).
void copy_fit(Candidate& c, const Candidate& fitted, const device::DeviceSpec& dev, estimate::Deployment& d) {
  c.fit = fitted.fit;
  c.fit.device_id = c.device_id == dev.id ? c.device_id : SharedText(dev.id);
  c.no_video = fitted.no_video;
  c.skip_mm_profiling = fitted.skip_mm_profiling;
  c.fit_with_encoder_pass_tokens = fitted.fit_with_encoder_pass_tokens;
  if (c.no_video) d.no_video = true;  // a retry's flag; the engine settings' own stay as refresh_deployment set them
  if (c.skip_mm_profiling) d.skip_mm_profiling = true;
}

// The speed workload of a plan's rows but their context and step-traffic memo (finish_candidate sets those per row).
estimate::SpeedWorkload speed_workload(const PlanInputs& in, const PlanTargets& t) {
  estimate::SpeedWorkload w;
  w.concurrency = {t.concurrency};
  w.bandwidth_bytes_per_s = t.bandwidth_bytes_per_s;
  w.engine_version = deploy::stated_engine_version(in.engine, in.engine_version);  // misc21: the version plan_engine_input selects the profile by
  return w;
}

// What follows the fit of candidate `c`: the reason it is rejected, else its speed, its facts and (every_row)
// its start commands. `full` is the whole fit of `c` where it was computed (fit_candidate's scratch; it is read only
// when `shared.fitted` is not given, and then it was computed).
// Perfrank37 (issue 19): the row's speed estimate made where the row keeps it (`new (p) T(make())` initialises *p with
// make's result, C++17's guaranteed copy elision), not moved there from a temporary: a SpeedEstimate is 624 bytes whose
// InlineVectors move element by element (47,483 moves and their temporaries' destruction, 26 M of the whole-catalogue
// --json plan's instructions). On an exception the slot is made a default estimate again before it propagates.
template <class Make>
void make_speed_in_place(estimate::SpeedEstimate& slot, const Make& make) {
  std::destroy_at(&slot);
  try {
    ::new (static_cast<void*>(&slot)) estimate::SpeedEstimate(make());
  } catch (...) {
    std::construct_at(&slot);
    throw;
  }
}

void finish_candidate(Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const engine::EngineProfile& eng,
                      const ModelFacts& facts, const engine::SpeedProfile& sp, const PlanTargets& t, estimate::Deployment& d,
                      const Shared& shared, const estimate::FitEstimate& full) {
  const Candidate* fitted = shared.fitted;
  // A rejection for the fit alone reads nothing of the device: that of `fitted` (copy_fit's source) when given.
  if (!c.fit.fits) {
    const int64_t largest = fitted || c.fit.failure != estimate::Failure::max_model_len_too_large ? 0 : estimate::kv_capacity_tokens(full);
    c.reason = fitted          ? fitted->reason
               : shared.reasons ? shared.reasons->failure(c.fit, c.context_tokens, largest)
                                : SharedText(failure_reason(c.fit, c.context_tokens, largest));
    return;
  }
  if (c.fit.max_concurrency + 1e-9 < static_cast<double>(t.concurrency)) {
    if (fitted) {
      c.reason = fitted->reason;
    } else {
      FixedText r;
      r << "KV holds ";
      r.fixed(c.fit.max_concurrency, 2) << " requests at " << c.context_tokens << " tokens; " << t.concurrency << " wanted";
      c.reason = r.take();
    }
    return;
  }
  std::optional<estimate::SpeedWorkload> own;  // planfast8: made only without a shared one (a default one allocates its concurrency list)
  estimate::SpeedWorkload& w = shared.workload ? *shared.workload : own.emplace(speed_workload(in, t));
  w.context_tokens = std::min(t.decode_context_tokens.value_or(c.context_tokens), c.context_tokens);
  w.devices_per_node = dev.node_devices();  // ux29: the workload is shared by the cards of a run; the node is the card's
  w.traffic = shared.traffic;
  // The fit above builds no text; the speed estimate's text (provenance) only where the row shows it.
  // Its two per-row lines (decode step, prefill) as numbers, written by the JSON writer (planfast5).
  d.explain = in.detail == RowDetail::every_row;
  make_speed_in_place(c.speed, [&] {
    if (d.explain) return estimate::estimate_speed(m, dev, sp, *in.speeds, d, w, c.speed_lines);
    return estimate::estimate_speed(m, dev, sp, *in.speeds, d, w);
  });
  d.explain = false;
  if (!c.speed.points.empty()) {
    c.tokens_per_s = c.speed.points.front().per_stream_tokens_per_s;
    c.aggregate_tokens_per_s = c.speed.points.front().aggregate_tokens_per_s;
  }
  const bool speed_known = !c.speed.points.empty();
  if (t.min_tokens_per_s && !speed_known) {
    c.reason = "speed unknown: no bandwidth for " + dev.id + " (measure it with preflight bw --save, or pass --bandwidth)";
    return;
  }
  if (t.min_tokens_per_s && c.tokens_per_s < *t.min_tokens_per_s) {
    c.reason = format("decodes %.1f tok/s per stream at concurrency %lld, below the %.1f wanted", c.tokens_per_s, static_cast<long long>(t.concurrency),
                      *t.min_tokens_per_s);
    return;
  }
  c.meets = true;
  // A copied fit has the facts of `fitted`: its reason when that is them alone (it met the targets with a speed, so
  // nothing was added to them), shared rather than built again (round 14: recurrent models' rows build them per fit).
  const bool copied = fitted && fitted->meets && !fitted->speed.points.empty();
  c.reason = copied ? fitted->reason : shared.reasons ? shared.reasons->facts(m, facts, c.fit) : architecture_facts(m, facts, c.fit);
  // user36 (issue 16): a row that meets the targets only with a flag plan added says so where the row is read, not only in
  // its start line: `fit --variant V` without that flag gives other numbers (Qwen2.5-VL-7B FP8 on an RTX 4090 at 65,536:
  // 176,240 KV tokens with video off, "does not fit" with the default dummy video).
  if (!copied && (c.no_video || c.skip_mm_profiling))
    c.reason = c.reason.str() + (c.reason.empty() ? "" : "; ") +
               (c.no_video ? std::string("sized and started with --limit-mm-per-prompt '{\"video\": 0}': no video input, so the profile run encodes the largest "
                                         "image, not a dummy video of this context")
                           : format("sized and started with --skip-mm-profiling: no encoder pass in the profile run (%lld KV tokens with it)",
                                    static_cast<long long>(c.fit_with_encoder_pass_tokens)));
  if (!speed_known) c.reason = c.reason.str() + (c.reason.empty() ? "" : "; ") + "speed unknown: no bandwidth for " + dev.id + " (preflight bw --save, or --bandwidth)";
  if (in.detail != RowDetail::every_row) return;
  const Candidate* same = nullptr;
  if (shared.launched)
    for (const Candidate* o : *shared.launched)
      if (!same && same_launch(*o, c)) same = o;
  if (same) {
    c.launch = same->launch;
    return;
  }
  add_row_launch(c, m, dev, eng, in, shared.launch_memo);
  if (shared.launched) shared.launched->push_back(&c);
}

// evaluate_candidate with the work shared by many candidates done once by the caller: the engine for
// `dev` (engine_for), the model's facts (model_facts) and the variant (prepare_variant); `d` and `filled`
// are the scratch deployment of refresh_deployment. Fills `c`, a default Candidate (the planner's own slot:
// no copy). `in.detail` says whether the candidate gets its speed provenance and start commands here
// (every_row) or not at all (table: the caller adds the start commands of the one row it prints).
// `shared` (issue 19): what the candidates of the same (model, variant, count, targets) on other cards give this one;
// shared.fitted is one on a card with the same fit (plan/fit_copy: same_fit_copy) for which this returned true: its fit
// is copied, not computed. Returns whether the candidate's fit was computed or copied (it got that far).
bool evaluate_into(Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const Expected<engine::EngineProfile>& eng,
                   const ModelFacts& facts, const PreparedVariant& pv, int64_t n, const PlanTargets& t, estimate::Deployment& d, bool& filled,
                   estimate::GroupBytes& weights, estimate::FitEstimate& scratch, const Shared& shared = {}) {
  c.model_id = pv.model_id;
  c.device_id = shared.device_id ? *shared.device_id : SharedText(dev.id);
  const model::QuantVariant* v = pv.v;
  if (pv.unknown) {
    c.variant = pv.published;
    c.reason = pv.lookup_error;
    return false;
  }
  if (v) {
    c.variant_id = pv.variant_id;
    c.variant = pv.variant_name;
    c.variant_rank = variant_rank(*v);
    c.quantization_flag = pv.quantization_flag;
  } else {
    c.variant = pv.published;
    c.quantization_flag = pv.quantization_flag;  // planq32: the published ModelSlim checkpoint's --quantization ascend
  }
  c.num_devices = n;
  c.tensor_parallel_size = std::min(n, dev.node_devices());
  c.pipeline_parallel_size = std::max<int64_t>(1, n / c.tensor_parallel_size);
  c.params = facts.params;
  if (!eng) {
    c.reason = eng.error().describe();
    return false;
  }
  c.engine_id = pv.engine_id;
  // On prepare_variant's platform its answer (wrong_platform is set exactly where the engine does not run there).
  if (dev.platform == pv.platform ? !pv.wrong_platform.empty() : !eng->runs_on(dev.platform)) {
    c.reason = dev.platform == pv.platform ? pv.wrong_platform : SharedText(eng->id + " does not run on " + dev.platform + " devices");
    return false;
  }
  if (pv.llama_cpp && n > dev.node_devices()) {  // past_llama_cpp_node
    c.reason = format("llama.cpp serves from one node of %lld %s; more would be its RPC backend over hosts, which preflight does not size",
                      static_cast<long long>(dev.node_devices()), dev.id.c_str());
    return false;
  }
  const engine::Overheads* oh = pv.overheads;
  const engine::SpeedProfile* sp = pv.speed;
  if (!oh || !sp) {
    c.reason = "no overheads or speed profile for " + eng->engine + " on " + dev.platform;
    return false;
  }
  if (!pv.architecture_refused.empty()) {  // issues 15/16 (arch31): the engine never loads the model
    c.reason = pv.architecture_refused;
    return false;
  }
  if (!pv.argparse_refused.empty()) {
    c.reason = pv.argparse_refused;
    return false;
  }
  if (pv.rejected) {
    c.reason = pv.rejected_reason;
    return false;
  }
  if (!pv.no_effect.empty()) {  // after the engine's own rejection, as fit orders them
    c.reason = pv.no_effect;
    return false;
  }
  // A rule of this layout only (bnb_8bit: vLLM refuses a pre-quantized bitsandbytes checkpoint under TP).
  if (const model::VariantRule* rule = c.tensor_parallel_size > 1 && pv.rules_of ? layout_rule(pv, m, dev, *eng, c.tensor_parallel_size) : nullptr) {
    c.reason = shared.reasons ? shared.reasons->text("engine rejects it: " + rule->message) : SharedText("engine rejects it: " + rule->message);
    return false;
  }
  std::string too_long;
  c.context_tokens = candidate_context(m, t, eng->engine, too_long);  // llamacpp31: llama.cpp warns and starts (refuses_long_context)
  if (!too_long.empty()) {
    c.reason = shared.reasons ? shared.reasons->text(std::move(too_long)) : SharedText(std::move(too_long));
    return false;
  }
  // Issue 15/16 (plan28): a setting only an Ascend NPU's stack reads (--hccl-buffsize), on another platform's card:
  // refused as fit refuses it.
  // Issue 15 (v0eng29): a KV cache dtype the engine takes but cannot run on this card, refused as fit refuses it.
  const CardRefusals refused = shared.refusals ? CardRefusals{} : card_refusals(*eng, dev, t);
  const CardRefusals& card = shared.refusals ? *shared.refusals : refused;
  if (!card.npu_only_setting.empty()) {
    c.reason = card.npu_only_setting;
    return false;
  }
  if (!card.kv_cache_dtype.empty()) {
    c.reason = card.kv_cache_dtype;
    return false;
  }
  if (!card.model_dtype.empty()) {  // planq32: --dtype the card cannot compute in, as fit refuses it
    c.reason = card.model_dtype;
    return false;
  }
  const bool first = !filled;
  refresh_deployment(d, filled, c, v, t);
  // planidx36: unknown where no term of the version reads it (plan/fit_copy)
  d.interconnect = shared.interconnect ? *shared.interconnect : fit_interconnect(dev, *eng, *oh, t, n);
  // Issue 19: the weight-group bytes once per (model, variant), shared by every card count's fit and speed.
  if (first) {
    if (shared.group_bytes) shared.group_bytes->get(weights, m, d);
    else weights = estimate::group_bytes_for(m, d);
  }
  d.group_bytes = &weights;
  d.kv_scan = shared.scans;
  // Planidx36: `fitted` is of a card with the same fit at this count (plan/fit_copy: its key holds the interconnect the
  // card's form factor gives its TP group, which the NCCL buffers and the all-reduce workspace read).
  if (shared.fitted) copy_fit(c, *shared.fitted, dev, d);
  else fit_candidate(c, m, dev, *eng, *oh, d, shared.cores, scratch, shared.fit_class);
  // llamacpp30: -c cells, not a KV budget; llamacpp33: the build named (llama.cpp@bNNNN reads as version N.0.0) decides MLA's cache.
  if (pv.llama_cpp)
    fit_llama_cpp_row(c, m, dev, d, t.concurrency, eng->version_named ? std::optional<int64_t>(eng->version_named->major) : std::nullopt);
  note_interconnect(c, t, *eng, *oh, dev);  // misc21: the interconnect the NCCL term was sized for, on the row
  // Issue 16: a variant that fits but that no start command can serve as written (no published checkpoint, conversion
  // or load-time path; a conversion output the engine refuses at this TP) is not a row to recommend. After the fit, so
  // that the engine's own refusal of the method (its message, from the fit) comes first.
  if (const std::string& gap = c.tensor_parallel_size > 1 ? pv.unservable_tp_many : pv.unservable_tp1; c.fit.fits && !gap.empty()) {
    c.reason = gap;
    return true;
  }
  finish_candidate(c, m, dev, in, *eng, facts, *sp, t, d, shared, scratch);
  return true;
}

Candidate evaluate_with(const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const Expected<engine::EngineProfile>& eng,
                        const ModelFacts& facts, const std::string& variant, int64_t n, const PlanTargets& t) {
  Candidate c;
  estimate::Deployment d;
  bool filled = false;
  estimate::GroupBytes weights;
  estimate::FitEstimate scratch;
  evaluate_into(c, m, dev, in, eng, facts, prepare_variant(m, dev, in, eng, variant), n, t, d, filled, weights, scratch);
  return c;
}

}  // namespace


namespace {
// The variants each model is tried in on a device of `platform` and of family `device_family` (variants_for with that
// platform's engine; every card of a run has the same card_bound_variants_key, so the first card's family stands for all).
// The models are shared among `threads` workers (issue 19: this ran on one core before any candidate was planned).
std::vector<std::vector<std::string>> variants_on(const std::vector<model::ModelSpec>& models, const PlanInputs& in, const Expected<engine::EngineProfile>& eng,
                                                  const std::string& device_family, int threads) {
  std::vector<std::vector<std::string>> out(models.size());
  parallel_for(models.size(), threads, [&](size_t i) { out[i] = variants_for(models[i], in, eng, device_family); });
  drop_release_conversions(models, in, out);
  return out;
}

// For each device of `devs`, the index of its launch class (same_launch_family under in.launch_rules), numbered in
// the order of each class's first device. Without launch rules no start command is built: one class.
std::vector<size_t> launch_classes_of(std::span<const device::DeviceSpec* const> devs, const PlanInputs& in, size_t& classes) {
  std::vector<size_t> class_of(devs.size());
  classes = 0;
  for (size_t x = 0; x < devs.size(); ++x) {
    size_t y = 0;
    // ux29: the start also follows the card's node size and its half precision (--dtype float16 without bf16).
    while (y < x && in.launch_rules &&
           (!same_launch_family(*in.launch_rules, devs[y]->family, devs[x]->family) || devs[y]->node_devices() != devs[x]->node_devices() ||
            card_half_precision(*devs[y]) != card_half_precision(*devs[x])))
      ++y;
    class_of[x] = y < x ? class_of[y] : classes++;
  }
  return class_of;
}

// One platform's share of a plan (issue 19): its cards (one engine, one variant list), each candidate's slot, and the
// work over them, one (model, variant) at a time (all published checkpoints, then each --quantization flag: the weight
// formats the estimates keep per scheme and thread stay warm) with all its counts and cards together: the fit of a
// count is computed on the first card of each set with the same fit (fit_copy_sets) and copied to the others, the step
// traffic is computed once for all cards (estimate::StepTrafficMemo), the start commands (every_row) once per
// distinct launch (same_launch).
struct PlatformRun {
  Expected<engine::EngineProfile> eng;
  std::vector<std::string> engine_said;  // what plan_engine said resolving `eng` (its V0 notes: note_engine_cores)
  std::vector<const device::DeviceSpec*> devs;
  std::vector<SharedText> device_ids;  // planfast14: each card's id, shared by its rows
  std::vector<std::vector<std::string>> variants;  // per model (variants_on): the engine and so the variants depend on the platform alone
  // Each candidate lands in its own slot of its (device, count)'s list, the models in order and each model's
  // variants in order (offset[i] + v). Ranked, the list becomes the larger of its recommended and rejected rows and
  // only the smaller are moved to a second list (rank_candidates).
  std::vector<size_t> offset;
  size_t slots = 0;
  std::vector<std::vector<CandidateList>> lists;  // [device][count][slot]
  std::vector<const engine::SpeedProfile*> speeds;         // per device: the one input of prepare_variant that differs
  // Per count and device: its set of cards with the same fit at that count (plan/fit_copy: fit_copy_sets), and per
  // count the number of sets (plan_runs).
  std::vector<std::vector<size_t>> set_of;
  std::vector<size_t> sets;
  // Per device: its launch class, the cards whose families every launch rule treats alike (same_launch_family),
  // numbered like set_of; a row's start commands are built once per distinct launch within a class (round 16: once
  // per family before, 10,391 builds in the whole-catalogue --json plan).
  std::vector<size_t> launch_class;
  size_t launch_classes = 0;
  // The devices in the order of their family (catalogue order within one): the variant's rejection rule, looked up
  // per family (set_family), is looked up once per family and not at every change between neighbours.
  std::vector<size_t> order;
  std::vector<CardRefusals> refusals;           // per device: card_refusals under `eng` (plan_runs; empty without an engine)
  // Planfast10: per count and device, the card's fit class at the count's TP size under `eng` and its overheads on the
  // platform (plan_runs; empty without them): made 460 times in a whole-catalogue plan instead of at each of ~48,000 fits.
  std::vector<std::vector<estimate::FitClass>> fit_classes;
  std::vector<std::vector<engine::Interconnect>> interconnects;  // perfrank37: per count and device, fit_interconnect (as fit_classes)
  std::vector<std::pair<size_t, size_t>> work;  // (model, variant), variant-major
  std::unique_ptr<SharedRuleParts[]> rule_parts;  // perfcmd37: per model, the launch rules' parts its variants' items share
  std::vector<std::vector<PlanResult>> out;     // [device][count]
};

// The run of `devs` (one platform): everything but the candidates.
PlatformRun platform_run(const std::vector<model::ModelSpec>& models, std::vector<const device::DeviceSpec*> devs, size_t counts, const PlanInputs& in,
                         int threads) {
  std::vector<std::string> said;
  PlatformRun r{plan_engine(in, *devs.front(), &said), std::move(said)};
  r.devs = std::move(devs);
  for (const auto* dev : r.devs) r.device_ids.emplace_back(dev->id);
  r.variants = variants_on(models, in, r.eng, r.devs.front()->family, threads);
  r.offset.resize(models.size());
  size_t most_variants = 0;
  for (size_t i = 0; i < models.size(); ++i) {
    r.offset[i] = r.slots;
    r.slots += r.variants[i].size();
    most_variants = std::max(most_variants, r.variants[i].size());
  }
  r.lists.assign(r.devs.size(), std::vector<CandidateList>(counts));
  r.speeds.assign(r.devs.size(), nullptr);
  if (r.eng)
    for (size_t x = 0; x < r.devs.size(); ++x) r.speeds[x] = in.speeds->find(r.eng->engine, r.devs[x]->platform, r.devs[x]->id);
  r.launch_class = launch_classes_of(r.devs, in, r.launch_classes);
  r.order.resize(r.devs.size());
  for (size_t x = 0; x < r.devs.size(); ++x) r.order[x] = x;
  std::stable_sort(r.order.begin(), r.order.end(), [&](size_t a, size_t b) { return r.devs[a]->family < r.devs[b]->family; });
  for (size_t v = 0; v < most_variants; ++v)
    for (size_t i = 0; i < models.size(); ++i)
      if (v < r.variants[i].size()) r.work.emplace_back(i, v);
  r.out.assign(r.devs.size(), std::vector<PlanResult>(counts));
  r.rule_parts = std::make_unique<SharedRuleParts[]>(models.size());
  return r;
}

// Work item `j` of run `r`: one (model, variant) over every count and card.
void run_item(PlatformRun& r, size_t j, const std::vector<model::ModelSpec>& models, const std::vector<ModelFacts>& facts, const std::vector<int64_t>& counts,
              const PlanInputs& in, const PlanTargets& t, estimate::GroupBytesMemo& group_bytes) {
  const auto [i, v] = r.work[j];
  PreparedVariant pv = prepare_variant(models[i], *r.devs.front(), in, r.eng, r.variants[i][v]);
  estimate::Deployment d;
  bool filled = false;
  estimate::GroupBytes weights;
  // The variant's scheme lives in `d` and the profiles in the plan's const speed catalogue, unchanged while it runs.
  estimate::StepTrafficMemo traffic(models[i], estimate::StepTrafficInputs::held);
  estimate::KvScanMemo scans(models[i]);
  estimate::FitCoreMemo cores;  // one for the run's cards: estimate::FitClass keys what a card reads (its MoE backend listing too)
  estimate::SpeedWorkload workload = speed_workload(in, t);
  estimate::FitEstimate scratch;  // every fit the item computes, in turn (its rows keep their RowFit)
  std::vector<const Candidate*> fitted;
  std::vector<std::vector<const Candidate*>> launched(r.launch_classes);  // per launch class
  // Planfast9: one memo for every launch class of the item (its parts key on what they read; launch.hpp LaunchMemo): a
  // memo per class built the checkpoint choice and rule parts again for each class (1,290 and 1,578 builds, 33 M of the
  // whole-catalogue --json plan's instructions).
  LaunchMemo launch_memo;
  launch_memo.shared = &r.rule_parts[i];  // perfcmd37: the model's rule parts, shared with its other variants' items
  std::vector<std::pair<const model::VariantRule*, SharedText>> rejected(r.devs.size());  // each device's, looked up once per family
  RowReasonMemo reasons;
  for (const size_t x : r.order) {
    set_family(pv, models[i], *r.devs[x], r.eng);
    rejected[x] = {pv.rejected, pv.rejected_reason};
  }
  for (size_t k = 0; k < counts.size(); ++k) {
    fitted.assign(r.sets[k], nullptr);
    for (auto& list : launched) list.clear();
    cores.clear();
    for (const size_t x : r.order) {
      pv.speed = r.speeds[x];
      pv.rejected = rejected[x].first;
      pv.rejected_reason = rejected[x].second;
      Candidate& c = r.lists[x][k][r.offset[i] + v];
      const Candidate*& same = fitted[r.set_of[k][x]];
      if (evaluate_into(c, models[i], *r.devs[x], in, r.eng, facts[i], pv, counts[k], t, d, filled, weights, scratch,
                        {same, &traffic, &launched[r.launch_class[x]], &launch_memo, &scans, &cores, &workload, &reasons,
                         r.refusals.empty() ? nullptr : &r.refusals[x], r.fit_classes.empty() ? nullptr : &r.fit_classes[k][x], &group_bytes, &r.device_ids[x],
                         r.interconnects.empty() ? nullptr : &r.interconnects[k][x]}) &&
          !same)
        same = &c;
    }
  }
}

// plan_for_device for every card of `runs` (each one platform's) and each count in `counts` (into each run's `out`),
// with the per-model facts (model_facts) computed by the caller. Three passes on `threads` workers, each over every
// platform at once: the candidates' slots (made on the workers, which share the first touch of their memory), the
// work items, the ranking of each (device, count).
void plan_runs(std::vector<PlatformRun>& runs, const std::vector<model::ModelSpec>& models, const std::vector<ModelFacts>& facts,
               const std::vector<int64_t>& counts, const PlanInputs& in, const PlanTargets& t, int threads) {
  std::vector<std::pair<size_t, size_t>> cards, items;  // (run, device), (run, work item)
  for (size_t g = 0; g < runs.size(); ++g) {
    for (size_t x = 0; x < runs[g].devs.size(); ++x) cards.emplace_back(g, x);
    for (size_t j = 0; j < runs[g].work.size(); ++j) items.emplace_back(g, j);
  }
  parallel_for(cards.size(), threads, [&](size_t n) {
    PlatformRun& r = runs[cards[n].first];
    for (auto& list : r.lists[cards[n].second]) {
      // Round 18: the slots' pages are asked for at once (base/memory), not faulted in one by one as they are built.
      list.reserve(r.slots);
      prefault_writable(list.data(), r.slots * sizeof(Candidate));
      list.resize(r.slots);
    }
  });
  for (auto& r : runs)
    if (r.eng)
      for (const auto* dev : r.devs) r.refusals.push_back(card_refusals(*r.eng, *dev, t));
  for (auto& r : runs) {
    const engine::Overheads* oh = r.eng && in.engines ? in.engines->overheads_for(*r.eng, r.devs.front()->platform) : nullptr;
    if (!oh) continue;
    r.fit_classes.resize(counts.size());
    r.interconnects.resize(counts.size());
    for (size_t k = 0; k < counts.size(); ++k)
      for (const auto* dev : r.devs) {
        r.fit_classes[k].push_back(plan_fit_class(*dev, *r.eng, *oh, t, counts[k]));  // plan/fit_copy
        r.interconnects[k].push_back(fit_interconnect(*dev, *r.eng, *oh, t, counts[k]));
      }
  }
  for (auto& r : runs) {  // planidx36: the sets of cards with the same fit at each count (plan/fit_copy)
    const engine::Overheads* oh = r.eng && in.engines ? in.engines->overheads_for(*r.eng, r.devs.front()->platform) : nullptr;
    r.set_of.resize(counts.size());
    r.sets.assign(counts.size(), 0);
    for (size_t k = 0; k < counts.size(); ++k) r.set_of[k] = fit_copy_sets(r.devs, r.eng ? &*r.eng : nullptr, oh, t, counts[k], r.sets[k]);
  }
  // Planfast6: the source texts the rows' speed texts name (the plan's cards, speed catalogue and profiles) are const
  // while it runs, so each worker's text memos compare an entry's characters once per plan (estimate/held_texts.hpp).
  const uint64_t held = estimate::new_held_texts_epoch();
  estimate::GroupBytesMemo group_bytes;  // planfast14: over `models`, const while it lives (its key: see fit_memo.hpp)
  parallel_for(items.size(), threads, [&](size_t n) {
    const estimate::HeldTexts texts(held);
    run_item(runs[items[n].first], items[n].second, models, facts, counts, in, t, group_bytes);
  });
  parallel_for(cards.size() * counts.size(), threads, [&](size_t n) {
    PlatformRun& r = runs[cards[n / counts.size()].first];
    const size_t x = cards[n / counts.size()].second, k = n % counts.size();
    r.out[x][k] = rank_candidates(r.lists[x][k], models, *r.devs[x], counts[k], in, t, r.eng);  // the run's engine: every card's (one platform)
  });
}

std::vector<ModelFacts> facts_of(const std::vector<model::ModelSpec>& models) {
  std::vector<ModelFacts> out;
  out.reserve(models.size());
  for (const auto& m : models) out.push_back(model_facts(m));
  return out;
}
}  // namespace

Candidate evaluate_candidate(const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const std::string& variant, int64_t n,
                             const PlanTargets& t) {
  const auto eng = engine_for(in, dev);
  Candidate c = evaluate_with(m, dev, in, eng, model_facts(m), variant, n, t);
  if (c.meets && in.detail == RowDetail::table) add_row_launch(c, m, dev, *eng, in);  // the one row is the first row
  return c;
}

PlanResult plan_for_device(const std::vector<model::ModelSpec>& models, const device::DeviceSpec& dev, int64_t n, const PlanInputs& in, const PlanTargets& t) {
  std::vector<PlatformRun> runs;
  runs.push_back(platform_run(models, {&dev}, 1, in, in.threads));
  plan_runs(runs, models, facts_of(models), {n}, in, t, in.threads);
  PlanResult r = std::move(runs.front().out.front().front());
  note_engine_cores(r, std::move(runs.front().engine_said));  // issue 15 (eng31): the V0 engine the rows were sized as
  return r;
}

std::vector<DevicePlan> plan_for_devices(const std::vector<model::ModelSpec>& models, const std::vector<device::DeviceSpec>& devices,
                                         const std::vector<int64_t>& device_counts, const PlanInputs& in, const PlanTargets& t, int threads) {
  const std::vector<ModelFacts> facts = facts_of(models);
  std::vector<DevicePlan> out;
  for (const auto& dev : devices)
    for (const int64_t n : device_counts) out.push_back(DevicePlan{dev.id, n, {}});
  // One run per platform and card-bound variants (one engine, one variant list: issue 16, the Ascend 950 cards try the
  // MX variants the other NPUs do not; issue 15, eng31: the cards vLLM's V1 oracle sends to V0 apart), its cards in
  // catalogue order; every run's work is shared among the workers at
  // once, and each result lands in its device's own slots.
  std::vector<std::pair<std::string, std::string>> groups;  // (platform, card_bound_variants_key)
  std::vector<std::pair<const device::DeviceSpec*, std::string>> keys;  // the key of each (platform, family), looked up once
  std::vector<size_t> group_of(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    auto known = std::find_if(keys.begin(), keys.end(), [&](const auto& k) { return k.first->platform == devices[d].platform && k.first->family == devices[d].family; });
    if (known == keys.end()) {
      std::string key;
      if (const auto eng = engine_for(in, devices[d])) {
        if (in.variant.empty()) key = card_bound_variants_key(*eng, devices[d].family);
        // Issue 15 (eng31): a family vLLM's V1 oracle sends to V0 runs another engine than its platform's other cards.
        if (eng->v0_lines) key += "\nV0 " + eng->v0_lines->fallback_warning;
      }
      known = keys.insert(keys.end(), {&devices[d], std::move(key)});
    }
    std::pair<std::string, std::string> g{devices[d].platform, known->second};
    auto at = std::find(groups.begin(), groups.end(), g);
    group_of[d] = static_cast<size_t>(at - groups.begin());
    if (at == groups.end()) groups.push_back(std::move(g));
  }
  std::vector<PlatformRun> runs;
  std::vector<std::vector<size_t>> index(groups.size());  // per run: its cards' places in `devices`
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<const device::DeviceSpec*> devs;
    for (size_t d = 0; d < devices.size(); ++d)
      if (group_of[d] == g) {
        index[g].push_back(d);
        devs.push_back(&devices[d]);
      }
    runs.push_back(platform_run(models, std::move(devs), device_counts.size(), in, threads));
  }
  plan_runs(runs, models, facts, device_counts, in, t, threads);
  for (size_t g = 0; g < runs.size(); ++g)
    for (size_t x = 0; x < index[g].size(); ++x)
      for (size_t k = 0; k < device_counts.size(); ++k) out[index[g][x] * device_counts.size() + k].result = std::move(runs[g].out[x][k]);
  return out;
}

void release_plans(std::vector<DevicePlan>& plans, int threads) {
  // Planfast7b: one plan at a time to each worker; handing each worker one contiguous run of plans of equal rows (the
  // neighbours share texts and start commands) freed no faster on 2 workers (calling worker 29 against 25 ms).
  parallel_for(plans.size(), threads, [&](size_t n) { PlanResult gone = std::move(plans[n].result); });
  plans.clear();
}

PlanResult plan_for_model(const model::ModelSpec& m, const std::vector<device::DeviceSpec>& devices, const PlanInputs& in, const PlanTargets& t, int64_t max_devices) {
  PlanResult r;
  const ModelFacts facts = model_facts(m);
  std::string llama_cpp_nodes;  // ux29: the cards whose counts stopped at one node for llama.cpp, with their node size
  std::vector<std::string> engines_said;  // what plan_engine said on each card (its V0 notes: note_engine_cores, last)
  for (const auto& dev : devices) {
    std::vector<std::string> said;
    const auto eng = plan_engine(in, dev, &said);
    if (eng) engines_said.insert(engines_said.end(), std::make_move_iterator(said.begin()), std::make_move_iterator(said.end()));
    const auto variants = variants_for(m, in, eng, dev.family);
    std::optional<Candidate> best;
    for (const int64_t n : {1, 2, 4, 8, 16}) {
      if (n > max_devices) break;
      if (past_llama_cpp_node(eng, dev, n)) {
        llama_cpp_nodes += (llama_cpp_nodes.empty() ? "" : ", ") + dev.id + ": " + std::to_string(dev.node_devices());
        break;
      }
      std::vector<Candidate> meeting;
      for (const auto& q : variants) {
        Candidate c = evaluate_with(m, dev, in, eng, facts, q, n, t);
        if (c.meets) meeting.push_back(std::move(c));
        else r.rejected.push_back(std::move(c));
      }
      if (!meeting.empty()) {
        std::stable_sort(meeting.begin(), meeting.end(), [](const Candidate& a, const Candidate& b) {
          return a.variant_rank < b.variant_rank;
        });
        best = std::move(meeting.front());
        break;
      }
    }
    if (best) r.recommended.push_back(std::move(*best));
  }
  std::stable_sort(r.recommended.begin(), r.recommended.end(), [](const Candidate& a, const Candidate& b) {
    if (a.num_devices != b.num_devices) return a.num_devices < b.num_devices;
    return a.tokens_per_s > b.tokens_per_s;
  });
  launch_first_row(r, {&m, 1}, devices, in);
  add_dp_ep_candidates(r, m, devices, in, t, max_devices);  // issue 15: MoE DP+EP rows where cheaper (plan/dp_ep)
  // The counts tried, not the whole ladder: --max-devices 2 tried 1 and 2 (it said "1, 2, 4, 8, 16 (up to 2)").
  std::string counts;
  for (const int64_t n : {1, 2, 4, 8, 16})
    if (n <= max_devices) counts += (counts.empty() ? "" : ", ") + std::to_string(n);
  r.assumptions.push_back(format("device counts %s (--max-devices %lld); TP inside a node of %s, PP across nodes; speed at decode context %s", counts.c_str(),
                                 static_cast<long long>(max_devices), node_sizes(devices).c_str(),
                                 t.decode_context_tokens ? std::to_string(*t.decode_context_tokens).c_str() : "= each row's context target"));
  if (!llama_cpp_nodes.empty())
    r.assumptions.push_back("llama.cpp: no count past one node was tried (devices a node, " + llama_cpp_nodes +
                            "): several hosts would be its RPC backend, which preflight does not size");
  note_row_assumptions(r);
  note_engine_cores(r, std::move(engines_said));  // issue 15 (eng31): the V0 engine the rows were sized as
  return r;
}

}  // namespace preflight::plan
