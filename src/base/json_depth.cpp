#include "base/json_depth.hpp"

namespace preflight {

JsonDepthScan json_depth_scan(std::string_view text, size_t limit) {
  JsonDepthScan out;
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) {
        out.past_limit_at = i;
        return out;
      }
      if (depth > out.deepest) out.deepest = depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return out;
}

}  // namespace preflight
