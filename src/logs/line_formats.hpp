// logs/line_formats: the start-up lines whose words changed between engine releases (data/engines/line_formats.json,
// issue 15 date37, "date it from ... the format of the printed lines"). Each record names the engines whose logs carry
// the line, the substrings that mark it ({N}: a number as printed) and the first and last release that print it in
// that form, as text: versions are compared above this module (cli/logs_dating), which intersects the ranges of the
// lines a log shows into a version window. Pure functions of the text; every line kept with its 1-based number.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"

namespace preflight::logs {

struct LineFormat {
  std::string id;
  std::vector<std::string> engines;   // "vllm", "vllm-ascend"
  std::vector<std::string> patterns;  // any one marks the line; "{N}" matches a printed number
  std::string version_min;            // first release printing the line so ("" = no lower bound known)
  std::string version_max;            // last release printing it so ("" = still printed by the newest release read)
  std::string format;                 // the line as printed, for people
  std::string source;
  bool for_engine(const std::string& engine) const;
};

struct LineFormatSet {
  std::vector<LineFormat> records;
  std::string origin;
};

// Parses the file; corrupt errors name the file and the record id (unknown keys, a missing or empty source, duplicate
// ids, an empty pattern list, a version that is not X.Y[.Z[.W]], version_min above version_max, neither bound given).
Expected<LineFormatSet> parse_line_formats(const std::string& text, const std::string& origin);
// The embedded data/engines/line_formats.json, parsed once per process.
const Expected<LineFormatSet>& shipped_line_formats();

// Whether `line` carries `pattern` ("{N}" standing for one printed number: digits with ',' and '.').
bool line_has_pattern(std::string_view line, std::string_view pattern);

// A record's line as the log shows it: the first line each record marks.
struct SeenFormat {
  size_t record = 0;  // index into LineFormatSet::records
  int64_t line = 0;   // 1-based
  std::string text;   // the line, cut to 200 bytes on a character (base/text clip_text)
};
// The first line of `text` each record marks, in line order (every record, whatever its engines).
std::vector<SeenFormat> scan_line_formats(const std::string& text, const LineFormatSet& set);

}  // namespace preflight::logs
