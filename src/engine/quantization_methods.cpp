#include "engine/quantization_methods.hpp"
#include "engine/speculative_quantization.hpp"

#include <algorithm>

#include "base/embedded.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

namespace {

bool contains(const std::vector<std::string>& list, const std::string& s) { return std::find(list.begin(), list.end(), s) != list.end(); }

bool vllm_family(const std::string& engine) { return engine == "vllm" || engine == "vllm-ascend"; }

// Python's repr of a str, as argparse quotes the refused value: single quotes unless the text holds one and no double quote.
std::string python_repr(const std::string& s) {
  const char quote = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char c : s) {
    if (c == '\\' || c == quote) out += '\\';
    out += c;
  }
  return out + quote;
}

}  // namespace

Expected<QuantizationMethodCatalog> parse_quantization_methods(const Json& root, const std::string& origin) {
  QuantizationMethodCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "lists", "plugin_methods", "checkpoint_overrides"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "lists", "id", {"id", "version_min", "version_max", "parser", "methods", "deprecated", "choices", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    QuantizationMethodList rec;
    rec.id = id;
    PF_TRY(range, read_list_versions(r, where, origin, OrderWording::plain));
    rec.version_min = range.first;
    rec.version_max = range.second;
    PF_TRY(parser, r.string("parser"));
    if (parser == "argparse") rec.parser = QuantizationParser::argparse;
    else if (parser == "model_config") rec.parser = QuantizationParser::model_config;
    else return make_error(ErrorKind::corrupt, where + ": parser '" + parser + "' is not argparse or model_config", origin);
    if (const QuantizationMethodList* other = overlapping_record(out.lists, rec))
      return make_error(ErrorKind::corrupt, where + ": its version range overlaps lists[" + other->id + "]", origin);
    PF_TRY(methods, read_record_names(r, "methods", where, origin, EmptyWording::is_empty));
    PF_TRY(choices, r.string("choices"));
    for (const auto& m : methods)
      if (choices.find(python_repr(m)) == std::string::npos)
        return make_error(ErrorKind::corrupt, where + ": choices does not print method '" + m + "'", origin);
    rec.methods = methods;
    rec.choices = choices;
    PF_TRY(deprecated, string_list(r.find("deprecated"), where + ".deprecated", origin));
    if (!deprecated.empty() && rec.parser != QuantizationParser::model_config)
      return make_error(ErrorKind::corrupt, where + ": deprecated needs parser model_config (vLLM checks it in ModelConfig from v0.14.0)", origin);
    rec.deprecated = deprecated;
    PF_TRY(source, read_record_text(r, "source", where, origin, EmptyWording::is_empty));
    rec.source = source;
    out.lists.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  if (out.lists.empty()) return make_error(ErrorKind::corrupt, origin + ": lists is empty", origin);
  PF_TRY(plugins, top.array("plugin_methods"));
  for (const auto& item : *plugins) {
    JsonObject pre(item, origin, "plugin_methods[]");
    PF_TRY(method, pre.string("method"));
    const std::string where = origin + ": plugin_methods[" + method + "]";
    JsonObject r(item, origin, "plugin_methods[" + method + "]");
    PF_TRY(keys, r.only_keys({"method", "engine", "version_min", "choice", "source"}));
    (void)keys;
    PluginQuantizationMethod rec;
    rec.method = method;
    PF_TRY(engine, r.string("engine"));
    if (!vllm_family(engine)) return make_error(ErrorKind::corrupt, where + ": engine '" + engine + "' is not vllm or vllm-ascend", origin);
    rec.engine = engine;
    PF_TRY(vmin, read_version_field(r, "version_min", where, origin));
    rec.version_min = vmin;
    PF_TRY(choice, r.string("choice"));
    if (choice != python_repr(method)) return make_error(ErrorKind::corrupt, where + ": choice '" + choice + "' does not print the method", origin);
    rec.choice = choice;
    PF_TRY(source, read_record_text(r, "source", where, origin, EmptyWording::is_empty));
    rec.source = source;
    for (const auto& l : out.lists)
      if (contains(l.methods, method)) return make_error(ErrorKind::corrupt, where + ": lists[" + l.id + "] already names it", origin);
    out.plugin_methods.push_back(std::move(rec));
  }
  if (const Json* overrides = top.find("checkpoint_overrides")) {
    if (!overrides->is_array()) return make_error(ErrorKind::corrupt, origin + ": checkpoint_overrides is not an array", origin);
    for (const auto& item : *overrides) {
      JsonObject pre(item, origin, "checkpoint_overrides[]");
      PF_TRY(method, pre.string("method"));
      const std::string where = origin + ": checkpoint_overrides[" + method + "]";
      JsonObject r(item, origin, "checkpoint_overrides[" + method + "]");
      PF_TRY(keys, r.only_keys({"method", "read_as", "version_min", "source"}));
      (void)keys;
      CheckpointMethodOverride rec;
      rec.method = method;
      PF_TRY(read_as, r.string("read_as"));
      PF_TRY(vmin, read_version_field(r, "version_min", where, origin));
      rec.read_as = read_as;
      rec.version_min = vmin;
      bool listed = false;
      for (const auto& l : out.lists) listed |= vmin <= l.version_max && contains(l.methods, read_as);
      if (!listed) return make_error(ErrorKind::corrupt, where + ": read_as '" + read_as + "' is in no list from " + vmin.text(), origin);
      PF_TRY(source, read_record_text(r, "source", where, origin, EmptyWording::is_empty));
      rec.source = source;
      out.checkpoint_overrides.push_back(std::move(rec));
    }
  }
  return out;
}

const Expected<QuantizationMethodCatalog>& shipped_quantization_methods() {
  static const Expected<QuantizationMethodCatalog> catalog = []() -> Expected<QuantizationMethodCatalog> {
    const std::string origin = "data/engines/quantization_methods.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/quantization_methods.json")), origin));
    return parse_quantization_methods(json, origin);
  }();
  return catalog;
}

