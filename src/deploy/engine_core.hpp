// deploy/engine_core: the engine core a log or a case shows (vLLM's V0 or V1 engine, deploy::EngineInput::engine_core)
// applied to the resolved engine profile (issue 15, v0eng29): V0 takes the V0 record of data/engines/engine_cores.json
// covering the version, and dates a version nothing else dates. Kept apart from deployment.cpp, which resolve_engine
// calls into.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "deploy/deployment.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::deploy {

// Where `in` states V0 and nothing else dated the version of engine `name`: the profile at the newest version with a V0
// engine, with the assumption that says so; nullopt otherwise (V1 or no engine core stated, no V0 record for the engine,
// the catalogue cannot be read).
std::optional<engine::EngineProfile> profile_dated_by_v0(const EngineInput& in, const engine::EngineCatalog& engines, const std::string& name,
                                                         std::vector<std::string>& assumptions);

// The engine core `in` states applied to `profile` on a card of `device_platform`: V0 takes the V0 record's defaults and
// lines (EngineProfile::v0_lines; said in the assumptions with where V0 was seen and the record's source); V0 on a version
// without a V0 engine, or V1 on a version whose default is V0, is said and changes nothing. Nothing stated: a version whose
// default is V0 runs as V0 (v0eng30) where the version was stated (`basis`) or the profile's whole range defaults to V0 (a
// dated version names only its profile's first release, vllm-ascend@0.7-0.12's 0.7.0 for a 0.11 log), any other is unchanged.
void apply_engine_core(const EngineInput& in, engine::EngineProfile& profile, const std::string& device_platform, VersionBasis basis,
                       std::vector<std::string>& assumptions);

// Issue 15 (v0eng30): vLLM's V1 oracle on this card. Where the profile is not V0 already and its version's default is
// V1, a fall-back of engine_cores.json v1_fallbacks that `device` (and `kv_cache_dtype`, `attention_backend`: "" when not
// given; the backend as given, vLLM's oracle compares its text) meets runs the
// deployment as V0, vLLM's warning first among its printed lines and in the assumptions; unless `in` states V1: with
// VLLM_USE_V1=1 from the environment vLLM refuses the feature (invalid_argument with its NotImplementedError), with V1
// seen in a log nothing changes. Only for a stated version (`basis`) or a profile whose whole range the fall-back covers.
// Ok and unchanged otherwise (and when the catalogue cannot be read).
Status apply_v1_fallback(const EngineInput& in, const device::DeviceSpec& device, const std::string& kv_cache_dtype, VersionBasis basis,
                         engine::EngineProfile& profile, std::vector<std::string>& assumptions, const std::string& attention_backend = {});

// Issue 15 (v0eng30): VLLM_USE_V1 as vLLM reads it (vllm/envs.py: bool(int(os.getenv("VLLM_USE_V1", "1")))): unset or
// blank -> nullopt; an integer -> V0 for 0, V1 otherwise; anything else -> invalid_argument naming the variable (vLLM's
// int() raises on it).
Expected<std::optional<engine::EngineCore>> engine_core_from_env(const char* value);

// Issue 15 (v0eng29): a --kv-cache-dtype the engine version takes at start-up but cannot run on the card's family
// (data/engines/kv_cache_dtypes.json): invalid_argument naming the flag's origin, with what the engine does, its own
// message verbatim and the fix. Ok otherwise (and when the rules cannot be read: nothing is refused on a guess).
Status check_kv_cache_dtype(const engine::EngineProfile& engine, const device::DeviceSpec& device, const Given<std::string>& kv_cache_dtype);
// The same as the message alone ("" when taken): plan rejects a row with it, and refuses the plan where no device takes it.
std::string kv_cache_dtype_refusal(const engine::EngineProfile& engine, const device::DeviceSpec& device, const std::string& kv_cache_dtype,
                                   const std::string& origin);

}  // namespace preflight::deploy
