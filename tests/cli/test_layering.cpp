#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

// ARCHITECTURE.md dependency order: base <- model, device, engine, probe, logs, doctor, bench <- estimate, hub <- deploy <- plan <- validate <- report <- cli.
TEST(Layering, NoUpwardIncludes) {
  const std::map<std::string, int> level = {{"base", 0},     {"model", 1},    {"device", 1}, {"engine", 1}, {"probe", 1}, {"logs", 1}, {"doctor", 1}, {"bench", 1}, {"estimate", 2}, {"hub", 2},
                                            {"deploy", 3},   {"plan", 4},     {"validate", 5}, {"report", 6}, {"cli", 7}};
  const std::regex include_re(R"re(#include "([a-z_]+)/)re");
  int checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(PREFLIGHT_SOURCE_DIR) + "/src")) {
    if (!entry.is_regular_file()) continue;
    const auto rel = std::filesystem::relative(entry.path(), std::string(PREFLIGHT_SOURCE_DIR) + "/src");
    const std::string module = rel.begin()->string();
    if (!level.count(module)) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include_re)) continue;
      const std::string target = m[1];
      ASSERT_TRUE(level.count(target)) << entry.path() << " includes unknown module " << target;
      const bool same_level_peer = level.at(target) == level.at(module) && target != module;
      EXPECT_TRUE(level.at(target) < level.at(module) || target == module) << entry.path() << " includes " << target;
      EXPECT_FALSE(same_level_peer) << entry.path() << " includes peer module " << target;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

namespace {

// The code of `text` with comments, string literals (raw ones too) and character literals blanked, so braces
// inside them do not count. Newlines are kept, so line numbers stay.
std::string code_only(const std::string& text) {
  std::string out = text;
  size_t i = 0;
  const size_t n = text.size();
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < n; ++k) if (out[k] != '\n') out[k] = ' ';
  };
  while (i < n) {
    if (text.compare(i, 2, "//") == 0) {
      const size_t end = text.find('\n', i);
      blank(i, end == std::string::npos ? n : end);
      i = end == std::string::npos ? n : end;
    } else if (text.compare(i, 2, "/*") == 0) {
      const size_t end = text.find("*/", i + 2);
      blank(i, end == std::string::npos ? n : end + 2);
      i = end == std::string::npos ? n : end + 2;
    } else if (text.compare(i, 2, "R\"") == 0) {
      const size_t open = text.find('(', i + 2);
      const std::string delimiter = ")" + text.substr(i + 2, open - i - 2) + "\"";
      const size_t end = text.find(delimiter, open);
      blank(i, end == std::string::npos ? n : end + delimiter.size());
      i = end == std::string::npos ? n : end + delimiter.size();
    } else if (text[i] == '"' || text[i] == '\'') {
      const char quote = text[i];
      size_t k = i + 1;
      while (k < n && text[k] != quote && text[k] != '\n') k += text[k] == '\\' ? 2 : 1;
      blank(i, k + 1);
      i = k + 1;
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace

// Issue 14: no function in src/ over ~150 lines unless the comment above it says why ("long because ...").
// A function here is a brace block opened at namespace level on a line that has a parameter list.
TEST(Layering, Issue14_NoFunctionOver150Lines) {
  int functions = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(PREFLIGHT_SOURCE_DIR) + "/src")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string code = code_only(text);
    std::vector<std::string> lines, raw;
    for (size_t start = 0; start <= code.size();) {
      const size_t end = std::min(code.find('\n', start), code.size());
      lines.push_back(code.substr(start, end - start));
      raw.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    std::vector<bool> scope_is_namespace;  // one entry per open brace
    int opened_at = -1;
    size_t function_depth = 0;
    for (size_t l = 0; l < lines.size(); ++l) {
      const std::string& line = lines[l];
      const bool namespace_line = line.find("namespace") != std::string::npos;
      for (const char c : line) {
        if (c == '{') {
          const bool at_namespace_level = std::all_of(scope_is_namespace.begin(), scope_is_namespace.end(), [](bool b) { return b; });
          if (opened_at < 0 && at_namespace_level && !namespace_line && line.find(')') != std::string::npos && line.find('=') == std::string::npos) {
            opened_at = static_cast<int>(l);
            function_depth = scope_is_namespace.size() + 1;
          }
          scope_is_namespace.push_back(namespace_line && opened_at < 0);
        } else if (c == '}' && !scope_is_namespace.empty()) {
          scope_is_namespace.pop_back();
          if (opened_at >= 0 && scope_is_namespace.size() + 1 == function_depth) {
            const size_t length = l - static_cast<size_t>(opened_at) + 1;
            ++functions;
            const std::string above = opened_at > 0 ? raw[static_cast<size_t>(opened_at) - 1] : "";
            EXPECT_TRUE(length <= 150 || above.find("long because") != std::string::npos)
                << entry.path() << ":" << opened_at + 1 << ": " << length << " lines: " << raw[static_cast<size_t>(opened_at)];
            opened_at = -1;
          }
        }
      }
    }
  }
  EXPECT_GT(functions, 300);  // the scan found the code's functions
}