std::string deprecated_quantization_refusal(const QuantizationMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                            const std::string& method, DeprecatedQuantization deprecated) {
  if (deprecated == DeprecatedQuantization::allowed || !vllm_family(engine_name) || method.empty()) return "";
  for (const auto& l : catalog.lists)
    if (covers_version(l, version) && contains(l.deprecated, method))
      return "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, ('The quantization method %s is deprecated "
             "and will be removed in future versions of vLLM. To bypass, set `--allow-deprecated-quantization`.', " +
             python_repr(method) + ")";
  return "";
}

std::string quantization_choice_refusal(const QuantizationMethodCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& method,
                                        DeprecatedQuantization deprecated) {
  if (!vllm_family(engine_name) || method.empty() || catalog.lists.empty()) return "";
  std::string added;  // the engine's plugin choices at this version, as argparse prints them after vLLM's
  bool plugin_taken = false, plugin_elsewhere = false;
  for (const auto& p : catalog.plugin_methods) {
    const bool here = p.engine == engine_name && p.version_min <= version;
    if (here) added += ", " + p.choice;
    if (p.method == method) (here ? plugin_taken : plugin_elsewhere) = true;
  }
  if (plugin_taken) return "";
  // The list covering the version, else the newest one it follows (the oldest one when it follows none).
  const QuantizationMethodList* covering = nullptr;
  const QuantizationMethodList* nearest = nullptr;
  const QuantizationMethodList* oldest = nullptr;
  for (const auto& l : catalog.lists) {
    if (covers_version(l, version)) covering = &l;
    if (l.version_min <= version && (!nearest || nearest->version_min < l.version_min)) nearest = &l;
    if (!oldest || l.version_min < oldest->version_min) oldest = &l;
  }
  if (!nearest) nearest = oldest;
  if (covering && contains(covering->methods, method)) return deprecated_quantization_refusal(catalog, engine_name, version, method, deprecated);
  if (!covering && !plugin_elsewhere) return "";
  const QuantizationMethodList& shown = covering ? *covering : *nearest;
  // vllm/config/model.py _verify_quantization from v0.13.0; pydantic wraps the ValueError of the dataclass's __post_init__.
  std::string line = shown.parser == QuantizationParser::model_config
                         ? "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Unknown quantization method: " + method +
                               ". Must be one of [" + shown.choices + added + "]."
                         : "vllm serve: error: argument --quantization/-q: invalid choice: " + python_repr(method) + " (choose from " + shown.choices + added + ")";
  if (!covering)
    line += " [the choices of " + shown.id + ": " + catalog.origin + " has no list for " + engine_name + " " + version.text() + "]";
  return line;
}

std::string speculative_quantization_choice_refusal(const QuantizationMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                                    const std::string& method) {
  if (!vllm_family(engine_name) || method.empty() || method == "None") return "";  // nullable_str: None, which the choices hold
  for (const auto& l : catalog.lists) {
    if (!covers_version(l, version)) continue;
    if (l.parser != QuantizationParser::argparse || contains(l.methods, method)) return "";
    return "vllm serve: error: argument --speculative-model-quantization: invalid choice: " + python_repr(method) + " (choose from " + l.choices + ")";
  }
  return "";
}

std::string checkpoint_method_refusal(const QuantizationMethodCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& method,
                                      DeprecatedQuantization deprecated) {
  if (!vllm_family(engine_name) || method.empty()) return "";
  const QuantizationMethodList* covering = nullptr;
  for (const auto& l : catalog.lists)
    if (covers_version(l, version)) covering = &l;
  if (!covering) return "";
  // The method the checkpoint is read as (its override from that version, else its own name) meets the deprecation check.
  if (contains(covering->methods, method)) return deprecated_quantization_refusal(catalog, engine_name, version, method, deprecated);
  for (const auto& o : catalog.checkpoint_overrides)
    if (o.method == method && o.version_min <= version && contains(covering->methods, o.read_as))
      return deprecated_quantization_refusal(catalog, engine_name, version, o.read_as, deprecated);
  std::string listed;  // ModelConfig prints QUANTIZATION_METHODS as a Python list, the platform's registrations appended
  for (const auto& m : covering->methods) listed += (listed.empty() ? "" : ", ") + python_repr(m);
  for (const auto& p : catalog.plugin_methods) {
    if (p.engine != engine_name || version < p.version_min) continue;
    if (p.method == method) return "";
    listed += ", " + p.choice;
  }
  const std::string prefix = covering->parser == QuantizationParser::model_config
                                 ? "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, "
                                 : "ValueError: ";
  return prefix + "Unknown quantization method: " + method + ". Must be one of [" + listed + "].";
}

std::string shipped_variant_refusal(const EngineProfile& engine, const std::string& variant_id, const std::string& method, DeprecatedQuantization deprecated) {
  const auto& published = shipped_quantized_catalog();
  if (published && served_without_quantization_flag(*published, variant_id)) {
    const auto& catalog = shipped_quantization_methods();
    return catalog ? checkpoint_method_refusal(*catalog, engine.engine, engine.rule_version(), method, deprecated) : std::string();
  }
  return shipped_quantization_refusal(engine, method, deprecated);
}

std::string shipped_quantization_refusal(const EngineProfile& engine, const std::string& method, DeprecatedQuantization deprecated) {
  const auto& catalog = shipped_quantization_methods();
  return catalog ? quantization_choice_refusal(*catalog, engine.engine, engine.rule_version(), method, deprecated) : std::string();
}

}  // namespace preflight::engine
