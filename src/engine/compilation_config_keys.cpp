#include "engine/compilation_config_keys.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_set>

#include "base/json_depth.hpp"
#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"
#include "engine/version_lists.hpp"
#include "engine/version_range.hpp"

namespace preflight::engine {

namespace {

// A Python str's repr: single quotes unless the text has one and no double quote; \\, the quote, \n \r \t and other
// control bytes escaped (\xNN); other bytes as they are.
std::string cc_str_repr(const std::string& s) {
  const bool double_quoted = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = double_quoted ? '"' : '\'';
  std::string out(1, q);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\\' || c == q) out += std::string("\\") + c;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + q;
}

// json.loads's value as Python's repr writes it (a dict in the order nlohmann keeps, which sorts its keys). Past
// 64 levels "..." stands for the rest (the flag's JSON may nest deeper; repr would recurse on).
std::string cc_value_repr(const Json& v, int depth = 0) {
  if (depth > 64) return "...";
  if (v.is_null()) return "None";
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_string()) return cc_str_repr(v.get_ref<const std::string&>());
  if (v.is_number()) return v.dump();
  std::string out = v.is_array() ? "[" : "{";
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    out += first ? "" : ", ";
    first = false;
    if (v.is_object()) out += cc_str_repr(it.key()) + ": ";
    out += cc_value_repr(*it, depth + 1);
  }
  return out + (v.is_array() ? "]" : "}");
}

const char* cc_type_name(const Json& v) {
  if (v.is_null()) return "NoneType";
  if (v.is_boolean()) return "bool";
  if (v.is_number_integer()) return "int";
  if (v.is_number()) return "float";
  if (v.is_string()) return "str";
  return v.is_array() ? "list" : "dict";
}

// pydantic_core's truncate_input_value: a repr over 50 bytes keeps its first 25 and last 24.
std::string cc_input_value(const Json& v) {
  const std::string r = cc_value_repr(v);
  return r.size() > 50 ? r.substr(0, 25) + "..." + r.substr(r.size() - 24) : r;
}

template <class Record>
bool cc_covers(const Record& r, const std::string& engine_name, const Version& version) {
  return std::find(r.engines.begin(), r.engines.end(), engine_name) != r.engines.end() && covers_version(r, version);
}

// A record's version range and engines (records, nested_records, mode_records).
Expected<std::pair<Version, Version>> cc_read_common(const JsonObject& r, const std::string& where, const std::string& origin, std::vector<std::string>& engines) {
  PF_TRY(range, read_record_versions(r, where, origin));
  PF_TRY(list, read_record_names(r, "engines", where, origin, EmptyWording::is_empty));
  engines = std::move(list);
  return range;
}

// attack37: a nested record's optional "types" object: one entry per key, in keys' order (a list then follows it).
Expected<std::vector<std::string>> cc_read_types(const JsonObject& r, const std::vector<std::string>& keys, const std::string& where, const std::string& origin) {
  const Json* types = r.find("types");
  if (!types) return std::vector<std::string>{};
  if (!types->is_object() || types->size() != keys.size()) return make_error(ErrorKind::corrupt, where + ".types: expected an object with one entry per key", origin);
  std::vector<std::string> out;
  for (const auto& k : keys) {
    const auto it = types->find(k);
    if (it == types->end() || !it->is_string()) return make_error(ErrorKind::corrupt, where + ".types: no type for key " + k, origin);
    const std::string& t = it->get_ref<const std::string&>();
    static const std::vector<std::string> known = {"bool", "bool|none", "int", "int|none", "float", "float|none"};
    if (std::find(known.begin(), known.end(), t) == known.end())
      return make_error(ErrorKind::corrupt, where + ".types." + k + ": expected bool, int or float, each optionally |none, found " + t, origin);
    out.push_back(t);
  }
  return out;
}

