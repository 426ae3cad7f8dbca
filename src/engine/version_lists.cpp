#include "engine/version_lists.hpp"

#include "engine/version_range.hpp"

namespace preflight::engine {

Expected<std::pair<Version, Version>> read_list_versions(const JsonObject& r, const std::string& where, const std::string& origin) {
  PF_TRY(vmin, read_version_field(r, "version_min", where, origin));
  PF_TRY(vmax, read_version_field(r, "version_max", where, origin));
  if (vmax < vmin) return make_error(ErrorKind::corrupt, where + ": version_max " + vmax.text() + " is below version_min " + vmin.text(), origin);
  return std::make_pair(vmin, vmax);
}

Expected<std::string> read_list_source(const JsonObject& r, const std::string& where, const std::string& origin) {
  PF_TRY(source, r.string("source"));
  if (source.empty()) return make_error(ErrorKind::corrupt, where + ": source must not be empty", origin);
  return source;
}

}  // namespace preflight::engine
