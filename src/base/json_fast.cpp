// base/json_fast: the reader parse_json tries first (issue 19, start-up).
//
// nlohmann's lexer costs ~100 instructions a byte: it reads through an input adapter one character at a time, appends
// each to the token and to a copy kept for error messages. `fit` parses ~70 KB of embedded catalogue records, which was
// 4.3 M of its 7.1 M instructions. This reader scans runs of plain string bytes at once and builds the same
// nlohmann::json values. It accepts only what it can read exactly as nlohmann's DOM parser does (after parse_json's
// rewrite of NaN / Infinity / -Infinity into marker strings) and declines everything else: malformed text, a byte order
// mark, a number strtod would round to 0 or infinity, nesting past parse_json's limit. parse_json then takes nlohmann's
// path, which reports the error as before. tests/base/test_json_fast.cpp and fuzz_hf_config compare the two readers.
#include <charconv>
#include <cstring>
#include <system_error>

#include "base/json_util.hpp"
#include "base/utf8.hpp"

namespace preflight::detail {

namespace {

constexpr int k_max_depth = 64;                       // parse_json's limit: an object or array 65 deep is refused
constexpr char k_non_finite_marker[] = "\x01non-finite ";  // is_non_finite()'s prefix

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Reader {
 public:
  Reader(const char* begin, const char* end) : m_p(begin), m_end(end) {}

  bool document(Json& out) {
    skip_space();
    if (!value(out, 0)) return false;
    skip_space();
    return m_p == m_end;
  }

 private:
  const char* m_p;
  const char* m_end;

  void skip_space() {
    while (m_p < m_end && (*m_p == ' ' || *m_p == '\n' || *m_p == '\r' || *m_p == '\t')) ++m_p;
  }
  bool at(char c) const { return m_p < m_end && *m_p == c; }
  bool word(const char* text) {
    const size_t n = std::strlen(text);
    if (static_cast<size_t>(m_end - m_p) < n || std::memcmp(m_p, text, n) != 0) return false;
    m_p += n;
    return true;
  }
  bool non_finite(const char* token, Json& out) {
    if (!word(token)) return false;
    out = std::string(k_non_finite_marker) + token;
    return true;
  }

  bool value(Json& out, int depth) {
    if (m_p == m_end) return false;
    switch (*m_p) {
      case '{': return object(out, depth + 1);
      case '[': return array(out, depth + 1);
      case '"': {
        std::string text;
        if (!string(text)) return false;
        out = std::move(text);
        return true;
      }
      case 't': return word("true") && (out = true, true);
      case 'f': return word("false") && (out = false, true);
      case 'n': return word("null") && (out = nullptr, true);
      case 'N': return non_finite("NaN", out);
      case 'I': return non_finite("Infinity", out);
      case '-':
        if (m_p + 1 < m_end && m_p[1] == 'I') return non_finite("-Infinity", out);
        return number(out);
      default: return number(out);
    }
  }

  bool digits() {
    if (!(m_p < m_end && is_digit(*m_p))) return false;
    while (m_p < m_end && is_digit(*m_p)) ++m_p;
    return true;
  }

  // JSON's number grammar; an integer token is number_integer (with '-') or number_unsigned as nlohmann's strtoll /
  // strtoull give it, one they cannot hold a double; a double strtod would round to 0 or infinity is declined.
  bool number(Json& out) {
    const char* start = m_p;
    const bool negative = at('-');
    if (negative) ++m_p;
    if (at('0')) {
      ++m_p;
    } else if (!digits()) {
      return false;
    }
    bool integer = true;
    if (at('.')) {
      ++m_p;
      integer = false;
      if (!digits()) return false;
    }
    if (at('e') || at('E')) {
      ++m_p;
      integer = false;
      if (at('+') || at('-')) ++m_p;
      if (!digits()) return false;
    }
    if (integer) {
      if (negative) {
        int64_t v = 0;
        const auto r = std::from_chars(start, m_p, v);
        if (r.ec == std::errc() && r.ptr == m_p) {
          out = v;
          return true;
        }
      } else {
        uint64_t v = 0;
        const auto r = std::from_chars(start, m_p, v);
        if (r.ec == std::errc() && r.ptr == m_p) {
          out = v;
          return true;
        }
      }
    }
    double d = 0;
    const auto r = std::from_chars(start, m_p, d);
    if (r.ec != std::errc() || r.ptr != m_p) return false;
    out = d;
    return true;
  }

  bool hex4(uint32_t& cp) {
    if (m_end - m_p < 4) return false;
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = hex_value(m_p[i]);
      if (h < 0) return false;
      cp = cp * 16 + static_cast<uint32_t>(h);
    }
    m_p += 4;
    return true;
  }