// attack37: pydantic's lax-mode check of a bool / int / float field (pydantic-core's bool, int and float validators,
// checked with pydantic 2.13.4): "" when `v` is taken, else the error's message and type.
std::pair<std::string, const char*> cc_lax_type_error(const std::string& type, const Json& v) {
  const bool none_ok = type.size() > 5 && type.compare(type.size() - 5, 5, "|none") == 0;
  const std::string base = none_ok ? type.substr(0, type.size() - 5) : type;
  if (v.is_null() && none_ok) return {"", ""};
  if (base == "bool") {
    if (v.is_boolean()) return {"", ""};
    if (v.is_number()) {  // 0 and 1 (1e0, 0.0) are taken, another whole number cannot be interpreted, 0.5 is no boolean
      const double d = v.get<double>();
      if (d == 0 || d == 1) return {"", ""};
      if (std::isfinite(d) && d == std::floor(d)) return {"Input should be a valid boolean, unable to interpret input", "bool_parsing"};
      return {"Input should be a valid boolean", "bool_type"};
    }
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      for (auto& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      for (const char* word : {"0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes"})
        if (s == word) return {"", ""};
      return {"Input should be a valid boolean, unable to interpret input", "bool_parsing"};
    }
    return {"Input should be a valid boolean", "bool_type"};
  }
  if (base == "int") {
    if (v.is_boolean() || v.is_number_integer()) return {"", ""};
    if (v.is_number()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d)) return {"", ""};
      return {"Input should be a valid integer, got a number with a fractional part", "int_from_float"};
    }
    if (v.is_string()) {  // " 3 ", "+3", "1_000" and "3.00" are taken; "3.5", "3.", "_1", "1__0" are not
      const std::string& text = v.get_ref<const std::string&>();
      const size_t first = text.find_first_not_of(" \t\n\r"), last = text.find_last_not_of(" \t\n\r");
      const std::string s = first == std::string::npos ? "" : text.substr(first, last - first + 1);
      size_t i = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
      bool ok = i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]));
      for (; ok && i < s.size() && s[i] != '.'; ++i)
        ok = std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] == '_' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])));
      if (ok && i < s.size()) ok = i + 1 < s.size() && s.find_first_not_of('0', i + 1) == std::string::npos;
      if (ok) return {"", ""};
      return {"Input should be a valid integer, unable to parse string as an integer", "int_parsing"};
    }
    return {"Input should be a valid integer", "int_type"};
  }
  if (v.is_boolean() || v.is_number()) return {"", ""};
  if (v.is_string()) {  // " 1.5", "1e3", "inf", "nan", "1_0" are taken; "0x10" and words are not
    std::string s;
    for (const char c : v.get_ref<const std::string&>())
      if (c != '_' && c != ' ' && c != '\t' && c != '\n' && c != '\r') s += c;
    char* end = nullptr;
    (void)std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && s.find_first_of("xX") == std::string::npos) return {"", ""};
    return {"Input should be a valid number, unable to parse string as a number", "float_parsing"};
  }
  return {"Input should be a valid number", "float_type"};
}

// One line error of pydantic's ValidationError: "loc\n  message [type=..., input_value=..., input_type=...]".
std::string cc_line_error(const std::string& loc, const std::string& message, const char* type, const Json& v) {
  return loc + "\n  " + message + " [type=" + type + ", input_value=" + cc_input_value(v) + ", input_type=" + cc_type_name(v) + "]";
}

// The keys of `object` that `known` lacks: in the text's order, then any the order scan missed, each once.
std::vector<std::string> cc_unknown_keys(const Json& object, const std::vector<std::string>& known_list, const std::vector<std::string>& order) {
  const std::unordered_set<std::string> known(known_list.begin(), known_list.end());
  std::vector<std::string> unknown;
  std::unordered_set<std::string> seen;
  for (const auto& k : order)
    if (object.contains(k) && !known.count(k) && seen.insert(k).second) unknown.push_back(k);
  for (auto it = object.begin(); it != object.end(); ++it)
    if (!known.count(it.key()) && seen.insert(it.key()).second) unknown.push_back(it.key());
  return unknown;
}

// validate_mode_before and the IntEnum (vllm/config/compilation.py): a str is upper-cased and must name a member; any
// other value must be one of the members' values (lax mode: true is 1, 3.0 is 3). "" when it is taken.
std::string cc_mode_error(const CompilationModeValues& modes, const Json& v) {
  if (v.is_null()) return "";  // _skip_none_validation
  if (v.is_string()) {
    const std::string& name = v.get_ref<const std::string&>();
    std::string upper = name;
    for (auto& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    if (std::find(modes.values.begin(), modes.values.end(), upper) != modes.values.end()) return "";
    std::string list;
    for (size_t i = 0; i < modes.values.size(); ++i) list += (i == 0 ? "" : ", ") + modes.values[i];
    return cc_line_error("mode", "Value error, Invalid compilation mode: " + name + ". Valid modes are: " + list, "value_error", v);
  }
  const double most = static_cast<double>(modes.values.size()) - 1;
  if (v.is_boolean()) return "";
  if (v.is_number()) {
    const double d = v.get<double>();
    if (d >= 0 && d <= most && d == std::floor(d)) return "";
  }
  std::string allowed;
  for (size_t i = 0; i < modes.values.size(); ++i) allowed += (i == 0 ? "" : i + 1 == modes.values.size() ? " or " : ", ") + std::to_string(i);
  return cc_line_error("mode", "Input should be " + allowed, "enum", v);
}

}  // namespace

