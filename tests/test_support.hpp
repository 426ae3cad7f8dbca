// Helpers shared by the tests: paths to ../shared and a scratch directory per test.
#pragma once

#include <filesystem>
#include <string>
#include <unistd.h>

namespace pftest {

inline std::string shared_path(const std::string& rel) { return std::string(PREFLIGHT_SHARED_DIR) + "/" + rel; }

inline std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("preflight-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace pftest
