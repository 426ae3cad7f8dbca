#include "engine/quantized_checkpoints.hpp"

#include <algorithm>

#include "base/case_fold.hpp"
#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

namespace {

Status check_source(const std::string& source, const std::string& where, const std::string& origin) {
  if (source.empty()) return make_error(ErrorKind::corrupt, where + ": source is empty", origin);
  return Ok{};
}

// A record's "platform": npu, cuda or any (a recipe or an in-flight rule that holds on every platform).
Expected<std::string> read_platform(JsonObject& r, const std::string& where, const std::string& origin) {
  PF_TRY(platform, r.string("platform"));
  if (platform != "npu" && platform != "cuda" && platform != "any")
    return make_error(ErrorKind::corrupt, where + ": platform '" + platform + "', expected npu, cuda or any", origin);
  return platform;
}

// One record of "conversions" or "casts" (`section`); `seen` holds the section's records read so far.
Expected<ConversionRecipe> read_recipe(const Json& item, const std::string& origin, const std::string& section, const std::vector<ConversionRecipe>& seen) {
  JsonObject pre(item, origin, section + "[]");
  PF_TRY(id, pre.string("id"));
  const std::string where = origin + ": " + section + "[" + id + "]";
  JsonObject r(item, origin, section + "[" + id + "]");
  PF_TRY(keys, r.only_keys({"id", "variant", "platform", "tool", "output_suffix", "quantization_flag", "commands", "note", "source", "model_types"}));
  (void)keys;
  for (const auto& existing : seen)
    if (existing.id == id) return make_error(ErrorKind::corrupt, where + ": duplicate id", origin);
  ConversionRecipe c;
  c.id = id;
  PF_TRY(variant, r.string("variant"));
  PF_TRY(platform, read_platform(r, where, origin));
  PF_TRY(tool, r.string("tool"));
  PF_TRY(suffix, r.string("output_suffix"));
  PF_TRY(flag, r.string("quantization_flag"));
  PF_TRY(commands, string_list(r.find("commands"), where + ".commands", origin));
  bool writes_output = false;
  for (const auto& cmd : commands) writes_output |= cmd.find("{output_dir}") != std::string::npos;
  if (!writes_output) return make_error(ErrorKind::corrupt, where + ": no command writes {output_dir}", origin);
  if (suffix.empty()) return make_error(ErrorKind::corrupt, where + ": output_suffix is empty", origin);
  PF_TRY(note, r.string("note"));
  PF_TRY(source, r.string("source"));
  PF_TRY(src_ok, check_source(source, where, origin));
  (void)src_ok;
  c.variant = variant;
  c.platform = platform;
  c.tool = tool;
  c.output_suffix = suffix;
  c.quantization_flag = flag;
  c.commands = commands;
  c.note = note;
  c.source = source;
  PF_TRY(model_types, r.opt_string("model_types"));
  c.model_types = model_types.value_or("");
  bool names_type = false;
  for (const auto& cmd : commands) names_type |= cmd.find("{model_type}") != std::string::npos;
  if (names_type != !c.model_types.empty())
    return make_error(ErrorKind::corrupt, where + (names_type ? ": a command names {model_type} and no model_types list is given" : ": model_types given and no command names {model_type}"), origin);
  return c;
}

// One word a shell passes as it is (a --model_type value is written into a command line unquoted).
bool shell_word(const std::string& n) { return !n.empty() && n.find_first_of(" '\"$`\\{}") == std::string::npos; }

// One adapter of a "model_types" record; `list` holds the adapters read so far (their ids, names and model types unique).
Expected<ModelAdapter> read_model_adapter(const Json& item, const std::string& where, const std::string& origin, const ModelTypeList& list) {
  JsonObject pre(item, origin, where + ".adapters[]");
  PF_TRY(id, pre.string("adapter"));
  const std::string at = where + ".adapters[" + id + "]";
  JsonObject r(item, origin, at);
  PF_TRY(keys, r.only_keys({"adapter", "config_model_types", "names"}));
  (void)keys;
  ModelAdapter a;
  a.id = id;
  PF_TRY(names, string_list(r.find("names"), at + ".names", origin));
  if (names.empty()) return make_error(ErrorKind::corrupt, at + ": names is empty", origin);
  if (const Json* types = r.find("config_model_types")) {
    PF_TRY(list_types, string_list(types, at + ".config_model_types", origin));
    a.config_model_types = list_types;
  }
  for (const auto& other : list.adapters) {
    if (other.id == id) return make_error(ErrorKind::corrupt, at + ": duplicate adapter", origin);
    for (const auto& t : a.config_model_types)
      if (std::find(other.config_model_types.begin(), other.config_model_types.end(), t) != other.config_model_types.end())
        return make_error(ErrorKind::corrupt, at + ": config_model_type '" + t + "' is adapter " + other.id + "'s too", origin);
  }
  for (const auto& n : names) {
    if (!shell_word(n)) return make_error(ErrorKind::corrupt, at + ": name '" + n + "' is not one shell word", origin);
    if (std::find(list.names.begin(), list.names.end(), n) != list.names.end()) return make_error(ErrorKind::corrupt, at + ": name '" + n + "' is listed twice", origin);
  }
  a.names = names;
  return a;
}

// One record of "model_types"; `seen` holds the lists read so far.
Expected<ModelTypeList> read_model_types(const Json& item, const std::string& origin, const std::vector<ModelTypeList>& seen) {
  JsonObject pre(item, origin, "model_types[]");
  PF_TRY(id, pre.string("id"));
  const std::string where = origin + ": model_types[" + id + "]";
  JsonObject r(item, origin, "model_types[" + id + "]");
  PF_TRY(keys, r.only_keys({"id", "tool", "adapters", "source"}));
  (void)keys;
  for (const auto& existing : seen)
    if (existing.id == id) return make_error(ErrorKind::corrupt, where + ": duplicate id", origin);
  ModelTypeList l;
  l.id = id;
  PF_TRY(tool, r.string("tool"));
  PF_TRY(adapters, r.array("adapters"));
  if (adapters->empty()) return make_error(ErrorKind::corrupt, where + ": adapters is empty", origin);
  for (const auto& item_a : *adapters) {
    PF_TRY(a, read_model_adapter(item_a, where, origin, l));
    l.names.insert(l.names.end(), a.names.begin(), a.names.end());
    l.adapters.push_back(std::move(a));
  }
  PF_TRY(source, r.string("source"));
  PF_TRY(src_ok, check_source(source, where, origin));
  (void)src_ok;
  l.tool = tool;
  l.source = source;
  return l;
}

// One record of "serve_plugins"; `seen` holds the records read so far (one per flag and engine).
Expected<ServePlugin> read_serve_plugin(const Json& item, const std::string& origin, const std::vector<ServePlugin>& seen) {
  JsonObject pre(item, origin, "serve_plugins[]");
  PF_TRY(id, pre.string("id"));
  const std::string where = origin + ": serve_plugins[" + id + "]";
  JsonObject r(item, origin, "serve_plugins[" + id + "]");
  PF_TRY(keys, r.only_keys({"id", "quantization_flag", "engine", "from_version", "commands", "note", "source"}));
  (void)keys;
  ServePlugin p;
  p.id = id;
  PF_TRY(flag, r.string("quantization_flag"));
  PF_TRY(engine, r.string("engine"));
  if (flag.empty()) return make_error(ErrorKind::corrupt, where + ": quantization_flag is empty", origin);
  if (engine != "vllm" && engine != "vllm-ascend") return make_error(ErrorKind::corrupt, where + ": engine '" + engine + "', expected vllm or vllm-ascend", origin);
  for (const auto& other : seen)
    if (other.id == id || (other.quantization_flag == flag && other.engine == engine))
      return make_error(ErrorKind::corrupt, where + ": duplicate id, or a second record for --quantization " + flag + " on " + engine, origin);
  PF_TRY(from, r.string("from_version"));
  if (!parse_version(from)) return make_error(ErrorKind::corrupt, where + ": from_version '" + from + "' is not a version", origin);
  PF_TRY(commands, string_list(r.find("commands"), where + ".commands", origin));
  if (commands.empty()) return make_error(ErrorKind::corrupt, where + ": commands is empty", origin);
  PF_TRY(note, r.string("note"));
  PF_TRY(source, r.string("source"));
  PF_TRY(src_ok, check_source(source, where, origin));
  (void)src_ok;
  p.quantization_flag = flag;
  p.engine = engine;
  p.from_version = from;
  p.commands = commands;
  p.note = note;
  p.source = source;
  return p;
}

// One record of "in_flight"; `seen` holds the records read so far (one per variant and platform).
Expected<InFlightQuantization> read_in_flight(const Json& item, const std::string& origin, const std::vector<InFlightQuantization>& seen) {
  JsonObject pre(item, origin, "in_flight[]");
  PF_TRY(variant, pre.string("variant"));
  const std::string where = origin + ": in_flight[" + variant + "]";
  JsonObject r(item, origin, "in_flight[" + variant + "]");
  PF_TRY(keys, r.only_keys({"variant", "platform", "quantization_flag", "published_tp_rejection", "note", "source"}));
  (void)keys;
  InFlightQuantization q;
  q.variant = variant;
  PF_TRY(platform, read_platform(r, where, origin));
  for (const auto& existing : seen)
    if (existing.variant == variant && existing.platform == platform) return make_error(ErrorKind::corrupt, where + ": duplicate variant and platform", origin);
  PF_TRY(flag, r.string("quantization_flag"));
  if (flag.empty()) return make_error(ErrorKind::corrupt, where + ": quantization_flag is empty, expected the --quantization value that quantizes at load", origin);
  if (r.find("published_tp_rejection")) {
    PF_TRY(rejection, r.string("published_tp_rejection"));
    q.published_tp_rejection = rejection;
  }
  PF_TRY(note, r.string("note"));
  PF_TRY(source, r.string("source"));
  PF_TRY(src_ok, check_source(source, where, origin));
  (void)src_ok;
  q.platform = platform;
  q.quantization_flag = flag;
  q.note = note;
  q.source = source;
  return q;
}

// One record of "no_recipe"; `seen` holds the records read so far (one per variant and platform).
Expected<MissingRecipe> read_no_recipe(const Json& item, const std::string& origin, const std::vector<MissingRecipe>& seen) {
  JsonObject pre(item, origin, "no_recipe[]");
  PF_TRY(variant, pre.string("variant"));
  const std::string where = origin + ": no_recipe[" + variant + "]";
  JsonObject r(item, origin, "no_recipe[" + variant + "]");
  PF_TRY(keys, r.only_keys({"variant", "platform", "reason", "source"}));
  (void)keys;
  PF_TRY(platform, read_platform(r, where, origin));
  for (const auto& existing : seen)
    if (existing.variant == variant && existing.platform == platform) return make_error(ErrorKind::corrupt, where + ": duplicate variant and platform", origin);
  PF_TRY(reason, r.string("reason"));
  if (reason.empty()) return make_error(ErrorKind::corrupt, where + ": reason is empty, expected why no conversion produces the variant", origin);
  PF_TRY(source, r.string("source"));
  PF_TRY(src_ok, check_source(source, where, origin));
  (void)src_ok;
  return MissingRecipe{variant, platform, reason, source};
}

}  // namespace

