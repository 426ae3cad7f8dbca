// engine/record_list: the walk every small versioned-record file of data/engines shares (engine_cores.json,
// kv_cache_dtypes.json, attention_backends.json, quantization_methods.json): a list of objects keyed by a unique id,
// each with only the keys its reader knows, every error naming the file and the record.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::engine {

// Reads `top`'s array `list` ("records"): for each item, its `id_key` text (the record's name in errors), its keys
// checked against `keys` (the id key included), ids unique ("<origin>: <list>[<id>]: duplicate id"), then `each` with
// the record, its id and `where` ("<origin>: <list>[<id>]", the prefix of the reader's own errors).
Status for_each_record(const JsonObject& top, const std::string& origin, const std::string& list, const std::string& id_key, const std::vector<std::string>& keys,
                       const std::function<Status(const JsonObject& r, const std::string& id, const std::string& where)>& each);

// The top level of such a file: only `keys`, schema_version 1.
Status check_record_file_top(const JsonObject& top, const std::vector<std::string>& keys);

}  // namespace preflight::engine
