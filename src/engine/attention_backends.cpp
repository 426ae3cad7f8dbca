#include "engine/attention_backends.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"

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
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "engines", "version_min", "version_max", "names", "valid_options", "rejection", "unknown", "removed_suffix", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    AttentionBackendNames rec;
    rec.id = id;
    PF_TRY(engines, read_record_names(r, "engines", where, origin, EmptyWording::is_empty));
    rec.engines = engines;
    PF_TRY(range, read_record_versions(r, where, origin));
    rec.version_min = range.first;
    rec.version_max = range.second;
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
    PF_TRY(source, read_record_text(r, "source", where, origin, EmptyWording::is_empty));
    rec.source = source;
    PF_TRY(unknown, r.opt_string("unknown"));
    if (unknown && *unknown == "ignored") rec.unknown = UnknownBackend::ignored;
    else if (unknown && *unknown != "refused")
      return make_error(ErrorKind::corrupt, where + ": unknown: expected refused or ignored, found '" + *unknown + "'", origin);
    if (rec.unknown == UnknownBackend::refused && valid.empty()) return make_error(ErrorKind::corrupt, where + ": valid_options is empty where names are refused", origin);
    PF_TRY(suffix, r.opt_string("removed_suffix"));
    if (suffix) {
      if (!upper_name(*suffix)) return make_error(ErrorKind::corrupt, where + ": removed_suffix: '" + *suffix + "' is not an upper-case enum suffix", origin);
      rec.removed_suffix = *suffix;
    }
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

void replace_all(std::string& text, const std::string& key, const std::string& with) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + with.size())) text.replace(at, key.size(), with);
}

// The record's message with the value and its lists put in.
std::string filled(const AttentionBackendNames& rec, const std::string& name) {
  std::string joined, listed;
  for (const auto& v : rec.valid_options) {
    joined += (joined.empty() ? "" : ", ") + v;
    listed += (listed.empty() ? "'" : ", '") + v + "'";
  }
  std::string message = rec.rejection;
  replace_all(message, "{name}", name);
  replace_all(message, "{valid_list}", "[" + listed + "]");
  replace_all(message, "{valid}", joined);
  return message;
}

const std::string k_file = "data/engines/attention_backends.json";

// `value` against `rec`, the record of the version `version_text` ("vllm 0.9.1"); `stated`: whether the version was
// named (else the message says which list it used).
Expected<std::string> check_name(const AttentionBackendNames& rec, const std::string& version_text, bool stated, const std::string& value,
                                 const std::string& origin) {
  const std::string name = to_upper(trim(value));
  if (contains(rec.names, name)) return std::string();
  const std::string ref = k_file + " records[" + rec.id + "], with its source";
  if (!rec.removed_suffix.empty() && name.size() > rec.removed_suffix.size() && ends_with(name, rec.removed_suffix)) {
    const std::string base = name.substr(0, name.size() - rec.removed_suffix.size());
    if (contains(rec.names, base))
      return origin + ": " + version_text + " removes the suffix '" + rec.removed_suffix + "' and runs " + base + " (" + ref + ")";
  }
  const std::string which = stated ? std::string() : " [" + version_text + " assumed, the version not given: the names of " + rec.id + "]";
  // Issue 19 (hard32): the name cut where it is quoted (a 100 KB one was echoed to the message limit).
  const std::string shown = one_line(name, 60);
  if (rec.unknown == UnknownBackend::ignored) return origin + ": " + filled(rec, shown) + " on " + version_text + which + " (" + ref + ")";
  return make_error(ErrorKind::invalid_argument, origin + ": " + filled(rec, shown) + which, origin);
}

}  // namespace

// Issue 15 (v0eng29): the record of the version the deployment runs (the version named, else the profile's newest), not
// the first whose range overlaps the profile's: a profile (vllm@0.11.1-0.13) can span versions whose enums differ.
Expected<std::string> check_attention_backend(const AttentionBackendCatalog& catalog, const EngineProfile& engine, const std::string& value, const std::string& origin) {
  const Version v = engine.rule_version();
  for (const auto& rec : catalog.records)
    if (contains(rec.engines, engine.engine) && covers_version(rec, v))
      return check_name(rec, engine.engine + " " + v.text(), engine.version_named.has_value(), value, origin);
  return std::string();
}

Expected<std::string> check_attention_backend_of(const AttentionBackendCatalog& catalog, const std::string& engine_name, const std::optional<Version>& version,
                                                 const std::string& value, const std::string& origin) {
  const AttentionBackendNames* chosen = nullptr;
  for (const auto& rec : catalog.records) {
    if (!contains(rec.engines, engine_name)) continue;
    if (version ? covers_version(rec, *version) : (!chosen || chosen->version_max < rec.version_max)) chosen = &rec;
    if (version && chosen) break;
  }
  if (!chosen) return std::string();
  return check_name(*chosen, engine_name + " " + (version ? version->text() : chosen->version_min.text() + " - " + chosen->version_max.text()),
                    version.has_value(), value, origin);
}

}  // namespace preflight::engine
