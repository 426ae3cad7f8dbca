#include "engine/engine_core.hpp"

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

const char* engine_core_name(EngineCore core) { return core == EngineCore::v0 ? "V0" : "V1"; }

const V0EngineRecord* EngineCoreCatalog::v0_engine(const std::string& engine, const Version& v) const {
  for (const auto& r : records)
    if (r.engine == engine && r.version_min <= v && v <= r.version_max) return &r;
  return nullptr;
}

const V0EngineRecord* EngineCoreCatalog::newest_v0_engine(const std::string& engine) const {
  const V0EngineRecord* newest = nullptr;
  for (const auto& r : records)
    if (r.engine == engine && (!newest || newest->version_max < r.version_max)) newest = &r;
  return newest;
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

}  // namespace

Expected<EngineCoreCatalog> parse_engine_cores(const Json& root, const std::string& origin) {
  EngineCoreCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "engine", "version_min", "version_max", "default_core", "max_num_batched_tokens_large_device", "max_num_seqs_large_device",
                              "unchunked_prefill_up_to", "prints_kv_memory_line", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    V0EngineRecord rec;
    rec.id = id;
    PF_TRY(engine, r.string("engine"));
    rec.engine = engine;
    PF_TRY(range, read_version_range(r));
    if (!range) return make_error(ErrorKind::corrupt, where + ": bad version range", origin);
    rec.version_min = range->first;
    rec.version_max = range->second;
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
    PF_TRY(source, r.string("source"));
    if (trim(source).empty()) return make_error(ErrorKind::corrupt, where + ": source is empty", origin);
    rec.source = source;
    for (const auto& other : out.records)
      if (other.engine == rec.engine && !(other.version_max < rec.version_min) && !(rec.version_max < other.version_min))
        return make_error(ErrorKind::corrupt, where + ": version range overlaps records[" + other.id + "]", origin);
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  return out;
}

Expected<EngineCoreCatalog> load_engine_cores() {
  PF_TRY(json, parse_json(std::string(embedded_data("engines/engine_cores.json")), "data/engines/engine_cores.json"));
  return parse_engine_cores(json, "data/engines/engine_cores.json");
}

void apply_v0_engine(EngineProfile& profile, const V0EngineRecord& record) {
  profile.max_num_batched_tokens_large_device = record.max_num_batched_tokens_large_device;
  profile.max_num_seqs_large_device = record.max_num_seqs_large_device;
  profile.unchunked_prefill_up_to = record.unchunked_prefill_up_to;
  if (!record.prints_kv_memory_line) profile.kv_line.clear();
}

}  // namespace preflight::engine
