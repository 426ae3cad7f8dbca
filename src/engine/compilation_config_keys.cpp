#include "engine/compilation_config_keys.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "engine/record_list.hpp"
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

}  // namespace

const CompilationConfigKeys* CompilationConfigKeyCatalog::find(const std::string& engine_name, const Version& version) const {
  for (const auto& r : records)
    if (std::find(r.engines.begin(), r.engines.end(), engine_name) != r.engines.end() && r.version_min <= version && version <= r.version_max) return &r;
  return nullptr;
}

Expected<CompilationConfigKeyCatalog> parse_compilation_config_keys(const Json& root, const std::string& origin) {
  CompilationConfigKeyCatalog out;
  out.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(top_ok, check_record_file_top(top, {"schema_version", "note", "records"}));
  (void)top_ok;
  PF_TRY(walked, for_each_record(top, origin, "records", "id", {"id", "engines", "version_min", "version_max", "refusal", "argument", "keys", "source"},
                                 [&](const JsonObject& r, const std::string& id, const std::string& where) -> Status {
    CompilationConfigKeys rec;
    rec.id = id;
    PF_TRY(range, read_version_range(r));
    if (!range) return make_error(ErrorKind::corrupt, where + ": bad version range", origin);
    rec.version_min = range->first;
    rec.version_max = range->second;
    PF_TRY(engines, string_list(r.find("engines"), where + ".engines", origin));
    if (engines.empty()) return make_error(ErrorKind::corrupt, where + ": engines is empty", origin);
    rec.engines = std::move(engines);
    PF_TRY(refusal, r.string("refusal"));
    if (refusal != "extra_forbidden" && refusal != "type_error")
      return make_error(ErrorKind::corrupt, where + ": refusal: expected extra_forbidden or type_error, found " + refusal, origin);
    rec.refusal = std::move(refusal);
    PF_TRY(argument, r.string("argument"));
    if (argument.rfind("--", 0) != 0) return make_error(ErrorKind::corrupt, where + ": argument: expected the flag as argparse names it (--compilation-config/-cc)", origin);
    rec.argument = std::move(argument);
    PF_TRY(keys, string_list(r.find("keys"), where + ".keys", origin));
    if (keys.empty()) return make_error(ErrorKind::corrupt, where + ": keys is empty", origin);
    rec.keys = std::move(keys);
    PF_TRY(source, read_source_field(r, "source", origin));
    rec.source = std::move(source);
    out.records.push_back(std::move(rec));
    return Ok{};
  }));
  (void)walked;
  return out;
}

const Expected<CompilationConfigKeyCatalog>& shipped_compilation_config_keys() {
  static const Expected<CompilationConfigKeyCatalog> catalog = []() -> Expected<CompilationConfigKeyCatalog> {
    PF_TRY(json, parse_json(std::string(embedded_data("engines/compilation_config_keys.json")), "data/engines/compilation_config_keys.json"));
    return parse_compilation_config_keys(json, "data/engines/compilation_config_keys.json");
  }();
  return catalog;
}

std::string compilation_config_key_refusal(const CompilationConfigKeys& keys, const Json& config, const std::vector<std::string>& order, const std::string& text) {
  if (!config.is_object()) return "";
  const std::unordered_set<std::string> known(keys.keys.begin(), keys.keys.end());
  std::vector<std::string> unknown;
  std::unordered_set<std::string> seen;
  for (const auto& k : order)
    if (config.contains(k) && !known.count(k) && seen.insert(k).second) unknown.push_back(k);
  for (auto it = config.begin(); it != config.end(); ++it)  // a key the order scan missed keeps its place after the rest
    if (!known.count(it.key()) && seen.insert(it.key()).second) unknown.push_back(it.key());
  if (unknown.empty()) return "";
  const std::string head = "vllm serve: error: argument " + keys.argument + ": ";
  if (keys.refusal == "type_error") return head + "invalid <lambda> value: " + cc_str_repr(text);
  std::string out = head + std::to_string(unknown.size()) + (unknown.size() == 1 ? " validation error" : " validation errors") + " for CompilationConfig";
  for (const auto& k : unknown) {
    const Json& v = config.at(k);
    out += "\n" + k + "\n  Extra inputs are not permitted [type=extra_forbidden, input_value=" + cc_input_value(v) + ", input_type=" + cc_type_name(v) + "]";
  }
  return out;
}

}  // namespace preflight::engine
