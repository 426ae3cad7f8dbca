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

class FixedText {
 public:
  FixedText& operator<<(std::string_view text) {
    append(text.data(), text.size());
    return *this;
  }
  FixedText& operator<<(int64_t v) { return integer(v); }
  FixedText& integer(int64_t v) {
    char buf[24];
    append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
    return *this;
  }
  FixedText& fixed(double v, int precision) {
    char buf[64];
    if (const size_t n = fixed_digits(buf, v, precision)) {
      append(buf, n);
      return *this;
    }
    const auto r = std::isfinite(v) ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, precision) : std::to_chars_result{buf, std::errc::value_too_large};
    if (r.ec == std::errc()) append(buf, static_cast<size_t>(r.ptr - buf));
    else *this << format("%.*f", precision, v);
    return *this;
  }
  // The text; the object is empty afterwards.
  std::string take() {
    std::string out = m_spilled ? std::move(m_spill) : std::string(m_buf, m_size);
    m_size = 0;
    m_spilled = false;
    m_spill.clear();
    return out;
  }

 private:
  // Text up to k_inline bytes stays in m_buf; longer text moves to m_spill and grows there.
  void append(const char* p, size_t n) {
    if (!m_spilled && m_size + n <= k_inline) {
      std::memcpy(m_buf + m_size, p, n);
      m_size += n;
      return;
    }
    if (!m_spilled) {
      m_spill.assign(m_buf, m_size);
      m_spilled = true;
    }
    m_spill.append(p, n);
  }
  static constexpr size_t k_inline = 480;
  char m_buf[k_inline];
  size_t m_size = 0;
  bool m_spilled = false;
  std::string m_spill;
};

}  // namespace preflight