const CompilationConfigKeys* CompilationConfigKeyCatalog::find(const std::string& engine_name, const Version& version) const {
  for (const auto& r : records)
    if (cc_covers(r, engine_name, version)) return &r;
  return nullptr;
}

std::vector<const NestedConfigKeys*> CompilationConfigKeyCatalog::nested_at(const std::string& engine_name, const Version& version) const {
  std::vector<const NestedConfigKeys*> out;
  for (const auto& r : nested)
    if (cc_covers(r, engine_name, version)) out.push_back(&r);
  return out;
}

const CompilationModeValues* CompilationConfigKeyCatalog::mode_at(const std::string& engine_name, const Version& version) const {
  for (const auto& r : modes)
    if (cc_covers(r, engine_name, version)) return &r;
  return nullptr;
}

Expected<CompilationConfigKeyCatalog> parse_compilation_config_keys(const Json& root, const std::string& origin) {
  CompilationConfigKeyCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records", "nested_records", "mode_records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "engines", "version_min", "version_max", "refusal", "argument", "keys", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    CompilationConfigKeys rec;
    rec.id = id;
    PF_TRY(range, cc_read_common(r, where, origin, rec.engines));
    rec.version_min = range.first;
    rec.version_max = range.second;
    PF_TRY(refusal, r.string("refusal"));
    if (refusal != "extra_forbidden" && refusal != "type_error")
      return make_error(ErrorKind::corrupt, where + ": refusal: expected extra_forbidden or type_error, found " + refusal, origin);
    rec.refusal = std::move(refusal);
    PF_TRY(argument, r.string("argument"));
    if (argument.rfind("--", 0) != 0) return make_error(ErrorKind::corrupt, where + ": argument: expected the flag as argparse names it (--compilation-config/-cc)", origin);
    rec.argument = std::move(argument);
    PF_TRY(keys, read_record_names(r, "keys", where, origin, EmptyWording::is_empty));
    rec.keys = std::move(keys);
    PF_TRY(source, read_source_field(r, "source", origin));
    rec.source = std::move(source);
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  if (top.has("nested_records")) {
    PF_TRY(nested, for_each_record(top, origin, "nested_records", "id", {"id", "engines", "version_min", "version_max", "field", "class", "keys", "types", "source"},
                                   [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
      NestedConfigKeys rec;
      rec.id = id;
      PF_TRY(range, cc_read_common(r, where, origin, rec.engines));
      rec.version_min = range.first;
      rec.version_max = range.second;
      PF_TRY(field, r.string("field"));
      PF_TRY(class_name, r.string("class"));
      if (field.empty() || class_name.empty()) return make_error(ErrorKind::corrupt, where + ": field and class must not be empty", origin);
      rec.field = std::move(field);
      rec.class_name = std::move(class_name);
      PF_TRY(keys, read_record_names(r, "keys", where, origin, EmptyWording::is_empty));
      rec.keys = std::move(keys);
      PF_TRY(types, cc_read_types(r, rec.keys, where, origin));
      rec.types = std::move(types);
      PF_TRY(source, read_source_field(r, "source", origin));
      rec.source = std::move(source);
      out.nested.push_back(std::move(rec));
      return Ok{};
    }));
    (void)nested;
  }
  if (top.has("mode_records")) {
    PF_TRY(modes, for_each_record(top, origin, "mode_records", "id", {"id", "engines", "version_min", "version_max", "argument", "field", "values", "source"},
                                  [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
      CompilationModeValues rec;
      rec.id = id;
      PF_TRY(range, cc_read_common(r, where, origin, rec.engines));
      rec.version_min = range.first;
      rec.version_max = range.second;
      PF_TRY(field, r.string("field"));
      if (field != "mode") return make_error(ErrorKind::corrupt, where + ": field: expected mode, found " + field, origin);
      PF_TRY(argument, r.string("argument"));
      if (argument.rfind("--", 0) != 0) return make_error(ErrorKind::corrupt, where + ": argument: expected the flag as argparse names it (--compilation-config/-cc)", origin);
      rec.argument = std::move(argument);
      PF_TRY(values, read_record_names(r, "values", where, origin, EmptyWording::is_empty));
      rec.values = std::move(values);
      PF_TRY(source, read_source_field(r, "source", origin));
      rec.source = std::move(source);
      out.modes.push_back(std::move(rec));
      return Ok{};
    }));
    (void)modes;
  }
  return out;
}

