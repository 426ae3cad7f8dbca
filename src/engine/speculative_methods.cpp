#include "engine/speculative_methods.hpp"

#include <algorithm>
#include <cmath>

#include "base/embedded.hpp"
#include "base/json_writer.hpp"
#include "base/quote.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

bool SpeculativeMethodList::takes(const std::string& method) const { return std::find(methods.begin(), methods.end(), method) != methods.end(); }

namespace {

// One record's own_mtp_targets: [{model_type, method}].
Status read_own_mtp_targets(const JsonObject& r, const std::string& where, const std::string& origin, SpeculativeMethodList& list) {
  const Json* targets = r.find("own_mtp_targets");
  if (!targets) return Ok{};
  if (!targets->is_array()) return make_error(ErrorKind::corrupt, where + ": own_mtp_targets: expected an array", origin);
  for (const auto& t : *targets) {
    if (!t.is_object()) return make_error(ErrorKind::corrupt, where + ": own_mtp_targets: expected objects", origin);
    JsonObject entry(t, origin, "own_mtp_targets[].");
    PF_TRY(only, entry.only_keys({"model_type", "method"}));
    (void)only;
    PF_TRY(model_type, entry.string("model_type"));
    PF_TRY(method, entry.string("method"));
    if (model_type.empty() || (list.checked && !list.takes(method)))
      return make_error(ErrorKind::corrupt, where + ": own_mtp_targets[" + model_type + "]: an empty model_type or a method outside methods", origin);
    list.own_mtp_targets.push_back({model_type, method});
  }
  return Ok{};
}

// "'a', 'b' or 'c'", as pydantic's literal_error lists the expected values.
std::string pydantic_choices(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + ("'" + names[i] + "'");
  return out;
}

const OwnMtpTarget* own_target(const SpeculativeMethodList& list, const std::string& model_type) {
  const auto it = std::find_if(list.own_mtp_targets.begin(), list.own_mtp_targets.end(), [&](const auto& t) { return t.model_type == model_type; });
  return it == list.own_mtp_targets.end() ? nullptr : &*it;
}

bool mtp_name(const std::string& method) { return method == "mtp" || (method.size() > 4 && method.compare(method.size() - 4, 4, "_mtp") == 0); }

// The file's optional "value_checks": [{id, key, flag, minimum, choices, or_target_tp, skip_methods, version_min, version_max,
// message, source}].
Status read_value_checks(const JsonObject& top, const std::string& origin, SpeculativeMethodCatalog& out) {
  if (!top.has("value_checks")) return Ok{};
  return for_each_record(top, origin, "value_checks", "id", {"id", "key", "flag", "minimum", "choices", "or_target_tp", "skip_methods", "version_min", "version_max", "message", "source"},
                         [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    SpeculativeValueCheck c;
    c.id = id;
    PF_TRY(key, r.string("key"));
    c.key = key;
    PF_TRY(flag, r.opt_string("flag"));
    c.flag = flag.value_or("");
    PF_TRY(minimum, r.opt_int("minimum"));
    c.minimum = minimum;
    PF_TRY(choices, string_list(r.find("choices"), where + ".choices", origin));
    c.choices = std::move(choices);
    PF_TRY(or_target_tp, r.opt_bool("or_target_tp"));
    c.or_target_tp = or_target_tp.value_or(false);
    PF_TRY(skip_methods, string_list(r.find("skip_methods"), where + ".skip_methods", origin));
    c.skip_methods = std::move(skip_methods);
    PF_TRY(vmin, read_version_field(r, "version_min", where, origin));
    PF_TRY(vmax, read_version_field(r, "version_max", where, origin));
    c.version_min = vmin;
    c.version_max = vmax;
    PF_TRY(message, r.string("message"));
    PF_TRY(source, r.string("source"));
    if (key.empty() || message.find("{value}") == std::string::npos || source.empty() || (!c.minimum && c.choices.empty()) ||
        (!c.flag.empty() && c.flag.rfind("--", 0) != 0) || c.version_max < c.version_min)
      return make_error(ErrorKind::corrupt, where + ": expected a key, a minimum or choices, a message with {value}, a source, a --flag if any and a version range", origin);
    c.message = message;
    c.source = source;
    out.value_checks.push_back(std::move(c));
    return Ok{};
  });
}

// The file's optional "max_model_len_checks": [{id, version_min, version_max, skip_methods, message_draft, message_target, source}].
Status read_max_len_checks(const JsonObject& top, const std::string& origin, SpeculativeMethodCatalog& out) {
  if (!top.has("max_model_len_checks")) return Ok{};
  return for_each_record(top, origin, "max_model_len_checks", "id", {"id", "version_min", "version_max", "skip_methods", "message_draft", "message_target", "source"},
                         [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    SpeculativeMaxLenCheck c;
    c.id = id;
    PF_TRY(vmin, read_version_field(r, "version_min", where, origin));
    PF_TRY(vmax, read_version_field(r, "version_max", where, origin));
    c.version_min = vmin;
    c.version_max = vmax;
    PF_TRY(skip_methods, string_list(r.find("skip_methods"), where + ".skip_methods", origin));
    c.skip_methods = std::move(skip_methods);
    PF_TRY(draft, r.string("message_draft"));
    PF_TRY(target, r.string("message_target"));
    PF_TRY(source, r.string("source"));
    if (draft.find("{value}") == std::string::npos || draft.find("{draft}") == std::string::npos || target.find("{value}") == std::string::npos ||
        target.find("{target}") == std::string::npos || source.empty() || c.version_max < c.version_min)
      return make_error(ErrorKind::corrupt, where + ": expected message_draft with {value} and {draft}, message_target with {value} and {target}, a source and a version range", origin);
    PF_TRY(disjoint, check_lists_disjoint(out.max_len_checks, c, where, origin));
    (void)disjoint;
    c.message_draft = std::move(draft);
    c.message_target = std::move(target);
    c.source = std::move(source);
    out.max_len_checks.push_back(std::move(c));
    return Ok{};
  });
}

// attack37: the file's optional "ngram_window_checks": [{id, version_min, version_max, methods, missing, max_first,
// field_minimum, message_min_low, message_max_low, message_order, source}]; the low messages are absent where
// field_minimum says pydantic's words.
Status read_ngram_window_checks(const JsonObject& top, const std::string& origin, SpeculativeMethodCatalog& out) {
  if (!top.has("ngram_window_checks")) return Ok{};
  return for_each_record(top, origin, "ngram_window_checks", "id",
                         {"id", "version_min", "version_max", "methods", "missing", "max_first", "field_minimum", "message_min_low", "message_max_low", "message_order", "source"},
                         [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    SpeculativeNgramWindowCheck c;
    c.id = id;
    PF_TRY(vmin, read_version_field(r, "version_min", where, origin));
    PF_TRY(vmax, read_version_field(r, "version_max", where, origin));
    c.version_min = vmin;
    c.version_max = vmax;
    PF_TRY(methods, string_list(r.find("methods"), where + ".methods", origin));
    c.methods = std::move(methods);
    PF_TRY(missing, r.string("missing"));
    c.missing = missing;
    PF_TRY(max_first, r.opt_bool("max_first"));
    c.max_first = max_first.value_or(false);
    PF_TRY(field_minimum, r.opt_bool("field_minimum"));
    c.field_minimum = field_minimum.value_or(false);
    PF_TRY(min_low, r.opt_string("message_min_low"));
    PF_TRY(max_low, r.opt_string("message_max_low"));
    PF_TRY(order, r.string("message_order"));
    PF_TRY(source, r.string("source"));
    c.message_min_low = min_low.value_or("");
    c.message_max_low = max_low.value_or("");
    const bool lows = c.field_minimum ? c.message_min_low.empty() && c.message_max_low.empty()
                                      : c.message_min_low.find("{min}") != std::string::npos && c.message_max_low.find("{max}") != std::string::npos;
    if (c.methods.empty() || (missing != "copy" && missing != "min_1") || !lows || order.find("{min}") == std::string::npos ||
        order.find("{max}") == std::string::npos || source.empty() || c.version_max < c.version_min)
      return make_error(ErrorKind::corrupt,
                        where + ": expected methods, missing copy or min_1, message_min_low / message_max_low with {min} / {max} unless field_minimum (then neither), "
                                "message_order with both, a source and a version range",
                        origin);
    PF_TRY(disjoint, check_lists_disjoint(out.ngram_window_checks, c, where, origin));
    (void)disjoint;
    c.message_order = std::move(order);
    c.source = std::move(source);
    out.ngram_window_checks.push_back(std::move(c));
    return Ok{};
  });
}

std::string replace_placeholder(std::string text, const std::string& name, const std::string& value) {
  if (const size_t at = text.find(name); at != std::string::npos) text.replace(at, name.size(), value);
  return text;
}

// A JSON value as Python's f-string prints it: a string bare, true / false as True / False, a number as written.
std::string python_text(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  return v.dump();
}

}  // namespace

