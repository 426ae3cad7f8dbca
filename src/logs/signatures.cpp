// Loader for data/doctor/error_signatures.json, validated like the other catalogues: schema_version,
// unknown keys rejected, a source on every class and rule, unique ids, rules naming known classes.
#include <set>

#include "base/embedded.hpp"
#include "base/json_util.hpp"
#include "base/units.hpp"
#include "logs/engine_log.hpp"

namespace preflight::logs {

namespace {

constexpr const char* k_signatures_file = "doctor/error_signatures.json";

Error corrupt(const std::string& origin, const std::string& what) {
  return make_error(ErrorKind::corrupt, origin + ": " + what, origin);
}

Expected<std::vector<std::string>> string_list(const JsonObject& o, const std::string& key, bool required) {
  std::vector<std::string> out;
  const Json* list = o.find(key);
  if (!list) {
    if (required) return corrupt(o.origin(), o.key_path(key) + ": missing");
    return out;
  }
  if (!list->is_array()) return o.wrong_type(key, "an array of strings");
  for (const auto& item : *list) {
    if (!item.is_string() || item.get<std::string>().empty()) return o.wrong_type(key, "an array of non-empty strings");
    out.push_back(item.get<std::string>());
  }
  if (required && out.empty()) return corrupt(o.origin(), o.key_path(key) + ": empty");
  return out;
}

}  // namespace

const SignatureClass* SignatureSet::find_class(const std::string& id) const {
  for (const auto& c : classes) if (c.id == id) return &c;
  return nullptr;
}

Expected<SignatureSet> parse_signatures(const std::string& text, const std::string& origin) {
  PF_TRY(root, parse_json(text, origin));
  if (!root.is_object()) return corrupt(origin, "expected a JSON object");
  JsonObject top(root, origin);
  PF_TRY(top_keys, top.only_keys({"schema_version", "note", "classes", "rules", "oom_phase"}));
  (void)top_keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  SignatureSet set;
  set.origin = origin;
  const Json* classes = top.find("classes");
  if (!classes || !classes->is_array()) return corrupt(origin, "classes: expected an array");
  std::set<std::string> ids;
  for (const auto& item : *classes) {
    if (!item.is_object()) return corrupt(origin, "classes[]: expected an object");
    JsonObject pre(item, origin, "classes[]");
    PF_TRY(id, pre.string("id"));
    JsonObject c(item, origin, "classes[" + id + "]");
    PF_TRY(keys, c.only_keys({"id", "title", "memory", "fix", "source"}));
    (void)keys;
    if (!ids.insert(id).second) return corrupt(origin, "duplicate class id " + id);
    SignatureClass sc;
    sc.id = id;
    PF_TRY(title, c.string("title"));
    PF_TRY(fix, c.string("fix"));
    PF_TRY(source, c.string("source"));
    PF_TRY(memory, c.opt_bool("memory"));
    if (source.empty()) return corrupt(origin, "classes[" + id + "]: source is empty");
    sc.title = title;
    sc.fix = fix;
    sc.source = source;
    sc.memory = memory.value_or(false);
    set.classes.push_back(std::move(sc));
  }
  const Json* rules = top.find("rules");
  if (!rules || !rules->is_array()) return corrupt(origin, "rules: expected an array");
  std::set<std::string> rule_ids;
  for (const auto& item : *rules) {
    if (!item.is_object()) return corrupt(origin, "rules[]: expected an object");
    JsonObject pre(item, origin, "rules[]");
    PF_TRY(id, pre.string("id"));
    JsonObject r(item, origin, "rules[" + id + "]");
    PF_TRY(keys, r.only_keys({"id", "class", "severity", "priority", "patterns", "source"}));
    (void)keys;
    if (!rule_ids.insert(id).second) return corrupt(origin, "duplicate rule id " + id);
    SignatureRule rule;
    rule.id = id;
    PF_TRY(class_id, r.string("class"));
    if (class_id != "oom" && class_id != "symptom" && !set.find_class(class_id)) return corrupt(origin, "rules[" + id + "]: unknown class " + class_id);
    rule.class_id = class_id;
    PF_TRY(severity, r.string("severity"));
    if (severity == "error") rule.severity = Severity::error;
    else if (severity == "warning") rule.severity = Severity::warning;
    else if (severity == "symptom") rule.severity = Severity::symptom;
    else return corrupt(origin, "rules[" + id + "]: severity must be error, warning or symptom, found " + severity);
    PF_TRY(priority, r.int_("priority"));
    if (priority < 0 || priority > 1000) return corrupt(origin, "rules[" + id + "]: priority must be in 0..1000");
    rule.priority = priority;
    PF_TRY(patterns, string_list(r, "patterns", true));
    rule.patterns = std::move(patterns);
    PF_TRY(source, r.string("source"));
    if (source.empty()) return corrupt(origin, "rules[" + id + "]: source is empty");
    rule.source = source;
    set.rules.push_back(std::move(rule));
  }
  for (const char* needed : {"weights_oom", "kv_alloc_oom"}) {
    if (!set.find_class(needed)) return corrupt(origin, std::string("classes: missing ") + needed + " (used for out-of-memory rules)");
  }
  const Json* phase = top.find("oom_phase");
  if (!phase || !phase->is_object()) return corrupt(origin, "oom_phase: expected an object");
  JsonObject p(*phase, origin, "oom_phase");
  PF_TRY(phase_keys, p.only_keys({"weights_markers", "kv_markers", "source"}));
  (void)phase_keys;
  PF_TRY(wm, string_list(p, "weights_markers", true));
  PF_TRY(km, string_list(p, "kv_markers", true));
  PF_TRY(psource, p.string("source"));
  set.oom_weights_markers = std::move(wm);
  set.oom_kv_markers = std::move(km);
  set.oom_phase_source = psource;
  return set;
}

Expected<SignatureSet> load_signatures() {
  const auto text = embedded_data(k_signatures_file);
  if (text.empty()) return make_error(ErrorKind::not_found, std::string("embedded data ") + k_signatures_file + " is missing", k_signatures_file);
  return parse_signatures(std::string(text), std::string("data/") + k_signatures_file);
}

}  // namespace preflight::logs
