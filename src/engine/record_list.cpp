#include "engine/record_list.hpp"

#include <algorithm>

namespace preflight::engine {

Status for_each_record(const JsonObject& top, const std::string& origin, const std::string& list, const std::string& id_key, const std::vector<std::string>& keys,
                       const std::function<Status(const JsonObject& r, const std::string& id, const std::string& where)>& each) {
  PF_TRY(items, top.array(list));
  std::vector<std::string> seen;
  for (const auto& item : *items) {
    JsonObject pre(item, origin, list + "[]");
    PF_TRY(id, pre.string(id_key));
    const std::string where = origin + ": " + list + "[" + id + "]";
    JsonObject r(item, origin, list + "[" + id + "]");
    PF_TRY(known, r.only_keys(keys));
    (void)known;
    if (std::find(seen.begin(), seen.end(), id) != seen.end()) return make_error(ErrorKind::corrupt, where + ": duplicate id", origin);
    seen.push_back(id);
    PF_TRY(done, each(r, id, where));
    (void)done;
  }
  return Ok{};
}

Status check_record_file_top(const JsonObject& top, const std::vector<std::string>& keys) {
  PF_TRY(known, top.only_keys(keys));
  (void)known;
  return top.schema_v1();
}

}  // namespace preflight::engine
