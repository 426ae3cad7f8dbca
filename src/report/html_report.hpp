// report/html_report: one self-contained HTML page for a benchmark sweep: inline SVG charts
// (latency vs concurrency, throughput vs concurrency, predicted vs measured as one row per metric
// on a measured/predicted axis that turns logarithmic when the ratios span 10x, memory breakdown per
// device from a fit estimate), the per-level table, failures and notes. No script, no network, no
// external font or style sheet. Formatting only: every number comes from the records passed in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/measurement.hpp"

namespace preflight::report {

struct BenchLevel {
  int64_t run_id = 0;
  int64_t concurrency = 0;      // fixed concurrency (0 for a request-rate run)
  double request_rate = 0;
  bool interrupted = false;     // the run did not finish; stats recomputed from stored requests
  bench::RunStats stats;
};

struct ComparisonPoint {
  std::string metric;           // "decode tok/s (1 stream)", "TTFT ms", "throughput tok/s"
  int64_t concurrency = 0;
  double predicted = 0, measured = 0;
  std::string unit;
  std::optional<double> predicted_low, predicted_high;  // the prediction's band, when it carries one
};

struct MemoryItem {
  std::string name;
  double gib = 0;
};

struct HtmlReportData {
  std::string title;
  std::string url, model, sweep_id, started_at, build;
  std::vector<BenchLevel> levels;           // sorted by concurrency
  std::vector<ComparisonPoint> comparison;  // empty without a prediction
  std::string memory_device;                // empty without a fit estimate
  double memory_total_gib = 0;
  std::vector<MemoryItem> memory;
  std::vector<std::string> notes;
};

std::string render_bench_html(const HtmlReportData& data);

}  // namespace preflight::report
