#include <algorithm>
#include <array>
#include <cctype>

#include "base/case_fold.hpp"
#include "base/embedded.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/allreduce_workspace.hpp"
#include "engine/capture_rules.hpp"
#include "engine/moe_backend_workspace.hpp"
#include "engine/moe_row_padding.hpp"
#include "engine/engine_profile.hpp"
#include "engine/engine_overheads.hpp"
#include "engine/nccl_buffers.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

void apply_group_padding(EngineProfile& p, const Version& v) {
  p.hybrid_group_padding_ratio = 1.0;
  p.hybrid_group_padding_source = "no hybrid_group_padding entry for " + p.engine + " " + v.text() + ": groups take the fewest layers of a kind";
  for (const auto& g : p.hybrid_group_paddings) {
    if (covers_version(g, v)) {
      p.hybrid_group_padding_ratio = g.ratio;
      p.hybrid_group_padding_source = g.source;
    }
  }
}

Expected<std::optional<std::pair<Version, Version>>> read_version_range(const JsonObject& r) {
  PF_TRY(vmin, r.string("version_min"));
  PF_TRY(vmax, r.string("version_max"));
  const auto pmin = parse_version(vmin), pmax = parse_version(vmax);
  if (!pmin || !pmax || *pmax < *pmin) return std::optional<std::pair<Version, Version>>();
  return std::optional<std::pair<Version, Version>>(std::make_pair(*pmin, *pmax));
}

Expected<Version> read_version_field(const JsonObject& r, const std::string& key, const std::string& where, const std::string& origin) {
  PF_TRY(text, r.string(key));
  const auto v = parse_version(text);
  if (!v) return make_error(ErrorKind::corrupt, where + ": " + key + " '" + text + "' is not a version", origin);
  return *v;
}

Expected<std::string> read_source_field(const JsonObject& r, const std::string& key, const std::string& origin) {
  PF_TRY(text, r.string(key));
  if (trim(text).empty()) return make_error(ErrorKind::corrupt, format("%s: %s is empty: every figure needs its source", origin.c_str(), r.key_path(key).c_str()), origin);
  return text;
}

Expected<EngineProfile::VersionRule> read_counted_versions(const JsonObject& r, const std::string& origin) {
  PF_TRY(range, read_record_versions(r, format("%s: %s", origin.c_str(), r.key_path("version_min").c_str()), origin));
  PF_TRY(source, read_source_field(r, "version_source", origin));
  return EngineProfile::VersionRule{range.first, range.second, source};
}

