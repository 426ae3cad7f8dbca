#include "base/utf8.hpp"

#include <cstddef>

namespace preflight {

namespace {
// The Unicode Standard, table 3-7 ("well-formed UTF-8 byte sequences"): a lead byte's continuation count and the
// range of its first continuation byte (the others are 80-BF). 0 continuations: not a lead byte (80-C1, F5-FF).
struct Lead {
  size_t continuations;
  unsigned char first_low, first_high;
};
Lead lead_of(unsigned char c) {
  if (c >= 0xC2 && c <= 0xDF) return {1, 0x80, 0xBF};
  if (c == 0xE0) return {2, 0xA0, 0xBF};
  if (c == 0xED) return {2, 0x80, 0x9F};  // no surrogates
  if (c >= 0xE1 && c <= 0xEF) return {2, 0x80, 0xBF};
  if (c == 0xF0) return {3, 0x90, 0xBF};
  if (c >= 0xF1 && c <= 0xF3) return {3, 0x80, 0xBF};
  if (c == 0xF4) return {3, 0x80, 0x8F};  // not above U+10FFFF
  return {0, 0, 0};
}
}  // namespace

Utf8Sequence utf8_sequence_at(std::string_view text, size_t i) {
  const Lead lead = lead_of(static_cast<unsigned char>(text[i]));
  if (lead.continuations == 0) return {0, 1};
  const size_t continuations = lead.continuations;
  const unsigned char low = lead.first_low, high = lead.first_high;
  for (size_t k = 1; k <= continuations; ++k) {
    if (i + k >= text.size()) return {0, k};
    const auto b = static_cast<unsigned char>(text[i + k]);
    if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF)) return {0, k};
  }
  return {continuations + 1, 0};
}

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_at(text, i).length;
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace preflight
