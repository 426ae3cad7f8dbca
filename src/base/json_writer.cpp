#include "base/json_writer.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/utf8.hpp"

namespace preflight {

namespace {

// The bytes written as they are with no further check: printable ASCII but '"' and '\\'.
constexpr std::array<bool, 256> k_plain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[static_cast<size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

}  // namespace

std::string dump_json(const Json& value, int indent) { return value.dump(indent, ' ', false, Json::error_handler_t::replace); }

void JsonWriter::fail(std::string message) {
  if (m_error.empty()) m_error = std::move(message);
}

void JsonWriter::newline_indent(size_t depth) {
  m_out.push_back('\n');
  m_out.append(depth * static_cast<size_t>(m_indent), ' ');
}

void JsonWriter::before_value() {
  if (m_after_key) {
    m_after_key = false;
    return;
  }
  if (m_counts.empty()) return;  // the top-level value
  m_out.append(m_counts.back()++ == 0 ? "" : ",");
  newline_indent(m_counts.size());
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  m_out.push_back('{');
  m_counts.push_back(0);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  if (m_counts.back() > 0) newline_indent(m_counts.size() - 1);
  m_counts.pop_back();
  m_out.push_back('}');
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  before_value();
  m_out.push_back('[');
  m_counts.push_back(0);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  if (m_counts.back() > 0) newline_indent(m_counts.size() - 1);
  m_counts.pop_back();
  m_out.push_back(']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  m_out.push_back('"');
  escaped(name);
  m_out.append("\": ");
  m_after_key = true;
  return *this;
}

void JsonWriter::escaped(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t run = 0;  // start of the bytes not yet copied that need no escape
  size_t i = 0;
  while (i < n) {
    while (i < n && k_plain[p[i]]) ++i;
    if (i == n) break;
    const unsigned char c = p[i];
    if (c >= 0x80) {
      // Well-formed: copied as it is. Not: the bytes read so far of the sequence become one U+FFFD and reading goes on
      // at the byte that broke it (a lead byte that is none is dropped with them); an incomplete sequence at the end is
      // one U+FFFD. This is what dump(indent, ' ', false, error_handler_t::replace) writes.
      const Utf8Sequence seq = utf8_sequence_at(s, i);
      if (seq.length > 0) {
        i += seq.length;
        continue;
      }
      const size_t dropped = seq.valid_prefix;
      m_out.append(s.data() + run, i - run);
      m_out.append("\xEF\xBF\xBD");
      run = i += dropped;
      continue;
    }
    m_out.append(s.data() + run, i - run);
    switch (c) {
      case '"': m_out.append("\\\""); break;
      case '\\': m_out.append("\\\\"); break;
      case 0x08: m_out.append("\\b"); break;
      case 0x09: m_out.append("\\t"); break;
      case 0x0A: m_out.append("\\n"); break;
      case 0x0C: m_out.append("\\f"); break;
      case 0x0D: m_out.append("\\r"); break;
      default: {
        std::array<char, 7> u{};
        std::snprintf(u.data(), u.size(), "\\u%04x", c);
        m_out.append(u.data(), 6);
      }
    }
    run = ++i;
  }
  m_out.append(s.data() + run, n - run);
}

JsonWriter& JsonWriter::string(std::string_view text) {
  before_value();
  m_out.push_back('"');
  escaped(text);
  m_out.push_back('"');
  return *this;
}

JsonWriter& JsonWriter::integer(int64_t value) {
  before_value();
  std::array<char, 24> b{};
  const auto r = std::to_chars(b.data(), b.data() + b.size(), value);
  m_out.append(b.data(), r.ptr);
  return *this;
}

JsonWriter& JsonWriter::number(double value) {
  before_value();
  if (!std::isfinite(value)) {
    m_out.append("null");
    return *this;
  }
  std::array<char, 64> b{};
  const char* end = nlohmann::detail::to_chars(b.data(), b.data() + b.size(), value);
  m_out.append(b.data(), static_cast<size_t>(end - b.data()));
  return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
  before_value();
  m_out.append(value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  m_out.append("null");
  return *this;
}

JsonWriter& JsonWriter::strings(const std::vector<std::string>& texts) {
  begin_array();
  for (const auto& t : texts) string(t);
  return end_array();
}

JsonWriter& JsonWriter::strings(std::span<const SharedText> texts) {
  begin_array();
  for (const auto& t : texts) string(t.str());
  return end_array();
}

JsonWriter& JsonWriter::json(const Json& v) {
  switch (v.type()) {
    case Json::value_t::object:
      begin_object();
      for (const auto& [k, member] : v.items()) key(k).json(member);
      return end_object();
    case Json::value_t::array:
      begin_array();
      for (const auto& e : v) json(e);
      return end_array();
    case Json::value_t::string: return string(v.get_ref<const std::string&>());
    case Json::value_t::boolean: return boolean(v.get<bool>());
    case Json::value_t::number_integer: return integer(v.get<int64_t>());
    case Json::value_t::number_unsigned: {
      before_value();
      std::array<char, 24> b{};
      const auto r = std::to_chars(b.data(), b.data() + b.size(), v.get<uint64_t>());
      m_out.append(b.data(), r.ptr);
      return *this;
    }
    case Json::value_t::number_float: return number(v.get<double>());
    case Json::value_t::null: return null();
    case Json::value_t::binary:
    case Json::value_t::discarded: break;
  }
  before_value();
  fail("a binary or discarded JSON value cannot be written as text");
  return *this;
}

}  // namespace preflight
