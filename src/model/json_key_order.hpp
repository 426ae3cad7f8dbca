// model/json_key_order: the keys of one JSON object in the order the text writes them. preflight::Json
// (nlohmann::json) keeps an object's members sorted by key, which loses the file's order; a descriptor whose meaning
// depends on that order (GPTQModel's "dynamic" map: vLLM applies the first rule that matches, in the file's order) is
// read once by parse_json for its values and scanned here for its key order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"

namespace preflight::model {

// The keys of the object reached from the root object of `text` through the object members `path` (e.g.
// {"quantization_config", "dynamic"}), in text order, decoded as JSON strings. Bounded: nesting deeper than 128,
// more than 65,536 keys in the object, or anything the scan cannot read (an unterminated string, a missing ':' or
// ',', a value that is not an object where `path` goes on) is a corrupt error naming `origin` and the byte offset; a
// `path` member that is absent gives an empty list.
Expected<std::vector<std::string>> object_keys_in_order(std::string_view text, const std::vector<std::string>& path, const std::string& origin);

}  // namespace preflight::model
