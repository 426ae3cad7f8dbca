// Reads data/variants/quant_variants.json: one record per variant, its storage as WeightFormat names
// (the same names weight_format_name gives), its kept modules and its engine rules.
#include "model/quant_variant.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>

#include "base/embedded.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"

namespace preflight::model {

namespace {

constexpr const char* k_file = "data/variants/quant_variants.json";

// "0.9.1" -> {0, 9, 1}, "0.21" -> {0, 21, 0}, "0.9.1rc2" -> {0, 9, 1}; nullopt when it does not start "X.Y".
// What sscanf's "%d.%d.%d" reads (each number after optional white space and a sign, a '.' exactly between them; a
// number is capped at INT_MAX), without its cost: issue 19 (round 11), a plan asks variant_rule once per candidate
// with TP > 1 (56,817 calls in the whole-catalogue plan, 3.8% of its instructions in sscanf).
std::optional<std::array<int, 3>> version_triple(const std::string& v) {
  std::array<int, 3> out{0, 0, 0};
  const char* p = v.c_str();
  int read = 0;
  for (; read < 3; ++read) {
    if (read > 0) {
      if (*p != '.') break;
      ++p;
    }
    while (std::isspace(static_cast<unsigned char>(*p))) ++p;
    const bool negative = *p == '-';
    if (*p == '-' || *p == '+') ++p;
    if (!std::isdigit(static_cast<unsigned char>(*p))) break;
    int64_t n = 0;
    for (; std::isdigit(static_cast<unsigned char>(*p)); ++p) n = std::min<int64_t>(n * 10 + (*p - '0'), std::numeric_limits<int>::max());
    out[static_cast<size_t>(read)] = static_cast<int>(negative ? -n : n);
  }
  if (read < 2) return std::nullopt;
  return out;
}

Expected<WeightFormat> format_named(const std::string& name, const std::string& where, const std::string& origin) {
  for (size_t i = 0; i < static_cast<size_t>(WeightFormat::count_); ++i)
    if (name == weight_format_name(static_cast<WeightFormat>(i))) return static_cast<WeightFormat>(i);
  return make_error(ErrorKind::corrupt, where + ": weight format '" + name + "' is not known", origin);
}

// "weights": {"linear", "experts", "group_size", "zero_point", "g_idx", "block", "bits_per_weight", "double_quant"}.
Status read_weights(const Json& j, const std::string& where, const std::string& origin, QuantScheme& s) {
  JsonObject w(j, origin, where + ".weights");
  PF_TRY(keys, w.only_keys({"linear", "experts", "group_size", "zero_point", "g_idx", "block", "bits_per_weight", "double_quant"}));
  (void)keys;
  PF_TRY(linear, w.string("linear"));
  PF_TRY(experts, w.string("experts"));
  PF_TRY(lf, format_named(linear, where, origin));
  PF_TRY(ef, format_named(experts, where, origin));
  s.linear_format = lf;
  s.expert_format = ef;
  PF_TRY(group, w.opt_int("group_size"));
  PF_TRY(zero, w.opt_bool("zero_point"));
  PF_TRY(bits, w.opt_number("bits_per_weight"));
  s.group_size = group.value_or(0);
  s.group_zero_point = zero.value_or(false);
  PF_TRY(g_idx, w.opt_bool("g_idx"));  // GPTQ layout: qzeros even when symmetric, g_idx int32 [in]
  s.group_index = g_idx.value_or(false);
  PF_TRY(double_quant, w.opt_bool("double_quant"));  // bitsandbytes 4-bit: nested (uint8) absmax
  s.bnb_double_quant = double_quant.value_or(false);
  s.bits_per_weight = bits.value_or(0);
  if (const Json* b = w.find("block")) {
    if (!b->is_array() || b->size() != 2 || !(*b)[0].is_number_integer() || !(*b)[1].is_number_integer() || (*b)[0].get<int64_t>() <= 0 ||
        (*b)[1].get<int64_t>() <= 0)
      return make_error(ErrorKind::corrupt, where + ": weights.block: expected two positive integers", origin);
    s.block_rows = (*b)[0].get<int64_t>();
    s.block_cols = (*b)[1].get<int64_t>();
  }
  const bool packed = lf == WeightFormat::packed_bits || ef == WeightFormat::packed_bits;
  if (packed && !(s.bits_per_weight > 0 && s.bits_per_weight <= 32))
    return make_error(ErrorKind::corrupt, where + ": packed_bits needs bits_per_weight in (0, 32]", origin);
  return Ok{};
}

Expected<VariantRule> read_rule(const Json& j, const std::string& where, const std::string& origin) {
  JsonObject r(j, origin, where);
  PF_TRY(keys, r.only_keys({"engine", "families", "from_version", "before_version", "model_kind", "tensor_parallel_above", "status", "message"}));
  (void)keys;
  VariantRule rule;
  PF_TRY(engine, r.string("engine"));
  PF_TRY(families, string_list(r.find("families"), where + ".families", origin));
  PF_TRY(from, r.opt_string("from_version"));
  PF_TRY(before, r.opt_string("before_version"));
  for (const auto* bound : {&from, &before})
    if (*bound && !version_triple(**bound))
      return make_error(ErrorKind::corrupt, where + ": version bound '" + **bound + "', expected X.Y[.Z]", origin);
  PF_TRY(kind, r.opt_string("model_kind"));
  PF_TRY(tp_above, r.opt_int("tensor_parallel_above"));
  if (tp_above && *tp_above < 1) return make_error(ErrorKind::corrupt, where + ": tensor_parallel_above " + std::to_string(*tp_above) + ", expected 1 or more", origin);
  PF_TRY(status, r.string("status"));
  PF_TRY(message, r.string("message"));
  if (status != "rejected" && status != "fallback")
    return make_error(ErrorKind::corrupt, where + ": status '" + status + "', expected rejected or fallback", origin);
  if (message.empty()) return make_error(ErrorKind::corrupt, where + ": message is empty", origin);
  if (kind && *kind != "dense" && *kind != "moe") return make_error(ErrorKind::corrupt, where + ": model_kind '" + *kind + "', expected dense or moe", origin);
  rule.engine = engine;
  rule.families = families;
  rule.from_version = from.value_or("");
  rule.before_version = before.value_or("");
  rule.model_kind = kind.value_or("");
  rule.tensor_parallel_above = tp_above.value_or(0);
  rule.status = status;
  rule.message = message;
  return rule;
}

Expected<QuantVariant> read_variant(const Json& item, const std::string& origin) {
  JsonObject pre(item, origin, "variants[]");
  PF_TRY(id, pre.string("id"));
  const std::string where = origin + ": variants[" + id + "]";
  JsonObject r(item, origin, "variants[" + id + "]");
  PF_TRY(keys, r.only_keys({"id", "name", "tool", "engine_quantization", "modelslim_quant_type", "aliases", "weights", "module_formats",
                            "keep_high_precision", "layout", "descriptor", "rules", "source", "engine_aliases",
                            "lm_head_quantized"}));
  (void)keys;
  if (id.empty()) return make_error(ErrorKind::corrupt, origin + ": variants[]: id is empty", origin);
  QuantVariant v;
  v.id = id;
  PF_TRY(name, r.string("name"));
  PF_TRY(tool, r.string("tool"));
  PF_TRY(flag, r.string("engine_quantization"));
  PF_TRY(aliases, string_list(r.find("aliases"), where + ".aliases", origin));
  PF_TRY(keep, string_list(r.find("keep_high_precision"), where + ".keep_high_precision", origin));
  PF_TRY(layout, r.string("layout"));
  PF_TRY(descriptor, r.string("descriptor"));
  PF_TRY(source, r.string("source"));
  PF_TRY(slim_type, r.opt_string("modelslim_quant_type"));
  if (slim_type && flag != "ascend")
    return make_error(ErrorKind::corrupt, where + ": modelslim_quant_type needs engine_quantization 'ascend', found '" + flag + "'", origin);
  if (source.empty()) return make_error(ErrorKind::corrupt, where + ": source is empty", origin);
  v.name = name;
  v.tool = tool;
  v.engine_quantization = flag;
  for (auto& a : aliases) v.aliases.push_back(to_lower(a));
  if (const Json* by_engine = r.find("engine_aliases")) {
    if (!by_engine->is_object()) return make_error(ErrorKind::corrupt, where + ": engine_aliases: expected an object of engine -> words", origin);
    for (auto it = by_engine->begin(); it != by_engine->end(); ++it) {
      if (it.key() != "vllm" && it.key() != "vllm-ascend" && it.key() != "llama.cpp" && it.key() != "mindie")
        return make_error(ErrorKind::corrupt, where + ": engine_aliases: unknown engine '" + it.key() + "' (expected vllm, vllm-ascend, llama.cpp or mindie)", origin);
      PF_TRY(words, string_list(&*it, where + ".engine_aliases." + it.key(), origin));
      for (auto& w : words) w = to_lower(w);
      v.engine_aliases.emplace_back(it.key(), words);
    }
  }
  v.layout = layout;
  v.descriptor = descriptor;
  v.source = source;
  const Json* weights = r.find("weights");
  if (!weights || !weights->is_object()) return make_error(ErrorKind::corrupt, where + ": weights: expected an object", origin);
  PF_TRY(w_ok, read_weights(*weights, where, origin, v.scheme));
  (void)w_ok;
  if (const Json* mf = r.find("module_formats")) {
    if (!mf->is_object()) return make_error(ErrorKind::corrupt, where + ": module_formats: expected an object", origin);
    for (auto it = mf->begin(); it != mf->end(); ++it) {
      if (!it->is_string()) return make_error(ErrorKind::corrupt, where + ": module_formats." + it.key() + ": expected a format name", origin);
      PF_TRY(f, format_named(it->get<std::string>(), where + ".module_formats." + it.key(), origin));
      v.scheme.module_formats.emplace_back(it.key(), f);
    }
  }
  // Issue 16 (quant33): a variant whose tool quantizes an untied lm_head (ModelOpt's qwen3_5 recipes re-enable
  // '*lm_head*weight_quantizer'); its module_formats must then name the head's format.
  PF_TRY(head, r.opt_bool("lm_head_quantized"));
  v.scheme.lm_head_quantized = head.value_or(false);
  v.scheme.method = flag;
  v.scheme.modelslim_quant_type = slim_type.value_or("");
  v.scheme.ignore = keep;
  v.scheme.source = std::string(k_file) + " (variant " + id + ")";
  v.scheme.detail = name;
  if (v.scheme.lm_head_quantized && module_format(v.scheme, "lm_head", false) == WeightFormat::native)
    return make_error(ErrorKind::corrupt, where + ": lm_head_quantized without a module_formats entry that matches lm_head", origin);
  if (const Json* rules = r.find("rules")) {
    if (!rules->is_array()) return make_error(ErrorKind::corrupt, where + ": rules: expected an array", origin);
    for (size_t i = 0; i < rules->size(); ++i) {
      PF_TRY(rule, read_rule((*rules)[i], where + ".rules[" + std::to_string(i) + "]", origin));
      v.rules.push_back(std::move(rule));
    }
  }
  return v;
}

std::string id_key(const std::string& name) {
  std::string k = to_lower(trim(name));
  for (auto& c : k) if (c == '-') c = '_';
  return k;
}

// Whether id_key(id) == key, without building id_key(id) (issue 19: a plan looks variants up by id thousands of times).
bool same_id_key(const std::string& id, const std::string& key) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };  // what trim removes
  size_t b = 0, e = id.size();
  while (b < e && space(id[b])) ++b;
  while (e > b && space(id[e - 1])) --e;
  if (e - b != key.size()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    char c = id[b + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c == '-') c = '_';
    if (c != key[i]) return false;
  }
  return true;
}