Expected<SpeculativeMethodCatalog> parse_speculative_methods(const Json& root, const std::string& origin) {
  SpeculativeMethodCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "lists", "value_checks", "max_model_len_checks", "ngram_window_checks"}));
  (void)top_ok;
  PF_TRY(checks_ok, read_value_checks(top, origin, out));
  (void)checks_ok;
  PF_TRY(len_ok, read_max_len_checks(top, origin, out));
  (void)len_ok;
  PF_TRY(window_ok, read_ngram_window_checks(top, origin, out));
  (void)window_ok;
  PF_TRY(walked, for_each_record(top, origin, "lists", "id", {"id", "version_min", "version_max", "checked", "methods", "own_mtp_targets", "mtp_aliases", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    SpeculativeMethodList list;
    list.id = id;
    PF_TRY(range, read_list_versions(r, where, origin));
    list.version_min = range.first;
    list.version_max = range.second;
    PF_TRY(checked, r.opt_bool("checked"));
    if (!checked) return make_error(ErrorKind::corrupt, where + ": checked (true or false) is missing", origin);
    list.checked = *checked;
    PF_TRY(methods, read_record_names(r, "methods", where, origin, EmptyWording::must_not_be_empty));
    list.methods = std::move(methods);
    PF_TRY(targets_ok, read_own_mtp_targets(r, where, origin, list));
    (void)targets_ok;
    PF_TRY(aliases, string_list(r.find("mtp_aliases"), where + ".mtp_aliases", origin));
    for (const auto& a : aliases)
      if (!list.takes(a) || !list.takes("mtp")) return make_error(ErrorKind::corrupt, where + ": mtp alias '" + a + "' or 'mtp' is not in methods", origin);
    list.mtp_aliases = std::move(aliases);
    PF_TRY(source, read_list_source(r, where, origin));
    list.source = source;
    return add_disjoint_list(out.lists, std::move(list), where, origin);
  }));
  (void)walked;
  if (out.lists.empty()) return make_error(ErrorKind::corrupt, origin + ": lists is empty", origin);
  return out;
}

