#pragma once
// Issue 19: text as printf would write it, without printf's cost on the tens of thousands of lines a plan writes:
// "%.Nf" through std::to_chars with a precision (the standard defines it as printf's conversion in the "C" locale;
// a value that is not finite, or does not fit the buffer, goes through printf), "%lld" through std::to_chars.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

#include "base/units.hpp"

namespace preflight {

class FixedText {
 public:
  FixedText& operator<<(std::string_view text) {
    m_text.append(text);
    return *this;
  }
  FixedText& operator<<(int64_t v) { return integer(v); }
  FixedText& integer(int64_t v) {
    char buf[24];
    m_text.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
    return *this;
  }
  FixedText& fixed(double v, int precision) {
    char buf[64];
    const auto r = std::isfinite(v) ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, precision) : std::to_chars_result{buf, std::errc::value_too_large};
    if (r.ec == std::errc()) m_text.append(buf, r.ptr);
    else m_text += format("%.*f", precision, v);
    return *this;
  }
  std::string take() { return std::move(m_text); }

 private:
  std::string m_text;
};

}  // namespace preflight
