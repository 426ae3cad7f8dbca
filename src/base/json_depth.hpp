// base/json_depth: how deep a JSON text nests its lists and objects, read without parsing it (strings skipped, a
// backslash escaping the next byte), so that a flag's text can be bounded before a recursive parser or writer meets it.
#pragma once
#include <cstddef>
#include <string_view>

namespace preflight {

struct JsonDepthScan {
  size_t deepest = 0;                   // the deepest nesting seen (up to the first opening past the limit)
  size_t past_limit_at = std::string_view::npos;  // the offset of the first '[' or '{' that opens level limit + 1
};

// Scans `text` for its nesting; stops at the first opening past `limit` levels (default: no limit).
JsonDepthScan json_depth_scan(std::string_view text, size_t limit = static_cast<size_t>(-1));

}  // namespace preflight
