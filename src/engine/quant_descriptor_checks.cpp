#include "engine/quant_descriptor_checks.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

namespace {

bool descriptor_check_names_engine(const QuantDescriptorCheck& r, const std::string& engine) {
  return std::find(r.engines.begin(), r.engines.end(), engine) != r.engines.end();
}

}  // namespace

const QuantDescriptorCheck* QuantDescriptorChecks::record_for(const EngineProfile& engine, const std::string& method) const {
  const Version v = engine.rule_version();
  const std::string m = to_lower(method);
  for (const auto& r : records)
    if (r.method == m && descriptor_check_names_engine(r, engine.engine) && r.version_min <= v && v <= r.version_max) return &r;
  return nullptr;
}

std::string quant_descriptor_message(const QuantDescriptorCheck& check, const std::string& model) {
  std::string out = check.message;
  const std::string key = "{model}";
  for (size_t at = out.find(key); at != std::string::npos; at = out.find(key, at + model.size())) out.replace(at, key.size(), model);
  return out;
}

Expected<QuantDescriptorChecks> parse_quant_descriptor_checks(const Json& root, const std::string& origin) {
  QuantDescriptorChecks out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "engines", "version_min", "version_max", "method", "file", "message", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    QuantDescriptorCheck rec;
    rec.id = id;
    PF_TRY(range, read_version_range(r));
    if (!range) return make_error(ErrorKind::corrupt, where + ": bad version range", origin);
    rec.version_min = range->first;
    rec.version_max = range->second;
    PF_TRY(engines, string_list(r.find("engines"), where + ".engines", origin));
    if (engines.empty()) return make_error(ErrorKind::corrupt, where + ": engines is empty", origin);
    rec.engines = engines;
    PF_TRY(method, r.string("method"));
    PF_TRY(file, r.string("file"));
    PF_TRY(message, r.string("message"));
    if (method.empty() || file.empty() || message.empty()) return make_error(ErrorKind::corrupt, where + ": method, file and message must not be empty", origin);
    if (method != to_lower(method)) return make_error(ErrorKind::corrupt, where + ": method '" + method + "': expected lowercase", origin);
    rec.method = method;
    rec.file = file;
    rec.message = message;
    PF_TRY(source, read_source_field(r, "source", origin));
    rec.source = source;
    for (const auto& other : out.records)
      for (const auto& e : rec.engines)
        if (other.method == rec.method && descriptor_check_names_engine(other, e) && !(rec.version_max < other.version_min || other.version_max < rec.version_min))
          return make_error(ErrorKind::corrupt, where + ": its versions overlap record " + other.id + "'s for " + e, origin);
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  return out;
}

const Expected<QuantDescriptorChecks>& shipped_quant_descriptor_checks() {
  static const Expected<QuantDescriptorChecks> checks = []() -> Expected<QuantDescriptorChecks> {
    const std::string origin = "data/engines/quant_descriptor_checks.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/quant_descriptor_checks.json")), origin));
    return parse_quant_descriptor_checks(json, origin);
  }();
  return checks;
}

}  // namespace preflight::engine
