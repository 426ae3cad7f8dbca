// engine/moe_row_padding: reads overheads[].moe_row_padding of engines.json (docs/memory-model.md, "ROCm: the expert
// row padding").
#include "engine/moe_row_padding.hpp"
#include "engine/version_range.hpp"

#include <cstdint>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::engine {

Expected<MoeRowPadding> parse_moe_row_padding(const JsonObject& r, const std::string& origin) {
  PF_TRY(keys, r.only_keys({"engine", "version_min", "version_max", "version_source", "pad_bytes", "row_bytes_multiple", "switch_env", "source"}));
  (void)keys;
  MoeRowPadding p;
  PF_TRY(engine, r.string("engine"));
  if (engine.empty()) return make_error(ErrorKind::corrupt, format("%s: %s is empty", origin.c_str(), r.key_path("engine").c_str()), origin);
  p.engine = engine;
  PF_TRY(applies, read_counted_versions(r, origin));
  p.applies = applies;
  PF_TRY(pad, r.number("pad_bytes"));
  if (!(pad >= 1 && pad <= 4096))
    return make_error(ErrorKind::corrupt, format("%s: %s: expected 1-4096, found %.6g", origin.c_str(), r.key_path("pad_bytes").c_str(), pad), origin);
  p.pad_bytes = pad;
  PF_TRY(multiple, r.number("row_bytes_multiple"));
  if (!(multiple >= 1 && multiple <= 65536 && multiple == static_cast<double>(static_cast<int64_t>(multiple))))
    return make_error(ErrorKind::corrupt, format("%s: %s: expected a whole number 1-65536, found %.6g", origin.c_str(), r.key_path("row_bytes_multiple").c_str(), multiple),
                      origin);
  p.row_bytes_multiple = multiple;
  PF_TRY(env, r.string("switch_env"));
  p.switch_env = env;
  PF_TRY(src, read_source_field(r, "source", origin));
  p.source = src;
  return p;
}

}  // namespace preflight::engine