Expected<QuantizedCatalog> parse_quantized_catalog(const Json& root, const std::string& origin) {
  QuantizedCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(tk, top.only_keys({"schema_version", "note", "checkpoints", "conversions", "casts", "in_flight", "model_types", "serve_plugins", "no_recipe"}));
  (void)tk;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(list, top.array("checkpoints"));
  for (const auto& item : *list) {
    JsonObject pre(item, origin, "checkpoints[]");
    PF_TRY(repo, pre.string("repo"));
    const std::string where = origin + ": checkpoints[" + repo + "]";
    JsonObject r(item, origin, "checkpoints[" + repo + "]");
    PF_TRY(keys, r.only_keys({"repo", "hub", "base_model", "variant", "format", "quantization_flag", "url", "source"}));
    (void)keys;
    for (const auto& existing : out.checkpoints)
      if (to_lower(existing.repo) == to_lower(repo)) return make_error(ErrorKind::corrupt, where + ": duplicate repo", origin);
    QuantizedCheckpoint c;
    c.repo = repo;
    PF_TRY(hub, r.string("hub"));
    if (hub != "huggingface" && hub != "modelscope")
      return make_error(ErrorKind::corrupt, where + ": hub '" + hub + "', expected huggingface or modelscope", origin);
    c.hub = hub;
    PF_TRY(base, r.string("base_model"));
    PF_TRY(variant, r.string("variant"));
    PF_TRY(fmt, r.string("format"));
    PF_TRY(flag, r.string("quantization_flag"));
    PF_TRY(url, r.string("url"));
    PF_TRY(source, r.string("source"));
    if (base.empty() || variant.empty()) return make_error(ErrorKind::corrupt, where + ": base_model and variant must be set", origin);
    if (url.rfind("https://", 0) != 0) return make_error(ErrorKind::corrupt, where + ": url '" + url + "' is not an https address", origin);
    PF_TRY(src_ok, check_source(source, where, origin));
    (void)src_ok;
    c.base_model = base;
    c.variant = variant;
    c.format = fmt;
    c.quantization_flag = flag;
    c.url = url;
    c.source = source;
    out.checkpoints.push_back(std::move(c));
  }
  PF_TRY(convs, top.array("conversions"));
  for (const auto& item : *convs) {
    PF_TRY(c, read_recipe(item, origin, "conversions", out.conversions));
    out.conversions.push_back(std::move(c));
  }
  if (top.find("casts")) {
    PF_TRY(casts, top.array("casts"));
    for (const auto& item : *casts) {
      PF_TRY(c, read_recipe(item, origin, "casts", out.casts));
      if (!c.quantization_flag.empty())
        return make_error(ErrorKind::corrupt, origin + ": casts[" + c.id + "]: quantization_flag '" + c.quantization_flag + "', expected \"\" (a cast writes BF16)", origin);
      out.casts.push_back(std::move(c));
    }
  }
  if (top.find("in_flight")) {
    PF_TRY(in_flight, top.array("in_flight"));
    for (const auto& item : *in_flight) {
      PF_TRY(q, read_in_flight(item, origin, out.in_flight));
      out.in_flight.push_back(std::move(q));
    }
  }
  if (top.find("model_types")) {
    PF_TRY(lists, top.array("model_types"));
    for (const auto& item : *lists) {
      PF_TRY(l, read_model_types(item, origin, out.model_types));
      out.model_types.push_back(std::move(l));
    }
  }
  if (top.find("serve_plugins")) {
    PF_TRY(plugins, top.array("serve_plugins"));
    for (const auto& item : *plugins) {
      PF_TRY(p, read_serve_plugin(item, origin, out.serve_plugins));
      out.serve_plugins.push_back(std::move(p));
    }
  }
  if (top.find("no_recipe")) {
    PF_TRY(missing, top.array("no_recipe"));
    for (const auto& item : *missing) {
      PF_TRY(m, read_no_recipe(item, origin, out.no_recipe));
      if (const auto* c = find_conversion(out, m.variant, m.platform))
        return make_error(ErrorKind::corrupt, origin + ": no_recipe[" + m.variant + "]: conversion " + c->id + " produces it on " + c->platform, origin);
      out.no_recipe.push_back(std::move(m));
    }
  }
  for (const auto* section : {&out.conversions, &out.casts})
    for (const auto& c : *section) {
      if (c.model_types.empty()) continue;
      bool known = false;
      for (const auto& l : out.model_types) known |= l.id == c.model_types;
      if (!known) return make_error(ErrorKind::corrupt, origin + ": " + c.id + ": model_types '" + c.model_types + "' names no model_types list", origin);
    }
  return out;
}

