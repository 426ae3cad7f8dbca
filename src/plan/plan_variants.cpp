// The variants a plan tries per model, engine and card (quantization_variants, card_bound_variants_key), which of them a
// start command can serve as written (a published checkpoint, a recipe, vLLM's own fp8), the engine a plan resolves
// (plan_engine) and the release conversions left to their BF16 original (drop_release_conversions). Split out of planner.cpp.
#include "plan/plan_variants.hpp"

#include <algorithm>
#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/deployment.hpp"
#include "deploy/engine_core.hpp"
#include "engine/quantization_methods.hpp"
#include "plan/launch.hpp"

namespace preflight::plan {

// The quantized-checkpoint catalogue a plan's start commands draw on: the plan's launch rules', else the shipped one.
const engine::QuantizedCatalog* quantized_catalog_of(const PlanInputs& in) {
  if (in.launch_rules) return &in.launch_rules->quantized;
  const auto& shipped = engine::shipped_quantized_catalog();
  return shipped ? &*shipped : nullptr;
}

namespace {

// Issue 16: whether a start command can serve `variant` of the model as written: a published checkpoint of it,
// a conversion recipe on the engine's platform (plan/launch prints it first), or vLLM's own fp8 at load. A
// variant with none of them (msModelSlim W4A16: no catalogued recipe) would start from a path nothing writes.
// Issue 16 (quant29): nor one whose --quantization the engine version's argument parser refuses (vLLM-Ascend before
// 0.9.0 has no `ascend` choice: data/engines/quantization_methods.json).
// Issue 19 (planfast13): whether engine::shipped_variant_refusal refuses `variant` with `flag` on `e`, which reads of the
// profile its engine name and rule_version() alone (and the shipped catalogues, fixed for the process): kept per thread
// by those four values. The answer does not depend on the model, and every model of a plan asked it again (2,140 calls
// in the whole-catalogue plan, each building the refusal's text; kept, 9.1 M instructions fewer).
bool variant_refused(const engine::EngineProfile& e, const std::string& variant, const std::string& flag) {
  struct Answer {
    std::string engine;
    engine::Version version;
    std::string variant, flag;
    bool refused = false;
  };
  thread_local std::vector<Answer> answers;
  const engine::Version version = e.rule_version();
  for (const Answer& a : answers)
    if (a.version == version && a.engine == e.engine && a.variant == variant && a.flag == flag) return a.refused;
  const bool refused = !engine::shipped_variant_refusal(e, variant, flag).empty();
  answers.push_back({e.engine, version, variant, flag, refused});
  return refused;
}

bool servable(const model::ModelSpec& m, const engine::EngineProfile& e, const engine::QuantizedCatalog* published, const std::string& variant,
              const std::string& flag) {
  if (variant_refused(e, variant, flag)) return false;
  if (flag == "fp8") return true;
  if (!published) return false;
  if (engine::find_quantized_checkpoint(*published, hub_repo_id(m.id), variant)) return true;
  // A recipe counts where its tool has an adapter for the model (quant29: msModelSlim's --model_type; quant30: or for its family).
  const engine::ConversionRecipe* cv = engine::find_conversion(*published, variant, e.platform);
  const std::string repo = hub_repo_id(m.id);
  return cv && engine::recipe_model_type(*published, *cv, repo.substr(repo.find_last_of('/') == std::string::npos ? 0 : repo.find_last_of('/') + 1), m.model_type)
                    .has_value();
}

}  // namespace

namespace {
// Issue 16: variants only some cards run (vLLM-Ascend's MX schemes: the A5 kernels take e8m0 scales), tried on a card
// only where no rule of the variant rejects it on the card's family at the engine's version (quantization_variants).
constexpr const char* k_card_bound_variants[] = {"w8a8_mxfp8", "w4a4_mxfp4", "w4a16_mxfp4", "w4a8_mxfp"};

// Whether `v` on model `m` stores what another variant of the list already stores: a variant whose 4-bit part is the
// routed experts (expert format other than the linear one) on a model without experts is its linear format alone
// (W4A4_MXFP4 on a dense model is W8A8_MXFP8's bytes: its recipe leaves no W4A4_MXFP4 layer).
bool experts_only_variant_on_dense(const model::QuantVariant& v, const model::ModelSpec& m) {
  return m.num_experts == 0 && v.scheme.expert_format != v.scheme.linear_format && v.scheme.linear_format != model::WeightFormat::native;
}
}  // namespace

std::string card_bound_variants_key(const engine::EngineProfile& e, const std::string& device_family) {
  const auto& catalog = model::load_variant_catalog();
  if (!catalog || device_family.empty()) return "";
  const std::string version = e.rule_version().text();
  std::string key;
  for (const char* id : k_card_bound_variants) {
    const auto v = model::find_variant(*catalog, id);
    if (!v || !e.accepts_quantization((*v)->engine_quantization)) continue;
    for (const bool moe : {false, true})
      if (!model::variant_rule(**v, "rejected", e.engine, version, device_family, moe)) key += std::string(id) + (moe ? ":moe " : ":dense ");
  }
  return key;
}

std::vector<std::string> quantization_variants(const model::ModelSpec& m, const engine::EngineProfile& e, const engine::QuantizedCatalog* published,
                                               const std::string& device_family) {
  std::vector<std::string> out = {""};
  if (e.engine == "llama.cpp") {
    // Issue 16 (llamacpp31): llama.cpp loads a GGUF published of the model (ggml-org/gpt-oss-20b-GGUF) as it is: its
    // variant is a row beside the published checkpoint (which llama.cpp cannot load: safetensors).
    if (!published) {
      if (const auto& shipped = engine::shipped_quantized_catalog()) published = &*shipped;
    }
    if (published)
      for (const auto& ckpt : published->checkpoints)
        if (ckpt.quantization_flag == "gguf" && to_lower(ckpt.base_model) == to_lower(hub_repo_id(m.id)) &&
            std::find(out.begin(), out.end(), ckpt.variant) == out.end())
          out.push_back(ckpt.variant);
    return out;
  }
  const auto& catalog = model::load_variant_catalog();
  if (!catalog) return out;
  const std::string version = e.rule_version().text();  // formatted once, not per variant
  if (!published) {  // the shipped list, loaded only when the caller gives none (issue 19: a plan gives its launch rules')
    if (const auto& shipped = engine::shipped_quantized_catalog()) published = &*shipped;
  }
  if (m.quant.quantized() && !(published && converts_published_checkpoint(m, e, *published))) return out;
  for (const char* id : {"w8a8", "w4a8_dynamic", "w4a16", "fp8_tensor", "awq"}) {
    const auto v = model::find_variant(*catalog, id);
    if (!v) continue;
    const std::string& q = (*v)->engine_quantization;
    if (!e.accepts_quantization(q) || (q == "fp8" && !e.fp8_requires.empty())) continue;
    if (model::variant_rule(**v, "rejected", e.engine, version, "", m.num_experts > 0) || !model::variant_without_effect(**v, m).empty()) continue;
    // Issue 16: the 4-bit row is AWQ only where an AWQ checkpoint of the model is published; else it is the
    // variant its start command's conversion produces (llm-compressor: compressed-tensors W4A16).
    const bool published_awq = published && engine::find_quantized_checkpoint(*published, hub_repo_id(m.id), "awq");
    if (std::string(id) == "awq" && !published_awq) {
      const auto ct = model::find_variant(*catalog, "ct_w4a16");
      if (ct && e.accepts_quantization((*ct)->engine_quantization) && servable(m, e, published, "ct_w4a16", "")) out.push_back("ct_w4a16");
      continue;
    }
    if (servable(m, e, published, id, q)) out.push_back(id);
  }
  if (device_family.empty()) return out;
  for (const char* id : k_card_bound_variants) {
    const auto v = model::find_variant(*catalog, id);
    if (!v || !e.accepts_quantization((*v)->engine_quantization) || experts_only_variant_on_dense(**v, m) || !model::variant_without_effect(**v, m).empty())
      continue;
    if (model::variant_rule(**v, "rejected", e.engine, version, device_family, m.num_experts > 0)) continue;
    if (servable(m, e, published, id, (*v)->engine_quantization)) out.push_back(id);
  }
  return out;
}


deploy::EngineInput plan_engine_input(const PlanInputs& in) {
  deploy::EngineInput e{.engine = in.engine, .origin = "--engine"};
  if (!in.engine_version.empty()) {
    e.version = in.engine_version;
    e.origin = "--engine-version";
  }
  e.build = in.engine_build;
  e.build_origin = in.engine_build_origin;
  return e;
}

Expected<engine::EngineProfile> plan_engine(const PlanInputs& in, const std::string& platform) {
  std::vector<std::string> assumptions;
  PF_TRY(eng, deploy::resolve_engine(plan_engine_input(in), *in.engines, platform, assumptions));
  if (in.engine_build) eng.build_named = in.engine_build;
  return eng;
}

Expected<engine::EngineProfile> plan_engine(const PlanInputs& in, const device::DeviceSpec& dev, std::vector<std::string>* assumptions) {
  std::vector<std::string> own;
  std::vector<std::string>& said = assumptions ? *assumptions : own;
  const deploy::EngineInput input = plan_engine_input(in);
  deploy::VersionBasis basis = deploy::VersionBasis::newest_assumed;
  PF_TRY(eng, deploy::resolve_engine(input, *in.engines, dev.platform, said, basis));
  if (in.engine_build) eng.build_named = in.engine_build;
  // As resolve_deployment does for fit, after the profile and build: the oracle reads the card and the KV cache dtype.
  PF_TRY(core_ok, deploy::apply_v1_fallback(input, dev, in.kv_cache_dtype, basis, eng, said, in.attention_backend));
  (void)core_ok;
  return eng;
}

void note_engine_cores(PlanResult& r, std::vector<std::string> said) {
  for (auto& a : said)
    if (starts_with(a, "V0 engine") && std::find(r.assumptions.begin(), r.assumptions.end(), a) == r.assumptions.end()) r.assumptions.push_back(std::move(a));
}

// Issue 16 (quant26): a quantized release the catalogue lists as made from a BF16 original (Qwen/Qwen3-8B-FP8 of
// Qwen/Qwen3-8B) starts every conversion row from that original (choose_checkpoint: "the row starts from that BF16
// original"), so with the original among `models` its conversion rows are the original's rows a second time: they are
// left to the original, which lists the same variants, and the release keeps the rows of its own published format
// (the "" slot, or its own variant named by --variant). Without the original in the run (plan --model
// 'Qwen/Qwen3-8B-FP8'), the release keeps them.
void drop_release_conversions(const std::vector<model::ModelSpec>& models, const PlanInputs& in, std::vector<std::vector<std::string>>& variants) {
  const engine::QuantizedCatalog* catalog = quantized_catalog_of(in);
  const auto& list = model::load_variant_catalog();
  if (!catalog || !list) return;
  for (size_t i = 0; i < models.size(); ++i) {
    if (!models[i].quant.quantized()) continue;
    const engine::QuantizedCheckpoint* release = engine::find_checkpoint_by_repo(*catalog, hub_repo_id(models[i].id));
    if (!release) continue;
    // Its own format (plan --variant fp8_block of an FP8 release) serves the release as published: kept.
    const model::QuantVariant* own = model::variant_of_checkpoint(*list, models[i].quant);
    for (size_t b = 0; b < models.size(); ++b) {
      if (b == i || models[b].quant.quantized() || to_lower(hub_repo_id(models[b].id)) != to_lower(release->base_model)) continue;
      const std::vector<std::string>& base = variants[b];
      std::erase_if(variants[i], [&](const std::string& v) {
        return !v.empty() && !(own && own->id == v) && std::find(base.begin(), base.end(), v) != base.end();
      });
      break;
    }
  }
}

std::string published_quantization_flag(const model::ModelSpec& m, const engine::EngineProfile& eng) {
  if (m.quant.method != "ascend" || !m.quant.config_quant_method.empty() || !eng.accepts_quantization("ascend")) return "";
  return eng.auto_detect("descriptor_file") ? "" : "ascend";
}

}  // namespace preflight::plan
