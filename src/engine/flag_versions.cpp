#include "engine/flag_versions.hpp"

#include <algorithm>
#include <cctype>

#include "base/embedded.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

const FlagVersions* FlagVersionCatalog::find(const std::string& flag) const {
  for (const auto& r : records)
    if (r.flag == flag) return &r;
  return nullptr;
}

namespace {

// quant34: the optional "speculative_legacy" section: {note, keys: [{key, flag}], methods: [{id, methods, version_min,
// speculative_model, model_types, required, source}]}.
Status parse_legacy_speculative(const JsonObject& top, const std::string& origin, FlagVersionCatalog& out) {
  const Json* section = top.find("speculative_legacy");
  if (!section) return Ok{};
  const std::string where = origin + ": speculative_legacy";
  if (!section->is_object()) return make_error(ErrorKind::corrupt, where + ": expected an object", origin);
  JsonObject legacy(*section, origin, "speculative_legacy.");
  PF_TRY(keys_ok, legacy.only_keys({"note", "keys", "methods"}));
  (void)keys_ok;
  PF_TRY(keys, legacy.array("keys"));
  for (const auto& k : *keys) {
    if (!k.is_object()) return make_error(ErrorKind::corrupt, where + ".keys: expected objects", origin);
    JsonObject entry(k, origin, "speculative_legacy.keys[].");
    PF_TRY(only, entry.only_keys({"key", "flag", "switch"}));
    (void)only;
    PF_TRY(key, entry.string("key"));
    PF_TRY(flag, entry.string("flag"));
    PF_TRY(switch_flag, entry.opt_bool("switch"));
    if (key.empty() || flag.rfind("--", 0) != 0) return make_error(ErrorKind::corrupt, where + ".keys[" + key + "]: expected a key and a flag spelled --name", origin);
    for (const auto& seen : out.legacy_speculative_keys)
      if (seen.key == key) return make_error(ErrorKind::corrupt, where + ".keys[" + key + "]: duplicate key", origin);
    out.legacy_speculative_keys.push_back({key, flag, switch_flag.value_or(false)});
  }
  return for_each_record(legacy, origin, "methods", "id", {"id", "methods", "version_min", "speculative_model", "model_types", "required", "source"},
                         [&](const JsonObject& r, const std::string& id, const std::string& at) -> Status {
    LegacySpeculativeMethod m;
    m.id = id;
    PF_TRY(methods, read_record_names(r, "methods", at, origin, EmptyWording::must_not_be_empty));
    m.methods = std::move(methods);
    PF_TRY(version_min, read_version_field(r, "version_min", at, origin));
    m.version_min = version_min;
    PF_TRY(model, r.string("speculative_model"));
    m.speculative_model = model;
    PF_TRY(types, string_list(r.find("model_types"), at + ".model_types", origin));
    m.model_types = std::move(types);
    PF_TRY(required, string_list(r.find("required"), at + ".required", origin));
    m.required = std::move(required);
    PF_TRY(source, read_list_source(r, at, origin));
    m.source = source;
    for (const auto& seen : out.legacy_speculative_methods)
      for (const auto& name : m.methods)
        if (std::find(seen.methods.begin(), seen.methods.end(), name) != seen.methods.end())
          return make_error(ErrorKind::corrupt, at + ": method '" + name + "' is also in " + seen.id, origin);
    out.legacy_speculative_methods.push_back(std::move(m));
    return Ok{};
  });
}

}  // namespace

