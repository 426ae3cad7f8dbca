// engine/version_lists: the preamble every small file of data/engines keyed by engine version repeats (hard36, split37):
// a record's version_min / version_max read and ordered, a text or a name list it must not leave empty, its source, no
// two records of a file over the same version, and the record that covers a version. Messages name the file and the
// record; where loaders word one differently, the wording is a parameter, so each keeps its own message.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// How a loader words a field it refuses empty: "<where>: <key> is empty" or "<where>: <key> must not be empty".
enum class EmptyWording { is_empty, must_not_be_empty };

// How a loader words version_max below version_min: "<where>: version_max X is below version_min Y", or without the
// versions ("<where>: version_max is below version_min").
enum class OrderWording { with_versions, plain };

// version_min and version_max (read_version_field), refused out of order as `order` words it.
Expected<std::pair<Version, Version>> read_list_versions(const JsonObject& r, const std::string& where, const std::string& origin,
                                                         OrderWording order = OrderWording::with_versions);

// version_min and version_max (read_version_range): "<where>: bad version range" when either is not a version or they
// are out of order.
Expected<std::pair<Version, Version>> read_record_versions(const JsonObject& r, const std::string& where, const std::string& origin);

// The record's text under `key` (its type error from JsonObject::string), refused when it is "" (not trimmed).
Expected<std::string> read_record_text(const JsonObject& r, const std::string& key, const std::string& where, const std::string& origin, EmptyWording wording);

// The record's list of names under `key` (string_list: "<where>.<key>" named on a bad item; absent reads as none),
// refused when it has none.
Expected<std::vector<std::string>> read_record_names(const JsonObject& r, const std::string& key, const std::string& where, const std::string& origin,
                                                     EmptyWording wording);

// The record's "source": "<where>: source must not be empty" when it is.
Expected<std::string> read_list_source(const JsonObject& r, const std::string& where, const std::string& origin);

// Whether two records (each with version_min, version_max) share a version.
template <class A, class B>
bool versions_overlap(const A& a, const B& b) {
  return !(a.version_max < b.version_min || b.version_max < a.version_min);
}

// Whether `version` lies in the record's version_min .. version_max.
template <class R>
bool covers_version(const R& r, const Version& version) {
  return r.version_min <= version && version <= r.version_max;
}

// The first of `seen` that shares a version with `rec` among those `same` accepts (the same engine, say), or nullptr.
template <class R, class Same>
const R* overlapping_record(const std::vector<R>& seen, const R& rec, Same same) {
  for (const auto& s : seen)
    if (same(s) && versions_overlap(rec, s)) return &s;
  return nullptr;
}

template <class R>
const R* overlapping_record(const std::vector<R>& seen, const R& rec) {
  return overlapping_record(seen, rec, [](const R&) { return true; });
}

// "<where>: its versions overlap <id>'s" when `list` shares a version with one of `seen` (each has id, version_min,
// version_max).
template <class List>
Status check_lists_disjoint(const std::vector<List>& seen, const List& list, const std::string& where, const std::string& origin) {
  if (const List* s = overlapping_record(seen, list)) return make_error(ErrorKind::corrupt, where + ": its versions overlap " + s->id + "'s", origin);
  return Ok{};
}

// check_lists_disjoint, then `list` appended to `lists`.
template <class List>
Status add_disjoint_list(std::vector<List>& lists, List list, const std::string& where, const std::string& origin) {
  PF_TRY(disjoint, check_lists_disjoint(lists, list, where, origin));
  (void)disjoint;
  lists.push_back(std::move(list));
  return Ok{};
}

// The list covering `version`, or nullptr.
template <class List>
const List* list_for_version(const std::vector<List>& lists, const Version& version) {
  for (const auto& l : lists)
    if (covers_version(l, version)) return &l;
  return nullptr;
}

}  // namespace preflight::engine
