#pragma once
// Issue 19: text as printf would write it, without printf's cost on the tens of thousands of lines a plan writes:
// "%.Nf" through std::to_chars with a precision (the standard defines it as printf's conversion in the "C" locale;
// a value that is not finite, or does not fit the buffer, goes through printf), "%lld" through std::to_chars.
// Round 7: most "%.Nf" values are written from the integer nearest v x 10^N (fixed_digits), and the text is built
// in an inline buffer, so that take() allocates once, at the text's length.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>

#include "base/units.hpp"

namespace preflight {

// "%.Nf" of `v` into `out` (at least 32 bytes) when it can be read off the integer nearest |v| x 10^N: N at most 9,
// v finite, |v| x 10^N below 2^52, and that product farther from a half than its rounding error (at most 2^-53 of
// it; the margin taken is 1e-15 of it). printf's digits are the exact value's, correctly rounded; away from a half
// the nearest integer of the computed product is the nearest integer of the exact one, so the digits are the same.
// Returns the length written, or 0 where it does not apply (a tie or near-tie, a large value, a long precision):
// the caller then takes std::to_chars. A negative value (-0.0 included) keeps its sign, as printf does.
inline size_t fixed_digits(char* out, double v, int precision) {
  static constexpr double k_scale[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
  static constexpr uint64_t k_scale_int[] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
  if (precision < 0 || precision > 9 || !std::isfinite(v)) return 0;
  const double s = std::fabs(v) * k_scale[precision];
  if (!(s < 4503599627370496.0)) return 0;  // 2^52: the fraction below is exact
  const double whole = std::floor(s);
  const double frac = s - whole;
  if (std::fabs(frac - 0.5) <= s * 1e-15) return 0;
  const uint64_t n = static_cast<uint64_t>(whole) + (frac > 0.5 ? 1 : 0);
  char* p = out;
  if (std::signbit(v)) *p++ = '-';
  const uint64_t unit = k_scale_int[precision];
  p = std::to_chars(p, out + 24, n / unit).ptr;
  if (precision > 0) {
    *p++ = '.';
    uint64_t f = n % unit;
    for (int i = precision - 1; i >= 0; --i) {
      p[i] = static_cast<char>('0' + f % 10);
      f /= 10;
    }
    p += precision;
  }
  return static_cast<size_t>(p - out);
}

// Round 18: a string literal is copied at its known length, and a number is written in place in the inline buffer
// (fixed_digits, std::to_chars) while there is room, each on a short path the compiler inlines (the rest, spilling
// and the numbers fixed_digits declines, is in fixed_text.cpp), so that a line of many pieces (a plan's decode and
// prefill lines) costs a copy per piece and one allocation in take(): round 17's own buffer for those lines is gone.
class FixedText {
 public:
  FixedText& operator<<(std::string_view text) {
    append(text.data(), text.size());
    return *this;
  }
  // A string literal (an array of N - 1 characters and its terminating zero; not a buffer holding a shorter text).
  template <size_t N>
  FixedText& operator<<(const char (&literal)[N]) {
    append(literal, N - 1);
    return *this;
  }
  FixedText& operator<<(int64_t v) { return integer(v); }
  FixedText& integer(int64_t v) {
    char buf[24];  // at most 20 characters
    char* at = m_room >= sizeof buf ? m_buf + m_size : buf;
    const size_t n = static_cast<size_t>(std::to_chars(at, at + sizeof buf, v).ptr - at);
    if (at == buf) append(buf, n);
    else advance(n);
    return *this;
  }
  FixedText& fixed(double v, int precision) {
    if (m_room >= 32)  // fixed_digits writes at most 27 characters (a sign, 16 digits, a point, 9 decimals)
      if (const size_t n = fixed_digits(m_buf + m_size, v, precision)) {
        advance(n);
        return *this;
      }
    return fixed_elsewhere(v, precision);
  }
  // The text; the object is empty afterwards.
  std::string take() {
    std::string out = m_spilled ? std::move(m_spill) : std::string(m_buf, m_size);
    m_size = 0;
    m_room = k_inline;
    m_spilled = false;
    m_spill.clear();
    return out;
  }

 private:
  // Text up to k_inline bytes stays in m_buf; longer text moves to m_spill and grows there (m_room is then 0).
  void append(const char* p, size_t n) {
    if (n > m_room) {
      spill(p, n);
      return;
    }
    std::memcpy(m_buf + m_size, p, n);
    advance(n);
  }
  void advance(size_t n) {
    m_size += n;
    m_room -= n;
  }
  void spill(const char* p, size_t n);
  FixedText& fixed_elsewhere(double v, int precision);  // a number written outside m_buf: no room, or fixed_digits declines

  static constexpr size_t k_inline = 480;
  char m_buf[k_inline];
  size_t m_size = 0;
  size_t m_room = k_inline;
  bool m_spilled = false;
  std::string m_spill;
};

}  // namespace preflight
