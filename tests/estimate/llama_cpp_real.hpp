// The real llama.cpp for tests (node-llama-cpp 3.21.1 in tests/llama_cpp, installed by `npm ci` there): whether it is
// there, and the JSON lines one of its scripts prints (check.mjs: one line per load, speed.mjs: one per decode run).
#pragma once

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "base/json_util.hpp"

namespace pftest {

inline std::string llama_cpp_test_dir() { return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/llama_cpp"; }

inline bool llama_cpp_installed() {
  return std::filesystem::exists(llama_cpp_test_dir() + "/node_modules/node-llama-cpp") && std::system("node --version >/dev/null 2>&1") == 0;
}

struct LlamaScriptRun {
  int status = -1;                  // the script's exit status (pclose)
  std::string text;                 // all it printed
  std::vector<preflight::Json> json;  // its lines that are JSON objects, in order
};

// `node SCRIPT ARGS` in tests/llama_cpp.
inline LlamaScriptRun run_llama_cpp_script(const std::string& script, const std::string& args) {
  LlamaScriptRun r;
  FILE* p = popen(("cd " + llama_cpp_test_dir() + " && node " + script + " " + args + " 2>/dev/null").c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.text += buf.data();
  r.status = pclose(p);
  std::istringstream lines(r.text);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty() && line[0] == '{') r.json.push_back(preflight::Json::parse(line));
  return r;
}

}  // namespace pftest

// In a test: fail where the services are required (CI), else skip, when the real llama.cpp is not installed.
#define PFTEST_NEED_REAL_LLAMA_CPP()                                                                                                        \
  do {                                                                                                                                     \
    if (!pftest::llama_cpp_installed()) {                                                                                                 \
      if (pftest::require_services()) FAIL() << "node or " << pftest::llama_cpp_test_dir() << "/node_modules/node-llama-cpp missing (run npm ci in tests/llama_cpp)"; \
      GTEST_SKIP() << "node or tests/llama_cpp/node_modules missing (run npm ci in tests/llama_cpp); skipped";                           \
    }                                                                                                                                      \
  } while (0)