namespace {

// The {version_min, version_max, source} of a rule object (issue 15); `extra` names further keys it may hold.
Expected<EngineProfile::VersionRule> parse_rule_range(const JsonObject& c, const std::string& origin, const std::string& id, const std::string& key,
                                                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> allowed = {"version_min", "version_max", "source"};
  allowed.insert(allowed.end(), extra.begin(), extra.end());
  PF_TRY(keys, c.only_keys(allowed));
  (void)keys;
  PF_TRY(range, read_version_range(c));
  PF_TRY(src, c.string("source"));
  if (!range) return make_error(ErrorKind::corrupt, format("%s: %s: %s: bad version range", origin.c_str(), id.c_str(), key.c_str()), origin);
  if (src.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: %s needs a source", origin.c_str(), id.c_str(), key.c_str()), origin);
  return EngineProfile::VersionRule{range->first, range->second, src};
}

// An optional {version_min, version_max, source} object of a profile (issue 15); `extra` names further keys it may hold.
Expected<std::optional<EngineProfile::VersionRule>> parse_version_rule(const JsonObject& r, const std::string& origin, const std::string& id, const std::string& key,
                                                                        const std::vector<std::string>& extra = {}) {
  const Json* j = r.find(key);
  if (!j || j->is_null()) return std::optional<EngineProfile::VersionRule>();
  JsonObject c(*j, origin, "profiles[" + id + "]." + key);
  PF_TRY(rule, parse_rule_range(c, origin, id, key, extra));
  return std::optional<EngineProfile::VersionRule>(rule);
}

// Issue 15 (build): a rule's PR boundary as the first main-branch build holding it (from_build / before_build), with
// git describe in build_source, which the boundary needs and which joins the rule's source.
Status read_build_bounds(const JsonObject& c, const std::string& origin, const std::string& id, const std::string& key, EngineProfile::VersionRule& rule) {
  for (const auto& [name, bound] : {std::pair{"from_build", &rule.from_build}, std::pair{"before_build", &rule.before_build}}) {
    PF_TRY(text, c.opt_string(name));
    if (!text) continue;
    PF_TRY(build, parse_engine_build(*text, format("%s: %s: %s %s", origin.c_str(), id.c_str(), key.c_str(), name)));
    *bound = build;
  }
  PF_TRY(build_source, c.opt_string("build_source"));
  if ((rule.from_build || rule.before_build) && (!build_source || build_source->empty()))
    return make_error(ErrorKind::corrupt, format("%s: %s: %s with from_build / before_build needs build_source", origin.c_str(), id.c_str(), key.c_str()), origin);
  if (build_source) rule.source += "; " + *build_source;
  return Ok{};
}

// Issue 15 (evid23): an optional version rule that may also start or end at a main-branch build (read_build_bounds).
Expected<std::optional<EngineProfile::VersionRule>> parse_build_bounded_rule(const JsonObject& r, const std::string& origin, const std::string& id,
                                                                              const std::string& key) {
  const Json* j = r.find(key);
  if (!j || j->is_null()) return std::optional<EngineProfile::VersionRule>();
  JsonObject c(*j, origin, "profiles[" + id + "]." + key);
  PF_TRY(rule, parse_rule_range(c, origin, id, key, {"from_build", "before_build", "build_source"}));
  PF_TRY(bounded, read_build_bounds(c, origin, id, key, rule));
  (void)bounded;
  return std::optional<EngineProfile::VersionRule>(rule);
}

// The array under `key`, nullptr when absent or null; anything else is corrupt.
Expected<const Json*> optional_array(const JsonObject& r, const std::string& key, const std::string& origin, const std::string& id) {
  const Json* j = r.find(key);
  if (!j || j->is_null()) return static_cast<const Json*>(nullptr);
  if (!j->is_array()) return make_error(ErrorKind::corrupt, format("%s: %s: %s must be an array", origin.c_str(), id.c_str(), key.c_str()), origin);
  return j;
}

// Issue 15: moe_dynamic_scale_copies [{tensors, w13_bytes_per_channel, w2_bytes_per_channel, families, version_min,
// version_max, source}]: the expert-scale copies a W8A8_DYNAMIC fused-MoE layer keeps after loading.
Status parse_expert_scale_copies(const JsonObject& r, const std::string& origin, const std::string& id, EngineProfile& p) {
  const std::string key = "moe_dynamic_scale_copies";
  PF_TRY(copies, optional_array(r, key, origin, id));
  if (!copies) return Ok{};
  for (const auto& item : *copies) {
    JsonObject c(item, origin, "profiles[" + id + "]." + key + "[]");
    PF_TRY(rule, parse_rule_range(c, origin, id, key, {"tensors", "w13_bytes_per_channel", "w2_bytes_per_channel", "families", "from_build", "before_build", "build_source"}));
    EngineProfile::ExpertScaleCopy copy;
    copy.rule = rule;
    PF_TRY(bounded, read_build_bounds(c, origin, id, key, copy.rule));
    (void)bounded;
    PF_TRY(tensors, c.string("tensors"));
    PF_TRY(w13, c.number("w13_bytes_per_channel"));
    PF_TRY(w2, c.number("w2_bytes_per_channel"));
    PF_TRY(fams, string_list(c.find("families"), "profiles[" + id + "]." + key + ".families", origin));
    if (w13 < 0 || w13 > 64 || w2 < 0 || w2 > 64)
      return make_error(ErrorKind::corrupt, format("%s: %s: %s %s: bytes per channel must be in [0, 64], found %g and %g", origin.c_str(), id.c_str(), key.c_str(),
                                                   tensors.c_str(), w13, w2), origin);
    if (fams.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: %s %s needs families", origin.c_str(), id.c_str(), key.c_str(), tensors.c_str()), origin);
    copy.tensors = tensors;
    copy.w13_bytes_per_channel = w13;
    copy.w2_bytes_per_channel = w2;
    copy.families = fams;
    p.moe_dynamic_scale_copies.push_back(copy);
  }
  return Ok{};
}

// `key`: [{<flag>, version_min, version_max, source}], a version range with one required boolean (sfa_mlapo_copies'
// default_on, mtp_drafter_profile_tensors' output_gathered_under_sp); each Rule is {flag, rule}.
template <class Rule>
Expected<std::vector<Rule>> parse_flag_rules(const JsonObject& r, const std::string& origin, const std::string& id, const std::string& key, const char* flag) {
  std::vector<Rule> out;
  PF_TRY(rules, optional_array(r, key, origin, id));
  if (!rules) return out;
  for (const auto& item : *rules) {
    JsonObject c(item, origin, "profiles[" + id + "]." + key + "[]");
    PF_TRY(rule, parse_rule_range(c, origin, id, key, {flag}));
    PF_TRY(value, c.opt_bool(flag));
    if (!value) return make_error(ErrorKind::corrupt, format("%s: %s: %s needs %s (true or false)", origin.c_str(), id.c_str(), key.c_str(), flag), origin);
    out.push_back({*value, rule});
  }
  return out;
}

// Issue 15 (npumoe): moe_all2all_rows [{families, model_dtype_rows, int8_rows, unquantized_input_rows, int8_experts_only, tokens_split_by_tp_in,
// above_tokens, version_min, version_max, source}]: the rows a MoE layer's all-to-all expert path holds at its peak.
Status parse_moe_all2all_rows(const JsonObject& r, const std::string& origin, const std::string& id, EngineProfile& p) {
  const std::string key = "moe_all2all_rows";
  PF_TRY(rules, optional_array(r, key, origin, id));
  if (!rules) return Ok{};
  for (const auto& item : *rules) {
    JsonObject c(item, origin, "profiles[" + id + "]." + key + "[]");
    PF_TRY(rule, parse_rule_range(c, origin, id, key, {"families", "model_dtype_rows", "int8_rows", "unquantized_input_rows", "int8_experts_only", "tokens_split_by_tp_in", "above_tokens"}));
    EngineProfile::MoeAll2AllRows rows;
    rows.rule = rule;
    PF_TRY(fams, string_list(c.find("families"), "profiles[" + id + "]." + key + ".families", origin));
    if (fams.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: %s needs families", origin.c_str(), id.c_str(), key.c_str()), origin);
    PF_TRY(model_rows, c.number("model_dtype_rows"));
    PF_TRY(int8_rows, c.number("int8_rows"));
    if (!(model_rows >= 0 && model_rows <= 16) || !(int8_rows >= 0 && int8_rows <= 16) || model_rows + int8_rows <= 0)
      return make_error(ErrorKind::corrupt, format("%s: %s: %s: model_dtype_rows and int8_rows must be in [0, 16] and not both 0, found %g and %g", origin.c_str(),
                                                   id.c_str(), key.c_str(), model_rows, int8_rows), origin);
    PF_TRY(input_rows, c.opt_number("unquantized_input_rows"));
    if (!(input_rows.value_or(0) >= 0 && input_rows.value_or(0) <= 16))
      return make_error(ErrorKind::corrupt, format("%s: %s: %s.unquantized_input_rows must be in [0, 16], found %g", origin.c_str(), id.c_str(), key.c_str(), *input_rows), origin);
    PF_TRY(int8_only, c.opt_bool("int8_experts_only"));
    PF_TRY(modes, string_list(c.find("tokens_split_by_tp_in"), "profiles[" + id + "]." + key + ".tokens_split_by_tp_in", origin));
    for (const auto& mode : modes)
      if (mode != "graph" && mode != "eager")
        return make_error(ErrorKind::corrupt, format("%s: %s: %s.tokens_split_by_tp_in: expected graph or eager, found %s", origin.c_str(), id.c_str(), key.c_str(), mode.c_str()), origin);
    PF_TRY(above, c.opt_int("above_tokens"));
    if (above.value_or(0) < 0)
      return make_error(ErrorKind::corrupt, format("%s: %s: %s.above_tokens must be 0 or more, found %lld", origin.c_str(), id.c_str(), key.c_str(), static_cast<long long>(*above)), origin);
    rows.families = fams;
    rows.model_dtype_rows = model_rows;
    rows.int8_rows = int8_rows;
    rows.unquantized_input_rows = input_rows.value_or(0);
    rows.int8_experts_only = int8_only.value_or(false);
    rows.tokens_split_by_tp_in = modes;
    rows.above_tokens = above.value_or(0);
    p.moe_all2all_rows.push_back(rows);
  }
  return Ok{};
}

// Issue 15: hybrid_kv_tensor_copies [{copies: per_layer | per_kind, version_min, version_max, source}].
Status parse_hybrid_kv_copies(const JsonObject& r, const std::string& origin, const std::string& id, EngineProfile& p) {
  const std::string key = "hybrid_kv_tensor_copies";
  PF_TRY(rules, optional_array(r, key, origin, id));
  if (!rules) return Ok{};
  for (const auto& item : *rules) {
    JsonObject c(item, origin, "profiles[" + id + "]." + key + "[]");
    PF_TRY(rule, parse_rule_range(c, origin, id, key, {"copies"}));
    PF_TRY(copies, c.string("copies"));
    EngineProfile::HybridKvCopyRule h;
    h.rule = rule;
    if (copies == "per_layer") {
      h.copies = EngineProfile::HybridKvCopies::per_layer;
    } else if (copies == "per_kind") {
      h.copies = EngineProfile::HybridKvCopies::per_kind;
    } else {
      return make_error(ErrorKind::corrupt, format("%s: %s: %s: copies must be per_layer or per_kind, found %s", origin.c_str(), id.c_str(), key.c_str(), copies.c_str()), origin);
    }
    p.hybrid_kv_tensor_copies.push_back(h);
  }
  return Ok{};
}

// The optional NPU memory rules of a profile (issue 15): ep_hccl_communicators [{group, buffer_mib (0 =
// HCCL_BUFFSIZE), needs_dp}] with ep_hccl_source, and kv_budget_divided_families with kv_budget_divisor and its source.
Status parse_npu_memory_rules(const JsonObject& r, const std::string& origin, const std::string& id, EngineProfile& p) {
  PF_TRY(comms, optional_array(r, "ep_hccl_communicators", origin, id));
  if (comms) {
    for (const auto& item : *comms) {
      JsonObject c(item, origin, "profiles[" + id + "].ep_hccl_communicators[]");
      PF_TRY(keys, c.only_keys({"group", "buffer_mib", "needs_dp"}));
      (void)keys;
      HcclCommunicator h;
      PF_TRY(group, c.string("group"));
      PF_TRY(mib, c.number("buffer_mib"));
      PF_TRY(needs_dp, c.opt_bool("needs_dp"));
      if (mib < 0 || mib > 65536)
        return make_error(ErrorKind::corrupt, format("%s: %s: ep_hccl_communicators %s: buffer_mib must be in [0, 65536], found %g", origin.c_str(), id.c_str(), group.c_str(), mib), origin);
      h.group = group;
      h.buffer_mib = mib;
      h.needs_dp = needs_dp.value_or(false);
      p.ep_hccl_communicators.push_back(h);
    }
    PF_TRY(src, r.opt_string("ep_hccl_source"));
    if (!src || src->empty()) return make_error(ErrorKind::corrupt, format("%s: %s: ep_hccl_communicators needs ep_hccl_source", origin.c_str(), id.c_str()), origin);
    p.ep_hccl_source = *src;
  }
  PF_TRY(families, string_list(r.find("kv_budget_divided_families"), "profiles[" + id + "].kv_budget_divided_families", origin));
  if (!families.empty()) {
    PF_TRY(divisor, r.number("kv_budget_divisor"));
    if (divisor < 1 || divisor > 16)
      return make_error(ErrorKind::corrupt, format("%s: %s: kv_budget_divisor must be in [1, 16], found %g", origin.c_str(), id.c_str(), divisor), origin);
    PF_TRY(src, r.opt_string("kv_budget_divisor_source"));
    if (!src || src->empty()) return make_error(ErrorKind::corrupt, format("%s: %s: kv_budget_divided_families needs kv_budget_divisor_source", origin.c_str(), id.c_str()), origin);
    p.kv_budget_divided_families = families;
    p.kv_budget_divisor = divisor;
    p.kv_budget_divisor_source = *src;
  }
  PF_TRY(allgather, string_list(r.find("moe_allgather_families"), "profiles[" + id + "].moe_allgather_families", origin));
  if (!allgather.empty()) {
    PF_TRY(src, r.opt_string("moe_allgather_source"));
    if (!src || src->empty()) return make_error(ErrorKind::corrupt, format("%s: %s: moe_allgather_families needs moe_allgather_source", origin.c_str(), id.c_str()), origin);
    p.moe_allgather_families = allgather;
    p.moe_allgather_source = *src;
  }
  PF_TRY(failing, r.opt_string("mc2_transport_driver_failing"));
  PF_TRY(fixed, r.opt_string("mc2_transport_driver_fixed"));
  if (failing || fixed) {
    PF_TRY(src, r.opt_string("mc2_transport_source"));
    if (!failing || !fixed || !src || src->empty() || p.moe_allgather_families.empty())
      return make_error(ErrorKind::corrupt, format("%s: %s: mc2_transport_driver_failing and mc2_transport_driver_fixed go together, with "
                                                   "mc2_transport_source and moe_allgather_families", origin.c_str(), id.c_str()), origin);
    PF_TRY(lo, parse_npu_driver_version(*failing, origin + ": " + id + ": mc2_transport_driver_failing"));
    PF_TRY(hi, parse_npu_driver_version(*fixed, origin + ": " + id + ": mc2_transport_driver_fixed"));
    if (compare_npu_driver_versions(lo, hi) >= 0)
      return make_error(ErrorKind::corrupt, format("%s: %s: mc2_transport_driver_failing (%s) must be below mc2_transport_driver_fixed (%s)", origin.c_str(),
                                                   id.c_str(), failing->c_str(), fixed->c_str()), origin);
    p.mc2_transport_driver_failing = std::move(lo);
    p.mc2_transport_driver_fixed = std::move(hi);
    p.mc2_transport_source = *src;
  }
  PF_TRY(counted, r.opt_string("non_torch_counted"));
  if (counted) {
    if (*counted != "absolute" && *counted != "increase")
      return make_error(ErrorKind::corrupt, format("%s: %s: non_torch_counted must be \"absolute\" or \"increase\", found \"%s\"", origin.c_str(), id.c_str(), counted->c_str()), origin);
    PF_TRY(src, r.opt_string("non_torch_counted_source"));
    if (!src || src->empty()) return make_error(ErrorKind::corrupt, format("%s: %s: non_torch_counted needs non_torch_counted_source", origin.c_str(), id.c_str()), origin);
    p.non_torch_counted = *counted == "increase" ? NonTorchCounted::increase : NonTorchCounted::absolute;
    p.non_torch_counted_source = *src;
  }
  PF_TRY(absolute_families, string_list(r.find("non_torch_absolute_families"), "profiles[" + id + "].non_torch_absolute_families", origin));
  if (!absolute_families.empty() && p.non_torch_counted != NonTorchCounted::increase)
    return make_error(ErrorKind::corrupt, format("%s: %s: non_torch_absolute_families needs non_torch_counted \"increase\"", origin.c_str(), id.c_str()), origin);
  p.non_torch_absolute_families = absolute_families;
  PF_TRY(nt_build, r.opt_string("non_torch_increase_from_build"));
  if (nt_build) {
    if (p.non_torch_counted != NonTorchCounted::increase)
      return make_error(ErrorKind::corrupt, format("%s: %s: non_torch_increase_from_build needs non_torch_counted \"increase\"", origin.c_str(), id.c_str()), origin);
    PF_TRY(build, parse_engine_build(*nt_build, origin + ": " + id + ": non_torch_increase_from_build"));
    PF_TRY(src, r.opt_string("non_torch_increase_from_build_source"));
    if (!src || src->empty())
      return make_error(ErrorKind::corrupt, format("%s: %s: non_torch_increase_from_build needs non_torch_increase_from_build_source", origin.c_str(), id.c_str()), origin);
    p.non_torch_increase_from_build = build;
    p.non_torch_increase_from_build_source = *src;
  }
  PF_TRY(whole, parse_version_rule(r, origin, id, "whole_prompt_prefill"));
  p.whole_prompt_prefill = whole;
  PF_TRY(drafter_sliding, parse_version_rule(r, origin, id, "drafter_sliding_kv_group"));
  p.drafter_sliding_kv_group = drafter_sliding;
  PF_TRY(modelopt_head, parse_version_rule(r, origin, id, "modelopt_lm_head_quantized", {"load_error"}));
  p.modelopt_lm_head_quantized = modelopt_head;
  if (modelopt_head) {
    PF_TRY(load_error, JsonObject(*r.find("modelopt_lm_head_quantized"), origin, "profiles[" + id + "].modelopt_lm_head_quantized").string("load_error"));
    p.modelopt_lm_head_load_error = load_error;
  }
  PF_TRY(without_ep, parse_version_rule(r, origin, id, "moe_hccl_communicators_without_ep"));
  if (without_ep && p.ep_hccl_communicators.empty())
    return make_error(ErrorKind::corrupt, format("%s: %s: moe_hccl_communicators_without_ep needs ep_hccl_communicators", origin.c_str(), id.c_str()), origin);
  p.moe_hccl_communicators_without_ep = without_ep;
  PF_TRY(every_group, parse_build_bounded_rule(r, origin, id, "hccl_every_group_at_buffsize"));
  if (every_group && p.ep_hccl_communicators.empty())
    return make_error(ErrorKind::corrupt, format("%s: %s: hccl_every_group_at_buffsize needs ep_hccl_communicators", origin.c_str(), id.c_str()), origin);
  p.hccl_every_group_at_buffsize = every_group;
  PF_TRY(gate_fp32, parse_version_rule(r, origin, id, "moe_gate_fp32"));
  p.moe_gate_fp32 = gate_fp32;
  PF_TRY(shared_whole, parse_version_rule(r, origin, id, "shared_experts_whole_only_with_sp"));
  p.shared_experts_whole_only_with_sp = shared_whole;
  PF_TRY(mlapo, parse_flag_rules<EngineProfile::MlapoCopyRule>(r, origin, id, "sfa_mlapo_copies", "default_on"));
  p.sfa_mlapo_copies = std::move(mlapo);
  PF_TRY(mtp_drafter, parse_flag_rules<EngineProfile::MtpDrafterProfileRule>(r, origin, id, "mtp_drafter_profile_tensors", "output_gathered_under_sp"));
  p.mtp_drafter_profile_tensors = std::move(mtp_drafter);
  if (const Json* nz = r.find("embedding_nz_copy"); nz && !nz->is_null()) {
    JsonObject c(*nz, origin, "profiles[" + id + "].embedding_nz_copy");
    PF_TRY(fams, string_list(c.find("families"), "profiles[" + id + "].embedding_nz_copy.families", origin));
    if (fams.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: embedding_nz_copy needs families", origin.c_str(), id.c_str()), origin);
    PF_TRY(rule, parse_version_rule(r, origin, id, "embedding_nz_copy", {"families"}));
    p.embedding_nz_copy_families = fams;
    p.embedding_nz_copy = rule;
  }
  if (const Json* mask = r.find("square_attention_mask"); mask && !mask->is_null()) {
    const std::string where = "profiles[" + id + "].square_attention_mask";
    JsonObject c(*mask, origin, where);
    PF_TRY(fams, string_list(c.find("families"), where + ".families", origin));
    if (fams.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: square_attention_mask needs families", origin.c_str(), id.c_str()), origin);
    PF_TRY(rule, parse_version_rule(r, origin, id, "square_attention_mask", {"families", "element_bytes", "peak_copies", "compressed_when"}));
    PF_TRY(compressed, c.opt_string("compressed_when"));
    PF_TRY(element, c.number("element_bytes"));
    PF_TRY(copies, c.number("peak_copies"));
    if (!(element > 0 && element <= 8))
      return make_error(ErrorKind::corrupt, format("%s: %s.element_bytes: expected 0 < bytes <= 8, found %g", origin.c_str(), where.c_str(), element), origin);
    if (!(copies >= 1 && copies <= 16))
      return make_error(ErrorKind::corrupt, format("%s: %s.peak_copies: expected 1-16, found %g", origin.c_str(), where.c_str(), copies), origin);
    p.square_attention_mask = EngineProfile::SquareAttentionMask{fams, *rule, element, copies, compressed.value_or("")};
  }
  PF_TRY(dsa, r.opt_string("dsa_cp_switch"));
  if (dsa) {
    if (*dsa != "flashcomm1" && *dsa != "additional_config")
      return make_error(ErrorKind::corrupt, format("%s: %s: dsa_cp_switch must be flashcomm1 or additional_config, found %s", origin.c_str(), id.c_str(), dsa->c_str()), origin);
    PF_TRY(src, r.opt_string("dsa_cp_source"));
    if (!src || src->empty()) return make_error(ErrorKind::corrupt, format("%s: %s: dsa_cp_switch needs dsa_cp_source", origin.c_str(), id.c_str()), origin);
    p.dsa_cp_switch = *dsa;
    p.dsa_cp_source = *src;
    PF_TRY(shard_src, r.opt_string("dsa_cp_layer_shard_source"));
    if (shard_src) p.dsa_cp_layer_shard_source = *shard_src;
  }
  PF_TRY(hybrid_copies, parse_hybrid_kv_copies(r, origin, id, p));
  (void)hybrid_copies;
  PF_TRY(all2all_rows, parse_moe_all2all_rows(r, origin, id, p));
  (void)all2all_rows;
  return parse_expert_scale_copies(r, origin, id, p);
}

// The CUDA graph capture rules of a profile (issue 15): optimization_levels, flashinfer_spec_decode_piecewise with its
// uniform_batch_devices, and cudagraph_capture_ceilings [{tokens, devices, version_min, version_max, source}].
Status parse_graph_capture_rules(const JsonObject& r, const std::string& origin, const std::string& id, EngineProfile& p) {
  PF_TRY(levels, parse_version_rule(r, origin, id, "optimization_levels"));
  p.optimization_levels = levels;
  if (const Json* fi = r.find("flashinfer_spec_decode_piecewise"); fi && !fi->is_null()) {
    JsonObject c(*fi, origin, "profiles[" + id + "].flashinfer_spec_decode_piecewise");
    PF_TRY(devices, string_list(c.find("uniform_batch_devices"), "profiles[" + id + "].flashinfer_spec_decode_piecewise.uniform_batch_devices", origin));
    PF_TRY(rule, parse_version_rule(r, origin, id, "flashinfer_spec_decode_piecewise", {"uniform_batch_devices"}));
    p.flashinfer_spec_decode_piecewise = rule;
    p.flashinfer_uniform_batch_devices = devices;
  }
  const std::string key = "cudagraph_capture_ceilings";
  PF_TRY(ceilings, optional_array(r, key, origin, id));
  if (!ceilings) return Ok{};
  for (const auto& item : *ceilings) {
    JsonObject c(item, origin, "profiles[" + id + "]." + key + "[]");
    PF_TRY(rule, parse_rule_range(c, origin, id, key, {"tokens", "devices"}));
    PF_TRY(tokens, c.int_("tokens"));
    PF_TRY(devices, string_list(c.find("devices"), "profiles[" + id + "]." + key + ".devices", origin));
    if (tokens < 1 || devices.empty())
      return make_error(ErrorKind::corrupt, format("%s: %s: %s needs tokens >= 1 and devices", origin.c_str(), id.c_str(), key.c_str()), origin);
    p.cudagraph_capture_ceilings.push_back({tokens, devices, rule});
  }
  return Ok{};
}

// sparse_indexer_cache (and the layout of the builds before its PR: sparse_indexer_cache_from_build /
// sparse_indexer_cache_before_build, issue 15 evid28), each with its source.
Status parse_sparse_indexer_cache(const JsonObject& r, const std::string& origin, const std::string& id, EngineProfile& p) {
  const auto known = [](const std::string& v) { return v == "fp8_scaled" || v == "bf16" || v == "mla_page"; };
  PF_TRY(indexer, r.opt_string("sparse_indexer_cache"));
  if (indexer) {
    if (!known(*indexer))
      return make_error(ErrorKind::corrupt, format("%s: %s: sparse_indexer_cache must be fp8_scaled, bf16 or mla_page, found %s", origin.c_str(), id.c_str(), indexer->c_str()),
                        origin);
    PF_TRY(indexer_source, r.opt_string("sparse_indexer_cache_source"));
    if (!indexer_source || indexer_source->empty())
      return make_error(ErrorKind::corrupt, format("%s: %s: sparse_indexer_cache needs sparse_indexer_cache_source", origin.c_str(), id.c_str()), origin);
    p.sparse_indexer_cache = *indexer;
    p.sparse_indexer_cache_source = *indexer_source;
  }
  PF_TRY(indexer_build, r.opt_string("sparse_indexer_cache_from_build"));
  if (!indexer_build) return Ok{};
  PF_TRY(before, r.opt_string("sparse_indexer_cache_before_build"));
  PF_TRY(build_src, r.opt_string("sparse_indexer_cache_from_build_source"));
  if (!indexer || !before || !known(*before) || !build_src || build_src->empty())
    return make_error(ErrorKind::corrupt,
                      format("%s: %s: sparse_indexer_cache_from_build needs sparse_indexer_cache, sparse_indexer_cache_before_build (fp8_scaled, bf16 or mla_page) and "
                             "sparse_indexer_cache_from_build_source", origin.c_str(), id.c_str()),
                      origin);
  PF_TRY(build, parse_engine_build(*indexer_build, origin + ": " + id + ": sparse_indexer_cache_from_build"));
  p.sparse_indexer_cache_from_build = build;
  p.sparse_indexer_cache_before_build = *before;
  p.sparse_indexer_cache_from_build_source = *build_src;
  return Ok{};
}

// One profiles[] record: an engine version range on one platform with its defaults and log-line rules.
Expected<EngineProfile> parse_engine_profile(const Json& item, const std::string& origin) {
  JsonObject pre(item, origin, "profiles[]");
  PF_TRY(id, pre.string("id"));
  JsonObject r(item, origin, "profiles[" + id + "]");
  std::vector<std::string> allowed = {"id", "engine", "version_min", "version_max", "platform", "default_gpu_memory_utilization", "block_size", "hybrid_block_rule",
                            "hybrid_mamba_mode", "max_num_seqs", "max_num_batched_tokens", "max_num_batched_tokens_large_device", "max_num_seqs_large_device",
                            "unchunked_prefill_up_to", "sampler_logit_copies", "sampler_fixed_bytes", "sampler_source", "sampler_logit_copies_if_flashinfer", "profiles_mm_encoder", "mm_dummy_size_options",
                            "requested_rounding", "graph_memory_in_budget", "tokens_rule", "weights_line", "kv_line",
                            "merged_token_line", "supported_quantization", "quantization_rejection", "fp8_requires", "fp8_failure", "source",
                            "sparse_indexer_cache", "sparse_indexer_cache_source", "sparse_indexer_cache_from_build", "sparse_indexer_cache_before_build", "sparse_indexer_cache_from_build_source", "hybrid_prefix_caching_mode", "ep_hccl_communicators", "ep_hccl_source",
                            "kv_budget_divided_families", "kv_budget_divisor", "kv_budget_divisor_source", "dsa_cp_switch", "dsa_cp_source", "dsa_cp_layer_shard_source", "moe_allgather_families", "moe_allgather_source",
                            "mc2_transport_driver_failing", "mc2_transport_driver_fixed", "mc2_transport_source",
                            "non_torch_counted", "non_torch_absolute_families", "non_torch_counted_source",
                            "non_torch_increase_from_build", "non_torch_increase_from_build_source",
                            "pp_max_model_len_check", "pp_max_model_len_check_source", "whole_prompt_prefill", "embedding_nz_copy", "square_attention_mask",
                            "moe_hccl_communicators_without_ep", "hccl_every_group_at_buffsize", "moe_gate_fp32", "moe_dynamic_scale_copies", "hybrid_kv_tensor_copies", "optimization_levels",
                            "shared_experts_whole_only_with_sp", "sfa_mlapo_copies", "mtp_drafter_profile_tensors",
                            "moe_all2all_rows", "cudagraph_capture_ceilings", "flashinfer_spec_decode_piecewise", "drafter_sliding_kv_group", "modelopt_lm_head_quantized", "first_release"};
  allowed.insert(allowed.end(), capture_rule_keys().begin(), capture_rule_keys().end());  // issue 15 (warmup33)
  PF_TRY(keys, r.only_keys(allowed));
  (void)keys;
  PF_TRY(capture, parse_capture_rules(r, origin, id));
  EngineProfile p;
  p.id = id;
  p.graph_capture_rules.rules = std::make_shared<const CaptureRules>(std::move(capture));
  PF_TRY(engine, r.string("engine"));
  p.engine = engine;
  PF_TRY(range, read_record_versions(r, format("%s: %s", origin.c_str(), id.c_str()), origin));
  p.version_min = range.first;
  p.version_max = range.second;
  if (const Json* fr = r.find("first_release"); fr && !fr->is_null()) {
    const std::string where = "profiles[" + id + "].first_release";
    if (!fr->is_object()) return make_error(ErrorKind::corrupt, format("%s: %s: expected an object", origin.c_str(), where.c_str()), origin);
    JsonObject f(*fr, origin, where);
    PF_TRY(fkeys, f.only_keys({"version", "date", "source"}));
    (void)fkeys;
    PF_TRY(fv, f.string("version"));
    PF_TRY(fd, f.string("date"));
    PF_TRY(fs, f.string("source"));
    const auto day = parse_iso_date(fd);
    if (!day) return make_error(ErrorKind::corrupt, format("%s: %s.date: expected YYYY-MM-DD, found '%s'", origin.c_str(), where.c_str(), fd.c_str()), origin);
    if (fs.empty()) return make_error(ErrorKind::corrupt, format("%s: %s.source: empty (every fact names its source)", origin.c_str(), where.c_str()), origin);
    // The release dates the profile, so it is one of the profile's own versions ("0.13.0rc1" in 0.13.0-0.14.99).
    const auto released = parse_version(fv);
    if (!released || !covers_version(p, *released))
      return make_error(ErrorKind::corrupt,
                        format("%s: %s.version: '%s' is not a version of the profile's range %s-%s", origin.c_str(), where.c_str(), fv.c_str(),
                               p.version_min.text().c_str(), p.version_max.text().c_str()),
                        origin);
    p.first_release = FirstRelease{fv, *day, fd, fs};
  }
  PF_TRY(platform, r.string("platform"));
  p.platform = platform;
  PF_TRY(util, r.number("default_gpu_memory_utilization"));
  if (util <= 0 || util > 1) return make_error(ErrorKind::corrupt, format("%s: %s: default_gpu_memory_utilization must be in (0, 1]", origin.c_str(), id.c_str()), origin);
  p.default_gpu_memory_utilization = util;
  PF_TRY(bs, r.int_("block_size"));
  p.block_size = bs;
  PF_TRY(hbr, r.string("hybrid_block_rule"));
  if (hbr == "cuda_align") p.hybrid_block_rule = HybridBlockRule::cuda_align;
  else if (hbr == "npu_align128") p.hybrid_block_rule = HybridBlockRule::npu_align128;
  else if (hbr == "npu_contiguous") p.hybrid_block_rule = HybridBlockRule::npu_contiguous;
  else return make_error(ErrorKind::corrupt, format("%s: %s: unknown hybrid_block_rule %s", origin.c_str(), id.c_str(), hbr.c_str()), origin);
  PF_TRY(mode, r.string("hybrid_mamba_mode"));
  p.hybrid_mamba_mode = mode;
  PF_TRY(pc_mode, r.opt_string("hybrid_prefix_caching_mode"));
  if (pc_mode && *pc_mode != "align" && *pc_mode != "none")
    return make_error(ErrorKind::corrupt, format("%s: %s: hybrid_prefix_caching_mode must be align or none, found %s", origin.c_str(), id.c_str(), pc_mode->c_str()), origin);
  if (pc_mode) p.hybrid_prefix_caching_mode = *pc_mode;
  PF_TRY(indexer, parse_sparse_indexer_cache(r, origin, id, p));
  (void)indexer;
  PF_TRY(mns, r.int_("max_num_seqs"));
  p.max_num_seqs = mns;
  PF_TRY(mnbt, r.int_("max_num_batched_tokens"));
  p.max_num_batched_tokens = mnbt;
  PF_TRY(mnbt_large, r.int_("max_num_batched_tokens_large_device"));
  p.max_num_batched_tokens_large_device = mnbt_large;
  PF_TRY(mns_large, r.opt_int("max_num_seqs_large_device"));
  p.max_num_seqs_large_device = mns_large.value_or(mns);
  PF_TRY(unchunked, r.opt_int("unchunked_prefill_up_to"));
  p.unchunked_prefill_up_to = unchunked.value_or(0);
  PF_TRY(copies, r.number("sampler_logit_copies"));
  if (copies < 0 || copies > 100) return make_error(ErrorKind::corrupt, format("%s: %s: sampler_logit_copies must be in [0, 100]", origin.c_str(), id.c_str()), origin);
  p.sampler_logit_copies = copies;
  PF_TRY(sfixed, r.opt_number("sampler_fixed_bytes"));
  p.sampler_fixed_bytes = sfixed.value_or(0.0);
  PF_TRY(ssrc, r.string("sampler_source"));
  p.sampler_source = ssrc;
  PF_TRY(alt, r.opt_number("sampler_logit_copies_if_flashinfer"));
  if (alt && (*alt < 0 || *alt > copies))
    return make_error(ErrorKind::corrupt, format("%s: %s: sampler_logit_copies_if_flashinfer must be in [0, sampler_logit_copies]", origin.c_str(), id.c_str()), origin);
  p.sampler_logit_copies_if_flashinfer = alt.value_or(copies);
  PF_TRY(mm_profiled, r.opt_bool("profiles_mm_encoder"));
  p.profiles_mm_encoder = mm_profiled.value_or(true);
  PF_TRY(mm_sizes, r.opt_bool("mm_dummy_size_options"));
  p.mm_dummy_size_options = mm_sizes.value_or(true);
  PF_TRY(pp_check, r.opt_string("pp_max_model_len_check"));
  p.pp_max_model_len_check = pp_check.value_or("per_stage");
  if (p.pp_max_model_len_check != "per_stage" && p.pp_max_model_len_check != "whole_model")
    return make_error(ErrorKind::corrupt,
                      format("%s: %s: pp_max_model_len_check: expected per_stage or whole_model, found %s", origin.c_str(), id.c_str(), p.pp_max_model_len_check.c_str()),
                      origin);
  PF_TRY(pp_check_src, r.opt_string("pp_max_model_len_check_source"));
  p.pp_max_model_len_check_source = pp_check_src.value_or("");
  if (p.pp_max_model_len_check == "whole_model" && p.pp_max_model_len_check_source.empty())
    return make_error(ErrorKind::corrupt, format("%s: %s: pp_max_model_len_check whole_model needs pp_max_model_len_check_source", origin.c_str(), id.c_str()),
                      origin);
  PF_TRY(rounding, r.string("requested_rounding"));
  p.requested_ceil = rounding == "ceil";
  PF_TRY(graph, r.opt_bool("graph_memory_in_budget"));
  p.graph_memory_in_budget = graph.value_or(false);
  PF_TRY(tokens, r.string("tokens_rule"));
  p.tokens_rule = tokens == "concurrency_x_len" ? TokensRule::concurrency_x_len : TokensRule::blocks;
  PF_TRY(wl, r.opt_string("weights_line"));
  p.weights_line = wl.value_or("");
  PF_TRY(kl, r.opt_string("kv_line"));
  p.kv_line = kl.value_or("");
  PF_TRY(merged, r.opt_bool("merged_token_line"));
  p.merged_token_line = merged.value_or(false);
  if (const Json* q = r.find("supported_quantization"); q && q->is_array()) {
    for (const auto& s : *q) if (s.is_string()) p.supported_quantization.push_back(s.get<std::string>());
  }
  PF_TRY(rej, r.opt_string("quantization_rejection"));
  p.quantization_rejection = rej.value_or("");
  PF_TRY(fr, r.opt_string("fp8_requires"));
  p.fp8_requires = fr.value_or("");
  PF_TRY(ff, r.opt_string("fp8_failure"));
  p.fp8_failure = ff.value_or("");
  PF_TRY(source, r.string("source"));
  p.source = source;
  PF_TRY(npu_rules, parse_npu_memory_rules(r, origin, id, p));
  (void)npu_rules;
  PF_TRY(graph_rules, parse_graph_capture_rules(r, origin, id, p));
  (void)graph_rules;
  return p;
}

// One mxfp4_layouts[] record, attached to every profile of its engine whose version range overlaps its own.
Status parse_mxfp4_layout(const Json& item, const std::string& origin, EngineCatalog& catalog) {
  JsonObject r(item, origin, "mxfp4_layouts[]");
  PF_TRY(keys, r.only_keys({"engine", "version_min", "version_max", "devices", "families", "backend", "pad_intermediate", "pad_hidden", "scale_copy_pad_n", "bias_fp32", "source"}));
  (void)keys;
  Mxfp4Layout l;
  PF_TRY(engine, r.string("engine"));
  PF_TRY(vmin, r.string("version_min"));
  const auto layout_min = parse_version(vmin);
  if (!layout_min) return make_error(ErrorKind::corrupt, format("%s: mxfp4_layouts: bad version_min %s", origin.c_str(), vmin.c_str()), origin);
  PF_TRY(vmax, r.opt_string("version_max"));
  std::optional<Version> layout_max;
  if (vmax) {
    layout_max = parse_version(*vmax);
    if (!layout_max || *layout_max < *layout_min)
      return make_error(ErrorKind::corrupt, format("%s: mxfp4_layouts: bad version_max %s", origin.c_str(), vmax->c_str()), origin);
  }
  for (const char* key : {"devices", "families"}) {
    PF_TRY(list_json, r.array(key));
    for (const auto& x : *list_json) {
      if (!x.is_string()) return make_error(ErrorKind::corrupt, format("%s: mxfp4_layouts: %s: expected strings", origin.c_str(), key), origin);
      (std::string(key) == "devices" ? l.devices : l.families).push_back(x.get<std::string>());
    }
  }
  PF_TRY(backend, r.string("backend"));
  l.backend = backend;
  PF_TRY(pi, r.int_("pad_intermediate"));
  PF_TRY(ph, r.int_("pad_hidden"));
  PF_TRY(pn, r.int_("scale_copy_pad_n"));
  if (pi < 1 || ph < 1 || pn < 0 || pi > 4096 || ph > 4096 || pn > 4096)
    return make_error(ErrorKind::corrupt, format("%s: mxfp4_layouts: paddings must be in [1, 4096]", origin.c_str()), origin);
  l.pad_intermediate = pi;
  l.pad_hidden = ph;
  l.scale_copy_pad_n = pn;
  PF_TRY(b32, r.opt_bool("bias_fp32"));
  l.bias_fp32 = b32.value_or(false);
  PF_TRY(source, r.string("source"));
  l.source = source;
  // A layout belongs to the profiles whose version range overlaps its own (profiles are split where the
  // layout changes, so no profile straddles two layouts of one device).
  for (auto& p : catalog.profiles)
    if (p.engine == engine && *layout_min <= p.version_max && (!layout_max || p.version_min <= *layout_max)) p.mxfp4_layouts.push_back(l);
  return Ok{};
}

// A record's engine and version range (version_min <= version_max), shared by the per-engine record lists.
struct RecordRange {
  std::string engine;
  Version min, max;
};
Expected<RecordRange> read_record_range(JsonObject& r, const std::string& origin, const char* list) {
  PF_TRY(engine, r.string("engine"));
  PF_TRY(range, read_version_range(r));
  if (!range) {
    PF_TRY(vmin, r.string("version_min"));
    return make_error(ErrorKind::corrupt, format("%s: %s[%s %s]: bad version range", origin.c_str(), list, engine.c_str(), vmin.c_str()), origin);
  }
  return RecordRange{engine, range->first, range->second};
}

// One hybrid_group_padding[] record, attached to every profile of its engine whose version range overlaps its own.
Status parse_group_padding(const Json& item, const std::string& origin, EngineCatalog& catalog) {
  JsonObject r(item, origin, "hybrid_group_padding[]");
  PF_TRY(keys, r.only_keys({"engine", "version_min", "version_max", "ratio", "source"}));
  (void)keys;
  PF_TRY(range, read_record_range(r, origin, "hybrid_group_padding"));
  const std::string& engine = range.engine;
  const std::string vmin = range.min.text();
  PF_TRY(ratio, r.number("ratio"));
  if (!(ratio >= 1.0 && ratio <= 4.0))
    return make_error(ErrorKind::corrupt, format("%s: hybrid_group_padding[%s %s]: ratio %.3g is outside 1-4", origin.c_str(), engine.c_str(), vmin.c_str(), ratio), origin);
  PF_TRY(source, r.string("source"));
  const EngineProfile::GroupPadding g{range.min, range.max, ratio, source};
  for (auto& p : catalog.profiles)
    if (p.engine == engine && versions_overlap(g, p)) p.hybrid_group_paddings.push_back(g);
  return Ok{};
}

// One quantization_auto_detect[] record, attached to every profile of its engine whose version range overlaps its own.
Status parse_auto_detect(const Json& item, const std::string& origin, EngineCatalog& catalog) {
  JsonObject r(item, origin, "quantization_auto_detect[]");
  PF_TRY(keys, r.only_keys({"engine", "version_min", "version_max", "trigger", "method", "local_paths_only", "source"}));
  (void)keys;
  PF_TRY(range, read_record_range(r, origin, "quantization_auto_detect"));
  const std::string& engine = range.engine;
  const std::string vmin = range.min.text();
  PF_TRY(trigger, r.string("trigger"));
  if (trigger != "descriptor_file" && trigger != "config_quantization_config" && trigger != "config_quantization_config_without_quant_method")
    return make_error(ErrorKind::corrupt,
                      format("%s: quantization_auto_detect[%s %s]: trigger '%s': expected descriptor_file, config_quantization_config or "
                             "config_quantization_config_without_quant_method",
                             origin.c_str(), engine.c_str(), vmin.c_str(), trigger.c_str()),
                      origin);
  PF_TRY(method, r.string("method"));
  PF_TRY(local, r.opt_bool("local_paths_only"));
  PF_TRY(source, r.string("source"));
  if (method.empty() || source.empty())
    return make_error(ErrorKind::corrupt, format("%s: quantization_auto_detect[%s %s]: empty method or source", origin.c_str(), engine.c_str(), vmin.c_str()), origin);
  const QuantizationAutoDetect a{range.min, range.max, trigger, method, local.value_or(false), source};
  for (auto& p : catalog.profiles)
    if (p.engine == engine && versions_overlap(a, p)) p.quantization_auto_detects.push_back(a);
  return Ok{};
}

}  // namespace

Expected<EngineCatalog> parse_engine_catalog(const Json& root, const std::string& origin) {
  EngineCatalog catalog;
  catalog.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_keys, top.only_keys({"schema_version", "note", "profiles", "hybrid_group_padding", "overheads", "mxfp4_layouts", "quantization_auto_detect"}));
  (void)top_keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(list, top.array("profiles"));
  for (const auto& item : *list) {
    PF_TRY(p, parse_engine_profile(item, origin));
    catalog.profiles.push_back(std::move(p));
  }
  if (const Json* layouts = top.find("mxfp4_layouts"); layouts && layouts->is_array()) {
    for (const auto& item : *layouts) {
      PF_TRY(ok, parse_mxfp4_layout(item, origin, catalog));
      (void)ok;
    }
  }
  if (const Json* paddings = top.find("hybrid_group_padding"); paddings && paddings->is_array()) {
    for (const auto& item : *paddings) {
      PF_TRY(ok, parse_group_padding(item, origin, catalog));
      (void)ok;
    }
  }
  if (const Json* detects = top.find("quantization_auto_detect"); detects && detects->is_array()) {
    for (const auto& item : *detects) {
      PF_TRY(ok, parse_auto_detect(item, origin, catalog));
      (void)ok;
    }
  }
  // Issue 15: an engine's newer version range cannot have come out before an older one (the evidence date takes the
  // newest profile released by then).
  for (const auto& older : catalog.profiles) {
    for (const auto& newer : catalog.profiles) {
      if (older.engine != newer.engine || !(older.version_max < newer.version_min) || !older.first_release || !newer.first_release) continue;
      if (newer.first_release->date < older.first_release->date)
        return make_error(ErrorKind::corrupt,
                          format("%s: profiles[%s].first_release.date %s is before profiles[%s].first_release.date %s, an older version range",
                                 origin.c_str(), newer.id.c_str(), newer.first_release->date_text.c_str(), older.id.c_str(),
                                 older.first_release->date_text.c_str()),
                          origin);
    }
  }
  // The ratio of a profile's newest version until select_engine picks the requested one.
  for (auto& p : catalog.profiles) apply_group_padding(p, p.version_max);
  if (const Json* list2 = top.find("overheads"); list2 && list2->is_array()) {
    for (const auto& item : *list2) {
      PF_TRY(o, parse_overheads(item, origin));
      catalog.overheads.push_back(o);
    }
  }
  return catalog;
}

Expected<EngineCatalog> load_engine_catalog() {
  PF_TRY(json, parse_json(std::string(embedded_data("engines/engines.json")), "data/engines/engines.json"));
  return parse_engine_catalog(json, "data/engines/engines.json");
}

Expected<EngineProfile> select_engine(const EngineCatalog& catalog, const std::string& engine_raw, const std::string& version_raw) {
  const auto [engine, version_text] = split_engine_text(engine_raw, version_raw);
  const auto names = catalog.engines();
  if (std::find(names.begin(), names.end(), engine) == names.end()) {
    std::string message = format("unknown engine '%s'", one_line(engine, 60).c_str());
    const auto near = nearest_names(engine, names);
    if (!near.empty()) message += "; did you mean " + near.front();
    message += " (preflight engines lists all)";
    return make_error(ErrorKind::not_found, message, engine);
  }
  const EngineProfile* newest = nullptr;
  for (const auto& p : catalog.profiles) {
    if (p.engine != engine) continue;
    if (!newest || newest->version_max < p.version_max) newest = &p;
  }
  if (trim(version_text).empty()) return *newest;
  const auto v = parse_version(version_text, engine);
  if (!v) return make_error(ErrorKind::invalid_argument, format("cannot read a version in '%s' (expected X.Y[.Z])", one_line(version_text, 60).c_str()), version_text);
  for (const auto& p : catalog.profiles) {
    if (p.engine == engine && covers_version(p, *v)) {
      EngineProfile selected = p;
      apply_group_padding(selected, *v);
      selected.version_named = *v;
      return selected;
    }
  }
  // ux31: the known versions' whole range first ("0.7.0 - 0.26.99"), then the profiles' ranges.
  std::string known;
  const EngineProfile* oldest = nullptr;
  for (const auto& p : catalog.profiles) {
    if (p.engine != engine) continue;
    known += (known.empty() ? "" : ", ") + p.version_min.text() + "-" + p.version_max.text();
    if (!oldest || p.version_min < oldest->version_min) oldest = &p;
  }
  return make_error(ErrorKind::not_found,
                    format("%s %s is not in the engine catalogue, which knows %s %s - %s (profiles %s)", engine.c_str(), v->text().c_str(), engine.c_str(),
                           oldest->version_min.text().c_str(), newest->version_max.text().c_str(), known.c_str()),
                    version_text);
}

}  // namespace preflight::engine