  // After "\u": one code point, a surrogate pair joined, a lone surrogate refused (as nlohmann does).
  bool unicode_escape(std::string& out) {
    uint32_t cp = 0;
    if (!hex4(cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t low = 0;
      if (!word("\\u") || !hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, cp);
    return true;
  }

  bool escape(std::string& out) {
    if (m_p == m_end) return false;
    const char c = *m_p++;
    switch (c) {
      case '"': out += '"'; return true;
      case '\\': out += '\\'; return true;
      case '/': out += '/'; return true;
      case 'b': out += '\b'; return true;
      case 'f': out += '\f'; return true;
      case 'n': out += '\n'; return true;
      case 'r': out += '\r'; return true;
      case 't': out += '\t'; return true;
      case 'u': return unicode_escape(out);
      default: return false;
    }
  }

  // A string from its opening quote: runs of plain bytes are appended at once.
  bool string(std::string& out) {
    ++m_p;
    const char* run = m_p;
    for (;;) {
      while (m_p < m_end) {
        const auto c = static_cast<unsigned char>(*m_p);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++m_p;
      }
      if (m_p == m_end) return false;
      const auto c = static_cast<unsigned char>(*m_p);
      if (c == '"') {
        out.append(run, m_p);
        ++m_p;
        return true;
      }
      if (c < 0x20) return false;
      if (c >= 0x80) {
        const size_t n = utf8_sequence_at(std::string_view(m_p, static_cast<size_t>(m_end - m_p)), 0).length;
        if (n == 0) return false;
        m_p += n;
        continue;
      }
      out.append(run, m_p);
      ++m_p;
      if (!escape(out)) return false;
      run = m_p;
    }
  }

  // Members in order; a repeated key keeps its last value, as nlohmann's DOM parser assigns it.
  bool object(Json& out, int depth) {
    if (depth > k_max_depth) return false;
    ++m_p;
    Json::object_t members;
    skip_space();
    if (at('}')) {
      ++m_p;
      out = std::move(members);
      return true;
    }
    for (;;) {
      skip_space();
      if (!at('"')) return false;
      std::string key;
      if (!string(key)) return false;
      skip_space();
      if (!at(':')) return false;
      ++m_p;
      skip_space();
      Json member;
      if (!value(member, depth)) return false;
      members.insert_or_assign(std::move(key), std::move(member));
      skip_space();
      if (at(',')) {
        ++m_p;
        continue;
      }
      if (!at('}')) return false;
      ++m_p;
      out = std::move(members);
      return true;
    }
  }

  bool array(Json& out, int depth) {
    if (depth > k_max_depth) return false;
    ++m_p;
    Json::array_t items;
    skip_space();
    if (at(']')) {
      ++m_p;
      out = std::move(items);
      return true;
    }
    for (;;) {
      skip_space();
      items.emplace_back();
      if (!value(items.back(), depth)) return false;
      skip_space();
      if (at(',')) {
        ++m_p;
        continue;
      }
      if (!at(']')) return false;
      ++m_p;
      out = std::move(items);
      return true;
    }
  }
};

}  // namespace

bool parse_json_fast(std::string_view text, Json& out) {
  Json parsed;
  if (!Reader(text.data(), text.data() + text.size()).document(parsed)) return false;
  out = std::move(parsed);
  return true;
}

}  // namespace preflight::detail
