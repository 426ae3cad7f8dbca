#include "engine/launch_rules.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "base/units.hpp"
#include "engine/version_lists.hpp"

namespace preflight::engine {

Expected<LaunchRules> parse_launch_rules(const Json& root, const std::string& origin, std::span<const std::string> device_families) {
  LaunchRules out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(tk, top.only_keys({"schema_version", "note", "rules"}));
  (void)tk;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(list, top.array("rules"));
  for (const auto& item : *list) {
    JsonObject pre(item, origin, "rules[]");
    PF_TRY(id, pre.string("id"));
    const std::string where = origin + ": rules[" + id + "]";
    JsonObject r(item, origin, "rules[" + id + "]");
    PF_TRY(keys, r.only_keys({"id", "engine", "version_min", "version_max", "when", "shell", "env", "flags", "note", "source"}));
    (void)keys;
    for (const auto& existing : out.rules)
      if (existing.id == id) return make_error(ErrorKind::corrupt, where + ": duplicate id", origin);
    LaunchRule rule;
    rule.id = id;
    PF_TRY(engine, r.string("engine"));
    rule.engine = engine;
    PF_TRY(range, read_record_versions(r, where, origin));
    rule.version_min = range.first;
    rule.version_max = range.second;
    const Json* when = r.find("when");
    if (!when || !when->is_object()) return make_error(ErrorKind::corrupt, where + ": when: expected an object", origin);
    JsonObject w(*when, origin, "rules[" + id + "].when");
    PF_TRY(wk, w.only_keys({"always", "vision", "model_type_prefixes", "model_types", "workload", "multi_node", "model_id_contains", "model_id_excludes", "device_families"}));
    (void)wk;
    PF_TRY(always, w.opt_bool("always"));
    PF_TRY(vision, w.opt_bool("vision"));
    rule.always = always.value_or(false);
    rule.vision = vision.value_or(false);
    PF_TRY(prefixes, string_list(w.find("model_type_prefixes"), where + ".when.model_type_prefixes", origin));
    rule.model_type_prefixes = prefixes;
    PF_TRY(types, string_list(w.find("model_types"), where + ".when.model_types", origin));
    rule.model_types = types;
    PF_TRY(workload, w.opt_string("workload"));
    rule.workload = workload.value_or("");
    if (!rule.workload.empty() && rule.workload != "chat" && rule.workload != "agent")
      return make_error(ErrorKind::corrupt, where + ": when.workload '" + rule.workload + "', expected chat or agent", origin);
    PF_TRY(multi_node, w.opt_bool("multi_node"));
    rule.multi_node = multi_node.value_or(false);
    PF_TRY(ids, string_list(w.find("model_id_contains"), where + ".when.model_id_contains", origin));
    rule.model_id_contains = ids;
    PF_TRY(excludes, string_list(w.find("model_id_excludes"), where + ".when.model_id_excludes", origin));
    rule.model_id_excludes = excludes;
    PF_TRY(families, string_list(w.find("device_families"), where + ".when.device_families", origin));
    for (const auto& f : families)
      if (std::find(device_families.begin(), device_families.end(), f) == device_families.end())
        return make_error(ErrorKind::corrupt, where + ": when.device_families '" + f + "' is not a family of the device catalogue (data/devices/devices.json)", origin);
    rule.device_families = families;
    if (!rule.always && !rule.vision && rule.model_type_prefixes.empty() && rule.model_types.empty()) return make_error(ErrorKind::corrupt, where + ": when names no condition", origin);
    PF_TRY(shell, string_list(r.find("shell"), where + ".shell", origin));
    rule.shell = shell;
    PF_TRY(flags, string_list(r.find("flags"), where + ".flags", origin));
    rule.flags = flags;
    if (const Json* env = r.find("env")) {
      if (!env->is_object()) return make_error(ErrorKind::corrupt, where + ": env: expected an object", origin);
      for (const auto& [k, v] : env->items()) {
        if (!v.is_string()) return make_error(ErrorKind::corrupt, where + ": env." + k + ": expected a string", origin);
        rule.env[k] = v.get<std::string>();
      }
    }
    PF_TRY(note, r.string("note"));
    PF_TRY(source, read_record_text(r, "source", where, origin, EmptyWording::is_empty));
    rule.note = note;
    rule.source = source;
    out.rules.push_back(std::move(rule));
  }
  return out;
}

Expected<LaunchRules> load_launch_rules(std::span<const std::string> device_families) {
  PF_TRY(json, parse_json(std::string(embedded_data("engines/launch.json")), "data/engines/launch.json"));
  PF_TRY(rules, parse_launch_rules(json, "data/engines/launch.json", device_families));
  PF_TRY(quantized, load_quantized_catalog());
  rules.quantized = std::move(quantized);
  return rules;
}

}  // namespace preflight::engine
