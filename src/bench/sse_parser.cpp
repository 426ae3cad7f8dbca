#include "bench/sse_parser.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "base/units.hpp"

namespace preflight::bench {

namespace {

constexpr int k_max_depth = 64;

// A cursor over one payload. Every method returns false at the first syntax error and leaves
// `pos` at the offending byte; the caller reports it.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : m_text(text) {}

  size_t pos() const { return m_pos; }
  bool at_end() { skip_ws(); return m_pos >= m_text.size(); }

  void skip_ws() {
    while (m_pos < m_text.size() && (m_text[m_pos] == ' ' || m_text[m_pos] == '\t' || m_text[m_pos] == '\n' || m_text[m_pos] == '\r')) ++m_pos;
  }
  bool peek(char c) { skip_ws(); return m_pos < m_text.size() && m_text[m_pos] == c; }
  bool eat(char c) {
    if (!peek(c)) return false;
    ++m_pos;
    return true;
  }

  // A string; `chars` gets the decoded character count (an escape counts one), `out` (optional)
  // the raw text between the quotes.
  bool string(int64_t* chars, std::string_view* out = nullptr) {
    if (!eat('"')) return false;
    const size_t start = m_pos;
    int64_t n = 0;
    while (m_pos < m_text.size()) {
      const char c = m_text[m_pos];
      if (c == '"') {
        if (out) *out = m_text.substr(start, m_pos - start);
        ++m_pos;
        if (chars) *chars = n;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c == '\\') {
        if (m_pos + 1 >= m_text.size()) return false;
        const char e = m_text[m_pos + 1];
        if (e == 'u') {
          if (m_pos + 6 > m_text.size()) return false;
          for (size_t i = m_pos + 2; i < m_pos + 6; ++i) {
            if (!std::isxdigit(static_cast<unsigned char>(m_text[i]))) return false;
          }
          m_pos += 6;
        } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
          m_pos += 2;
        } else {
          return false;
        }
        ++n;
        continue;
      }
      // Count UTF-8 code points, not bytes: continuation bytes do not start a character.
      if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
      ++m_pos;
    }
    return false;
  }

