// The hand-written scanners engine_log.cpp reads log lines with (log_scan.hpp).
#include "logs/log_scan.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::logs::detail {

// Issue 19: the few patterns read out of a log line are scanned by hand. std::regex's executor recursed once per
// repeated character: a 63 KB config line ("'cudagraph_capture_sizes': [1, 1, 1, ..." without its bracket) overflowed
// the stack (SIGSEGV). Each scanner below says the pattern it replaces.
bool word_byte(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
size_t skip_spaces(std::string_view s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])) != 0) ++i;
  return i;
}
size_t word_end(std::string_view s, size_t i) {
  while (i < s.size() && word_byte(s[i])) ++i;
  return i;
}
size_t digits_end(std::string_view s, size_t i) {
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i;
  return i;
}
bool quote(char c) { return c == '\'' || c == '"'; }

// `['"]KEY['"]\s*:\s*` at its first occurrence: the offset after it, or npos.
size_t after_quoted_key(std::string_view s, std::string_view key) {
  for (size_t k = s.find(key); k != std::string_view::npos; k = s.find(key, k + 1)) {
    const size_t end = k + key.size();
    if (k == 0 || !quote(s[k - 1]) || end >= s.size() || !quote(s[end])) continue;
    const size_t colon = skip_spaces(s, end + 1);
    if (colon < s.size() && s[colon] == ':') return skip_spaces(s, colon + 1);
  }
  return std::string_view::npos;
}

char line_end_byte(const std::string& text) {
  return text.find('\n') == std::string::npos && text.find('\r') != std::string::npos ? '\r' : '\n';
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  const char line_end = line_end_byte(text);
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(line_end, start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, std::min(end - start, k_max_line_chars));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // The log is foreign text that `logs` prints back (evidence, arguments, versions): every escape
    // sequence and control character goes here, where the lines are captured, not only colours.
    lines.push_back(strip_terminal_controls(line));
    if (end == text.size()) break;
    start = end + 1;
  }
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// Planfast9: the places where the needle's first byte stands (either case) are found with memchr, one search per case
// kept until passed, and only there the rest is compared; the byte-by-byte loop was 28% of `logs` on a 40 MB log.
size_t find_ci(std::string_view hay, std::string_view needle, size_t from) {
  if (needle.empty() || hay.size() < needle.size() || from > hay.size() - needle.size()) return std::string::npos;
  const unsigned char first = lower_ascii(static_cast<unsigned char>(needle[0]));
  const unsigned char other = first >= 'a' && first <= 'z' ? static_cast<unsigned char>(first - ('a' - 'A')) : first;
  const size_t end = hay.size() - needle.size() + 1;  // one past the last place a match can start
  const auto next = [&](unsigned char c, size_t at) {
    const void* p = at < end ? std::memchr(hay.data() + at, c, end - at) : nullptr;
    return p ? static_cast<size_t>(static_cast<const char*>(p) - hay.data()) : std::string::npos;
  };
  size_t lower = next(first, from), upper = other == first ? std::string::npos : next(other, from);
  while (lower != std::string::npos || upper != std::string::npos) {
    const size_t i = std::min(lower, upper);
    size_t k = 1;
    while (k < needle.size() && lower_ascii(static_cast<unsigned char>(hay[i + k])) == lower_ascii(static_cast<unsigned char>(needle[k]))) ++k;
    if (k == needle.size()) return i;
    if (i == lower) lower = next(first, i + 1);
    else upper = next(other, i + 1);
  }
  return std::string::npos;
}

