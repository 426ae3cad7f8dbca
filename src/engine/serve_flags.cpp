#include "engine/serve_flags.hpp"

#include "base/embedded.hpp"
#include "engine/record_list.hpp"

namespace preflight::engine {

Expected<ServeFlagCatalog> parse_serve_flags(const Json& root, const std::string& origin) {
  ServeFlagCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "flags"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "flags", "flag", {"flag", "short", "version_min", "source"},
                                 [&](const JsonObject& r, const std::string& flag, const std::string& where) -> Status {
    if (flag.size() < 3 || flag.rfind("--", 0) != 0) return make_error(ErrorKind::corrupt, where + ": flag is not spelled --name", origin);
    ServeFlag rec;
    rec.flag = flag;
    PF_TRY(short_name, r.string("short"));
    if (!short_name.empty() && (short_name.size() < 2 || short_name[0] != '-' || short_name[1] == '-'))
      return make_error(ErrorKind::corrupt, where + ": short '" + short_name + "' is not spelled -name", origin);
    rec.short_name = short_name;
    PF_TRY(text, r.string("version_min"));
    const auto v = parse_version(text);
    if (!v) return make_error(ErrorKind::corrupt, where + ": version_min '" + text + "' is not a version", origin);
    rec.version_min = *v;
    PF_TRY(source, r.string("source"));
    if (source.empty()) return make_error(ErrorKind::corrupt, where + ": source is empty", origin);
    rec.source = source;
    out.flags.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  if (out.flags.empty()) return make_error(ErrorKind::corrupt, origin + ": flags is empty", origin);
  return out;
}

const Expected<ServeFlagCatalog>& shipped_serve_flags() {
  static const Expected<ServeFlagCatalog> catalog = []() -> Expected<ServeFlagCatalog> {
    const std::string origin = "data/engines/serve_flags.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/serve_flags.json")), origin));
    return parse_serve_flags(json, origin);
  }();
  return catalog;
}

std::string unrecognized_flags_refusal(const ServeFlagCatalog& catalog, const std::string& engine_name, const Version& version,
                                       const std::vector<GivenServeFlag>& given) {
  if (engine_name != "vllm" && engine_name != "vllm-ascend") return "";
  std::string tokens;
  for (const auto& g : given) {
    for (const auto& f : catalog.flags) {
      if (f.flag != g.flag || f.version_min <= version) continue;
      tokens += " " + g.flag + (g.value.empty() ? "" : " " + g.value);
    }
  }
  return tokens.empty() ? "" : "vllm: error: unrecognized arguments:" + tokens;
}

}  // namespace preflight::engine
