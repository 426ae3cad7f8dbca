#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>

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
