#include "deploy/engine_core.hpp"

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/engine_core.hpp"
#include "engine/kv_cache_dtype_rules.hpp"

namespace preflight::deploy {

std::optional<engine::EngineProfile> profile_dated_by_v0(const EngineInput& in, const engine::EngineCatalog& engines, const std::string& name,
                                                         std::vector<std::string>& assumptions) {
  if (in.engine_core != engine::EngineCore::v0) return std::nullopt;
  const auto cores = engine::load_engine_cores();
  if (!cores) return std::nullopt;
  const engine::V0EngineRecord* newest = cores->newest_v0_engine(name);
  if (!newest) return std::nullopt;
  auto found = engine::select_engine(engines, name, newest->version_max.text());
  if (!found) return std::nullopt;
  assumptions.push_back(format("engine version dated by the V0 engine (%s): %s has V0 up to %s (%s), so %s at %s", in.engine_core_origin.c_str(), name.c_str(),
                               newest->version_max.text().c_str(), newest->id.c_str(), found->id.c_str(), newest->version_max.text().c_str()));
  return std::move(*found);
}

void apply_engine_core(const EngineInput& in, engine::EngineProfile& profile, std::vector<std::string>& assumptions) {
  if (!in.engine_core) return;
  const auto cores = engine::load_engine_cores();
  if (!cores) {
    assumptions.push_back("engine core " + std::string(engine::engine_core_name(*in.engine_core)) + " (" + in.engine_core_origin + ") not applied: " +
                          cores.error().describe());
    return;
  }
  const engine::Version v = profile.rule_version();
  const engine::V0EngineRecord* rec = cores->v0_engine(profile.engine, v);
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
  if (rec->default_core == engine::EngineCore::v0) return;  // the profile is the V0 engine already
  engine::apply_v0_engine(profile, *rec);
  assumptions.push_back(format("V0 engine (%s): %s's defaults replace %s's V1 ones: max_num_batched_tokens %lld and max_num_seqs %lld on every card, chunked "
                               "prefill off up to %lld tokens (whole prompts in the profile run), %s (%s)",
                               in.engine_core_origin.c_str(), rec->id.c_str(), profile.id.c_str(), static_cast<long long>(rec->max_num_batched_tokens_large_device),
                               static_cast<long long>(rec->max_num_seqs_large_device), static_cast<long long>(rec->unchunked_prefill_up_to),
                               rec->prints_kv_memory_line ? "'Available KV cache memory' printed" : "no 'Available KV cache memory' line (the V0 worker prints "
                                                                                                    "'# GPU blocks' and its memory summary)",
                               ("data/engines/engine_cores.json records[" + rec->id + "], with its sources").c_str()));
}

std::string kv_cache_dtype_refusal(const engine::EngineProfile& engine, const device::DeviceSpec& device, const std::string& kv_cache_dtype,
                                   const std::string& origin) {
  const std::string dtype = to_lower(trim(kv_cache_dtype));
  if (dtype.empty() || dtype == "auto") return {};
  const auto rules = engine::load_kv_cache_dtype_rules();
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
