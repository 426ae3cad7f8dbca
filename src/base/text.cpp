#include "base/text.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>

namespace preflight {

std::string to_lower(std::string text) {
  // std::tolower in the "C" locale (preflight never sets another) changes A-Z alone; written out, it is no call per
  // character (issue 19, round 13: a plan lowers engine and quantization names tens of thousands of times).
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

std::string to_upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
  return text;
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == sep) {
      parts.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  parts.push_back(current);
  return parts;
}

bool starts_with(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool contains_ci(const std::string& haystack, const std::string& needle) {
  return to_lower(haystack).find(to_lower(needle)) != std::string::npos;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> nearest_names(const std::string& query, const std::vector<std::string>& candidates,
                                       size_t limit) {
  const std::string q = to_lower(query);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string lc = to_lower(c);
    size_t d = edit_distance(q, lc);
    if (!q.empty() && (lc.find(q) != std::string::npos || q.find(lc) != std::string::npos)) d = d / 4;
    scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, name] : scored) {
    if (out.size() >= limit) break;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

}  // namespace preflight

namespace preflight {

std::string strip_terminal_controls(const std::string& text) {
  // Planfast9: text holding none of the bytes the loop below acts on (a control other than newline and tab, DEL, the lead
  // byte of a UTF-8 C1 control) is what the loop writes, so it is returned whole: `logs` copied every line byte by byte
  // (8% of its instructions on a 40 MB log).
  // Session 36 (attack36's leftover): a lone byte 0x80-0x9f, one no UTF-8 lead byte announces, is an 8-bit C1 control
  // to a terminal in 8-bit mode (0x9b is CSI): `plan --model $'\x9b2J*'` echoed it. Inside a UTF-8 character the same
  // bytes are continuation bytes ("\xe2\x82\xac", the euro sign) and stay.
  const bool plain = [&] {
    int cont = 0;  // continuation bytes the last lead byte announced and not yet seen
    for (const char ch : text) {
      const auto c = static_cast<unsigned char>(ch);
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0xc2) return false;
      if (c >= 0x80 && c <= 0xbf) {
        if (cont > 0) { --cont; continue; }
        if (c <= 0x9f) return false;
        continue;
      }
      cont = c >= 0xc3 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    }
    return true;
  }();
  if (plain) return text;
  std::string out;
  out.reserve(text.size());
  const size_t n = text.size();
  int cont = 0;  // as above: continuation bytes still announced by the last UTF-8 lead byte
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80 && c <= 0xbf) {
      if (cont > 0) { --cont; out.push_back(static_cast<char>(c)); continue; }
      if (c <= 0x9f) continue;  // a lone 8-bit C1 control
      out.push_back(static_cast<char>(c));
      continue;
    }
    cont = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (c == 0x1b) {  // ESC: skip the whole sequence
      if (i + 1 < n && text[i + 1] == '[') {  // CSI: parameters and intermediates up to a final byte 0x40-0x7e
        i += 2;
        while (i < n && !(static_cast<unsigned char>(text[i]) >= 0x40 && static_cast<unsigned char>(text[i]) <= 0x7e)) ++i;
      } else if (i + 1 < n && (text[i + 1] == ']' || text[i + 1] == 'P' || text[i + 1] == '_' || text[i + 1] == '^')) {
        // OSC / DCS / APC / PM: up to BEL or ST (ESC \)
        i += 2;
        while (i < n && text[i] != '\a' && !(text[i] == 0x1b && i + 1 < n && text[i + 1] == '\\')) ++i;
        if (i < n && text[i] == 0x1b) ++i;
      } else if (i + 1 < n) {
        ++i;  // two-byte escape (ESC c, ESC 7, ...)
      }
      continue;
    }
    if (c == '\n' || c == '\t') { out.push_back(static_cast<char>(c)); continue; }
    if (c < 0x20 || c == 0x7f) continue;
    if (c == 0xc2 && i + 1 < n) {  // UTF-8 encoded C1 controls U+0080-U+009F
      const auto d = static_cast<unsigned char>(text[i + 1]);
      if (d >= 0x80 && d <= 0x9f) { ++i; cont = 0; continue; }
    }
    out.push_back(static_cast<char>(c));
  }
  return out;
}