const Expected<SpeculativeMethodCatalog>& shipped_speculative_methods() {
  static const Expected<SpeculativeMethodCatalog> catalog = []() -> Expected<SpeculativeMethodCatalog> {
    const std::string origin = "data/engines/speculative_methods.json";
    PF_TRY(json, parse_json(std::string(embedded_data("engines/speculative_methods.json")), origin));
    return parse_speculative_methods(json, origin);
  }();
  return catalog;
}

const SpeculativeMethodList* speculative_method_list(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version) {
  return engine_name == "vllm" || engine_name == "vllm-ascend" ? list_for_version(catalog.lists, version) : nullptr;
}

std::string speculative_method_refusal(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                       const std::string& config_text, const std::string& model_type) {
  const SpeculativeMethodList* list = speculative_method_list(catalog, engine_name, version);
  const Json config = Json::parse(config_text, nullptr, false);
  if (!list || config.is_discarded() || !config.is_object()) return "";
  const auto method_it = config.find("method");
  const std::string method = method_it != config.end() && method_it->is_string() ? method_it->get<std::string>() : "";
  const bool has_model = config.contains("model") && config["model"].is_string();
  const std::string at = " (" + engine_name + " " + version.text();
  const OwnMtpTarget* target = own_target(*list, model_type);
  const std::string takes = list->takes("mtp") && mtp_name(method) ? ", which takes 'mtp' for a model's own MTP layers"
                            : target && mtp_name(method)            ? ", which takes '" + target->method + "' for " + model_type + "'s own MTP layers"
                                                                    : "";
  const std::string tail = takes + "; " + list->source.substr(0, list->source.find(';')) + "; " + catalog.origin + ")";
  if (!method.empty() && list->checked && !list->takes(method))
    return "pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig\nmethod\n  Input should be " + pydantic_choices(list->methods) +
           " [type=literal_error, input_value='" + one_line(method, 80) + "', input_type=str]" + at + tail;
  // Before 0.11.0: no "model" and num_speculative_tokens given drafts with the target's own layers only for the listed types.
  const bool before_generic_mtp = !list->own_mtp_targets.empty();
  if (before_generic_mtp && !has_model && config.contains("num_speculative_tokens") && method != "ngram" && method != "[ngram]" && !target)
    return "ValueError: num_speculative_tokens was provided without speculative model." + at + ": a target's own MTP layers draft without a \"model\" only for model_type " +
           [&] {
             std::string types;
             for (const auto& t : list->own_mtp_targets) types += (types.empty() ? "" : ", ") + t.model_type;
             return types;
           }() + ", not " + (model_type.empty() ? "(none)" : model_type) + "; " + list->source.substr(0, list->source.find(';')) + "; " + catalog.origin + ")";
  return "";
}

