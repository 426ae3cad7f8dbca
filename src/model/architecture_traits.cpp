#include "model/architecture_traits.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>

#include "base/embedded.hpp"
#include "base/units.hpp"

namespace preflight::model {

const ArchitectureTraits* TraitsCatalog::find(const std::string& architecture) const {
  for (const auto& e : entries) {
    if (e.id == architecture) return &e;
  }
  return nullptr;
}

Expected<TraitsCatalog> parse_traits_catalog(const Json& root, const std::string& origin) {
  TraitsCatalog catalog;
  JsonObject top(root, origin);
  PF_TRY(top_keys, top.only_keys({"schema_version", "note", "architectures"}));  // issue 15 (v0eng29)
  (void)top_keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(list, top.array("architectures"));
  for (const auto& item : *list) {
    JsonObject rec(item, origin, "architectures[]");
    PF_TRY(allowed, rec.only_keys({"id", "mlp", "qkv_bias", "qk_norm", "attention_bias_covers", "attn_output_gate", "shared_expert_gate",
                                   "attention_sinks", "expert_bias", "router_bias", "sliding_window_pattern_default",
                                   "mamba_ssm_dtype_default", "vision", "speculative_drafter", "source"}));
    (void)allowed;
    ArchitectureTraits t;
    PF_TRY(id, rec.string("id"));
    t.id = id;
    JsonObject named(item, origin, "architectures[" + id + "]");
    PF_TRY(source, named.string("source"));
    t.source = source;
    PF_TRY(mlp, named.string("mlp"));
    if (mlp != "gated" && mlp != "plain") return make_error(ErrorKind::corrupt, format("%s: %s: mlp must be gated or plain", origin.c_str(), id.c_str()), origin);
    t.mlp = mlp == "gated" ? MlpKind::gated : MlpKind::plain;
    PF_TRY(qkv_bias, named.opt_bool("qkv_bias"));
    t.qkv_bias = qkv_bias.value_or(false);
    PF_TRY(qk_norm, named.opt_bool("qk_norm"));
    t.qk_norm = qk_norm.value_or(false);
    PF_TRY(covers, named.opt_string("attention_bias_covers"));
    t.attention_bias_covers_o = covers.value_or("qkvo") == "qkvo";
    PF_TRY(gate, named.opt_bool("attn_output_gate"));
    t.attn_output_gate = gate.value_or(false);
    PF_TRY(seg, named.opt_bool("shared_expert_gate"));
    t.shared_expert_gate = seg.value_or(false);
    PF_TRY(sinks, named.opt_bool("attention_sinks"));
    t.attention_sinks = sinks.value_or(false);
    PF_TRY(eb, named.opt_bool("expert_bias"));
    t.expert_bias = eb.value_or(false);
    PF_TRY(rb, named.opt_bool("router_bias"));
    t.router_bias = rb.value_or(false);
    PF_TRY(swp, named.opt_int("sliding_window_pattern_default"));
    t.sliding_window_pattern_default = swp.value_or(0);
    PF_TRY(ssm, named.opt_string("mamba_ssm_dtype_default"));
    t.mamba_ssm_dtype_default = ssm.value_or("");
    PF_TRY(drafter, named.opt_bool("speculative_drafter"));
    t.speculative_drafter = drafter.value_or(false);
    PF_TRY(vision, named.string("vision"));
    if (vision == "none") t.vision = VisionKind::none;
    else if (vision == "qwen3_vl") t.vision = VisionKind::qwen3_vl;
    else if (vision == "qwen2_5_vl") t.vision = VisionKind::qwen2_5_vl;
    else if (vision == "generic_vit") t.vision = VisionKind::generic_vit;
    else return make_error(ErrorKind::corrupt, format("%s: %s: unknown vision kind %s", origin.c_str(), id.c_str(), vision.c_str()), origin);
    if (catalog.find(id)) return make_error(ErrorKind::corrupt, format("%s: duplicate id %s", origin.c_str(), id.c_str()), origin);
    catalog.entries.push_back(std::move(t));
  }
  return catalog;
}

namespace {

constexpr const char* k_traits_file = "architectures/traits.json";

// The record of `architecture` parsed alone, as the whole file's parser reads it; nullopt when the index does not
// hold it or it does not parse to one entry.
std::optional<ArchitectureTraits> parse_indexed_traits(const std::string& architecture) {
  for (const EmbeddedRecord& record : embedded_records(k_traits_file, "architectures")) {
    if (record.id != architecture) continue;
    const std::string_view text = embedded_record_text(k_traits_file, record);
    if (text.empty()) return std::nullopt;
    std::string one = "{\"schema_version\":1,\"architectures\":[";
    one.append(text);
    one += "]}";
    auto json = parse_json(one, "data/architectures/traits.json");
    if (!json) return std::nullopt;
    auto parsed = parse_traits_catalog(*json, "data/architectures/traits.json");
    if (!parsed || parsed->entries.size() != 1) return std::nullopt;
    return parsed->entries.front();
  }
  return std::nullopt;
}

}  // namespace

const TraitsCatalog& builtin_traits() {
  static const TraitsCatalog catalog = [] {
    auto json = parse_json(std::string(embedded_data(k_traits_file)), "data/architectures/traits.json");
    if (!json) return TraitsCatalog{};
    auto parsed = parse_traits_catalog(*json, "data/architectures/traits.json");
    return parsed ? *parsed : TraitsCatalog{};
  }();
  return catalog;
}

const ArchitectureTraits* find_builtin_traits(const std::string& architecture) {
  static std::mutex mutex;
  static std::map<std::string, std::optional<ArchitectureTraits>, std::less<>> parsed;  // nodes stay put: pointers hold
  const std::lock_guard lock(mutex);
  if (const auto it = parsed.find(architecture); it != parsed.end()) return it->second ? &*it->second : nullptr;
  const auto records = embedded_records(k_traits_file, "architectures");
  const bool indexed = std::any_of(records.begin(), records.end(), [&](const EmbeddedRecord& r) { return r.id == architecture; });
  std::optional<ArchitectureTraits> one = parse_indexed_traits(architecture);
  if (!one && (indexed || records.empty())) {
    if (const ArchitectureTraits* whole = builtin_traits().find(architecture)) one = *whole;
  }
  const std::optional<ArchitectureTraits>& kept = parsed.emplace(architecture, std::move(one)).first->second;
  return kept ? &*kept : nullptr;
}

}  // namespace preflight::model
