#include "base/json_util.hpp"

#include <algorithm>
#include <cmath>

#include "base/file.hpp"
#include "base/units.hpp"

namespace preflight {

namespace {
// Nesting deeper than this is treated as hostile input (nlohmann recurses on destruction).
constexpr int k_max_json_depth = 64;

bool depth_ok(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') {
      if (++depth > k_max_json_depth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}
// Python's json module writes Infinity, -Infinity and NaN (Nemotron-H's time_step_limit); JSON has
// no such tokens. Outside strings they become the marker string is_non_finite() recognizes.
constexpr char k_non_finite_marker[] = "\x01non-finite ";
std::string replace_non_finite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (text.compare(i, 9, "-Infinity") == 0) { out += "\"\\u0001non-finite -Infinity\""; i += 8; continue; }
    if (text.compare(i, 8, "Infinity") == 0) { out += "\"\\u0001non-finite Infinity\""; i += 7; continue; }
    if (text.compare(i, 3, "NaN") == 0) { out += "\"\\u0001non-finite NaN\""; i += 2; continue; }
    out += c;
  }
  return out;
}
}  // namespace

const char* json_type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "object";
    case Json::value_t::array: return "array";
    case Json::value_t::string: return "string";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    default: return "other";
  }
}

bool is_non_finite(const Json& value) {
  return value.is_string() && value.get_ref<const std::string&>().rfind(k_non_finite_marker, 0) == 0;
}

std::optional<std::string> non_finite_token(const Json& value) {
  if (!is_non_finite(value)) return std::nullopt;
  return value.get_ref<const std::string&>().substr(sizeof(k_non_finite_marker) - 1);
}

Expected<Json> parse_json(const std::string& text, const std::string& origin) {
  // Issue 19: the fast reader first (base/json_fast.cpp); what it declines takes nlohmann's path below, which reads
  // it the same way or names the error.
  if (Json fast; detail::parse_json_fast(text, fast)) return fast;
  if (!depth_ok(text)) {
    return make_error(ErrorKind::corrupt, format("JSON nested deeper than %d levels", k_max_json_depth), origin);
  }
  const bool non_finite = text.find("Infinity") != std::string::npos || text.find("NaN") != std::string::npos;
  const std::string cleaned = non_finite ? replace_non_finite(text) : std::string();
  const std::string& source = non_finite ? cleaned : text;
  Json parsed = Json::parse(source, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    // Find the byte offset with the throwing parser, caught here and never beyond.
    try {
      const Json reparsed = Json::parse(source);
      (void)reparsed;
    } catch (const Json::parse_error& e) {
      return make_error(ErrorKind::corrupt,
                        format("malformed JSON at byte %zu", static_cast<size_t>(e.byte)), origin);
    } catch (...) {
    }
    return make_error(ErrorKind::corrupt, "malformed JSON", origin);
  }
  return parsed;
}

Expected<Json> load_json_file(const std::string& path) {
  PF_TRY(text, read_text_file(path));
  return parse_json(text, path);
}

Expected<std::vector<std::string>> string_list(const Json* j, const std::string& where, const std::string& origin) {
  std::vector<std::string> out;
  if (!j) return out;
  if (!j->is_array()) return make_error(ErrorKind::corrupt, where + ": expected an array of strings", origin);
  for (const auto& s : *j) {
    if (!s.is_string()) return make_error(ErrorKind::corrupt, where + ": expected an array of strings", origin);
    out.push_back(s.get<std::string>());
  }
  return out;
}

JsonObject::JsonObject(const Json& object, std::string origin, std::string prefix)
    : m_object(object), m_origin(std::move(origin)), m_prefix(std::move(prefix)) {}

std::string JsonObject::key_path(const std::string& key) const {
  return m_prefix.empty() ? key : m_prefix + "." + key;
}

Error JsonObject::wrong_type(const std::string& key, const char* expected) const {
  const Json* value = find(key);
  return make_error(ErrorKind::corrupt,
                    format("%s: %s: expected %s, found %s", m_origin.c_str(), key_path(key).c_str(), expected,
                           value ? json_type_name(*value) : "nothing"),
                    m_origin);
}

bool JsonObject::has(const std::string& key) const { return find(key) != nullptr; }