// Whether `word` occurs in `text` with no letter or digit on either side.
bool has_word(const std::string& text, const std::string& word) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  for (size_t pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
    const bool left = pos == 0 || !is_word(text[pos - 1]) || !is_word(word.front());
    const size_t end = pos + word.size();
    const bool right = end >= text.size() || !is_word(text[end]) || !is_word(word.back());
    if (left && right) return true;
  }
  return false;
}

}  // namespace

Expected<VariantCatalog> parse_variant_catalog(const Json& root, const std::string& origin) {
  VariantCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(keys, top.only_keys({"schema_version", "note", "variants"}));
  (void)keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(list, top.array("variants"));
  for (const auto& item : *list) {
    PF_TRY(v, read_variant(item, origin));
    for (const auto& existing : out.variants)
      if (id_key(existing.id) == id_key(v.id)) return make_error(ErrorKind::corrupt, origin + ": variants[" + v.id + "]: duplicate id", origin);
    out.variants.push_back(std::move(v));
  }
  return out;
}

const Expected<VariantCatalog>& load_variant_catalog() {
  static const Expected<VariantCatalog> parsed = []() -> Expected<VariantCatalog> {
    PF_TRY(json, parse_json(std::string(embedded_data("variants/quant_variants.json")), k_file));
    return parse_variant_catalog(json, k_file);
  }();
  return parsed;
}

