#include "deploy/engine_core.hpp"

#include <cctype>

#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/engine_env.hpp"
#include "engine/engine_core.hpp"
#include "engine/kv_cache_dtype_rules.hpp"

namespace preflight::deploy {

std::optional<engine::EngineProfile> profile_dated_by_v0(const EngineInput& in, const engine::EngineCatalog& engines, const std::string& name,
                                                         std::vector<std::string>& assumptions) {
  if (in.engine_core != engine::EngineCore::v0) return std::nullopt;
  const auto& cores = engine::shipped_engine_cores();
  if (!cores) return std::nullopt;
  const engine::V0EngineRecord* newest = cores->newest_v0_engine(name);
  if (!newest) return std::nullopt;
  auto found = engine::select_engine(engines, name, newest->version_max.text());
  if (!found) return std::nullopt;
  assumptions.push_back(format("engine version dated by the V0 engine (%s): %s has V0 up to %s (%s), so %s at %s", in.engine_core_origin.c_str(), name.c_str(),
                               newest->version_max.text().c_str(), newest->id.c_str(), found->id.c_str(), newest->version_max.text().c_str()));
  return std::move(*found);
}

namespace {

std::string record_ref(const engine::V0EngineRecord& rec) { return "data/engines/engine_cores.json records[" + rec.id + "], with its sources"; }

// What the V0 record changes, for the assumptions: its scheduler defaults and the lines it prints.
std::string v0_changes(const engine::V0EngineRecord& rec, const engine::EngineProfile& profile) {
  const bool lines = profile.v0_lines && !profile.v0_lines->device_name.empty();
  return format("max_num_batched_tokens %lld and max_num_seqs %lld on every card, chunked prefill off up to %lld tokens (whole prompts in the profile run), %s, %s",
                static_cast<long long>(rec.max_num_batched_tokens_large_device), static_cast<long long>(rec.max_num_seqs_large_device),
                static_cast<long long>(rec.unchunked_prefill_up_to),
                rec.prints_kv_memory_line ? "'Available KV cache memory' printed" : "no 'Available KV cache memory' line",
                lines ? ("the executor's '# " + profile.v0_lines->device_name + " blocks: N, # CPU blocks: M'" +
                         (profile.v0_lines->concurrency_line ? " and 'Maximum concurrency for L tokens per request'" : "") + " instead of 'GPU KV cache size'")
                            .c_str()
                      : "no V0 block line recorded for this version and platform");
}

}  // namespace

void apply_engine_core(const EngineInput& in, engine::EngineProfile& profile, const std::string& device_platform, VersionBasis basis,
                       std::vector<std::string>& assumptions) {
  const auto& cores = engine::shipped_engine_cores();
  if (!cores) {
    if (in.engine_core)
      assumptions.push_back("engine core " + std::string(engine::engine_core_name(*in.engine_core)) + " (" + in.engine_core_origin + ") not applied: " +
                            cores.error().describe());
    return;
  }
  const engine::Version v = profile.rule_version();
  const engine::V0EngineRecord* rec = cores->v0_engine(profile.engine, v);
  if (!in.engine_core) {
    // Issue 15 (v0eng30): nothing stated, the version's default engine; a V0 default runs and prints as V0.
    const bool whole_profile = rec && !(profile.version_min < rec->version_min) && !(rec->version_max < profile.version_max);
    if (rec && rec->default_core == engine::EngineCore::v0 && (basis == VersionBasis::stated || whole_profile)) {
      engine::apply_v0_engine(profile, *rec, device_platform);
      assumptions.push_back(format("V0 engine, the default of %s %s: %s (%s)", profile.engine.c_str(), v.text().c_str(), v0_changes(*rec, profile).c_str(),
                                   record_ref(*rec).c_str()));
    }
    return;
  }
  if (*in.engine_core == engine::EngineCore::v1) {
    if (rec && rec->default_core == engine::EngineCore::v0)
      assumptions.push_back(format("the V1 engine (%s) is an opt-in before %s 0.8; %s models the default V0 engine (%s)", in.engine_core_origin.c_str(),
                                   profile.engine.c_str(), profile.id.c_str(), rec->id.c_str()));
    return;
  }
  if (!rec) {
    assumptions.push_back(format("the V0 engine (%s) is not in %s %s (data/engines/engine_cores.json has no V0 record for it): %s's V1 rules used",
                                 in.engine_core_origin.c_str(), profile.engine.c_str(), v.text().c_str(), profile.id.c_str()));
    return;
  }
  engine::apply_v0_engine(profile, *rec, device_platform);
  if (rec->default_core == engine::EngineCore::v0)
    assumptions.push_back(format("V0 engine (%s), the default of %s %s: %s (%s)", in.engine_core_origin.c_str(), profile.engine.c_str(), v.text().c_str(),
                                 v0_changes(*rec, profile).c_str(), record_ref(*rec).c_str()));
  else
    assumptions.push_back(format("V0 engine (%s): %s's defaults replace %s's V1 ones: %s (%s)", in.engine_core_origin.c_str(), rec->id.c_str(), profile.id.c_str(),
                                 v0_changes(*rec, profile).c_str(), record_ref(*rec).c_str()));
}

Status apply_v1_fallback(const EngineInput& in, const device::DeviceSpec& device, const std::string& kv_cache_dtype, VersionBasis basis,
                         engine::EngineProfile& profile, std::vector<std::string>& assumptions, const std::string& attention_backend) {
  if (profile.v0_lines) return Ok{};  // V0 already (stated, or the version's default)
  const auto& cores = engine::shipped_engine_cores();
  if (!cores) return Ok{};
  const engine::Version v = profile.rule_version();
  const engine::V0EngineRecord* rec = cores->v0_engine(profile.engine, v);
  if (!rec || rec->default_core != engine::EngineCore::v1) return Ok{};
  const engine::V1Fallback* fb = cores->v1_fallback(profile.engine, v, device.platform, device.family, kv_cache_dtype, attention_backend);
  if (!fb || (basis != VersionBasis::stated && (profile.version_min < fb->version_min || fb->version_max < profile.version_max))) return Ok{};
  if (in.engine_core == engine::EngineCore::v1) {
    // vllm/engine/arg_utils.py _raise_or_fallback: with VLLM_USE_V1=1 set, the feature is refused instead.
    if (in.engine_core_origin.rfind("environment VLLM_USE_V1", 0) == 0)
      return make_error(ErrorKind::invalid_argument,
                        format("%s: NotImplementedError: VLLM_USE_V1=1 is not supported with %s. (%s on %s, %s; data/engines/engine_cores.json v1_fallbacks[%s], "
                               "with its source); fix: unset VLLM_USE_V1 to run V0",
                               in.engine_core_origin.c_str(), fb->feature_for(attention_backend).c_str(), profile.engine.c_str(), v.text().c_str(), device.id.c_str(),
                               fb->id.c_str()),
                        in.engine_core_origin);
    return Ok{};  // the evidence shows V1 ran
  }
  engine::apply_v0_engine(profile, *rec, device.platform);
  profile.v0_lines->fallback_warning = fb->warning_for(attention_backend);
  assumptions.push_back(format("V0 engine by vLLM's V1 oracle (%s %s on %s, %s): \"%s\"; sized as V0: %s (data/engines/engine_cores.json v1_fallbacks[%s] and %s)",
                               profile.engine.c_str(), v.text().c_str(), device.id.c_str(), device.family.c_str(), fb->warning_for(attention_backend).c_str(),
                               v0_changes(*rec, profile).c_str(), fb->id.c_str(), record_ref(*rec).c_str()));
  return Ok{};
}

Expected<std::optional<engine::EngineCore>> engine_core_from_env(const char* value) {
  if (!value) return std::optional<engine::EngineCore>{};
  const std::string text = trim(value);
  if (text.empty()) return std::optional<engine::EngineCore>{};
  // Issue 19 (hard32): Python's int() as engine_env reads every switch (underscores between digits, any length), where a
  // check of its own refused "1_0" and 19 digits that vLLM takes.
  const auto on = parse_env_switch(text, "environment VLLM_USE_V1");
  if (!on)
    return make_error(ErrorKind::invalid_argument,
                      "environment VLLM_USE_V1: expected an integer, 0 (the V0 engine) or 1 (V1), found '" + one_line(text, 40) +
                          "' (vLLM reads it with int(), vllm/envs.py)",
                      "VLLM_USE_V1");
  return std::optional<engine::EngineCore>{*on ? engine::EngineCore::v1 : engine::EngineCore::v0};
}

std::string kv_cache_dtype_refusal(const engine::EngineProfile& engine, const device::DeviceSpec& device, const std::string& kv_cache_dtype,
                                   const std::string& origin) {
  const std::string dtype = to_lower(trim(kv_cache_dtype));
  if (dtype.empty() || dtype == "auto") return {};
  const auto& rules = engine::shipped_kv_cache_dtype_rules();
  if (!rules) return {};
  const engine::KvCacheDtypeFailure* rule = rules->failure_for(engine, device.family, dtype);
  if (!rule) return {};
  std::string failure = rule->failure;
  if (const auto at = failure.find("{dtype}"); at != std::string::npos) failure.replace(at, 7, dtype);
  const std::string version = engine.version_named ? engine.engine + " " + engine.version_named->text() : engine.id;
  return format("%s: %s on %s (%s, %s): %s: \"%s\"; fix: %s (data/engines/kv_cache_dtypes.json records[%s], with its sources)", origin.c_str(),
                dtype.c_str(), device.id.c_str(), device.family.c_str(), version.c_str(), failure.c_str(), rule->message.c_str(), rule->fix.c_str(),
                rule->id.c_str());
}

Status check_kv_cache_dtype(const engine::EngineProfile& engine, const device::DeviceSpec& device, const Given<std::string>& kv_cache_dtype) {
  const std::string why = kv_cache_dtype_refusal(engine, device, kv_cache_dtype.value, kv_cache_dtype.origin);
  if (why.empty()) return Ok{};
  return make_error(ErrorKind::invalid_argument, why, kv_cache_dtype.origin);
}

}  // namespace preflight::deploy