const Json* JsonObject::find(const std::string& key) const {
  if (!m_object.is_object()) return nullptr;
  auto it = m_object.find(key);
  if (it == m_object.end() || it->is_null()) return nullptr;
  return &*it;
}

Error JsonObject::not_finite(const std::string& key) const {
  const std::string& text = find(key)->get_ref<const std::string&>();
  return make_error(ErrorKind::corrupt,
                    format("%s: %s is %s, not a finite number", m_origin.c_str(), key_path(key).c_str(), text.substr(sizeof k_non_finite_marker - 1).c_str()),
                    m_origin);
}

Expected<std::optional<int64_t>> JsonObject::opt_int(const std::string& key) const {
  const Json* v = find(key);
  if (!v) return std::optional<int64_t>{};
  if (is_non_finite(*v)) return not_finite(key);
  // nlohmann's is_number_integer() is true for unsigned values too: test unsigned first, or 2^63 reads as -2^63.
  if (v->is_number_unsigned()) {
    const auto u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return wrong_type(key, "an integer below 2^63");
    return std::optional<int64_t>{static_cast<int64_t>(u)};
  }
  if (v->is_number_integer()) return std::optional<int64_t>{v->get<int64_t>()};
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return std::optional<int64_t>{static_cast<int64_t>(d)};
  }
  return wrong_type(key, "an integer");
}

Expected<std::optional<double>> JsonObject::opt_number(const std::string& key) const {
  const Json* v = find(key);
  if (!v) return std::optional<double>{};
  if (is_non_finite(*v)) return not_finite(key);
  if (!v->is_number()) return wrong_type(key, "a number");
  return std::optional<double>{v->get<double>()};
}

Expected<std::optional<std::string>> JsonObject::opt_string(const std::string& key) const {
  const Json* v = find(key);
  if (!v) return std::optional<std::string>{};
  if (is_non_finite(*v)) return not_finite(key);
  if (!v->is_string()) return wrong_type(key, "a string");
  return std::optional<std::string>{v->get<std::string>()};
}

Expected<std::optional<bool>> JsonObject::opt_bool(const std::string& key) const {
  const Json* v = find(key);
  if (!v) return std::optional<bool>{};
  if (is_non_finite(*v)) return not_finite(key);
  if (!v->is_boolean()) return wrong_type(key, "a boolean");
  return std::optional<bool>{v->get<bool>()};
}

namespace {
Error missing(const JsonObject& o, const std::string& key) {
  return make_error(ErrorKind::corrupt, format("%s: missing required field %s", o.origin().c_str(), o.key_path(key).c_str()),
                    o.origin());
}
}  // namespace

Expected<int64_t> JsonObject::int_(const std::string& key) const {
  PF_TRY(v, opt_int(key));
  if (!v) return missing(*this, key);
  return *v;
}

Expected<double> JsonObject::number(const std::string& key) const {
  PF_TRY(v, opt_number(key));
  if (!v) return missing(*this, key);
  return *v;
}

Expected<std::string> JsonObject::string(const std::string& key) const {
  PF_TRY(v, opt_string(key));
  if (!v) return missing(*this, key);
  return *v;
}

Status JsonObject::only_keys(const std::vector<std::string>& allowed) const {
  if (!m_object.is_object()) {
    return make_error(ErrorKind::corrupt, format("%s: %s: expected an object", m_origin.c_str(), m_prefix.c_str()), m_origin);
  }
  for (auto it = m_object.begin(); it != m_object.end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
      return make_error(ErrorKind::corrupt, format("%s: unknown key %s", m_origin.c_str(), key_path(it.key()).c_str()),
                        m_origin);
    }
  }
  return Ok{};
}

Status JsonObject::schema_v1() const {
  PF_TRY(version, int_("schema_version"));
  if (version != 1)
    return make_error(ErrorKind::unsupported, format("%s: schema_version %lld, expected 1", m_origin.c_str(), static_cast<long long>(version)), m_origin);
  return Ok{};
}

Expected<const Json*> JsonObject::array(const std::string& key) const {
  const Json* list = find(key);
  if (!list || !list->is_array()) return make_error(ErrorKind::corrupt, format("%s: %s: expected an array", m_origin.c_str(), key_path(key).c_str()), m_origin);
  return list;
}

}  // namespace preflight
