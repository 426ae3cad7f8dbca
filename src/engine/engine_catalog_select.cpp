// The engine catalogue of one deployment (issue 19): the profiles, overheads and rule records that select_engine and
// deploy::resolve_engine can reach for the engine a command names, parsed from their records alone. The records are
// located at build time by cmake/catalog_index.cpp (base/embedded.hpp), which also copies each profile's engine, version
// range and platform and each rule record's engine, so the choice reads no JSON. The chosen records are parsed by
// parse_engine_catalog, the parser of the whole file, so a profile reads the same either way.
#include <algorithm>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

namespace {

constexpr const char* k_engines_file = "engines/engines.json";

std::string field(std::string_view array_key, const EmbeddedRecord& record, std::string_view name) {
  return std::string(embedded_record_field(k_engines_file, array_key, record, name).value_or(""));
}

// The profiles of `engine` in file order; with a version that one of them covers, only the first that covers it (what
// select_engine returns, and all that resolve_engine reads once a stated version selects a profile).
std::vector<size_t> wanted_profiles(std::span<const EmbeddedRecord> profiles, const std::string& engine, const std::string& version_text) {
  std::vector<size_t> out;
  const auto v = trim(version_text).empty() ? std::nullopt : parse_version(version_text, engine);
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (field("profiles", profiles[i], "engine") != engine) continue;
    if (v) {
      const auto lo = parse_version(field("profiles", profiles[i], "version_min"));
      const auto hi = parse_version(field("profiles", profiles[i], "version_max"));
      if (lo && hi && *lo <= *v && *v <= *hi) return {i};
    }
    out.push_back(i);
  }
  return out;
}

// The overheads records EngineCatalog::overheads_for can return for these profiles on `device_platform`: the one of
// each platform looked up, and cuda's where that platform has none.
std::vector<size_t> wanted_overheads(std::span<const EmbeddedRecord> overheads, std::span<const EmbeddedRecord> profiles,
                                     const std::vector<size_t>& chosen, const std::string& device_platform) {
  std::vector<std::string> platforms;
  for (size_t i : chosen) {
    const std::string own = field("profiles", profiles[i], "platform");
    platforms.push_back(device_platform == "rocm" ? "rocm" : own == "any" ? device_platform : own);
  }
  for (const auto& p : std::vector<std::string>(platforms)) {
    const bool recorded = std::any_of(overheads.begin(), overheads.end(), [&](const EmbeddedRecord& o) { return o.id == p; });
    if (!recorded) platforms.push_back("cuda");
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < overheads.size(); ++i)
    if (std::find(platforms.begin(), platforms.end(), overheads[i].id) != platforms.end()) out.push_back(i);
  return out;
}

// `"key":[record,record,...]` from the chosen records of one array; false when an offset does not land on an object.
bool append_array(std::string& text, std::string_view array_key, std::span<const EmbeddedRecord> records, const std::vector<size_t>& chosen) {
  text += ",\"";
  text += array_key;
  text += "\":[";
  for (size_t n = 0; n < chosen.size(); ++n) {
    const std::string_view record = embedded_record_text(k_engines_file, records[chosen[n]]);
    if (record.empty()) return false;
    if (n > 0) text += ',';
    text.append(record);
  }
  text += ']';
  return true;
}

}  // namespace

std::pair<std::string, std::string> split_engine_text(const std::string& engine_raw, const std::string& version_raw) {
  std::string engine = to_lower(trim(engine_raw));
  std::string version = version_raw;
  if (const auto at = engine.find('@'); at != std::string::npos) {
    version = engine.substr(at + 1);
    engine = engine.substr(0, at);
  }
  return {engine, version};
}

Expected<EngineCatalog> load_engine_catalog_for(const EngineCatalogSelection& selection) {
  const std::string given = trim(selection.engine).empty() && !selection.device_platform.empty() ? default_engine_for(selection.device_platform) : selection.engine;
  const auto [engine, version] = split_engine_text(given, selection.version);
  const auto profiles = embedded_records(k_engines_file, "profiles");
  const auto overheads = embedded_records(k_engines_file, "overheads");
  const std::vector<size_t> chosen = engine.empty() ? std::vector<size_t>{} : wanted_profiles(profiles, engine, version);
  if (chosen.empty()) return load_engine_catalog();  // no engine named, or an unknown one: its error lists the others
  std::vector<size_t> chosen_overheads;
  if (selection.device_platform.empty())
    for (size_t i = 0; i < overheads.size(); ++i) chosen_overheads.push_back(i);
  else
    chosen_overheads = wanted_overheads(overheads, profiles, chosen, selection.device_platform);
  std::string text = "{\"schema_version\":1";
  bool located = append_array(text, "profiles", profiles, chosen);
  for (const char* rules : {"mxfp4_layouts", "hybrid_group_padding", "quantization_auto_detect"}) {
    const auto records = embedded_records(k_engines_file, rules);
    std::vector<size_t> mine;
    for (size_t i = 0; i < records.size(); ++i)
      if (field(rules, records[i], "engine") == engine) mine.push_back(i);
    located = located && append_array(text, rules, records, mine);
  }
  located = located && append_array(text, "overheads", overheads, chosen_overheads);
  if (!located) return load_engine_catalog();
  text += '}';
  PF_TRY(json, parse_json(text, "data/engines/engines.json"));
  PF_TRY(catalog, parse_engine_catalog(json, "data/engines/engines.json"));
  if (catalog.profiles.size() != chosen.size()) return load_engine_catalog();
  return catalog;
}

}  // namespace preflight::engine