Expected<const QuantVariant*> find_variant(const VariantCatalog& catalog, const std::string& name) {
  const std::string key = id_key(name);
  for (const auto& v : catalog.variants)
    if (same_id_key(v.id, key)) return &v;
  std::string known;  // the list for the message only (issue 19: it was built on every lookup, found or not)
  for (const auto& v : catalog.variants) known += (known.empty() ? "" : ", ") + v.id;
  // Issue 19 (hard32): the name cut (a 100 KB one was echoed to the message limit) and the error the flag's, the catalogue
  // it was looked up in named after the list (the message began "data/variants/quant_variants.json: --variant").
  return make_error(ErrorKind::invalid_argument, "--variant: unknown variant '" + one_line(name, 60) + "'; known variants: " + known + " (" + catalog.origin + ")",
                    "--variant");
}

const QuantVariant* variant_from_text(const VariantCatalog& catalog, const std::string& text, const std::string& engine) {
  const std::string t = to_lower(trim(text));
  const QuantVariant* best = nullptr;
  size_t best_len = 0;
  bool best_engine = false;  // the best word is an engine alias: a generic word of the same length does not replace it
  for (const auto& v : catalog.variants) {
    auto consider = [&](const std::string& word, bool engine_word) {
      const bool longer = word.size() > best_len || (word.size() == best_len && engine_word && !best_engine);
      if (longer && has_word(t, word)) {
        best = &v;
        best_len = word.size();
        best_engine = engine_word;
      }
    };
    consider(to_lower(v.id), false);  // the name fit --variant and plan take
    for (const auto& alias : v.aliases) consider(alias, false);
    for (const auto& [e, words] : v.engine_aliases)
      if (!engine.empty() && e == engine)
        for (const auto& w : words) consider(w, true);
  }
  if (!best && (t.empty() || has_word(t, "not stated"))) {
    for (const auto& v : catalog.variants)
      if (!v.quantized()) return &v;
  }
  return best;
}

