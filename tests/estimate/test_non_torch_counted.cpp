// Issue 15 (nt018): which non-torch memory vLLM-Ascend's worker subtracts from the KV budget, by version and SoC.
// Read in vllm-ascend's vllm_ascend/worker/worker.py determine_available_memory at each tag:
//  - 0.7 - 0.14 (v0.13.0, v0.14.0rc1): peak + (total - free - allocated) read after empty_cache: the device's whole
//    non-torch memory (absolute).
//  - 0.15 - 0.17 (v0.15.0rc1, v0.17.0rc1): requested - non_kv - cleared, with cleared = (total - free - reserved) at the
//    end of the profile run - non_torch_increase, so non_kv + cleared = weights + peak + the whole non-torch memory at
//    the end of the profile run (absolute again).
//  - 0.18+ (PR #7427, v0.18.0rc1 to main 182b75e): requested - non_kv, where vLLM's memory_profiling counts only
//    non_torch_increase = non-torch after the profile - non-torch at the worker's init snapshot (taken after set_device,
//    before the distributed init), so the runtime context present at the snapshot is left out (increase).
//  - 0.18+ on 310P (_310p/worker_310p.py, PR #7372): still subtracts cleared (absolute).
// The increase count subtracts the fitted non-torch less the runtime context already there at the snapshot, printed
// by PR #7427's log as init_non_torch_memory 0.3616676330566406 GiB = 388,337,664 B. The multi-rank share
// (non_torch_multi_rank_fraction x non_torch_bytes, the communicators) is created after the snapshot, so both counts
// hold it. Expected terms below are written from those formulas and the catalogue's constants.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {
pftest::FitSetup setup(const std::string& device_id, const std::string& version) {
  return pftest::fit_setup("Qwen/Qwen3-8B", device_id, "vllm-ascend", version);
}
estimate::Deployment deployment(int64_t tp) {
  estimate::Deployment d;
  d.tensor_parallel_size = tp;
  d.max_model_len = 8192;
  d.gpu_memory_utilization = 0.9;
  d.mode = estimate::ExecutionMode::eager;
  return d;
}
}  // namespace

// The catalogue's NPU constants: 944 MiB absolute (fitted), 388,337,664 B at the snapshot (printed), 0.5 share.
TEST(NonTorchCounted, Issue15_CatalogueConstants) {
  auto s = setup("910B3", "0.18.0");
  EXPECT_DOUBLE_EQ(s.overheads.non_torch_bytes, 944.0 * 1024 * 1024);
  ASSERT_TRUE(s.overheads.non_torch_snapshot_bytes.has_value());
  EXPECT_DOUBLE_EQ(*s.overheads.non_torch_snapshot_bytes, 388337664.0);
  EXPECT_DOUBLE_EQ(s.overheads.non_torch_multi_rank_fraction, 0.5);
}

// Absolute formula: 0.17 on an A2 card, and 0.18 on 310P (its own worker). One rank: 944 MiB = 989,855,744 B;
// TP 2: 944 x 1.5 = 1416 MiB = 1,484,783,616 B.
TEST(NonTorchCounted, Issue15_AbsoluteFormulaUpTo017AndOn310p) {
  struct Row {
    const char *device, *version;
    int64_t tp;
    double bytes;
  };
  const Row rows[] = {{"910B3", "0.17.0", 1, 989855744.0}, {"910B3", "0.17.0", 2, 1484783616.0}, {"910B3", "0.13.0", 2, 1484783616.0},
                      {"300I-Duo", "0.18.0", 1, 989855744.0}, {"300I-Duo", "0.23.0", 2, 1484783616.0}};
  for (const auto& r : rows) {
    auto s = setup(r.device, r.version);
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, deployment(r.tp));
    EXPECT_DOUBLE_EQ(e.non_torch_bytes, r.bytes) << r.device << " " << r.version << " TP" << r.tp;
    EXPECT_EQ(e.non_torch_counted, engine::NonTorchCounted::absolute) << r.device << " " << r.version;
  }
}

