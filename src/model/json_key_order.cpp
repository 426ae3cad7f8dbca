// Scans JSON text (RFC 8259) for the member keys of one object in their written order. The scan reads tokens only:
// strings from quote to quote (a backslash escapes the next byte), objects and arrays by their brackets with a depth
// bound, and any other value (number, true, false, null) as the run of bytes up to the next ',', '}', ']' or space;
// the values themselves are parse_json's job. Each key is decoded by parse_json, so it compares equal to the key
// preflight::Json holds.
#include "model/json_key_order.hpp"

#include <cstring>

#include "base/json_util.hpp"
#include "base/units.hpp"

namespace preflight::model {

namespace {
constexpr int k_max_depth = 128;
constexpr size_t k_max_keys = 65536;

class Scanner {
 public:
  Scanner(std::string_view text, const std::string& origin) : m_text(text), m_origin(origin) {}

  Error fail(const char* what) const {
    return make_error(ErrorKind::corrupt, format("%s: %s at byte %zu (scanning for key order)", m_origin.c_str(), what, m_pos), m_origin);
  }

  void skip_ws() {
    while (m_pos < m_text.size() && std::strchr(" \t\r\n", m_text[m_pos]) && m_text[m_pos] != '\0') ++m_pos;
  }

  bool at(char c) const { return m_pos < m_text.size() && m_text[m_pos] == c; }

  // The string token at the cursor, quotes included.
  Expected<std::string_view> string_token() {
    if (!at('"')) return fail("expected a string");
    const size_t start = m_pos++;
    while (m_pos < m_text.size()) {
      const char c = m_text[m_pos++];
      if (c == '\\') {
        if (m_pos >= m_text.size()) break;
        ++m_pos;
      } else if (c == '"') {
        return m_text.substr(start, m_pos - start);
      }
    }
    return fail("unterminated string");
  }

  Expected<std::string> key() {
    PF_TRY(token, string_token());
    PF_TRY(decoded, parse_json(std::string(token), m_origin));
    if (!decoded.is_string()) return fail("expected a string key");
    skip_ws();
    if (!at(':')) return fail("expected ':' after a key");
    ++m_pos;
    return decoded.get<std::string>();
  }

  // After a member or an element: ',' (true: another follows) or the closing bracket (false).
  Expected<bool> next(char close) {
    skip_ws();
    if (at(',')) {
      ++m_pos;
      return true;
    }
    if (at(close)) {
      ++m_pos;
      return false;
    }
    return fail(close == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
  }

  Status skip_value(int depth) {
    if (depth > k_max_depth) return fail("nesting deeper than 128");
    skip_ws();
    if (at('"')) {
      PF_TRY(token, string_token());
      (void)token;
      return Ok{};
    }
    if (at('{') || at('[')) {
      const bool object = at('{');
      const char close = object ? '}' : ']';
      ++m_pos;
      skip_ws();
      if (at(close)) {
        ++m_pos;
        return Ok{};
      }
      for (bool more = true; more;) {
        if (object) {
          skip_ws();
          PF_TRY(token, string_token());
          (void)token;
          skip_ws();
          if (!at(':')) return fail("expected ':' after a key");
          ++m_pos;
        }
        PF_TRY(value, skip_value(depth + 1));
        (void)value;
        PF_TRY(again, next(close));
        more = again;
      }
      return Ok{};
    }
    const size_t start = m_pos;
    while (m_pos < m_text.size() && m_text[m_pos] != '\0' && !std::strchr(",}] \t\r\n", m_text[m_pos])) ++m_pos;
    if (m_pos == start) return fail("expected a value");
    return Ok{};
  }

  // The cursor is at an object's '{': its keys in order; with `descend` set, only the value of the member named
  // `descend` is entered (found: true), the others skipped.
  Expected<bool> object(int depth, const std::string* descend, std::vector<std::string>* keys) {
    if (depth > k_max_depth) return fail("nesting deeper than 128");
    skip_ws();
    if (!at('{')) return fail("expected an object");
    ++m_pos;
    skip_ws();
    if (at('}')) {
      ++m_pos;
      return false;
    }
    for (bool more = true; more;) {
      skip_ws();
      PF_TRY(name, key());
      if (descend && name == *descend) return true;  // the cursor is at the member's value
      if (keys) {
        if (keys->size() >= k_max_keys) return fail("more than 65536 keys in one object");
        keys->push_back(name);
      }
      PF_TRY(value, skip_value(depth + 1));
      (void)value;
      PF_TRY(again, next('}'));
      more = again;
    }
    return false;
  }

 private:
  std::string_view m_text;
  const std::string& m_origin;
  size_t m_pos = 0;
};
}  // namespace

Expected<std::vector<std::string>> object_keys_in_order(std::string_view text, const std::vector<std::string>& path, const std::string& origin) {
  // A UTF-8 byte order mark before the text, as parse_json accepts one.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  Scanner scan(text, origin);
  int depth = 0;
  for (const auto& member : path) {
    PF_TRY(found, scan.object(depth, &member, nullptr));
    if (!found) return std::vector<std::string>{};
    ++depth;
  }
  std::vector<std::string> keys;
  PF_TRY(done, scan.object(depth, nullptr, &keys));
  (void)done;
  return keys;
}

}  // namespace preflight::model