const QuantVariant* variant_of_checkpoint(const VariantCatalog& catalog, const QuantScheme& scheme) {
  auto norm = [](std::string m) {
    m = to_lower(m);
    for (auto& c : m) if (c == '-') c = '_';
    return m;
  };
  const std::string method = norm(scheme.method);
  auto same_storage = [&](const QuantScheme& v) {
    if (v.linear_format != scheme.linear_format || v.expert_format != scheme.expert_format) return false;
    for (const WeightFormat f : {v.linear_format, v.expert_format}) {
      const bool int_groups = f == WeightFormat::int4_group || f == WeightFormat::int8_group;
      if ((int_groups || f == WeightFormat::nvfp4 || f == WeightFormat::mxfp4) && v.group_size != scheme.group_size) return false;
      if (int_groups && (v.group_zero_point != scheme.group_zero_point || v.group_index != scheme.group_index)) return false;
      if (f == WeightFormat::fp8_block && (v.block_rows != scheme.block_rows || v.block_cols != scheme.block_cols)) return false;
      if (f == WeightFormat::bnb_nf4 && (v.group_size != scheme.group_size || v.bnb_double_quant != scheme.bnb_double_quant)) return false;
      if (f == WeightFormat::packed_bits) return false;  // GGUF presets are told apart by file type, not by a descriptor
    }
    return true;
  };
  // Issue 16: a ModelSlim export names its scheme (quant_model_description.json model_quant_type); its per-module
  // types (module_formats) would otherwise match no variant. A variant that gives that name is the checkpoint's.
  if (method == "ascend" && !scheme.modelslim_quant_type.empty())
    for (const auto& v : catalog.variants)
      if (norm(v.engine_quantization) == method && v.scheme.modelslim_quant_type == scheme.modelslim_quant_type) return &v;
  for (const auto& v : catalog.variants) {
    if (!scheme.quantized()) {
      if (!v.quantized()) return &v;
      continue;
    }
    if (!v.quantized() || !scheme.module_formats.empty()) continue;
    const std::string flag = norm(v.engine_quantization);
    if (method != flag && !(method == "modelopt" && flag.rfind("modelopt", 0) == 0)) continue;
    if (same_storage(v.scheme)) return &v;
  }
  return nullptr;
}