Expected<FlagVersionCatalog> parse_flag_versions(const Json& root, const std::string& origin) {
  FlagVersionCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records", "speculative_legacy"}));
  (void)top_ok;
  PF_TRY(legacy_ok, parse_legacy_speculative(top, origin, out));
  (void)legacy_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "short", "version_min", "version_max", "replacement", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    FlagVersions rec;
    rec.flag = id;
    auto read_version = [&](const std::string& key, Version& into) -> Status {
      PF_TRY(v, read_version_field(r, key, where, origin));
      into = v;
      return Ok{};
    };
    PF_TRY(lo, read_version("version_min", rec.version_min));
    (void)lo;
    // No version_max: the flag is still there (the multi-node DP flags); it then needs no replacement.
    const bool bounded = r.has("version_max");
    rec.version_max = Version{99, 0, 0};
    if (bounded) {
      PF_TRY(hi, read_version("version_max", rec.version_max));
      (void)hi;
    }
    if (r.has("short")) {
      PF_TRY(short_name, r.string("short"));
      if (!short_name.empty() && (short_name.size() < 2 || short_name[0] != '-' || short_name[1] == '-'))
        return make_error(ErrorKind::corrupt, where + ": short '" + short_name + "' is not spelled -name", origin);
      rec.short_name = short_name;
    }
    if (id.size() < 3 || id.rfind("--", 0) != 0) return make_error(ErrorKind::corrupt, where + ": id is not spelled --name", origin);
    if (rec.version_max < rec.version_min)
      return make_error(ErrorKind::corrupt, where + ": version_max " + rec.version_max.text() + " is below version_min " + rec.version_min.text(), origin);
    if (bounded || r.has("replacement")) {
      PF_TRY(replacement, read_record_text(r, "replacement", where, origin, EmptyWording::must_not_be_empty));
      rec.replacement = replacement;
    }
    PF_TRY(source, read_list_source(r, where, origin));
    rec.source = source;
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  if (out.records.empty()) return make_error(ErrorKind::corrupt, origin + ": records is empty", origin);
  return out;
}

const Expected<FlagVersionCatalog>& shipped_flag_versions() {
  static const Expected<FlagVersionCatalog> catalog = []() -> Expected<FlagVersionCatalog> {
    const std::string origin = "data/engines/flag_versions.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/flag_versions.json")), origin));
    return parse_flag_versions(json, origin);
  }();
  return catalog;
}

std::string unrecognized_flags_refusal(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version,
                                       const std::vector<GivenFlag>& given) {
  if (engine_name != "vllm" && engine_name != "vllm-ascend") return "";
  std::string tokens;
  for (const auto& g : given) {
    const FlagVersions* rec = catalog.find(g.flag);
    if (!rec || covers_version(*rec, version)) continue;
    tokens += " " + g.flag + (g.value.empty() ? "" : " " + g.value);
  }
  return tokens.empty() ? "" : "vllm: error: unrecognized arguments:" + tokens;
}