  bool number(double* value) {
    skip_ws();
    const size_t start = m_pos;
    if (m_pos < m_text.size() && m_text[m_pos] == '-') ++m_pos;
    while (m_pos < m_text.size() && (std::isdigit(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '.' || m_text[m_pos] == 'e' ||
                                     m_text[m_pos] == 'E' || m_text[m_pos] == '+' || m_text[m_pos] == '-')) {
      ++m_pos;
    }
    if (m_pos == start) return false;
    double v = 0;
    const auto r = std::from_chars(m_text.data() + start, m_text.data() + m_pos, v);
    if (r.ec != std::errc() || r.ptr != m_text.data() + m_pos) return false;
    if (value) *value = v;
    return true;
  }

  bool literal(std::string_view word) {
    skip_ws();
    if (m_text.substr(m_pos, word.size()) != word) return false;
    m_pos += word.size();
    return true;
  }

  bool is_null() {
    skip_ws();
    if (m_text.substr(m_pos, 4) == "null") {
      m_pos += 4;
      return true;
    }
    return false;
  }

  // Skips any value; `bytes` gets its raw length.
  bool skip(int depth, int64_t* bytes = nullptr) {
    if (depth > k_max_depth) return false;
    skip_ws();
    const size_t start = m_pos;
    bool ok = true;
    if (peek('"')) {
      ok = string(nullptr);
    } else if (eat('{')) {
      if (!eat('}')) {
        do {
          if (!string(nullptr) || !eat(':') || !skip(depth + 1)) return false;
        } while (eat(','));
        ok = eat('}');
      }
    } else if (eat('[')) {
      if (!eat(']')) {
        do {
          if (!skip(depth + 1)) return false;
        } while (eat(','));
        ok = eat(']');
      }
    } else if (peek('t')) {
      ok = literal("true");
    } else if (peek('f')) {
      ok = literal("false");
    } else if (peek('n')) {
      ok = literal("null");
    } else {
      ok = number(nullptr);
    }
    if (bytes) *bytes = static_cast<int64_t>(m_pos - start);
    return ok;
  }

  // Iterates an object's members: calls member(key) positioned at the value; member must consume it.
  template <typename F>
  bool object(F&& member) {
    if (!eat('{')) return false;
    if (eat('}')) return true;
    do {
      std::string_view key;
      if (!string(nullptr, &key) || !eat(':')) return false;
      if (!member(key)) return false;
    } while (eat(','));
    return eat('}');
  }

  template <typename F>
  bool array(F&& element) {
    if (!eat('[')) return false;
    if (eat(']')) return true;
    do {
      if (!element()) return false;
    } while (eat(','));
    return eat(']');
  }

  // A value that is valid JSON but not what the field holds: stops the scan with `reason` as the message.
  bool reject(std::string reason) {
    m_reason = std::move(reason);
    return false;
  }
  const std::string& reason() const { return m_reason; }

 private:
  std::string_view m_text;
  size_t m_pos = 0;
  std::string m_reason;
};

// A token count: a whole number in [0, 2^40]. 2^40 (about 1.1e12) tokens is far beyond any served context; a
// server claiming more, less than 0 or a fraction is lying about its usage, and 1e300 cast to int64_t was undefined
// behaviour (issue 19): the chunk is refused, so the request fails with the field named.
constexpr double k_max_token_count = 1099511627776.0;

bool read_int(Scanner& s, int64_t* out, const char* field) {
  if (s.is_null()) return true;
  double v = 0;
  if (!s.number(&v)) return false;
  if (!(v >= 0 && v <= k_max_token_count && v == std::floor(v))) {
    return s.reject(format("%s is %.15g, expected a whole token count from 0 to 2^40", field, v));
  }
  *out = static_cast<int64_t>(v);
  return true;
}

// A string or null into `out`; any other value is skipped.
bool read_text(Scanner& s, std::string* out) {
  if (s.is_null()) return true;
  if (s.peek('"')) {
    std::string_view raw;
    if (!s.string(nullptr, &raw)) return false;
    out->assign(raw.data(), raw.size());
    return true;
  }
  return s.skip(1);
}

bool string_len(Scanner& s, int64_t* chars) {
  if (s.is_null()) return true;
  if (!s.peek('"')) return s.skip(1);
  int64_t n = 0;
  if (!s.string(&n)) return false;
  *chars += n;
  return true;
}

bool read_delta(Scanner& s, ChunkInfo& info) {
  if (s.is_null()) return true;
  return s.object([&](std::string_view key) {
    if (key == "content") return string_len(s, &info.content_chars);
    if (key == "reasoning" || key == "reasoning_content") return string_len(s, &info.reasoning_chars);
    if (key == "tool_calls") {
      if (s.is_null()) return true;
      int64_t bytes = 0;
      if (!s.skip(2, &bytes)) return false;
      if (bytes > 2) info.tool_call_chars += bytes;  // "[]" is no output
      return true;
    }
    return s.skip(2);
  });
}

bool read_choice(Scanner& s, ChunkInfo& info) {
  ++info.choices;
  if (!s.peek('{')) return s.skip(1);
  return s.object([&](std::string_view key) {
    if (key == "delta") return read_delta(s, info);
    if (key == "text") return string_len(s, &info.content_chars);
    if (key == "finish_reason") return read_text(s, &info.finish_reason);
    return s.skip(2);
  });
}

bool read_usage(Scanner& s, ChunkInfo& info) {
  if (s.is_null()) return true;
  info.has_usage = true;
  return s.object([&](std::string_view key) {
    if (key == "prompt_tokens") return read_int(s, &info.prompt_tokens, "usage.prompt_tokens");
    if (key == "completion_tokens") return read_int(s, &info.completion_tokens, "usage.completion_tokens");
    if (key == "completion_tokens_details") {
      if (s.is_null()) return true;
      return s.object([&](std::string_view k2) { return k2 == "reasoning_tokens" ? read_int(s, &info.reasoning_tokens, "usage.completion_tokens_details.reasoning_tokens") : s.skip(3); });
    }
    return s.skip(2);
  });
}

bool read_error(Scanner& s, ChunkInfo& info) {
  if (s.is_null()) return true;
  info.is_error = true;
  if (s.peek('"')) return read_text(s, &info.error_message);
  if (!s.peek('{')) return s.skip(1);
  return s.object([&](std::string_view key) { return key == "message" ? read_text(s, &info.error_message) : s.skip(2); });
}

// TGI / MindIE /generate_stream: "token": {"id", "text", "logprob", "special"}. One token per event; it counts
// as one choice so that the first-chunk time is recorded as for OpenAI chunks.
bool read_tgi_token(Scanner& s, ChunkInfo& info) {
  if (s.is_null()) return true;
  ++info.choices;
  if (!s.peek('{')) return s.skip(1);
  return s.object([&](std::string_view key) { return key == "text" ? string_len(s, &info.content_chars) : s.skip(2); });
}

// The final event's "details": {"finish_reason", "generated_tokens", "prompt_tokens" (MindIE), "seed", ...}.
bool read_tgi_details(Scanner& s, ChunkInfo& info) {
  if (s.is_null()) return true;
  info.is_final = true;
  if (!s.peek('{')) return s.skip(1);
  info.has_usage = true;
  return s.object([&](std::string_view key) {
    if (key == "finish_reason") return read_text(s, &info.finish_reason);
    if (key == "generated_tokens") return read_int(s, &info.completion_tokens, "details.generated_tokens");
    if (key == "prompt_tokens") return read_int(s, &info.prompt_tokens, "details.prompt_tokens");
    return s.skip(2);
  });
}

}  // namespace

