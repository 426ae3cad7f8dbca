#pragma once
// to_lower(a) == to_lower(b) (base/text.hpp: A-Z alone, the "C" locale's mapping) without the two copies: catalogue
// lookups by a name in any case run on every row of a plan (issue 19, planfast6: the link and bandwidth priors, the
// quantized-checkpoint catalogue, an engine's accepted methods). A header of its own so that its users alone include it.
#include <algorithm>
#include <string_view>

namespace preflight {

inline bool equal_lowered(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](char x, char y) { return lower(x) == lower(y); });
}

}  // namespace preflight