namespace {

// The config's method, else the one vLLM's SpeculativeConfig infers from the drafter's name (speculative_method_from_model).
std::string speculative_method_of(const Json& config) {
  if (const auto m = config.find("method"); m != config.end() && m->is_string()) return m->get<std::string>();
  const auto model = config.find("model");
  if (model == config.end() || !model->is_string()) return "";
  return speculative_method_from_model(model->get<std::string>());
}

std::string json_scalar_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::string speculative_method_from_model(const std::string& drafter) {
  std::string lower = drafter;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("eagle3") != std::string::npos ? "eagle3" : lower.find("eagle") != std::string::npos ? "eagle" : "draft_model";
}

Expected<std::vector<GivenFlag>> speculative_serve_args(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version,
                                                        const std::string& config_text, const std::string& model_type) {
  const FlagVersions* modern = catalog.find("--speculative-config");
  if ((engine_name != "vllm" && engine_name != "vllm-ascend") || !modern || modern->version_min <= version) return std::vector<GivenFlag>{{"--speculative-config", config_text}};
  const Json config = Json::parse(config_text, nullptr, false);
  if (config.is_discarded() || !config.is_object())
    return make_error(ErrorKind::invalid_argument, "--speculative-config: expected a JSON object, found '" + config_text.substr(0, 200) + "'");
  const std::string method = speculative_method_of(config);
  const std::string at = engine_name + " " + version.text();
  const std::string before = "vLLM before " + modern->version_min.text() + " has no --speculative-config and takes V0's --speculative-model / --num-speculative-tokens";
  const LegacySpeculativeMethod* form = nullptr;
  for (const auto& m : catalog.legacy_speculative_methods)
    if (std::find(m.methods.begin(), m.methods.end(), method) != m.methods.end()) form = &m;
  if (!form) return make_error(ErrorKind::unsupported, "speculative method '" + method + "' on " + at + ": " + before + ", which serve no '" + method + "' (" + catalog.origin + ")");
  if (version < form->version_min)
    return make_error(ErrorKind::unsupported, "speculative method '" + method + "' on " + at + ": " + before + ", and V0 runs it from " + form->version_min.text() + " (" +
                                                  form->source + "; " + catalog.origin + ")");
  if (!form->model_types.empty() && std::find(form->model_types.begin(), form->model_types.end(), model_type) == form->model_types.end()) {
    std::string types;
    for (const auto& t : form->model_types) types += (types.empty() ? "" : ", ") + t;
    return make_error(ErrorKind::unsupported, "speculative method '" + method + "' on " + at + ": " + before + ", whose " + form->id + " form runs for model_type " + types +
                                                  " only, not " + (model_type.empty() ? "(none)" : model_type) + " (" + form->source + "; " + catalog.origin + ")");
  }
  const auto flag_of = [&](const std::string& key) -> const LegacySpeculativeKey* {
    const auto it = std::find_if(catalog.legacy_speculative_keys.begin(), catalog.legacy_speculative_keys.end(), [&](const auto& k) { return k.key == key; });
    return it == catalog.legacy_speculative_keys.end() ? nullptr : &*it;
  };
  for (const auto& key : form->required)
    if (!config.contains(key)) {
      const LegacySpeculativeKey* flag = flag_of(key);
      return make_error(ErrorKind::unsupported, "speculative method '" + method + "' on " + at + ": " + before + ", and its " + form->id + " form needs \"" + key +
                                                    "\" in --speculative-config" + (flag ? " (V0's " + flag->flag + ")" : std::string()) + " (" + form->source + "; " +
                                                    catalog.origin + ")");
    }
  const auto no_flag = [&](const std::string& key) {
    return make_error(ErrorKind::unsupported, "--speculative-config key \"" + key + "\" on " + at + ": " + before + ", and none of V0's flags takes it (" + catalog.origin + ")");
  };
  std::vector<GivenFlag> out;
  if (!form->speculative_model.empty()) {  // the drafter: the config's "model", or a fixed value ('[ngram]')
    const auto model = config.find("model");
    const bool named = form->speculative_model.find("{model}") != std::string::npos;
    if (named && (model == config.end() || !model->is_string()))
      return make_error(ErrorKind::unsupported, "speculative method '" + method + "' on " + at + ": " + before + ", which needs the drafter's \"model\" (" + catalog.origin + ")");
    const LegacySpeculativeKey* flag = flag_of("model");
    if (!flag) return no_flag("model");
    out.push_back({flag->flag, named ? model->get<std::string>() : form->speculative_model});
  }
  for (const auto& [key, value] : config.items()) {
    if (key == "method" || key == "model" || value.is_null()) continue;
    const LegacySpeculativeKey* flag = flag_of(key);
    if (!flag) return no_flag(key);
    if (flag->switch_flag) {  // store_true: the flag alone for true, nothing for false
      if (value.is_boolean() && value.get<bool>()) out.push_back({flag->flag, ""});
      continue;
    }
    out.push_back({flag->flag, json_scalar_text(value)});
  }
  return out;
}

std::string flag_version_refusal(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& flag,
                                 const std::string& as_written) {
  if (engine_name != "vllm" && engine_name != "vllm-ascend") return "";
  const FlagVersions* rec = catalog.find(flag);
  if (!rec || covers_version(*rec, version)) return "";
  const std::string range = rec->version_max.major >= 99 ? "from " + rec->version_min.text() : rec->version_min.text() + " to " + rec->version_max.text();
  return "vllm serve: error: unrecognized arguments: " + as_written + " (" + engine_name + " " + version.text() + " has no " + flag + "; vLLM has it " + range +
         (rec->replacement.empty() ? "" : "; this version takes " + rec->replacement) + "; " + catalog.origin + ")";
}

}  // namespace preflight::engine