const Expected<CompilationConfigKeyCatalog>& shipped_compilation_config_keys() {
  static const Expected<CompilationConfigKeyCatalog> catalog = []() -> Expected<CompilationConfigKeyCatalog> {
    PF_TRY(json, parse_json(std::string(embedded_data("engines/compilation_config_keys.json")), "data/engines/compilation_config_keys.json"));
    return parse_compilation_config_keys(json, "data/engines/compilation_config_keys.json");
  }();
  return catalog;
}

std::string compilation_config_refusal_text(const CompilationConfigKeyCatalog& catalog, const std::string& engine_name, const Version& version, const Json& config,
                                            const JsonKeyOrder& order, const std::string& text) {
  if (!config.is_object()) return "";
  const CompilationConfigKeys* keys = catalog.find(engine_name, version);
  if (keys && keys->refusal == "type_error") {  // 0.9.0: only the top level, the whole text in argparse's words
    if (cc_unknown_keys(config, keys->keys, order({})).empty()) return "";
    return "vllm serve: error: argument " + keys->argument + ": invalid <lambda> value: " + cc_str_repr(text);
  }
  // The fields' errors, each at its field's place in the class (the top-level key list is in field order).
  std::vector<std::pair<size_t, std::vector<std::string>>> field_errors;
  const auto field_place = [&](const std::string& field) -> size_t {
    if (!keys) return 0;
    const auto it = std::find(keys->keys.begin(), keys->keys.end(), field);
    return static_cast<size_t>(it - keys->keys.begin());
  };
  const CompilationModeValues* modes = catalog.mode_at(engine_name, version);
  if (modes && config.contains("mode"))
    if (std::string e = cc_mode_error(*modes, config.at("mode")); !e.empty()) field_errors.emplace_back(field_place("mode"), std::vector<std::string>{std::move(e)});
  for (const NestedConfigKeys* nested : catalog.nested_at(engine_name, version)) {
    const auto it = config.find(nested->field);
    if (it == config.end() || !it->is_object()) continue;
    std::vector<std::string> errors;
    for (size_t i = 0; i < nested->types.size(); ++i) {  // attack37: the fields' own errors first, in the class's field order
      const auto value = it->find(nested->keys[i]);
      if (value == it->end()) continue;
      if (const auto [message, type] = cc_lax_type_error(nested->types[i], *value); !message.empty())
        errors.push_back(cc_line_error(nested->field + "." + nested->keys[i], message, type, *value));
    }
    for (const auto& k : cc_unknown_keys(*it, nested->keys, order({nested->field})))
      errors.push_back(cc_line_error(nested->field + "." + k, "Unexpected keyword argument", "unexpected_keyword_argument", it->at(k)));
    if (!errors.empty()) field_errors.emplace_back(field_place(nested->field), std::move(errors));
  }
  std::stable_sort(field_errors.begin(), field_errors.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> lines;
  for (auto& e : field_errors)
    for (auto& l : e.second) lines.push_back(std::move(l));
  if (keys)
    for (const auto& k : cc_unknown_keys(config, keys->keys, order({})))
      lines.push_back(cc_line_error(k, "Unexpected keyword argument", "unexpected_keyword_argument", config.at(k)));
  if (lines.empty()) return "";
  const size_t count = lines.size();
  const std::string argument = keys ? keys->argument : modes ? modes->argument : "--compilation-config";
  std::string out = "vllm serve: error: argument " + argument + ": " + std::to_string(count) + (count == 1 ? " validation error" : " validation errors") + " for CompilationConfig";
  for (const auto& l : lines) out += "\n" + l;
  return out;
}

std::string compilation_config_depth_refusal(const std::string& text) {
  const size_t at = json_depth_scan(text, k_compilation_config_json_depth).past_limit_at;
  if (at == std::string::npos) return "";
  // jiter reads in order: a text that is no JSON fails on its own error, which the flag's check gives. In a JSON text a
  // line break stands only between tokens (a string holds it escaped), so the lines before `at` are its newlines.
  if (!Json::accept(text)) return "";
  const size_t line_start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  const size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  const std::string repr = cc_str_repr(text);
  const std::string value = repr.size() > 50 ? repr.substr(0, 25) + "..." + repr.substr(repr.size() - 24) : repr;
  return "1 validation error for CompilationConfig\n  Invalid JSON: recursion limit exceeded at line " + std::to_string(line) + " column " +
         std::to_string(at - line_start + 1) + " [type=json_invalid, input_value=" + value + ", input_type=str]";
}

}  // namespace preflight::engine
