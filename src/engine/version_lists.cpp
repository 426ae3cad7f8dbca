#include "engine/version_lists.hpp"

#include "engine/version_range.hpp"

namespace preflight::engine {

namespace {

std::string empty_words(EmptyWording wording) { return wording == EmptyWording::is_empty ? " is empty" : " must not be empty"; }

}  // namespace

Expected<std::pair<Version, Version>> read_list_versions(const JsonObject& r, const std::string& where, const std::string& origin, OrderWording order) {
  PF_TRY(vmin, read_version_field(r, "version_min", where, origin));
  PF_TRY(vmax, read_version_field(r, "version_max", where, origin));
  if (vmax < vmin)
    return make_error(ErrorKind::corrupt,
                      order == OrderWording::plain ? where + ": version_max is below version_min"
                                                   : where + ": version_max " + vmax.text() + " is below version_min " + vmin.text(),
                      origin);
  return std::make_pair(vmin, vmax);
}

Expected<std::pair<Version, Version>> read_record_versions(const JsonObject& r, const std::string& where, const std::string& origin) {
  PF_TRY(range, read_version_range(r));
  if (!range) return make_error(ErrorKind::corrupt, where + ": bad version range", origin);
  return *range;
}

Expected<std::string> read_record_text(const JsonObject& r, const std::string& key, const std::string& where, const std::string& origin, EmptyWording wording) {
  PF_TRY(text, r.string(key));
  if (text.empty()) return make_error(ErrorKind::corrupt, where + ": " + key + empty_words(wording), origin);
  return text;
}

Expected<std::vector<std::string>> read_record_names(const JsonObject& r, const std::string& key, const std::string& where, const std::string& origin,
                                                     EmptyWording wording) {
  PF_TRY(names, string_list(r.find(key), where + "." + key, origin));
  if (names.empty()) return make_error(ErrorKind::corrupt, where + ": " + key + empty_words(wording), origin);
  return names;
}

Expected<std::string> read_list_source(const JsonObject& r, const std::string& where, const std::string& origin) {
  return read_record_text(r, "source", where, origin, EmptyWording::must_not_be_empty);
}

}  // namespace preflight::engine
