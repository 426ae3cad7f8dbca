#include "engine/printed_ranks.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

namespace {

bool names_engine(const PrintedRanksRecord& r, const std::string& engine) { return std::find(r.engines.begin(), r.engines.end(), engine) != r.engines.end(); }

}  // namespace

const PrintedRanksRecord* PrintedRanks::record_for(const EngineProfile& engine, const std::string& line) const {
  const Version v = engine.rule_version();
  for (const auto& r : records)
    if (r.line == line && names_engine(r, engine.engine) && covers_version(r, v)) return &r;
  return nullptr;
}

Expected<PrintedRanks> parse_printed_ranks(const Json& root, const std::string& origin) {
  PrintedRanks out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "engines", "version_min", "version_max", "line", "ranks", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    PrintedRanksRecord rec;
    rec.id = id;
    PF_TRY(range, read_record_versions(r, where, origin));
    rec.version_min = range.first;
    rec.version_max = range.second;
    PF_TRY(engines, read_record_names(r, "engines", where, origin, EmptyWording::is_empty));
    rec.engines = engines;
    PF_TRY(line, r.string("line"));
    if (line != "available_kv") return make_error(ErrorKind::corrupt, where + ": line '" + line + "': expected available_kv", origin);
    rec.line = line;
    PF_TRY(ranks, r.string("ranks"));
    if (ranks != "every_rank" && ranks != "local_first_rank")
      return make_error(ErrorKind::corrupt, where + ": ranks '" + ranks + "': expected every_rank or local_first_rank", origin);
    rec.ranks = ranks == "every_rank" ? PrintingRanks::every_rank : PrintingRanks::local_first_rank;
    PF_TRY(source, read_source_field(r, "source", origin));
    rec.source = source;
    for (const auto& other : out.records)
      for (const auto& e : rec.engines)
        if (other.line == rec.line && names_engine(other, e) && versions_overlap(rec, other))
          return make_error(ErrorKind::corrupt, where + ": its versions overlap record " + other.id + "'s for " + e, origin);
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  return out;
}

const Expected<PrintedRanks>& shipped_printed_ranks() {
  static const Expected<PrintedRanks> ranks = [] () -> Expected<PrintedRanks> {
    const std::string origin = "data/engines/printed_ranks.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/printed_ranks.json")), origin));
    return parse_printed_ranks(json, origin);
  }();
  return ranks;
}

}  // namespace preflight::engine