std::string speculative_value_refusal(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                      const std::string& config_text, const std::vector<std::string>& given_flags, SpeculativeValueStage stage,
                                      int64_t target_tp) {
  if (engine_name != "vllm" && engine_name != "vllm-ascend") return "";
  const Json config = Json::parse(config_text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return "";
  const bool argparse = stage == SpeculativeValueStage::argparse;
  for (const auto& c : catalog.value_checks) {
    if (c.flag.empty() == argparse || !covers_version(c, version)) continue;
    if (argparse && std::find(given_flags.begin(), given_flags.end(), c.flag) == given_flags.end()) continue;
    const auto it = config.find(c.key);
    if (it == config.end() || it->is_null()) continue;
    const bool skipped = std::any_of(c.skip_methods.begin(), c.skip_methods.end(), [&](const std::string& m) {
      return (config.contains("method") && config["method"] == m) || (config.contains("model") && config["model"] == m);
    });
    if (skipped) continue;
    const bool low = c.minimum && it->is_number() && it->get<double>() < static_cast<double>(*c.minimum);
    const bool is_target_tp = c.or_target_tp && it->is_number_integer() && it->get<int64_t>() == target_tp;
    const bool outside = !c.choices.empty() && !is_target_tp && std::find(c.choices.begin(), c.choices.end(), python_text(*it)) == c.choices.end();
    if (!low && !outside) continue;
    std::string message = c.message;
    message.replace(message.find("{value}"), 7, one_line(python_text(*it), 80));
    return message + " (" + engine_name + " " + version.text() + "; " + c.source.substr(0, c.source.find(';')) + "; " + catalog.origin + ")";
  }
  return "";
}

std::string speculative_max_len_refusal(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                        const std::string& config_text, std::optional<int64_t> draft_len, std::optional<int64_t> target_len) {
  if (engine_name != "vllm" && engine_name != "vllm-ascend") return "";
  const Json config = Json::parse(config_text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return "";
  const auto it = config.find("max_model_len");
  if (it == config.end() || !it->is_number_integer()) return "";
  const auto value = it->get<int64_t>();
  for (const auto& c : catalog.max_len_checks) {
    if (!covers_version(c, version)) continue;
    const bool skipped = std::any_of(c.skip_methods.begin(), c.skip_methods.end(), [&](const std::string& m) {
      return (config.contains("method") && config["method"] == m) || (config.contains("model") && config["model"] == m);
    });
    if (skipped) return "";
    std::string message;
    if (draft_len && value > *draft_len)
      message = replace_placeholder(c.message_draft, "{draft}", std::to_string(*draft_len));
    else if (target_len && value > *target_len)
      message = replace_placeholder(c.message_target, "{target}", std::to_string(*target_len));
    else
      return "";
    return replace_placeholder(message, "{value}", std::to_string(value)) + " (" + engine_name + " " + version.text() + "; " + c.source.substr(0, c.source.find(':')) + "; " +
           catalog.origin + ")";
  }
  return "";
}

namespace {
// A window value as the check reads it: a JSON integer (a whole float such as 3.0 too), else nullopt (left to the engine).
std::optional<int64_t> ngram_window_value(const Json& config, const char* key) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null() || !it->is_number()) return std::nullopt;
  if (it->is_number_unsigned()) return it->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX) ? std::optional<int64_t>(static_cast<int64_t>(it->get<uint64_t>())) : std::nullopt;
  if (it->is_number_integer()) return it->get<int64_t>();
  const double d = it->get<double>();
  if (!(d == std::floor(d)) || std::fabs(d) > 9e15) return std::nullopt;
  return static_cast<int64_t>(d);
}
}  // namespace

