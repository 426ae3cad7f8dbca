// base/utf8: whether bytes are well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF), the text a JSON file can hold. Command-line values, paths and log lines need not be: a caller that must
// write such a value into a JSON file (MindIE's config.json) refuses it with this check rather than alter it.
#pragma once

#include <cstddef>
#include <string_view>

namespace preflight {

bool is_valid_utf8(std::string_view text);

// The UTF-8 sequence that starts at text[i], a byte >= 0x80 (i < text.size()): `length` is its byte count when it is one
// RFC 3629 allows (the ranges nlohmann's parser checks), else 0; `valid_prefix` is then how many of its bytes come
// before the one that breaks it or before the end of the text (at least 1, the lead byte), which a writer that replaces
// bad bytes with U+FFFD as nlohmann's replace handler does drops before it reads the breaking byte again.
struct Utf8Sequence {
  size_t length = 0;
  size_t valid_prefix = 0;
};
Utf8Sequence utf8_sequence_at(std::string_view text, size_t i);

}  // namespace preflight
