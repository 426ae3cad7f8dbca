#include "engine/engine_core.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

const char* engine_core_name(EngineCore core) { return core == EngineCore::v0 ? "V0" : "V1"; }

const V0PrintedLines* V0EngineRecord::lines_at(const Version& v) const {
  for (const auto& l : printed_lines)
    if (covers_version(l, v)) return &l;
  return nullptr;
}

const V0EngineRecord* EngineCoreCatalog::v0_engine(const std::string& engine, const Version& v) const {
  for (const auto& r : records)
    if (r.engine == engine && covers_version(r, v)) return &r;
  return nullptr;
}

const V0EngineRecord* EngineCoreCatalog::newest_v0_engine(const std::string& engine) const {
  const V0EngineRecord* newest = nullptr;
  for (const auto& r : records)
    if (r.engine == engine && (!newest || newest->version_max < r.version_max)) newest = &r;
  return newest;
}

namespace {
std::string with_name(std::string text, const std::string& name) {
  for (size_t at = text.find("{name}"); at != std::string::npos; at = text.find("{name}", at + name.size())) text.replace(at, 6, name);
  return text;
}
}  // namespace

std::string V1Fallback::feature_for(const std::string& attention_backend) const { return with_name(feature_name, trim(attention_backend)); }
std::string V1Fallback::warning_for(const std::string& attention_backend) const { return with_name(warning, trim(attention_backend)); }

const V1Fallback* EngineCoreCatalog::v1_fallback(const std::string& engine, const Version& v, const std::string& platform, const std::string& family,
                                                 const std::string& kv_cache_dtype, const std::string& attention_backend) const {
  const std::string dtype = to_lower(trim(kv_cache_dtype));
  const bool dtype_stated = !dtype.empty() && dtype != "auto";
  const std::string backend = trim(attention_backend);
  auto listed = [](const std::vector<std::string>& list, const std::string& name) { return std::find(list.begin(), list.end(), name) != list.end(); };
  for (const auto& f : fallbacks) {
    if (f.engine != engine || !covers_version(f, v) || !listed(f.platforms, platform)) continue;
    if (!f.families.empty() && !listed(f.families, family)) continue;
    if (f.condition == FallbackCondition::kv_cache_dtype && !dtype_stated) continue;
    // vllm/engine/arg_utils.py: 'envs.VLLM_ATTENTION_BACKEND not in V1_BACKENDS', the variable's text as given.
    if (f.condition == FallbackCondition::attention_backend && (backend.empty() || listed(f.v1_names, backend))) continue;
    return &f;
  }
  return nullptr;
}

namespace {

// A record's default_core: "v0" or "v1".
Expected<EngineCore> default_core_of(const JsonObject& r, const std::string& where, const std::string& origin) {
  const Expected<std::string> core = r.string("default_core");
  if (!core) return core.error();
  const std::string& text = *core;  // read in place (GCC 12 took PF_TRY's moved-out string for uninitialized)
  if (text == "v0") return EngineCore::v0;
  if (text == "v1") return EngineCore::v1;
  return make_error(ErrorKind::corrupt, where + ": default_core: expected v0 or v1, found '" + text + "'", origin);
}

// A record's printed_lines (optional): each entry's range inside the record's, its platforms' device words, its source.
Expected<std::vector<V0PrintedLines>> printed_lines_of(const JsonObject& r, const V0EngineRecord& rec, const std::string& where, const std::string& origin) {
  std::vector<V0PrintedLines> out;
  const Json* list = r.find("printed_lines");
  if (!list || list->is_null()) return out;
  if (!list->is_array()) return make_error(ErrorKind::corrupt, where + ".printed_lines: expected an array", origin);
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = where + ".printed_lines[" + std::to_string(i) + "]";
    if (!(*list)[i].is_object()) return make_error(ErrorKind::corrupt, at + ": expected an object", origin);
    JsonObject e((*list)[i], origin, at);
    PF_TRY(known, e.only_keys({"version_min", "version_max", "device_names", "concurrency_line", "memory_lines", "source"}));
    (void)known;
    V0PrintedLines lines;
    PF_TRY(range, read_version_range(e));
    if (!range || range->first < rec.version_min || rec.version_max < range->second)
      return make_error(ErrorKind::corrupt, at + ": bad version range (inside the record's " + rec.version_min.text() + " - " + rec.version_max.text() + ")", origin);
    lines.version_min = range->first;
    lines.version_max = range->second;
    const Json* names = e.find("device_names");
    if (!names || !names->is_object() || names->empty()) return make_error(ErrorKind::corrupt, at + ".device_names: expected an object of platform names", origin);
    for (const auto& [platform, word] : names->items()) {
      if (!word.is_string() || trim(word.get<std::string>()).empty())
        return make_error(ErrorKind::corrupt, at + ".device_names." + platform + ": expected the device word the executor prints", origin);
      lines.device_names.emplace_back(platform, word.get<std::string>());
    }
    PF_TRY(conc, e.opt_bool("concurrency_line"));
    lines.concurrency_line = conc.value_or(false);
    PF_TRY(memory, string_list(e.find("memory_lines"), at + ".memory_lines", origin));
    lines.memory_lines = memory;
    PF_TRY(source, read_source_field(e, "source", origin));
    lines.source = source;
    if (overlapping_record(out, lines)) return make_error(ErrorKind::corrupt, at + ": version range overlaps another printed_lines entry", origin);
    out.push_back(std::move(lines));
  }
  return out;
}