std::string speculative_ngram_window_refusal(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                             const std::string& config_text) {
  if (engine_name != "vllm" && engine_name != "vllm-ascend") return "";
  const Json config = Json::parse(config_text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return "";
  for (const auto& c : catalog.ngram_window_checks) {
    if (version < c.version_min || c.version_max < version) continue;
    const std::string at = " (" + engine_name + " " + version.text() + "; " + c.source.substr(0, c.source.find(';')) + "; " + catalog.origin + ")";
    std::optional<int64_t> lo = ngram_window_value(config, "prompt_lookup_min"), hi = ngram_window_value(config, "prompt_lookup_max");
    if (c.field_minimum) {  // pydantic's Field(ge=1) on both, every method, max's field first
      std::string errors;
      int count = 0;
      for (const auto& [key, value] : {std::pair<const char*, std::optional<int64_t>>{"prompt_lookup_max", hi}, {"prompt_lookup_min", lo}})
        if (value && *value < 1) {
          ++count;
          errors += std::string("\n") + key + "\n  Input should be greater than or equal to 1 [type=greater_than_equal, input_value=" + std::to_string(*value) +
                    ", input_type=int]";
        }
      if (count > 0)
        return "pydantic_core._pydantic_core.ValidationError: " + std::to_string(count) + (count == 1 ? " validation error" : " validation errors") +
               " for SpeculativeConfig" + errors + at;
    }
    const auto named = [&](const char* key) { return config.contains(key) && config[key].is_string() ? config[key].get<std::string>() : std::string(); };
    const std::string method = named("method").empty() ? named("model") : named("method");
    if (std::find(c.methods.begin(), c.methods.end(), method) == c.methods.end()) return "";
    // A value given but not read above (a string, 2.5) is the engine's to judge: nothing said.
    if ((config.contains("prompt_lookup_min") && !config["prompt_lookup_min"].is_null() && !lo) ||
        (config.contains("prompt_lookup_max") && !config["prompt_lookup_max"].is_null() && !hi))
      return "";
    if (c.missing == "copy") {
      if (!lo && !hi) lo = hi = 5;
      else if (!lo) lo = hi;
      else if (!hi) hi = lo;
    } else {
      if (!lo) lo = 1;
      if (!hi) return "";  // V0's missing max: flag_versions.json speculative_legacy
    }
    const auto fill = [&](const std::string& m) { return replace_placeholder(replace_placeholder(m, "{min}", std::to_string(*lo)), "{max}", std::to_string(*hi)); };
    if (!c.field_minimum) {
      if (c.max_first && *hi < 1) return fill(c.message_max_low) + at;
      if (*lo < 1) return fill(c.message_min_low) + at;
      if (*hi < 1) return fill(c.message_max_low) + at;
    }
    if (*lo > *hi) return fill(c.message_order) + at;
    return "";
  }
  return "";
}

std::string speculative_method_for_version(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                           const std::string& method, const std::string& model_type) {
  const SpeculativeMethodList* list = speculative_method_list(catalog, engine_name, version);
  if (!list || !list->checked || !mtp_name(method)) return method;
  if (list->takes("mtp")) return "mtp";
  const OwnMtpTarget* target = own_target(*list, model_type);
  return target ? target->method : method;
}

std::string speculative_config_for_version(const SpeculativeMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                           const std::string& config_text, const std::string& model_type) {
  Json config = Json::parse(config_text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return config_text;
  const auto it = config.find("method");
  if (it == config.end() || !it->is_string()) return config_text;
  const std::string method = it->get<std::string>();
  const std::string taken = speculative_method_for_version(catalog, engine_name, version, method, model_type);
  if (taken == method) return config_text;
  config["method"] = taken;
  return dump_json(config);
}

}  // namespace preflight::engine
