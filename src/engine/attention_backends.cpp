#include "engine/attention_backends.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"

namespace preflight::engine {

namespace {

bool upper_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; });
}

bool contains(const std::vector<std::string>& list, const std::string& s) { return std::find(list.begin(), list.end(), s) != list.end(); }

}  // namespace

Expected<AttentionBackendCatalog> parse_attention_backends(const Json& root, const std::string& origin) {
  AttentionBackendCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "engines", "version_min", "version_max", "names", "valid_options", "rejection", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    AttentionBackendNames rec;
    rec.id = id;
    PF_TRY(engines, string_list(r.find("engines"), where + ".engines", origin));
    if (engines.empty()) return make_error(ErrorKind::corrupt, where + ": engines is empty", origin);
    rec.engines = engines;
    PF_TRY(vmin, r.string("version_min"));
    PF_TRY(vmax, r.string("version_max"));
    const auto pmin = parse_version(vmin), pmax = parse_version(vmax);
    if (!pmin || !pmax || *pmax < *pmin) return make_error(ErrorKind::corrupt, where + ": bad version range", origin);
    rec.version_min = *pmin;
    rec.version_max = *pmax;
    PF_TRY(names, string_list(r.find("names"), where + ".names", origin));
    PF_TRY(valid, string_list(r.find("valid_options"), where + ".valid_options", origin));
    if (names.empty()) return make_error(ErrorKind::corrupt, where + ": names is empty", origin);
    for (const auto& n : names)
      if (!upper_name(n)) return make_error(ErrorKind::corrupt, where + ": names: '" + n + "' is not an upper-case enum name", origin);
    for (const auto& v : valid)
      if (!contains(names, v)) return make_error(ErrorKind::corrupt, where + ": valid_options: '" + v + "' is not among names", origin);
    rec.names = names;
    rec.valid_options = valid;
    PF_TRY(rejection, r.string("rejection"));
    if (rejection.find("{name}") == std::string::npos) return make_error(ErrorKind::corrupt, where + ": rejection does not name the value ({name})", origin);
    rec.rejection = rejection;
    PF_TRY(source, r.string("source"));
    if (source.empty()) return make_error(ErrorKind::corrupt, where + ": source is empty", origin);
    rec.source = source;
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  return out;
}

Expected<AttentionBackendCatalog> load_attention_backends() {
  PF_TRY(json, parse_json(std::string(embedded_data("engines/attention_backends.json")), "data/engines/attention_backends.json"));
  return parse_attention_backends(json, "data/engines/attention_backends.json");
}

namespace {

// `value` against the first record `covers` accepts: Ok when it is one of its names (or no record covers), else the
// record's rejection.
template <typename Covers>
Status check_name(const AttentionBackendCatalog& catalog, Covers covers, const std::string& value, const std::string& origin) {
  const std::string name = to_upper(trim(value));
  for (const auto& rec : catalog.records) {
    if (!covers(rec)) continue;
    if (contains(rec.names, name)) return Ok{};
    std::string message = rec.rejection;
    if (const auto at = message.find("{name}"); at != std::string::npos) message.replace(at, 6, name);
    std::string valid;
    for (const auto& v : rec.valid_options) valid += (valid.empty() ? "" : ", ") + v;
    if (const auto at = message.find("{valid}"); at != std::string::npos) message.replace(at, 7, valid);
    return make_error(ErrorKind::invalid_argument, origin + ": " + message, origin);
  }
  return Ok{};
}

}  // namespace

// Issue 15 (v0eng29): the record of the version the deployment runs (the version named, else the profile's newest), not
// the first whose range overlaps the profile's: a profile (vllm@0.11.1-0.13) can span versions whose enums differ.
Status check_attention_backend(const AttentionBackendCatalog& catalog, const EngineProfile& engine, const std::string& value, const std::string& origin) {
  const Version v = engine.rule_version();
  return check_name(
      catalog, [&](const AttentionBackendNames& rec) { return contains(rec.engines, engine.engine) && rec.version_min <= v && v <= rec.version_max; }, value,
      origin);
}

Status check_attention_backend_of(const AttentionBackendCatalog& catalog, const std::string& engine_name, const std::string& value, const std::string& origin) {
  return check_name(catalog, [&engine_name](const AttentionBackendNames& rec) { return contains(rec.engines, engine_name); }, value, origin);
}

}  // namespace preflight::engine
