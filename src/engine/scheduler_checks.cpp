#include "engine/scheduler_checks.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

const SchedulerCheck* SchedulerChecks::find(const EngineProfile& engine, const std::string& kind) const {
  const Version v = engine.rule_version();
  for (const auto& r : records)
    if (r.kind == kind && std::find(r.engines.begin(), r.engines.end(), engine.engine) != r.engines.end() && covers_version(r, v)) return &r;
  return nullptr;
}

Expected<SchedulerChecks> parse_scheduler_checks(const Json& root, const std::string& origin) {
  SchedulerChecks out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "kind", "engines", "version_min", "version_max", "message", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    SchedulerCheck rec;
    rec.id = id;
    PF_TRY(kind, r.string("kind"));
    if (kind != "refuse" && kind != "cap_default") return make_error(ErrorKind::corrupt, where + ": kind: expected refuse or cap_default, found " + kind, origin);
    rec.kind = kind;
    PF_TRY(range, read_record_versions(r, where, origin));
    rec.version_min = range.first;
    rec.version_max = range.second;
    PF_TRY(engines, read_record_names(r, "engines", where, origin, EmptyWording::is_empty));
    rec.engines = std::move(engines);
    PF_TRY(message, r.string("message"));
    if (kind == "refuse" && (message.find("{max_num_batched_tokens}") == std::string::npos || message.find("{max_num_seqs}") == std::string::npos))
      return make_error(ErrorKind::corrupt, where + ": message: a refuse record names {max_num_batched_tokens} and {max_num_seqs}", origin);
    rec.message = std::move(message);
    PF_TRY(source, read_source_field(r, "source", origin));
    rec.source = std::move(source);
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  return out;
}

const Expected<SchedulerChecks>& shipped_scheduler_checks() {
  static const Expected<SchedulerChecks> checks = [] () -> Expected<SchedulerChecks> {
    PF_TRY(json, parse_json(std::string(embedded_data("engines/scheduler_checks.json")), "data/engines/scheduler_checks.json"));
    return parse_scheduler_checks(json, "data/engines/scheduler_checks.json");
  }();
  return checks;
}

}  // namespace preflight::engine
