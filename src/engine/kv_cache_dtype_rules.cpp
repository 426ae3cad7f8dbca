#include "engine/kv_cache_dtype_rules.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"

namespace preflight::engine {

namespace {

bool contains(const std::vector<std::string>& list, const std::string& s) { return std::find(list.begin(), list.end(), s) != list.end(); }

}  // namespace

const KvCacheDtypeFailure* KvCacheDtypeRules::failure_for(const EngineProfile& engine, const std::string& family, const std::string& dtype) const {
  const Version v = engine.rule_version();
  for (const auto& r : records)
    if (contains(r.engines, engine.engine) && contains(r.families, family) && contains(r.dtypes, dtype) && covers_version(r, v)) return &r;
  return nullptr;
}

Expected<KvCacheDtypeRules> parse_kv_cache_dtype_rules(const Json& root, const std::string& origin) {
  KvCacheDtypeRules out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "engines", "version_min", "version_max", "dtypes", "families", "failure", "message", "fix", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    KvCacheDtypeFailure rec;
    rec.id = id;
    PF_TRY(range, read_record_versions(r, where, origin));
    rec.version_min = range.first;
    rec.version_max = range.second;
    for (const auto& [key, into] : {std::pair{"engines", &rec.engines}, std::pair{"dtypes", &rec.dtypes}, std::pair{"families", &rec.families}}) {
      PF_TRY(values, read_record_names(r, key, where, origin, EmptyWording::is_empty));
      *into = values;
    }
    for (const auto& [key, into] : {std::pair{"failure", &rec.failure}, std::pair{"message", &rec.message}, std::pair{"fix", &rec.fix}, std::pair{"source", &rec.source}}) {
      PF_TRY(text, r.string(key));
      if (trim(text).empty()) return make_error(ErrorKind::corrupt, where + ": " + key + " is empty", origin);
      *into = text;
    }
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  return out;
}

Expected<KvCacheDtypeRules> load_kv_cache_dtype_rules() {
  PF_TRY(json, parse_json(std::string(embedded_data("engines/kv_cache_dtypes.json")), "data/engines/kv_cache_dtypes.json"));
  return parse_kv_cache_dtype_rules(json, "data/engines/kv_cache_dtypes.json");
}

const Expected<KvCacheDtypeRules>& shipped_kv_cache_dtype_rules() {
  static const Expected<KvCacheDtypeRules> rules = load_kv_cache_dtype_rules();
  return rules;
}

}  // namespace preflight::engine
