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

// The engine core `in` states applied to `profile`: V0 on a version whose default is V1 takes the V0 record's defaults
// (said in the assumptions with where V0 was seen and the record's source); V0 on a version without a V0 engine, or V1
// on a version whose default is V0, is said and changes nothing. Nothing stated: unchanged.
void apply_engine_core(const EngineInput& in, engine::EngineProfile& profile, std::vector<std::string>& assumptions);

// Issue 15 (v0eng29): a --kv-cache-dtype the engine version takes at start-up but cannot run on the card's family
// (data/engines/kv_cache_dtypes.json): invalid_argument naming the flag's origin, with what the engine does, its own
// message verbatim and the fix. Ok otherwise (and when the rules cannot be read: nothing is refused on a guess).
Status check_kv_cache_dtype(const engine::EngineProfile& engine, const device::DeviceSpec& device, const Given<std::string>& kv_cache_dtype);
// The same as the message alone ("" when taken): plan rejects a row with it, and refuses the plan where no device takes it.
std::string kv_cache_dtype_refusal(const engine::EngineProfile& engine, const device::DeviceSpec& device, const std::string& kv_cache_dtype,
                                   const std::string& origin);

}  // namespace preflight::deploy
