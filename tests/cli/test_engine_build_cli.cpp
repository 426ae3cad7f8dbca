// Issue 15 (build): the engine build as a case field (engine_build) and as `fit --engine-build`: bad text is a usage
// error naming the field (exit 2); a build either side of PR #7427's boundary (0.17.0rc2.dev73: its merge 5c0d02f689
// describes as v0.17.0rc1-73, and setuptools-scm names builds after v0.17.0rc1 "0.17.0rc2.devN") flips the non-torch term.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

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

namespace {
// `logs FILE --device 910B3 --json` of `text` written to a scratch file.
nlohmann::json logs_json(const std::string& name, const std::string& text) {
  const std::string file = pftest::scratch_dir("logs-build-" + name) + "/job.log";
  std::ofstream(file) << text;
  const auto r = pftest::run_cli("logs " + file + " --device 910B3 --json", {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 400);
  return nlohmann::json::parse(r.out, nullptr, false);
}

double predicted_available_kv_gib(const nlohmann::json& j) {
  for (const auto& row : j["printed_vs_predicted"])
    if (row["what"] == "available KV cache (GiB)" && row["predicted"].is_number()) return row["predicted"].get<double>();
  ADD_FAILURE() << "no predicted available KV row";
  return 0;
}

const nlohmann::json* build_rule(const nlohmann::json& j, const std::string& rule) {
  for (const auto& r : j["engine_resolution"]["build_rules"])
    if (r["rule"] == rule) return &r;
  return nullptr;
}
}  // namespace

// Issue 15 (misc950): a vLLM-Ascend nightly job log prints vLLM 0.18.0 and a vllm_ascend main-branch build named after the
// last tag on main (tests/logs/builds/vllm_ascend_nightly_build.log, its lines 8 and 9, from the gDS copy of the
// 2026-03-23 job). logs resolves them as a case (engine_version 0.18.0, engine_build) and fit --engine vllm-ascend@0.18.0
// --engine-build do: the vLLM line selects the 0.18 profile and the build decides PR #7427's boundary (0.17.0rc2.dev73).
// Before, the build's own number (0.17.0) selected the 0.15-0.17 profile, which counts the absolute non-torch memory for
// every build, so the two logs below predicted the same KV.
// The expected difference, one rank (no multi-rank share, which both counts add alike): the absolute count subtracts the
// fitted non-torch constant, the increase count that constant less the runtime context at the worker's init snapshot,
// so the build before the boundary predicts snapshot bytes less KV. Snapshot: engines.json overheads (npu)
// non_torch_snapshot_bytes, the 'init_non_torch_memory: 0.3616676330566406 GiB' of PR #7427's log = 388,337,664 B.
TEST(EngineBuildCli, Issue15_LogsBuildLineMovesPr7427) {
  std::ifstream fixture_file(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/builds/vllm_ascend_nightly_build.log");
  const std::string after((std::istreambuf_iterator<char>(fixture_file)), std::istreambuf_iterator<char>());
  ASSERT_NE(after.find("0.17.0rc2.dev93+g8e0789bb3"), std::string::npos);
  // The same log with the 2026-03-22 job's build (0.17.0rc2.dev66+g9d0b7c8e9: v0.17.0rc1-66, without 5c0d02f689).
  std::string before = after;
  before.replace(before.find("0.17.0rc2.dev93+g8e0789bb3"), 26, "0.17.0rc2.dev66+g9d0b7c8e9");

  std::ifstream engines_file(std::string(PREFLIGHT_SOURCE_DIR) + "/data/engines/engines.json");
  const auto engines = nlohmann::json::parse(engines_file);
  double snapshot_bytes = 0;
  for (const auto& o : engines["overheads"])
    if (o["platform"] == "npu") snapshot_bytes = o["non_torch_snapshot_bytes"].get<double>();
  EXPECT_NEAR(snapshot_bytes, 0.3616676330566406 * 1073741824.0, 1.0);

  const auto ja = logs_json("after", after), jb = logs_json("before", before);
  ASSERT_TRUE(ja.contains("engine_resolution")) << ja.dump().substr(0, 400);
  ASSERT_TRUE(jb.contains("engine_resolution")) << jb.dump().substr(0, 400);
  EXPECT_NEAR(predicted_available_kv_gib(jb), predicted_available_kv_gib(ja) - snapshot_bytes / 1073741824.0, 2e-9);

  for (const auto* j : {&ja, &jb}) {
    const auto& res = (*j)["engine_resolution"];
    EXPECT_EQ(res["profile"], "vllm-ascend@0.18-0.20");
    EXPECT_EQ(res["version"], "0.18.0+empty");
    EXPECT_EQ(res["version_from"], "log line 8: vllm version");
    EXPECT_EQ(res["build_from"], "log line 9: vllm-ascend version");
    EXPECT_NE(res["version_choice"].get<std::string>().find("main-branch build between tags"), std::string::npos) << res.dump();
  }
  EXPECT_EQ(ja["engine_resolution"]["build"], "0.17.0rc2.dev93+g8e0789bb3");
  EXPECT_EQ(jb["engine_resolution"]["build"], "0.17.0rc2.dev66+g9d0b7c8e9");
  const auto* ra = build_rule(ja, "non_torch_increase_from_build");
  const auto* rb = build_rule(jb, "non_torch_increase_from_build");
  ASSERT_TRUE(ra && rb) << ja["engine_resolution"].dump();
  EXPECT_EQ((*ra)["boundary"], "from 0.17.0rc2.dev73");
  EXPECT_TRUE((*ra)["holds"].get<bool>());
  EXPECT_FALSE((*rb)["holds"].get<bool>());

  // --emit-case writes what validate reads the same way: vLLM's version and the build.
  const std::string file = pftest::scratch_dir("logs-build-case") + "/job.log";
  std::ofstream(file) << after;
  const auto c = pftest::run_cli("logs " + file + " --device 910B3 --emit-case", {.with_stderr = false});
  const auto case_json = nlohmann::json::parse(c.out, nullptr, false);
  EXPECT_EQ(case_json["engine_version"], "0.18.0+empty") << c.out.substr(0, 300);
  EXPECT_EQ(case_json["engine_build"], "0.17.0rc2.dev93+g8e0789bb3");
}