const VariantRule* variant_rule(const QuantVariant& variant, const std::string& status, const std::string& engine, const std::string& engine_version,
                                const std::string& device_family, bool moe, int64_t tensor_parallel) {
  // The engine's version is read at the first rule that names a version bound (issue 19: a plan asks this per candidate
  // with TP > 1, and most variants have no rule for the engine at all).
  std::optional<std::optional<std::array<int, 3>>> read;
  const auto version = [&]() -> const std::optional<std::array<int, 3>>& {
    if (!read) read = version_triple(engine_version);
    return *read;
  };
  for (const auto& r : variant.rules) {
    if (r.status != status || r.engine != engine) continue;
    if (r.tensor_parallel_above > 0 && tensor_parallel <= r.tensor_parallel_above) continue;
    if (!r.families.empty()) {
      bool listed = false;
      for (const auto& f : r.families) listed = listed || f == device_family;
      if (!listed) continue;
    }
    if (!r.model_kind.empty() && (r.model_kind == "moe") != moe) continue;
    if (!r.from_version.empty()) {
      const auto& have = version();
      const auto bound = version_triple(r.from_version);
      if (!have || !bound || *have < *bound) continue;
    }
    if (!r.before_version.empty()) {
      const auto& have = version();
      const auto bound = version_triple(r.before_version);
      if (!have || !bound || !(*have < *bound)) continue;
    }
    return &r;
  }
  return nullptr;
}

std::string variant_without_effect(const QuantVariant& v, const ModelSpec& m) {
  if (!v.quantized() || m.num_experts > 0 || v.scheme.linear_format != WeightFormat::native || v.scheme.expert_format == WeightFormat::native) return "";
  return "no effect: no MoE experts (variant " + v.id + " quantizes the routed experts only and leaves every other linear layer in the model dtype; " +
         m.id + " has no experts, so every weight loads as published: size it without --variant, or name a variant that quantizes linear layers)";
}

}  // namespace preflight::model
