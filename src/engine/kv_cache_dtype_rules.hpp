// engine/kv_cache_dtype_rules: --kv-cache-dtype values an engine version takes at start-up but cannot run on a device
// family (data/engines/kv_cache_dtypes.json, issue 15 v0eng29), each with the engine's own message, when it fails and
// the fix. deploy refuses such a deployment (fit, plan, logs and validate alike).
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct KvCacheDtypeFailure {
  std::string id;
  std::vector<std::string> engines, dtypes, families;
  Version version_min, version_max;
  std::string failure;  // what the engine does ({dtype}: the value given)
  std::string message;  // the engine's own words
  std::string fix;
  std::string source;
};

struct KvCacheDtypeRules {
  std::vector<KvCacheDtypeFailure> records;
  std::string origin;
  // The record that covers `dtype` (lower case) on `engine` at its rule version on a card of `family`, or nullptr.
  const KvCacheDtypeFailure* failure_for(const EngineProfile& engine, const std::string& family, const std::string& dtype) const;
};

// corrupt naming `origin` and the record: an unknown key, a duplicate id, a bad version range, an empty list, message,
// failure or source.
Expected<KvCacheDtypeRules> parse_kv_cache_dtype_rules(const Json& root, const std::string& origin);
// The embedded data/engines/kv_cache_dtypes.json.
Expected<KvCacheDtypeRules> load_kv_cache_dtype_rules();
// The embedded rules, parsed once per process (a plan with --kv-cache-dtype asks for every card).
const Expected<KvCacheDtypeRules>& shipped_kv_cache_dtype_rules();

}  // namespace preflight::engine