namespace {

// A query parameter whose name says it carries a credential (?token=, ?api_key=, ?X-Amz-Signature=, ?sig=,
// ?password=): its value is replaced, the name kept so the reader sees what was there.
bool secret_parameter_name(std::string name) {
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* word : {"token", "key", "secret", "passw", "pwd", "sig", "auth", "credential", "session"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

// [begin, end) of every credential in the URLs of `text`, in order and not overlapping: a userinfo and the values of
// the query's parameters with a secret name.
std::vector<std::pair<size_t, size_t>> credential_spans(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> spans;
  for (size_t scheme = text.find("://"); scheme != std::string::npos; scheme = text.find("://", scheme + 3)) {
    const size_t start = scheme + 3;
    size_t end = start;
    while (end < text.size() && std::string_view("/?#\"' \t\r\n<>").find(text[end]) == std::string_view::npos) ++end;
    const size_t at = text.rfind('@', end == 0 ? 0 : end - 1);
    if (at != std::string::npos && at >= start && at < end) spans.emplace_back(start, at);
    // Issue 19: the query's credentials (http://host/v1?token=...): the URL runs on to whitespace, a quote, '<', '>'
    // or the end, its query from '?' to '#'.
    size_t url_end = end;
    while (url_end < text.size() && std::string_view("\"' \t\r\n<>").find(text[url_end]) == std::string_view::npos) ++url_end;
    if (const size_t hash = text.find('#', end); hash < url_end) url_end = hash;
    const size_t query = text.find('?', end);
    if (query == std::string::npos || query >= url_end) continue;
    for (size_t p = query + 1; p < url_end;) {
      size_t stop = p;
      while (stop < url_end && text[stop] != '&' && text[stop] != ';') ++stop;
      const size_t eq = text.find('=', p);
      if (eq != std::string::npos && eq + 1 < stop && secret_parameter_name(text.substr(p, eq - p))) spans.emplace_back(eq + 1, stop);
      p = stop + 1;
    }
  }
  // A URL inside another's query (?next=http://u:p@host/) gives spans inside the outer one's: merged.
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<size_t, size_t>> merged;
  for (const auto& span : spans) {
    if (!merged.empty() && span.first <= merged.back().second) merged.back().second = std::max(merged.back().second, span.second);
    else merged.push_back(span);
  }
  return merged;
}

}  // namespace

std::string redact_url_credentials(std::string text) {
  const auto spans = credential_spans(text);
  for (auto it = spans.rbegin(); it != spans.rend(); ++it) text.replace(it->first, it->second - it->first, "***");
  return text;
}

std::vector<std::string> url_credentials(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& [begin, end] : credential_spans(text)) out.push_back(text.substr(begin, end - begin));
  return out;
}

std::optional<int32_t> parse_iso_date(const std::string& text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
  const int y = std::stoi(text.substr(0, 4)), m = std::stoi(text.substr(5, 2)), d = std::stoi(text.substr(8, 2));
  if (m < 1 || m > 12 || d < 1) return std::nullopt;
  static constexpr int k_days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > k_days[m - 1] + (m == 2 && leap ? 1 : 0)) return std::nullopt;
  return static_cast<int32_t>(y * 10000 + m * 100 + d);
}

std::optional<DateInText> find_iso_date(const std::string& text) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  for (size_t i = 0; i + 10 <= text.size(); ++i) {
    if (i > 0 && digit(text[i - 1])) continue;
    if (i + 10 < text.size() && digit(text[i + 10])) continue;
    const std::string candidate = text.substr(i, 10);
    if (const auto day = parse_iso_date(candidate)) return DateInText{*day, candidate};
  }
  return std::nullopt;
}

std::string clip_text(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t cut = max_bytes;
  // Back over continuation bytes (10xxxxxx) to the lead byte of the character the limit falls in, which is left out.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "... (" + std::to_string(text.size()) + " bytes in all)";
}

}  // namespace preflight
