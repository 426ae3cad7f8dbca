// Issue 15 (build): the engine build as a case field (engine_build) and as `fit --engine-build`: bad text is a usage
// error naming the field (exit 2); a build either side of PR #7427's boundary (0.17.0rc2.dev73: its merge 5c0d02f689
// describes as v0.17.0rc1-73, and setuptools-scm names builds after v0.17.0rc1 "0.17.0rc2.devN") flips the non-torch term.
#include <gtest/gtest.h>

#include <fstream>

#include "base/json_util.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {
// The non-torch term (GiB) of `fit ... --json`.
double non_torch_gib(const std::string& args) {
  const auto r = pftest::run_cli("fit " + args + " --json", {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 300);
  auto j = parse_json(r.out, "stdout");
  if (!j) return -1;
  for (const auto& t : (*j)["memory_per_device"]["terms"])
    if (t["name"] == "non-torch") return t["gib"].get<double>();
  return -1;
}
}  // namespace

TEST(EngineBuildCli, Issue15_BadBuildTextIsAUsageError) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend@0.18.0 --engine-build 0.17.0rc2-66");
  EXPECT_EQ(fit.code, 2) << fit.out;
  EXPECT_NE(fit.out.find("--engine-build: engine build '0.17.0rc2-66'"), std::string::npos) << fit.out;

  const std::string dir = pftest::scratch_dir("engine-build");
  const std::string file = dir + "/cases.jsonl";
  {
    std::ofstream out(file);
    out << R"({"id": "b1", "engine": "vllm-ascend", "engine_version": "0.18.0", "engine_build": "nightly", "device": "910B3", "num_devices": 1,)"
        << R"( "model": "Qwen/Qwen3-8B", "tensor_parallel_size": 1, "max_model_len": 4096, "available_kv_gib": 40.0})" << "\n";
  }
  const auto v = pftest::run_cli("validate " + file + " --json");
  EXPECT_EQ(v.code, 2) << v.out.substr(0, 400);
  EXPECT_NE(v.out.find("(case b1): engine_build: engine build 'nightly'"), std::string::npos) << v.out.substr(0, 400);
}

// One 910B3 rank on vLLM-Ascend 0.18: the absolute count takes the fitted 944 MiB; the increase count 944 MiB less the
// 388,337,664 B (0.3617 GiB) the worker's init snapshot already holds: 0.9219 - 0.5602 GiB.
TEST(EngineBuildCli, Issue15_FitEngineBuildFlipsPr7427) {
  const std::string base = "Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend@0.18.0 --max-model-len 4096";
  const double before = non_torch_gib(base + " --engine-build 0.17.0rc2.dev72");
  const double from = non_torch_gib(base + " --engine-build 0.17.0rc2.dev73");
  const double none = non_torch_gib(base);
  EXPECT_NEAR(before, 944.0 / 1024.0, 0.001);
  EXPECT_NEAR(from, 944.0 / 1024.0 - 388337664.0 / 1073741824.0, 0.001);
  EXPECT_DOUBLE_EQ(none, from);
}
