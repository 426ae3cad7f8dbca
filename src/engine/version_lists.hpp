// engine/version_lists: the checks every "lists" file keyed by engine version repeats (speculative_methods.json,
// vllm_gguf_types.json; hard36): a list's version_min / version_max read and ordered, its source not blank, no two
// lists of a file over the same version, and the list that covers a version. Messages name the file and the list.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// version_min and version_max (read_version_field), "<where>: version_max X is below version_min Y" when out of order.
Expected<std::pair<Version, Version>> read_list_versions(const JsonObject& r, const std::string& where, const std::string& origin);

// The record's "source": "<where>: source must not be empty" when it is.
Expected<std::string> read_list_source(const JsonObject& r, const std::string& where, const std::string& origin);

// "<where>: its versions overlap <id>'s" when `list` shares a version with one of `seen` (each has id, version_min,
// version_max).
template <class List>
Status check_lists_disjoint(const std::vector<List>& seen, const List& list, const std::string& where, const std::string& origin) {
  for (const auto& s : seen)
    if (!(list.version_max < s.version_min || s.version_max < list.version_min)) return make_error(ErrorKind::corrupt, where + ": its versions overlap " + s.id + "'s", origin);
  return Ok{};
}

// The list covering `version`, or nullptr.
template <class List>
const List* list_for_version(const std::vector<List>& lists, const Version& version) {
  for (const auto& l : lists)
    if (l.version_min <= version && version <= l.version_max) return &l;
  return nullptr;
}

}  // namespace preflight::engine
