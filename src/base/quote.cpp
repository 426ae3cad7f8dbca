// base/quote: see quote.hpp. The value is read one unit at a time (an escaped control, one UTF-8 character, or one
// byte that starts none) so that a cut never splits one.
#include "base/quote.hpp"

#include <algorithm>

#include "base/utf8.hpp"

namespace preflight {

namespace {

// The rendering of the unit that starts at text[i], and its length in `text`.
struct QuoteUnit {
  std::string shown;
  size_t length = 1;
};

QuoteUnit quote_unit_at(const std::string& text, size_t i) {
  static constexpr char k_hex[] = "0123456789abcdef";
  const auto c = static_cast<unsigned char>(text[i]);
  if (c == '\n') return {"\\n", 1};
  if (c == '\r') return {"\\r", 1};
  if (c < 0x20 || c == 0x7f) return {std::string("\\x") + k_hex[c >> 4] + k_hex[c & 0xf], 1};
  if (c < 0x80) return {std::string(1, static_cast<char>(c)), 1};
  const Utf8Sequence seq = utf8_sequence_at(text, i);
  if (seq.length == 0) return {std::string(1, static_cast<char>(c)), 1};  // not UTF-8: one byte, as it is
  if (c == 0xc2 && static_cast<unsigned char>(text[i + 1]) <= 0x9f) {     // U+0080 - U+009F, the C1 controls
    const auto d = static_cast<unsigned char>(text[i + 1]);
    return {std::string("\\u00") + k_hex[d >> 4] + k_hex[d & 0xf], 2};
  }
  return {text.substr(i, seq.length), seq.length};
}

}  // namespace

std::string one_line(const std::string& text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 32);
  for (size_t i = 0; i < text.size();) {
    QuoteUnit unit = quote_unit_at(text, i);
    if (out.size() + unit.shown.size() > max_bytes) return out + "... (" + std::to_string(text.size()) + " bytes in all)";
    out += unit.shown;
    i += unit.length;
  }
  return out;
}

}  // namespace preflight