Expected<QuantizedCatalog> load_quantized_catalog() {
  PF_TRY(json, parse_json(std::string(embedded_data("engines/quantized_checkpoints.json")), "data/engines/quantized_checkpoints.json"));
  return parse_quantized_catalog(json, "data/engines/quantized_checkpoints.json");
}

const Expected<QuantizedCatalog>& shipped_quantized_catalog() {
  static const Expected<QuantizedCatalog> shipped = load_quantized_catalog();
  return shipped;
}

const QuantizedCheckpoint* find_quantized_checkpoint(const QuantizedCatalog& catalog, const std::string& base_model, const std::string& variant) {
  for (const auto& c : catalog.checkpoints)
    if (c.variant == variant && equal_lowered(c.base_model, base_model)) return &c;
  return nullptr;
}

const ConversionRecipe* find_conversion(const QuantizedCatalog& catalog, const std::string& variant, const std::string& platform) {
  for (const auto& c : catalog.conversions)
    if (c.variant == variant && (c.platform == platform || c.platform == "any")) return &c;
  return nullptr;
}

const MissingRecipe* find_missing_recipe(const QuantizedCatalog& catalog, const std::string& variant, const std::string& platform) {
  for (const auto& m : catalog.no_recipe)
    if (m.variant == variant && (m.platform == platform || m.platform == "any")) return &m;
  return nullptr;
}

