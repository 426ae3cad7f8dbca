// base/utf8: whether bytes are well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF), the text a JSON file can hold. Command-line values, paths and log lines need not be: a caller that must
// write such a value into a JSON file (MindIE's config.json) refuses it with this check rather than alter it.
#pragma once

#include <string_view>

namespace preflight {

bool is_valid_utf8(std::string_view text);

}  // namespace preflight