// Increase formula: 0.18+ on A2 (910B3) and A3 (910C). One rank: 989,855,744 - 388,337,664 = 601,518,080 B;
// TP 2: 601,518,080 + 0.5 x 944 MiB (494,927,872 B) = 1,096,445,952 B. The budget is the absolute one plus the
// snapshot's 388,337,664 B, to the byte (both floored once).
TEST(NonTorchCounted, Issue15_IncreaseFormulaFrom018Outside310p) {
  struct Row {
    const char *device, *version;
    int64_t tp;
    double bytes;
  };
  const Row rows[] = {{"910B3", "0.18.0", 1, 601518080.0}, {"910B3", "0.18.0", 2, 1096445952.0}, {"910B3", "0.23.0", 1, 601518080.0},
                      {"910C", "0.20.2", 1, 601518080.0}};
  for (const auto& r : rows) {
    auto s = setup(r.device, r.version);
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, deployment(r.tp));
    EXPECT_DOUBLE_EQ(e.non_torch_bytes, r.bytes) << r.device << " " << r.version << " TP" << r.tp;
    EXPECT_EQ(e.non_torch_counted, engine::NonTorchCounted::increase) << r.device << " " << r.version;
    bool cited = false;
    for (const auto& t : e.terms) cited = cited || (t.name == "non-torch" && t.rule.find("PR #7427") != std::string::npos);
    EXPECT_TRUE(cited) << r.device << " " << r.version;
    // The same deployment with the absolute count: the budget is 388,337,664 B smaller.
    engine::Overheads absolute = s.overheads;
    absolute.non_torch_snapshot_bytes.reset();
    const auto a = estimate::estimate_fit(s.model, s.device, s.engine, absolute, deployment(r.tp));
    EXPECT_EQ(a.non_torch_counted, engine::NonTorchCounted::absolute);
    EXPECT_NEAR(e.available_kv_bytes - a.available_kv_bytes, 388337664.0, 1.0) << r.device << " " << r.version;
  }
}

// Issue 15 (build): vLLM 0.18.0 ran on nightly vLLM-Ascend builds on both sides of PR #7427. Its merge on main,
// 5c0d02f689, describes as v0.17.0rc1-73-g5c0d02f689 (git describe --tags --match 'v*', vllm-ascend mirror), so the
// first build counting the increase is 0.17.0rc2.dev73 (setuptools-scm names builds after v0.17.0rc1 "0.17.0rc2.devN").
// One rank on 910C: below it the absolute 944 MiB = 989,855,744 B; from it 989,855,744 - 388,337,664 = 601,518,080 B.
// A tagged release past it (0.18.0rc1) counts the increase; without a build the version decides (0.18: increase).
TEST(NonTorchCounted, Issue15_BuildBelowPr7427CountsTheAbsoluteAmount) {
  struct Row {
    const char* build;  // "": none given
    double bytes;
    engine::NonTorchCounted counted;
  };
  const Row rows[] = {{"0.17.0rc2.dev66+g9d0b7c8e9", 989855744.0, engine::NonTorchCounted::absolute},
                      {"0.17.0rc2.dev72", 989855744.0, engine::NonTorchCounted::absolute},
                      {"0.17.0rc2.dev73", 601518080.0, engine::NonTorchCounted::increase},
                      {"0.17.0rc2.dev93+g8e0789bb3", 601518080.0, engine::NonTorchCounted::increase},
                      {"0.18.0rc1", 601518080.0, engine::NonTorchCounted::increase},
                      {"", 601518080.0, engine::NonTorchCounted::increase}};
  for (const auto& r : rows) {
    auto s = setup("910C", "0.18.0");
    if (*r.build) s.engine.build_named = *engine::parse_engine_build(r.build, "test");
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, deployment(1));
    EXPECT_DOUBLE_EQ(e.non_torch_bytes, r.bytes) << r.build;
    EXPECT_EQ(e.non_torch_counted, r.counted) << r.build;
  }
  // A build does not move the 0.23 profile, which has no boundary: every build it runs is past PR #7427.
  auto s = setup("910C", "0.23.0");
  s.engine.build_named = *engine::parse_engine_build("0.17.0rc2.dev66", "test");
  EXPECT_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, deployment(1)).non_torch_counted, engine::NonTorchCounted::increase);
}
