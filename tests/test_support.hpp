// Helpers shared by the tests: paths to ../shared and a scratch directory per test.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace pftest {

// A file's whole content; "" when it cannot be opened (the test's own assertions on the content then fail).
inline std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A real published quantization descriptor kept under tests/fixtures/quant (each with its source in the README there).
inline std::string quant_fixture(const std::string& rel) { return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/quant/" + rel; }

inline std::string shared_path(const std::string& rel) { return std::string(PREFLIGHT_SHARED_DIR) + "/" + rel; }

inline std::string scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("preflight-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

struct CliRun {
  int code = -1;
  std::string out;
};
struct CliOptions {
  std::string env;          // prefixed to the command line ("NAME=value ..." or "env -u NAME ...")
  bool with_stderr = true;  // stdout and stderr together, else stdout only
};

#ifdef PREFLIGHT_BINARY
// Runs the real preflight binary and returns its exit code and output.
inline CliRun run_cli(const std::string& args, const CliOptions& options = {}) {
  CliRun r;
  const std::string cmd = options.env + " " + std::string(PREFLIGHT_BINARY) + " " + args + (options.with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}
#endif

}  // namespace pftest