const InFlightQuantization* find_in_flight(const QuantizedCatalog& catalog, const std::string& variant, const std::string& platform) {
  for (const auto& q : catalog.in_flight)
    if (q.variant == variant && (q.platform == platform || q.platform == "any")) return &q;
  return nullptr;
}

const QuantizedCheckpoint* find_checkpoint_by_repo(const QuantizedCatalog& catalog, const std::string& repo) {
  for (const auto& c : catalog.checkpoints)
    if (equal_lowered(c.repo, repo)) return &c;
  return nullptr;
}

namespace {
const ModelTypeList* model_type_list(const QuantizedCatalog& catalog, const ConversionRecipe& recipe) {
  for (const auto& l : catalog.model_types)
    if (l.id == recipe.model_types) return &l;
  return nullptr;
}

size_t common_ending(const std::string& a, const std::string& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}
}  // namespace

const ServePlugin* find_serve_plugin(const QuantizedCatalog& catalog, const std::string& quantization_flag, const std::string& engine, const std::string& version) {
  const auto at = parse_version(version);
  for (const auto& p : catalog.serve_plugins) {
    if (p.quantization_flag != quantization_flag || p.engine != engine) continue;
    const auto from = parse_version(p.from_version);
    if (at && from && *from <= *at) return &p;
  }
  return nullptr;
}