Status read_fallbacks(const JsonObject& top, EngineCoreCatalog& out, const std::string& origin) {
  if (!top.has("v1_fallbacks")) return Ok{};
  return for_each_record(top, origin, "v1_fallbacks", "id",
                         {"id", "engine", "version_min", "version_max", "platforms", "families", "condition", "feature_name", "warning", "v1_names", "source"},
                         [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    V1Fallback f;
    f.id = id;
    PF_TRY(engine, r.string("engine"));
    f.engine = engine;
    PF_TRY(range, read_record_versions(r, where, origin));
    f.version_min = range.first;
    f.version_max = range.second;
    const V0EngineRecord* rec = out.v0_engine(f.engine, f.version_min);
    if (!rec || rec->version_max < f.version_max || rec->default_core != EngineCore::v1)
      return make_error(ErrorKind::corrupt, where + ": no V0 record of " + f.engine + " whose default is V1 covers " + f.version_min.text() + " - " + f.version_max.text(),
                        origin);
    PF_TRY(platforms, string_list(r.find("platforms"), where + ".platforms", origin));
    if (platforms.empty()) return make_error(ErrorKind::corrupt, where + ".platforms: expected at least one platform", origin);
    f.platforms = platforms;
    PF_TRY(families, string_list(r.find("families"), where + ".families", origin));
    f.families = families;
    const Expected<std::string> condition = r.string("condition");
    if (!condition) return condition.error();
    const std::string& text = *condition;  // read in place, as default_core_of
    if (text == "device") f.condition = FallbackCondition::device;
    else if (text == "kv_cache_dtype") f.condition = FallbackCondition::kv_cache_dtype;
    else if (text == "attention_backend") f.condition = FallbackCondition::attention_backend;
    else return make_error(ErrorKind::corrupt, where + ": condition: expected device, kv_cache_dtype or attention_backend, found '" + text + "'", origin);
    PF_TRY(v1_names, string_list(r.find("v1_names"), where + ".v1_names", origin));
    if ((f.condition == FallbackCondition::attention_backend) != !v1_names.empty())
      return make_error(ErrorKind::corrupt, where + ": v1_names: expected the oracle's V1 list with condition attention_backend, and only with it", origin);
    f.v1_names = v1_names;
    PF_TRY(feature, r.string("feature_name"));
    PF_TRY(warning, r.string("warning"));
    if (trim(feature).empty() || trim(warning).empty()) return make_error(ErrorKind::corrupt, where + ": feature_name and warning must not be empty", origin);
    f.feature_name = feature;
    f.warning = warning;
    PF_TRY(source, read_source_field(r, "source", origin));
    f.source = source;
    out.fallbacks.push_back(std::move(f));
    return Ok{};
  });
}

}  // namespace

