#include "engine/model_support.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>

#include "base/embedded.hpp"
#include "base/json_writer.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

namespace {

bool vllm_family(const std::string& engine) { return engine == "vllm" || engine == "vllm-ascend"; }

struct StatusName {
  NpuSupportStatus status;
  const char* name;
  const char* said;  // how the note reads
};
constexpr StatusName k_status_names[] = {
    {NpuSupportStatus::unsupported, "unsupported", "not supported"},
    {NpuSupportStatus::experimental, "experimental", "experimental"},
    {NpuSupportStatus::untested, "untested", "not tested or verified"},
    {NpuSupportStatus::not_listed, "not_listed", "not listed"},
};
static_assert(std::size(k_status_names) == 4, "one name per NpuSupportStatus");

const StatusName& status_name(NpuSupportStatus s) {
  for (const auto& n : k_status_names)
    if (n.status == s) return n;
  return k_status_names[0];
}

Status parse_npu_spans(const JsonObject& r, const std::string& where, const std::string& origin, std::vector<NpuSupportSpan>& out) {
  if (!r.has("vllm_ascend")) return Ok{};
  PF_TRY(items, r.array("vllm_ascend"));
  size_t i = 0;
  for (const auto& item : *items) {
    const std::string at = where + ": vllm_ascend[" + std::to_string(i++) + "]";
    JsonObject o(item, origin, at);
    PF_TRY(known, o.only_keys({"version_min", "version_max", "status", "page_words", "fix", "source"}));
    (void)known;
    NpuSupportSpan span;
    PF_TRY(range, read_list_versions(o, at, origin));
    span.version_min = range.first;
    span.version_max = range.second;
    PF_TRY(status, o.string("status"));
    const StatusName* named = nullptr;
    for (const auto& n : k_status_names)
      if (status == n.name) named = &n;
    if (named) span.status = named->status;
    if (!named) return make_error(ErrorKind::corrupt, at + ": status '" + status + "' is not one of unsupported, experimental, untested, not_listed", origin);
    PF_TRY(words, o.string("page_words"));
    PF_TRY(source, o.string("source"));
    if (words.empty() || source.empty()) return make_error(ErrorKind::corrupt, at + ": page_words and source must not be empty", origin);
    span.page_words = words;
    span.source = source;
    PF_TRY(fix, o.opt_string("fix"));
    if (span.status == NpuSupportStatus::unsupported && (!fix || fix->empty()))
      return make_error(ErrorKind::corrupt, at + ": an unsupported span needs a fix (the versions whose page marks it supported)", origin);
    span.fix = fix.value_or("");
    if (const NpuSupportSpan* other = overlapping_record(out, span))
      return make_error(ErrorKind::corrupt, at + ": overlaps the span " + other->version_min.text() + " to " + other->version_max.text(), origin);
    out.push_back(std::move(span));
  }
  return Ok{};
}

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
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "version_min", "source", "vllm_ascend"},
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
    PF_TRY(version_min, read_version_field(r, "version_min", where, origin));
    rec.version_min = version_min;
    PF_TRY(source, read_record_text(r, "source", where, origin, EmptyWording::is_empty));
    rec.source = source;
    PF_TRY(spans, parse_npu_spans(r, where, origin, rec.vllm_ascend));
    (void)spans;
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
  if (rec->version_min <= version) {
    if (engine_name != "vllm-ascend") return {ArchitectureVerdict::supported, ""};
    for (const auto& span : rec->vllm_ascend) {
      if (!covers_version(span, version)) continue;
      const std::string page = "vLLM-Ascend's Supported Models page (" + span.source + ")";
      if (span.status == NpuSupportStatus::unsupported)
        return {ArchitectureVerdict::unsupported, "vllm-ascend " + version.text() + " does not support " + architecture + " on NPU: " + page + " marks it \"" +
                                                      span.page_words + "\" (fix: " + span.fix + "; " + catalog.origin + ")"};
      return {ArchitectureVerdict::supported_with_note, architecture + " on vllm-ascend " + version.text() + " is " + status_name(span.status).said + " by " + page + ": \"" +
                                                            span.page_words + "\"; the estimate assumes it loads as on vLLM (" + catalog.origin + ")"};
    }
    return {ArchitectureVerdict::supported, ""};
  }
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
