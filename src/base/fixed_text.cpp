#include "base/fixed_text.hpp"

namespace preflight {

void FixedText::spill(const char* p, size_t n) {
  if (!m_spilled) {
    m_spill.reserve(m_size + n + k_inline);
    m_spill.assign(m_buf, m_size);
    m_spilled = true;
    m_room = 0;
  }
  m_spill.append(p, n);
}

FixedText& FixedText::fixed_elsewhere(double v, int precision) {
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

}  // namespace preflight