Expected<EngineCoreCatalog> parse_engine_cores(const Json& root, const std::string& origin) {
  EngineCoreCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records", "v1_fallbacks"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "engine", "version_min", "version_max", "default_core", "max_num_batched_tokens_large_device", "max_num_seqs_large_device",
                              "unchunked_prefill_up_to", "prints_kv_memory_line", "swap_space_gib", "swap_space_source", "printed_lines", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    V0EngineRecord rec;
    rec.id = id;
    PF_TRY(engine, r.string("engine"));
    rec.engine = engine;
    PF_TRY(range, read_record_versions(r, where, origin));
    rec.version_min = range.first;
    rec.version_max = range.second;
    PF_TRY(core, default_core_of(r, where, origin));
    rec.default_core = core;
    PF_TRY(batched, r.int_("max_num_batched_tokens_large_device"));
    PF_TRY(seqs, r.int_("max_num_seqs_large_device"));
    PF_TRY(unchunked, r.int_("unchunked_prefill_up_to"));
    if (batched < 1 || seqs < 1 || unchunked < 0)
      return make_error(ErrorKind::corrupt, where + ": max_num_batched_tokens_large_device and max_num_seqs_large_device must be at least 1, unchunked_prefill_up_to 0 or more", origin);
    rec.max_num_batched_tokens_large_device = batched;
    rec.max_num_seqs_large_device = seqs;
    rec.unchunked_prefill_up_to = unchunked;
    PF_TRY(kv_line, r.opt_bool("prints_kv_memory_line"));
    rec.prints_kv_memory_line = kv_line.value_or(false);
    PF_TRY(swap, r.opt_number("swap_space_gib"));
    if (swap) {
      if (!(*swap >= 0) || *swap > 1024 * 1024) return make_error(ErrorKind::corrupt, where + ": swap_space_gib must be between 0 and 1048576", origin);
      rec.swap_space_bytes = *swap * k_gib;
      PF_TRY(swap_source, read_source_field(r, "swap_space_source", origin));
      rec.swap_space_source = swap_source;
    }
    PF_TRY(lines, printed_lines_of(r, rec, where, origin));
    rec.printed_lines = std::move(lines);
    PF_TRY(source, r.string("source"));
    if (trim(source).empty()) return make_error(ErrorKind::corrupt, where + ": source is empty", origin);
    rec.source = source;
    if (const V0EngineRecord* other = overlapping_record(out.records, rec, [&](const V0EngineRecord& o) { return o.engine == rec.engine; }))
      return make_error(ErrorKind::corrupt, where + ": version range overlaps records[" + other->id + "]", origin);
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  PF_TRY(fell_back, read_fallbacks(top, out, origin));
  (void)fell_back;
  return out;
}

Expected<EngineCoreCatalog> load_engine_cores() {
  PF_TRY(json, parse_json(std::string(embedded_data("engines/engine_cores.json")), "data/engines/engine_cores.json"));
  return parse_engine_cores(json, "data/engines/engine_cores.json");
}

const Expected<EngineCoreCatalog>& shipped_engine_cores() {
  static const Expected<EngineCoreCatalog> cores = load_engine_cores();
  return cores;
}

void apply_v0_engine(EngineProfile& profile, const V0EngineRecord& record, const std::string& platform) {
  profile.max_num_batched_tokens_large_device = record.max_num_batched_tokens_large_device;
  profile.max_num_seqs_large_device = record.max_num_seqs_large_device;
  profile.unchunked_prefill_up_to = record.unchunked_prefill_up_to;
  if (!record.prints_kv_memory_line) profile.kv_line.clear();
  EngineProfile::V0Lines v0;
  v0.swap_space_bytes = record.swap_space_bytes;
  if (const V0PrintedLines* lines = record.lines_at(profile.rule_version())) {
    for (const auto& [name, word] : lines->device_names)
      if (name == platform) v0.device_name = word;
    v0.concurrency_line = lines->concurrency_line;
    v0.memory_lines = lines->memory_lines;
  }
  profile.v0_lines = std::move(v0);
}

}  // namespace preflight::engine
