#include "report/yaml.hpp"
#include "base/json_writer.hpp"

namespace preflight::report {

namespace {

// Plain scalars YAML 1.2 reads back as the same string: letters, digits and . _ / - (not first).
bool plain_safe(const std::string& s) {
  if (s.empty() || s == "true" || s == "false" || s == "null" || s == "yes" || s == "no" || s == "on" || s == "off" || s == "~") return false;
  if (!((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '/' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string key_text(const std::string& k) { return plain_safe(k) ? k : dump_json(Json(k)); }

// A literal block keeps the text exactly: "|" for one final newline, "|-" for none (more than one
// would need "|+"; such strings are quoted instead).
bool block_safe(const std::string& s) {
  if (s.find('\n') == std::string::npos || s.front() == ' ' || s.front() == '\n') return false;
  if (s.size() >= 2 && s[s.size() - 1] == '\n' && s[s.size() - 2] == '\n') return false;
  for (char c : s)
    if (c == '\r' || c == '\t' || (static_cast<unsigned char>(c) < 0x20 && c != '\n')) return false;
  return true;
}

std::string scalar(const Json& v, const std::string& indent) {
  if (!v.is_string()) return dump_json(v);
  const std::string s = v.get<std::string>();
  if (plain_safe(s)) return s;
  if (!block_safe(s)) return dump_json(v);
  const bool newline = s.back() == '\n';
  const std::string text = newline ? s.substr(0, s.size() - 1) : s;
  std::string out = newline ? "|" : "|-";
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    out += "\n" + (line.empty() ? std::string() : indent + line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

bool is_collection(const Json& v) { return (v.is_object() || v.is_array()) && !v.empty(); }

void emit(const Json& v, const std::string& indent, std::string& o);

void emit_value_after_key(const Json& v, const std::string& indent, std::string& o) {
  if (is_collection(v)) {
    o += "\n";
    emit(v, indent + "  ", o);
  } else {
    o += " " + (v.is_object() ? "{}" : v.is_array() ? "[]" : scalar(v, indent + "  ")) + "\n";
  }
}

void emit(const Json& v, const std::string& indent, std::string& o) {
  if (v.is_object()) {
    for (const auto& [k, item] : v.items()) {
      o += indent + key_text(k) + ":";
      emit_value_after_key(item, indent, o);
    }
    return;
  }
  for (const auto& item : v) {
    if (is_collection(item)) {
      // "- " then the collection at the deeper indent, its first line pulled up beside the dash.
      std::string inner;
      emit(item, indent + "  ", inner);
      o += indent + "- " + inner.substr(indent.size() + 2);
    } else {
      o += indent + "- " + (item.is_object() ? "{}" : item.is_array() ? "[]" : scalar(item, indent + "  ")) + "\n";
    }
  }
}

}  // namespace

std::string render_yaml_documents(const std::vector<Json>& documents, const std::vector<std::string>& header) {
  std::string o;
  // Issue 19: every line of a note stays a comment. A note quotes user text (--image, a model path); a newline in
  // it started a line of YAML before the first "---", which is a document of its own (kind: Secret, say).
  for (const auto& h : header) {
    o += "# ";
    for (const char c : h) {
      if (c == '\n' || c == '\r') o += "\n# ";
      else o += c;
    }
    o += "\n";
  }
  for (const auto& d : documents) {
    o += "---\n";
    emit(d, "", o);
  }
  return o;
}

}  // namespace preflight::report
