#include "engine/model_support.hpp"

#include <algorithm>
#include <cctype>

#include "base/embedded.hpp"
#include "base/json_writer.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"

namespace preflight::engine {

namespace {

bool vllm_family(const std::string& engine) { return engine == "vllm" || engine == "vllm-ascend"; }

}  // namespace

const ArchitectureSupport* ModelSupportCatalog::find(const std::string& architecture) const {
  for (const auto& r : records)
    if (r.architecture == architecture) return &r;
  return nullptr;
}

Expected<ModelSupportCatalog> parse_model_support(const Json& root, const std::string& origin) {
  ModelSupportCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "version_min", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    // Issue 19 (hard32): the id is the class name config.json's "architectures" holds, a Python identifier; "" (which no
    // model names: a dead record) and an id with a space, quote or newline (quoted into vLLM's message) were taken.
    const bool identifier = !id.empty() && !(id[0] >= '0' && id[0] <= '9') &&
                            std::all_of(id.begin(), id.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!identifier)
      return make_error(ErrorKind::corrupt, origin + ": records[]: id " + dump_json(Json(clip_text(id, 120))) + " is not an architecture class name (letters, digits, '_')",
                        origin);
    ArchitectureSupport rec;
    rec.architecture = id;
    PF_TRY(text, r.string("version_min"));
    const auto v = parse_version(text);
    if (!v) return make_error(ErrorKind::corrupt, where + ": version_min '" + text + "' is not a version", origin);
    rec.version_min = *v;
    PF_TRY(source, r.string("source"));
    if (source.empty()) return make_error(ErrorKind::corrupt, where + ": source is empty", origin);
    rec.source = source;
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  if (out.records.empty()) return make_error(ErrorKind::corrupt, origin + ": records is empty", origin);
  return out;
}

const Expected<ModelSupportCatalog>& shipped_model_support() {
  static const Expected<ModelSupportCatalog> catalog = []() -> Expected<ModelSupportCatalog> {
    const std::string origin = "data/engines/model_support.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/model_support.json")), origin));
    return parse_model_support(json, origin);
  }();
  return catalog;
}

ArchitectureCheck check_architecture(const ModelSupportCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& architecture) {
  if (!vllm_family(engine_name) || architecture.empty()) return {};
  const ArchitectureSupport* rec = catalog.find(architecture);
  if (!rec)
    return {ArchitectureVerdict::not_listed, "architecture " + architecture + " is not in preflight's list of vLLM model registrations (" + catalog.origin +
                                                 "): whether " + engine_name + " " + version.text() + " loads it is not checked"};
  if (rec->version_min <= version) return {ArchitectureVerdict::supported, ""};
  return {ArchitectureVerdict::unsupported,
          engine_name + " " + version.text() + " cannot load " + architecture + ": `vllm serve` stops with \"Model architectures ['" + architecture +
              "'] are not supported for now. Supported architectures: [...]\"; the first " + engine_name + " version whose model registry has it is " +
              rec->version_min.text() + " (fix: --engine " + engine_name + "@" + rec->version_min.text() + " or later; " + catalog.origin + ")"};
}

ArchitectureCheck shipped_architecture_check(const EngineProfile& engine, const std::string& architecture) {
  const auto& catalog = shipped_model_support();
  return catalog ? check_architecture(*catalog, engine.engine, engine.rule_version(), architecture) : ArchitectureCheck{};
}

std::optional<Version> first_version_with(const std::string& engine_name, const std::string& architecture) {
  const auto& catalog = shipped_model_support();
  if (!catalog || !vllm_family(engine_name)) return std::nullopt;
  if (const auto* rec = catalog->find(architecture)) return rec->version_min;
  return std::nullopt;
}

}  // namespace preflight::engine