const ModelAdapter* family_adapter(const QuantizedCatalog& catalog, const ConversionRecipe& recipe, const std::string& config_model_type) {
  const ModelTypeList* l = config_model_type.empty() ? nullptr : model_type_list(catalog, recipe);
  if (!l) return nullptr;
  for (const auto& a : l->adapters)
    if (std::find(a.config_model_types.begin(), a.config_model_types.end(), config_model_type) != a.config_model_types.end()) return &a;
  return nullptr;
}

std::optional<std::string> recipe_model_type(const QuantizedCatalog& catalog, const ConversionRecipe& recipe, const std::string& model_name,
                                             const std::string& config_model_type) {
  if (recipe.model_types.empty()) return model_name;
  const ModelTypeList* l = model_type_list(catalog, recipe);
  if (!l) return std::nullopt;
  const std::string* best = nullptr;
  for (const auto& n : l->names) {
    if (n == model_name) return n;
    if (model_name.size() > n.size() && model_name.compare(0, n.size(), n) == 0 && model_name[n.size()] == '-' && (!best || best->size() < n.size())) best = &n;
  }
  if (best) return *best;
  const ModelAdapter* a = family_adapter(catalog, recipe, config_model_type);
  if (!a) return std::nullopt;
  // The longest common ending (the size tag), then the length nearest the model's (a dense "Qwen3.5-9B" takes the dense
  // "Qwen3.5-27B", not the MoE "Qwen3.5-397B-A17B"), then the first listed.
  const auto length_gap = [&](const std::string& n) { return n.size() > model_name.size() ? n.size() - model_name.size() : model_name.size() - n.size(); };
  for (const auto& n : a->names) {
    const size_t e = common_ending(n, model_name), be = best ? common_ending(*best, model_name) : 0;
    if (!best || e > be || (e == be && length_gap(n) < length_gap(*best))) best = &n;
  }
  return *best;
}

const ConversionRecipe* find_cast(const QuantizedCatalog& catalog, const std::string& from_variant) {
  for (const auto& c : catalog.casts)
    if (c.variant == from_variant) return &c;
  return nullptr;
}

bool served_without_quantization_flag(const QuantizedCatalog& catalog, const std::string& variant) {
  size_t records = 0;
  for (const auto& c : catalog.checkpoints)
    if (c.variant == variant && ++records && !c.quantization_flag.empty()) return false;
  for (const auto& c : catalog.conversions)
    if (c.variant == variant && ++records && !c.quantization_flag.empty()) return false;
  for (const auto& q : catalog.in_flight)
    if (q.variant == variant && ++records && !q.quantization_flag.empty()) return false;
  return records > 0;
}

}  // namespace preflight::engine
