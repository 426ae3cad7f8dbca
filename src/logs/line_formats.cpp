// Loader and scanner for data/engines/line_formats.json (issue 15, date37). A pattern is matched by hand, literal by
// literal, "{N}" taking the longest run of digits, ',' and '.' that starts with a digit (no regular expression: a log
// line may be 64 KB; logs/log_scan.hpp).
#include "logs/line_formats.hpp"

#include <algorithm>
#include <set>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "base/json_util.hpp"
#include "logs/log_scan.hpp"

namespace preflight::logs {

namespace {

constexpr const char* k_line_formats_file = "engines/line_formats.json";
constexpr size_t k_seen_text_chars = 200;

Error formats_corrupt(const std::string& origin, const std::string& what) { return make_error(ErrorKind::corrupt, origin + ": " + what, origin); }

// "X.Y", "X.Y.Z" or "X.Y.Z.W" (vLLM's v0.10.1.1): its numbers, or empty when the text is not one.
std::vector<int> dotted_numbers(const std::string& v) {
  std::vector<int> out;
  size_t i = 0;
  while (i < v.size()) {
    const size_t end = detail::digits_end(v, i);
    if (end == i || end - i > 6) return {};
    out.push_back(std::stoi(v.substr(i, end - i)));
    if (end == v.size()) break;
    if (v[end] != '.' || end + 1 == v.size()) return {};
    i = end + 1;
  }
  if (out.size() < 2 || out.size() > 4) return {};
  return out;
}

Expected<std::vector<std::string>> formats_list(const JsonObject& o, const std::string& key) {
  std::vector<std::string> out;
  PF_TRY(list, o.array(key));
  for (const auto& item : *list) {
    if (!item.is_string() || item.get<std::string>().empty()) return o.wrong_type(key, "an array of non-empty strings");
    out.push_back(item.get<std::string>());
  }
  if (out.empty()) return formats_corrupt(o.origin(), o.key_path(key) + ": empty");
  return out;
}

Expected<LineFormat> parse_record(const Json& item, const std::string& origin) {
  if (!item.is_object()) return formats_corrupt(origin, "records[]: expected an object");
  PF_TRY(id, JsonObject(item, origin, "records[]").string("id"));
  JsonObject r(item, origin, "records[" + id + "]");
  PF_TRY(keys, r.only_keys({"id", "engines", "patterns", "version_min", "version_max", "format", "source"}));
  (void)keys;
  LineFormat f;
  f.id = id;
  PF_TRY(engines, formats_list(r, "engines"));
  for (const auto& e : engines)
    if (e != "vllm" && e != "vllm-ascend") return formats_corrupt(origin, r.key_path("engines") + ": expected vllm or vllm-ascend, found " + e);
  f.engines = std::move(engines);
  PF_TRY(patterns, formats_list(r, "patterns"));
  f.patterns = std::move(patterns);
  PF_TRY(vmin, r.opt_string("version_min"));
  PF_TRY(vmax, r.opt_string("version_max"));
  f.version_min = vmin.value_or("");
  f.version_max = vmax.value_or("");
  for (const auto* v : {&f.version_min, &f.version_max})
    if (!v->empty() && dotted_numbers(*v).empty()) return formats_corrupt(origin, r.key_path(v == &f.version_min ? "version_min" : "version_max") + ": expected X.Y[.Z], found " + *v);
  if (f.version_min.empty() && f.version_max.empty()) return formats_corrupt(origin, "records[" + id + "]: neither version_min nor version_max: the line dates nothing");
  if (!f.version_min.empty() && !f.version_max.empty() && dotted_numbers(f.version_max) < dotted_numbers(f.version_min))
    return formats_corrupt(origin, "records[" + id + "]: version_max " + f.version_max + " is below version_min " + f.version_min);
  PF_TRY(format, r.string("format"));
  PF_TRY(source, r.string("source"));
  if (source.empty()) return formats_corrupt(origin, "records[" + id + "]: source is empty");
  f.format = format;
  f.source = source;
  return f;
}

}  // namespace

bool LineFormat::for_engine(const std::string& engine) const {
  for (const auto& e : engines)
    if (e == engine) return true;
  return false;
}

Expected<LineFormatSet> parse_line_formats(const std::string& text, const std::string& origin) {
  PF_TRY(root, parse_json(text, origin));
  if (!root.is_object()) return formats_corrupt(origin, "expected a JSON object");
  JsonObject top(root, origin);
  PF_TRY(top_keys, top.only_keys({"schema_version", "note", "records"}));
  (void)top_keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(records, top.array("records"));
  LineFormatSet set;
  set.origin = origin;
  std::set<std::string> ids;
  for (const auto& item : *records) {
    PF_TRY(f, parse_record(item, origin));
    if (!ids.insert(f.id).second) return formats_corrupt(origin, "duplicate record id " + f.id);
    set.records.push_back(std::move(f));
  }
  return set;
}

const Expected<LineFormatSet>& shipped_line_formats() {
  static const Expected<LineFormatSet> set = []() -> Expected<LineFormatSet> {
    const auto text = embedded_data(k_line_formats_file);
    if (text.empty()) return make_error(ErrorKind::not_found, std::string("embedded data ") + k_line_formats_file + " is missing", k_line_formats_file);
    return parse_line_formats(std::string(text), std::string("data/") + k_line_formats_file);
  }();
  return set;
}

namespace {

// Whether `pattern` (from its offset p) matches `line` at offset i exactly to the pattern's end.
bool matches_at(std::string_view line, size_t i, std::string_view pattern, size_t p) {
  while (p < pattern.size()) {
    if (pattern.compare(p, 3, "{N}") == 0) {
      if (i >= line.size() || line[i] < '0' || line[i] > '9') return false;
      while (i < line.size() && ((line[i] >= '0' && line[i] <= '9') || line[i] == ',' || line[i] == '.')) ++i;
      p += 3;
      continue;
    }
    if (i >= line.size() || line[i] != pattern[p]) return false;
    ++i;
    ++p;
  }
  return true;
}

}  // namespace

bool line_has_pattern(std::string_view line, std::string_view pattern) {
  const size_t hole = pattern.find("{N}");
  const std::string_view head = pattern.substr(0, hole);
  if (head.empty()) {
    for (size_t i = 0; i < line.size(); ++i)
      if (matches_at(line, i, pattern, 0)) return true;
    return false;
  }
  for (size_t at = line.find(head); at != std::string_view::npos; at = line.find(head, at + 1))
    if (matches_at(line, at, pattern, 0)) return true;
  return false;
}

std::vector<SeenFormat> scan_line_formats(const std::string& text, const LineFormatSet& set) {
  std::vector<SeenFormat> seen;
  std::vector<bool> found(set.records.size(), false);
  const auto lines = detail::split_lines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    for (size_t r = 0; r < set.records.size(); ++r) {
      if (found[r]) continue;
      for (const auto& p : set.records[r].patterns) {
        if (!line_has_pattern(lines[n], p)) continue;
        found[r] = true;
        seen.push_back({r, static_cast<int64_t>(n + 1), clip_text(lines[n], k_seen_text_chars)});  // cut on a UTF-8 character
        break;
      }
    }
  }
  std::sort(seen.begin(), seen.end(), [](const auto& a, const auto& b) { return a.line != b.line ? a.line < b.line : a.record < b.record; });
  return seen;
}

}  // namespace preflight::logs