// A number starting at `pos` (optional sign, digits with thousands commas, decimals).
std::optional<double> number_at(const std::string& s, size_t pos, size_t* end_out) {
  while (pos < s.size() && s[pos] == ' ') ++pos;
  std::string digits;
  size_t i = pos;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) digits.push_back(s[i++]);
  bool any = false;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == ',' || s[i] == '.')) {
    if (s[i] == ',' && !(i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) break;
    if (s[i] != ',') digits.push_back(s[i]);
    any = any || std::isdigit(static_cast<unsigned char>(s[i]));
    ++i;
  }
  if (!any) return std::nullopt;
  // Issue 19 (attack36): the engines print these figures with printf's %f / %d ("Available KV cache memory: 30.00 GiB",
  // "Maximum concurrency for 8,192 tokens per request: 56.21x"). "1e400" was read as 1, "1.2.3" as 1.2, "0x10" as 0 and
  // 400 nines as inf, each compared with the prediction, exit 0. A figure the engine cannot have printed is no figure: an
  // exponent or a hexadecimal digit run after the digits, a second decimal point, a value too large for a double.
  const auto at = [&](size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const bool exponent = (at(i) == 'e' || at(i) == 'E') && (std::isdigit(at(i + 1)) || ((at(i + 1) == '+' || at(i + 1) == '-') && std::isdigit(at(i + 2))));
  const bool hex = (at(i) == 'x' || at(i) == 'X') && std::isalnum(at(i + 1));
  if (exponent || hex) return std::nullopt;
  char* endp = nullptr;
  const double v = std::strtod(digits.c_str(), &endp);
  if (endp != digits.c_str() + digits.size() || !std::isfinite(v)) return std::nullopt;
  if (end_out) *end_out = i;
  return v;
}

std::optional<double> number_after(const std::string& s, const std::string& key, size_t* end_out) {
  const size_t p = s.find(key);
  if (p == std::string::npos) return std::nullopt;
  return number_at(s, p + key.size(), end_out);
}

// A count (tokens, blocks, items) as a log prints it: only a finite whole number in [0, 2^53] (exact in a double) is
// taken; anything larger, negative or fractional gives nothing. fuzz_engine_log: a 26-digit "Maximum concurrency for N"
// was cast to int64_t out of range (UBSan: float-cast-overflow).
std::optional<int64_t> count_after(const std::string& s, const std::string& key, size_t* end_out) {
  const auto v = number_after(s, key, end_out);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > 9007199254740992.0 || *v != std::floor(*v)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

// A size at `pos` as the engines print one ("1.14 GiB", "8.51GiB", "-7.83GiB", "172.00 MiB"): an optional sign, digits,
// at most one decimal point with digits after it, spaces, then a unit `unit` reads. Anything else (a second point, an
// exponent, a thousands comma, no digits, a figure too long for a double, another unit) is malformed and gives nothing,
// so a damaged line is skipped rather than half read.
std::optional<double> size_at(const std::string& s, size_t pos, SizeUnit unit) {
  while (pos < s.size() && s[pos] == ' ') ++pos;
  size_t i = pos;
  if (i < s.size() && s[i] == '-') ++i;
  const size_t digits_from = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == digits_from) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    const size_t frac_from = ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    if (i == frac_from) return std::nullopt;
  }
  const std::string token = s.substr(pos, i - pos);
  while (i < s.size() && s[i] == ' ') ++i;
  const double v = std::strtod(token.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;
  if (s.compare(i, 3, "GiB") == 0) return unit == SizeUnit::gib ? v : v * k_gib;
  if (unit == SizeUnit::gib) return std::nullopt;
  struct Scale {
    std::string_view text;
    double bytes;
  };
  for (const Scale& u : {Scale{"MiB", k_mib}, Scale{"KiB", 1024.0}, Scale{"GB", 1e9}, Scale{"MB", 1e6}})
    if (s.compare(i, u.text.size(), u.text) == 0) return v * u.bytes;
  return std::nullopt;
}

// The number that ends just before `suffix` ("28.79 GiB already allocated" -> bytes).
std::optional<double> size_before(const std::string& s, const std::string& suffix) {
  const size_t p = s.find(suffix);
  if (p == std::string::npos || p == 0) return std::nullopt;
  size_t i = p;
  while (i > 0 && s[i - 1] == ' ') --i;
  while (i > 0 && std::isalpha(static_cast<unsigned char>(s[i - 1]))) --i;  // unit
  while (i > 0 && s[i - 1] == ' ') --i;
  while (i > 0 && (std::isdigit(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '.' || s[i - 1] == ',')) --i;
  return size_at(s, i, SizeUnit::bytes);
}

// A version token after `key` (case-insensitive): skips "==", ":", "version", "(v", spaces.
std::optional<std::string> version_after(const std::string& line, std::string_view key) {
  size_t p = find_ci(line, key);
  while (p != std::string::npos) {
    size_t i = p + key.size();
    auto skip = [&] {
      while (i < line.size() && (line[i] == ' ' || line[i] == '=' || line[i] == ':' || line[i] == '(' || line[i] == '\t')) ++i;
    };
    skip();
    if (find_ci(std::string_view(line).substr(i, 8), "version") == 0) {
      i += 7;
      skip();
    }
    if (i < line.size() && (line[i] == 'v' || line[i] == 'V')) ++i;
    if (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) {
      size_t j = i;
      while (j < line.size() && (std::isalnum(static_cast<unsigned char>(line[j])) || line[j] == '.' || line[j] == '+' || line[j] == '_' || line[j] == '-')) ++j;
      std::string v = line.substr(i, j - i);
      while (!v.empty() && (v.back() == '.' || v.back() == '-')) v.pop_back();
      if (v.find('.') != std::string::npos) return v;
    }
    p = find_ci(line, key, p + 1);
  }
  return std::nullopt;
}

std::string unquote(std::string v) {
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) return v.substr(1, v.size() - 2);
  return v;
}

// Top-level "key=value" (sep '=') or "'key': value" (sep ':') pairs of a config dump, honouring
// quotes and nested brackets.
std::map<std::string, std::string> scan_pairs(const std::string& text, char sep) {
  std::map<std::string, std::string> out;
  std::vector<std::string> items;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char c : text) {
    if (quote) {
      cur.push_back(c);
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    else if (c == '{' || c == '[' || c == '(') ++depth;
    else if (c == '}' || c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
      continue;
    }
    if (depth < 0) break;
    cur.push_back(c);
  }
  items.push_back(cur);
  for (const auto& item : items) {
    const size_t p = item.find(sep);
    if (p == std::string::npos) continue;
    const std::string key = unquote(item.substr(0, p));
    if (key.empty() || key.find(' ') != std::string::npos) continue;
    out[key] = unquote(item.substr(p + 1));
  }
  return out;
}

std::optional<int64_t> to_int(const std::string& v) {
  if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '-')) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  // Issue 19 (hard33): strtoll gives LLONG_MAX for 10^20 ('api_server_count': 100000000000000000000 was read as 2^63 - 1).
  if (end == v.c_str() || *end != '\0' || errno == ERANGE) return std::nullopt;
  return n;
}

std::optional<double> to_double(const std::string& v) {
  if (v.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0') return std::nullopt;
  return d;
}

}  // namespace preflight::logs::detail

namespace preflight::logs {

size_t count_log_lines(const std::string& text) {
  if (text.empty()) return 0;
  const char line_end = detail::line_end_byte(text);
  const size_t ends = static_cast<size_t>(std::count(text.begin(), text.end(), line_end));
  return text.back() == line_end ? ends : ends + 1;
}

}  // namespace preflight::logs
