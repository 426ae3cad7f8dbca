// engine/moe_backend_workspace: reads overheads[cuda].moe_backend_workspaces of engines.json (docs/memory-model.md,
// "The FlashInfer b12x MoE workspace").
#include "engine/moe_backend_workspace.hpp"
#include "engine/version_range.hpp"

#include <algorithm>
#include <cctype>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::engine {

namespace {

// A layout constant in [1, max].
Expected<int64_t> layout_int(const JsonObject& r, const std::string& key, int64_t max, const std::string& origin) {
  PF_TRY(v, r.int_(key));
  if (v < 1 || v > max) return make_error(ErrorKind::corrupt, format("%s: %s: expected 1-%lld, found %lld", origin.c_str(), r.key_path(key).c_str(), static_cast<long long>(max), static_cast<long long>(v)), origin);
  return v;
}

Expected<MoeBackendWorkspace> parse_one(const JsonObject& r, const std::string& origin) {
  PF_TRY(keys, r.only_keys({"engine", "backend", "version_min", "version_max", "version_source", "devices", "weight_format", "conditions_source",
                            "static_cutover_routed_rows", "tile_rows", "tile_columns", "scale_block", "scale_column_align", "scale_row_align",
                            "output_bytes_per_element", "layout_source"}));
  (void)keys;
  MoeBackendWorkspace w;
  PF_TRY(engine, r.string("engine"));
  w.engine = engine;
  PF_TRY(backend, r.string("backend"));
  if (backend.empty() || normalize_moe_backend(backend) != backend)
    return make_error(ErrorKind::corrupt, format("%s: %s: expected vLLM's normalized name (lower case, '_'), found '%s'", origin.c_str(), r.key_path("backend").c_str(), backend.c_str()), origin);
  w.backend = backend;
  PF_TRY(counted, read_counted_versions(r, origin));
  w.counted = counted;
  PF_TRY(devices, string_list(r.find("devices"), r.key_path("devices"), origin));
  if (devices.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: expected at least one device id", origin.c_str(), r.key_path("devices").c_str()), origin);
  w.devices = devices;
  PF_TRY(fmt, r.string("weight_format"));
  w.weight_format = fmt;
  PF_TRY(csrc, read_source_field(r, "conditions_source", origin));
  w.conditions_source = csrc;
  PF_TRY(cutover, layout_int(r, "static_cutover_routed_rows", 1 << 20, origin));
  PF_TRY(tile_rows, layout_int(r, "tile_rows", 1024, origin));
  PF_TRY(tile_cols, layout_int(r, "tile_columns", 1024, origin));
  PF_TRY(block, layout_int(r, "scale_block", 256, origin));
  PF_TRY(col_align, layout_int(r, "scale_column_align", 256, origin));
  PF_TRY(row_align, layout_int(r, "scale_row_align", 1024, origin));
  PF_TRY(out_bytes, layout_int(r, "output_bytes_per_element", 8, origin));
  w.static_cutover_routed_rows = cutover;
  w.tile_rows = tile_rows;
  w.tile_columns = tile_cols;
  w.scale_block = block;
  w.scale_column_align = col_align;
  w.scale_row_align = row_align;
  w.output_bytes_per_element = out_bytes;
  PF_TRY(lsrc, read_source_field(r, "layout_source", origin));
  w.layout_source = lsrc;
  return w;
}

}  // namespace

std::string normalize_moe_backend(const std::string& value) {
  std::string out = trim(value);
  for (char& c : out) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool MoeBackendWorkspace::allocated_by(const EngineProfile& e, const std::string& backend_name, const std::string& device_id) const {
  return e.engine == engine && backend_name == backend && e.rule_applies(counted) && std::find(devices.begin(), devices.end(), device_id) != devices.end();
}

Expected<std::vector<MoeBackendWorkspace>> parse_moe_backend_workspaces(const Json& list, const std::string& origin, const std::string& where) {
  if (!list.is_array()) return make_error(ErrorKind::corrupt, format("%s: %s: expected an array", origin.c_str(), where.c_str()), origin);
  std::vector<MoeBackendWorkspace> out;
  for (const auto& item : list) {
    if (!item.is_object()) return make_error(ErrorKind::corrupt, format("%s: %s[]: expected an object", origin.c_str(), where.c_str()), origin);
    PF_TRY(w, parse_one(JsonObject(item, origin, where + "[]"), origin));
    for (const auto& seen : out)
      if (seen.engine == w.engine && seen.backend == w.backend && seen.counted.version_min <= w.counted.version_max && w.counted.version_min <= seen.counted.version_max)
        return make_error(ErrorKind::corrupt, format("%s: %s: two records for %s %s over overlapping versions", origin.c_str(), where.c_str(), w.engine.c_str(), w.backend.c_str()), origin);
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace preflight::engine
