// cli/cmd_report_compare: the arithmetic behind `preflight report --compare RUN_A RUN_B ...`. Each
// run names a stored sweep; its levels are matched by concurrency with the other arms', and every
// arm is set against the first (the baseline): the difference of the medians with a bootstrap 95%
// interval from the per-request samples, the difference of the p90s, and the relative difference
// of throughput and goodput. Each arm's stored prediction sits beside its measurement. It lives in
// cli because it pairs bench records with predictions (like cli/bench_compare); report only renders.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "bench/measurement.hpp"
#include "bench/store.hpp"
#include "cli/bench_compare.hpp"
#include "report/compare_report.hpp"

namespace preflight::cli {

// One level of one arm: its statistics, the per-request samples the intervals resample, and the
// prediction stored with the run.
struct AbLevelInput {
  int64_t concurrency = 0;
  bench::RunStats stats;
  std::vector<double> ttft_ms, tpot_ms, itl_ms;  // successful requests only; ITL pooled over requests
  std::optional<BenchPrediction> prediction;
};

struct AbArmInput {
  report::AbArm arm;
  std::vector<AbLevelInput> levels;  // fixed-concurrency levels, ascending
};

// The samples of one level from its stored requests (what the intervals resample).
AbLevelInput ab_level_from_records(int64_t concurrency, const bench::RunStats& stats, const std::vector<bench::RequestRecord>& records);

// Loads the sweep that run_id belongs to as one arm labelled `letter`. Request-rate levels are left
// out (they have no concurrency to match on) and counted in `skipped`.
Expected<AbArmInput> load_ab_arm(bench::BenchStore& store, int64_t run_id, const std::string& letter, int64_t& skipped);

struct Interval {
  double low = 0, high = 0;
};
// Percentile bootstrap of median(b) - median(a): `resamples` draws of each sample with replacement
// (splitmix64 from `seed`, so the result is the same on every run and platform), the 2.5th and
// 97.5th percentiles of the differences. Both samples must be non-empty.
Interval bootstrap_median_difference(const std::vector<double>& a, const std::vector<double>& b, int resamples = 1000, uint64_t seed = 0x5eed);

// The side-by-side rows for every concurrency any arm measured (TTFT, TPOT, ITL, output
// throughput, and goodput where a run had an SLO).
report::AbReport build_ab_report(const std::vector<AbArmInput>& arms);

}  // namespace preflight::cli
