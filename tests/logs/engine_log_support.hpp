// Helpers shared by the engine-log tests (test_engine_log.cpp, test_engine_log_args.cpp): the shipped signatures, a
// file read, the real binary run with stdout and stderr together, and the synthetic corpus folder.
#pragma once

#include <string>

#include "signatures_support.hpp"
#include "base/file.hpp"
#include "../test_support.hpp"

namespace pftest::enginelog {

inline const preflight::logs::SignatureSet& sigs() { return shipped_signatures(); }

inline std::string read(const std::string& path) {
  auto t = preflight::read_text_file(path);
  return t ? *t : std::string();
}

inline bool oom_family(const std::string& c) { return c == "weights_oom" || c == "kv_alloc_oom"; }

using Run = CliRun;
// Runs the real binary; stdout and stderr together.
inline Run run(const std::string& args) { return run_cli(args); }

inline const std::string k_synthetic = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/synthetic";

}  // namespace pftest::enginelog
