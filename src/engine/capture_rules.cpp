// Reads engines.json's capture and sampler warm-up rules (issue 15, warmup33): see engine/capture_rules.hpp.
#include "engine/capture_rules.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

Expected<EngineProfile::VersionRule> read_rule_range(const JsonObject& c, const std::string& origin, const std::string& id, const std::string& key,
                                                     const std::vector<std::string>& extra) {
  std::vector<std::string> allowed = {"version_min", "version_max", "source"};
  allowed.insert(allowed.end(), extra.begin(), extra.end());
  PF_TRY(keys, c.only_keys(allowed));
  (void)keys;
  PF_TRY(range, read_record_versions(c, format("%s: %s: %s", origin.c_str(), id.c_str(), key.c_str()), origin));
  PF_TRY(src, read_source_field(c, "source", origin));
  return EngineProfile::VersionRule{range.first, range.second, src};
}

namespace {

Expected<std::optional<EngineProfile::VersionRule>> optional_capture_rule(const JsonObject& r, const std::string& origin, const std::string& id, const std::string& key) {
  const Json* j = r.find(key);
  if (!j || j->is_null()) return std::optional<EngineProfile::VersionRule>();
  if (!j->is_object()) return make_error(ErrorKind::corrupt, format("%s: %s: %s must be an object", origin.c_str(), id.c_str(), key.c_str()), origin);
  PF_TRY(rule, read_rule_range(JsonObject(*j, origin, "profiles[" + id + "]." + key), origin, id, key, {}));
  return std::optional<EngineProfile::VersionRule>(rule);
}

}  // namespace

const std::vector<std::string>& capture_rule_keys() {
  static const std::vector<std::string> keys = {"cudagraph_piecewise_grid_of_8", "cudagraph_model_capture_sizes", "graph_captured_after_kv",
                                                "graph_captured_per_graph_by_tp"};
  static const std::vector<std::string> all = [] {
    std::vector<std::string> k = keys;
    k.insert(k.end(), mm_profile_rule_keys().begin(), mm_profile_rule_keys().end());  // issue 15 (vlprof35)
    return k;
  }();
  return all;
}

const std::vector<std::string>& captured_graph_cost_keys() {
  static const std::vector<std::string> keys = {"graph_captured_per_graph_bytes", "graph_captured_per_layer_bytes", "graph_captured_per_moe_layer_bytes",
                                                "graph_captured_source"};
  return keys;
}

Expected<CaptureRules> parse_capture_rules(const JsonObject& r, const std::string& origin, const std::string& id) {
  CaptureRules c;
  PF_TRY(grid8, optional_capture_rule(r, origin, id, "cudagraph_piecewise_grid_of_8"));
  PF_TRY(captured, optional_capture_rule(r, origin, id, "graph_captured_after_kv"));
  c.graph_captured_after_kv = captured;
  PF_TRY(by_tp, optional_capture_rule(r, origin, id, "graph_captured_per_graph_by_tp"));
  c.graph_captured_per_graph_by_tp = by_tp;
  c.piecewise_grid_of_8 = grid8;
  PF_TRY(mm, parse_mm_profile_rules(r, origin, id));
  c.mm_profile = std::move(mm);
  const std::string key = "cudagraph_model_capture_sizes";
  const Json* sizes = r.find(key);
  if (!sizes || sizes->is_null()) return c;
  if (!sizes->is_array()) return make_error(ErrorKind::corrupt, format("%s: %s: %s must be an array", origin.c_str(), id.c_str(), key.c_str()), origin);
  for (const auto& item : *sizes) {
    if (!item.is_object()) return make_error(ErrorKind::corrupt, format("%s: %s: %s: expected objects", origin.c_str(), id.c_str(), key.c_str()), origin);
    const JsonObject s(item, origin, "profiles[" + id + "]." + key + "[]");
    PF_TRY(rule, read_rule_range(s, origin, id, key, {"max_capture_size", "architectures"}));
    PF_TRY(tokens, s.int_("max_capture_size"));
    CaptureRules::ModelCaptureSize m{tokens, {}, rule};
    const Json* archs = s.find("architectures");
    if (archs && archs->is_array())
      for (const auto& a : *archs)
        if (a.is_string()) m.architectures.push_back(a.get<std::string>());
    if (tokens < 1 || m.architectures.empty() || !archs || archs->size() != m.architectures.size())
      return make_error(ErrorKind::corrupt, format("%s: %s: %s needs max_capture_size >= 1 and architectures (a list of names)", origin.c_str(), id.c_str(), key.c_str()),
                        origin);
    c.model_capture_sizes.push_back(std::move(m));
  }
  return c;
}

Expected<CapturedGraphCost> parse_captured_graph_cost(const JsonObject& r, const std::string& origin, const std::string& platform) {
  CapturedGraphCost c;
  PF_TRY(per_graph, r.opt_number("graph_captured_per_graph_bytes"));
  PF_TRY(per_layer, r.opt_number("graph_captured_per_layer_bytes"));
  PF_TRY(per_moe, r.opt_number("graph_captured_per_moe_layer_bytes"));
  PF_TRY(src, r.opt_string("graph_captured_source"));
  c.per_graph_bytes = per_graph.value_or(0);
  c.per_layer_bytes = per_layer.value_or(0);
  c.per_moe_layer_bytes = per_moe.value_or(0);
  c.source = src.value_or("");
  for (const double v : {c.per_graph_bytes, c.per_layer_bytes, c.per_moe_layer_bytes})
    if (!(v >= 0 && v <= 1024.0 * 1024 * 1024))
      return make_error(ErrorKind::corrupt, format("%s: overheads[%s].graph_captured_per_*_bytes: expected 0 - 1 GiB", origin.c_str(), platform.c_str()), origin);
  if (c.modelled() && c.source.empty())
    return make_error(ErrorKind::corrupt, format("%s: overheads[%s].graph_captured_per_*_bytes has no graph_captured_source", origin.c_str(), platform.c_str()), origin);
  return c;
}

bool CaptureRulesRef::operator==(const CaptureRulesRef& other) const {
  return rules == other.rules || (rules && other.rules && *rules == *other.rules);
}

bool CapturedGraphCostRef::operator==(const CapturedGraphCostRef& other) const {
  return cost == other.cost || (cost && other.cost && *cost == *other.cost);
}

const CaptureRules& capture_rules(const EngineProfile& profile) {
  static const CaptureRules none;
  return profile.graph_capture_rules.rules ? *profile.graph_capture_rules.rules : none;
}

const CapturedGraphCost& captured_graph_cost(const Overheads& overheads) {
  static const CapturedGraphCost none;
  return overheads.captured_graph_cost.cost ? *overheads.captured_graph_cost.cost : none;
}

std::optional<int64_t> model_max_capture_size(const EngineProfile& profile, const std::string& architecture) {
  const Version v = profile.rule_version();
  for (const auto& c : capture_rules(profile).model_capture_sizes)
    if (c.rule.covers(v) && std::find(c.architectures.begin(), c.architectures.end(), architecture) != c.architectures.end()) return c.max_capture_size;
  return std::nullopt;
}

}  // namespace preflight::engine