Expected<ChunkInfo> parse_chunk(std::string_view payload) {
  ChunkInfo info;
  size_t b = 0, e = payload.size();
  while (b < e && (payload[b] == ' ' || payload[b] == '\t')) ++b;
  while (e > b && (payload[e - 1] == ' ' || payload[e - 1] == '\t' || payload[e - 1] == '\r')) --e;
  if (payload.substr(b, e - b) == "[DONE]") {
    info.is_done = true;
    return info;
  }
  Scanner s(payload);
  std::string object_type, root_message;
  const bool ok = s.peek('{') && s.object([&](std::string_view key) {
    if (key == "choices") {
      if (s.is_null()) return true;
      return s.array([&] { return read_choice(s, info); });
    }
    if (key == "usage") return read_usage(s, info);
    if (key == "error") return read_error(s, info);
    if (key == "object") return read_text(s, &object_type);
    if (key == "message") return read_text(s, &root_message);
    if (key == "token") return read_tgi_token(s, info);
    if (key == "details") return read_tgi_details(s, info);
    if (key == "generated_text") {
      if (s.is_null()) return true;
      info.is_final = true;
      return s.skip(1);
    }
    return s.skip(1);
  }) && s.at_end();
  if (!ok && !s.reason().empty()) return make_error(ErrorKind::corrupt, "malformed sse: " + s.reason());
  if (!ok) {
    return make_error(ErrorKind::corrupt, format("malformed sse: data is not a JSON object (syntax error at byte %zu of %zu)", s.pos(), payload.size()));
  }
  if (object_type == "error") {
    info.is_error = true;
    if (info.error_message.empty()) info.error_message = root_message;
  }
  return info;
}

SseFramer::SseFramer(EventFn on_event, SseLimits limits) : m_on_event(std::move(on_event)), m_limits(limits) {}

Status SseFramer::fail(SseFailure failure, Error error) {
  m_failed = true;
  m_failure = failure;
  m_error = std::move(error);
  m_partial.clear();
  m_partial.shrink_to_fit();
  m_data.clear();
  m_data.shrink_to_fit();
  return m_error;
}

Status SseFramer::feed(std::string_view bytes, int64_t t_ns) {
  if (m_failed) return m_error;
  m_bytes += static_cast<int64_t>(bytes.size());
  if (static_cast<uint64_t>(m_bytes) > m_limits.max_stream_bytes) {
    return fail(SseFailure::stream_too_large, make_error(ErrorKind::corrupt, format("sse stream exceeds %llu bytes", static_cast<unsigned long long>(m_limits.max_stream_bytes))));
  }
  const auto line_too_long = [&] { return fail(SseFailure::line_too_long, make_error(ErrorKind::corrupt, format("sse line exceeds %zu bytes", m_limits.max_line_bytes))); };
  size_t pos = 0;
  while (pos < bytes.size()) {
    const size_t nl = bytes.find('\n', pos);
    if (nl == std::string_view::npos) {
      if (m_partial.size() + (bytes.size() - pos) > m_limits.max_line_bytes) return line_too_long();
      m_partial.append(bytes.data() + pos, bytes.size() - pos);
      break;
    }
    std::string_view text = bytes.substr(pos, nl - pos);
    Status st = Ok{};
    if (!m_partial.empty()) {
      if (m_partial.size() + text.size() > m_limits.max_line_bytes) return line_too_long();
      m_partial.append(text.data(), text.size());
      st = line(m_partial, t_ns);
      m_partial.clear();
    } else if (text.size() > m_limits.max_line_bytes) {
      return line_too_long();
    } else {
      st = line(text, t_ns);
    }
    if (!st) return m_failed ? m_error : fail(SseFailure::event_rejected, st.error());
    pos = nl + 1;
  }
  return Ok{};
}

Status SseFramer::finish(int64_t t_ns) {
  if (m_failed) return m_error;
  if (!m_partial.empty()) {
    std::string last;
    last.swap(m_partial);
    auto st = line(last, t_ns);
    if (!st) return m_failed ? m_error : fail(SseFailure::event_rejected, st.error());
  }
  if (m_has_data) {
    auto st = dispatch(t_ns);
    if (!st) return fail(SseFailure::event_rejected, st.error());
  }
  return Ok{};
}

Status SseFramer::line(std::string_view text, int64_t t_ns) {
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  if (text.empty()) return m_has_data ? dispatch(t_ns) : Status(Ok{});
  if (text[0] == ':') return Ok{};  // comment / keep-alive
  const size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  if (field != "data") return Ok{};  // event:, id:, retry: and unknown fields carry nothing we measure
  std::string_view value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  if (m_data.size() + value.size() + 1 > m_limits.max_event_bytes) {
    return fail(SseFailure::event_too_large,
                make_error(ErrorKind::corrupt, format("sse event exceeds %zu bytes (data lines without the blank line that ends an event)", m_limits.max_event_bytes)));
  }
  if (m_has_data) m_data.push_back('\n');
  m_data.append(value.data(), value.size());
  m_has_data = true;
  return Ok{};
}

Status SseFramer::dispatch(int64_t t_ns) {
  ++m_events;
  m_has_data = false;
  auto st = m_on_event(m_data, t_ns);
  m_data.clear();
  return st;
}

}  // namespace preflight::bench
