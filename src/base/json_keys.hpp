// base/json_keys: a key that one object of a JSON text names twice. nlohmann's DOM parser (and base/json_fast, which
// reads as it does) keeps the last value silently, which is right for files other programs read the same way
// (config.json: Python's json module also keeps the last) and wrong for the user's own overlays, where a copy-edited
// second "hbm_bandwidth_bytes_per_s" silently replaced the first (issue 19, hard30).
#pragma once

#include <string>

#include "base/error.hpp"

namespace preflight {

// corrupt error "<origin>: <path>: key appears twice in one object" for the first repeated key (path as
// "devices[].source"); Ok when none repeats or when the text is not one nlohmann's SAX reader takes (parse_json's
// own errors, and its reading of Infinity / NaN, stay the caller's). Linear in the text.
Status check_unique_keys(const std::string& text, const std::string& origin);

}  // namespace preflight
