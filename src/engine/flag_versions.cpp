#include "engine/flag_versions.hpp"

#include "base/embedded.hpp"
#include "engine/record_list.hpp"

namespace preflight::engine {

const FlagVersions* FlagVersionCatalog::find(const std::string& flag) const {
  for (const auto& r : records)
    if (r.flag == flag) return &r;
  return nullptr;
}

Expected<FlagVersionCatalog> parse_flag_versions(const Json& root, const std::string& origin) {
  FlagVersionCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "short", "version_min", "version_max", "replacement", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    FlagVersions rec;
    rec.flag = id;
    auto read_version = [&](const std::string& key, Version& into) -> Status {
      PF_TRY(text, r.string(key));
      const auto v = parse_version(text);
      if (!v) return make_error(ErrorKind::corrupt, where + ": " + key + " '" + text + "' is not a version", origin);
      into = *v;
      return Ok{};
    };
    PF_TRY(lo, read_version("version_min", rec.version_min));
    (void)lo;
    // No version_max: the flag is still there (the multi-node DP flags); it then needs no replacement.
    const bool bounded = r.has("version_max");
    rec.version_max = Version{99, 0, 0};
    if (bounded) {
      PF_TRY(hi, read_version("version_max", rec.version_max));
      (void)hi;
    }
    if (r.has("short")) {
      PF_TRY(short_name, r.string("short"));
      if (!short_name.empty() && (short_name.size() < 2 || short_name[0] != '-' || short_name[1] == '-'))
        return make_error(ErrorKind::corrupt, where + ": short '" + short_name + "' is not spelled -name", origin);
      rec.short_name = short_name;
    }
    if (id.size() < 3 || id.rfind("--", 0) != 0) return make_error(ErrorKind::corrupt, where + ": id is not spelled --name", origin);
    if (rec.version_max < rec.version_min)
      return make_error(ErrorKind::corrupt, where + ": version_max " + rec.version_max.text() + " is below version_min " + rec.version_min.text(), origin);
    if (bounded || r.has("replacement")) {
      PF_TRY(replacement, r.string("replacement"));
      if (replacement.empty()) return make_error(ErrorKind::corrupt, where + ": replacement must not be empty", origin);
      rec.replacement = replacement;
    }
    PF_TRY(source, r.string("source"));
    if (source.empty()) return make_error(ErrorKind::corrupt, where + ": source must not be empty", origin);
    rec.source = source;
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  if (out.records.empty()) return make_error(ErrorKind::corrupt, origin + ": records is empty", origin);
  return out;
}

const Expected<FlagVersionCatalog>& shipped_flag_versions() {
  static const Expected<FlagVersionCatalog> catalog = []() -> Expected<FlagVersionCatalog> {
    const std::string origin = "data/engines/flag_versions.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/flag_versions.json")), origin));
    return parse_flag_versions(json, origin);
  }();
  return catalog;
}

std::string unrecognized_flags_refusal(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version,
                                       const std::vector<GivenFlag>& given) {
  if (engine_name != "vllm" && engine_name != "vllm-ascend") return "";
  std::string tokens;
  for (const auto& g : given) {
    const FlagVersions* rec = catalog.find(g.flag);
    if (!rec || (rec->version_min <= version && version <= rec->version_max)) continue;
    tokens += " " + g.flag + (g.value.empty() ? "" : " " + g.value);
  }
  return tokens.empty() ? "" : "vllm: error: unrecognized arguments:" + tokens;
}

std::string flag_version_refusal(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& flag,
                                 const std::string& as_written) {
  if (engine_name != "vllm" && engine_name != "vllm-ascend") return "";
  const FlagVersions* rec = catalog.find(flag);
  if (!rec || (rec->version_min <= version && version <= rec->version_max)) return "";
  const std::string range = rec->version_max.major >= 99 ? "from " + rec->version_min.text() : rec->version_min.text() + " to " + rec->version_max.text();
  return "vllm serve: error: unrecognized arguments: " + as_written + " (" + engine_name + " " + version.text() + " has no " + flag + "; vLLM has it " + range +
         (rec->replacement.empty() ? "" : "; this version takes " + rec->replacement) + "; " + catalog.origin + ")";
}

}  // namespace preflight::engine
