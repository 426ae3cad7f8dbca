// libFuzzer target: base/safe_regex (issue 19). The input is a pattern, then a NUL, then a text (no NUL: the pattern
// alone, matched against itself and a module name). Every compiled pattern runs search, match and fullmatch; the
// automaton's size bound keeps each run to text length x 20,000 steps, so a slow input is a bug, not a hostile one.
#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/safe_regex.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  const std::string_view pattern = all.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? pattern : all.substr(nul + 1);
  auto re = preflight::SafeRegex::compile(pattern);
  if (!re) return 0;
  for (const std::string_view t : {text, std::string_view("model.layers.31.mlp.experts.127.down_proj")}) {
    const bool full = re->fullmatch(t), at_start = re->match(t), anywhere = re->search(t);
    if (full && !at_start) __builtin_trap();      // a full match is a match at 0
    if (at_start && !anywhere) __builtin_trap();  // a match at 0 is a match somewhere
  }
  return 0;
}
