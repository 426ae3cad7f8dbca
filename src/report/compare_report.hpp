// report/compare_report: an engine A/B comparison of stored benchmark sweeps (`preflight report
// --compare RUN_A RUN_B ...`) as a text table, JSON, and one self-contained HTML page with inline
// SVG charts (no script, no network). Formatting only: every number, difference and interval is
// computed by the caller (cli/cmd_report_compare) and passed in the AbReport record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json_util.hpp"

namespace preflight::report {

// One compared deployment: a stored sweep, named by the run given on the command line.
struct AbArm {
  std::string letter;           // "A", "B", ...: column headers
  std::string label;            // "A: vllm-ascend on 910B3 (run 3)"
  int64_t run_id = 0;
  std::string sweep_id, url, model, engine, device, started_at;
  std::string prediction_source;  // empty without a stored prediction
};

// The difference of one arm from the baseline (the first arm): arm - baseline.
struct AbDelta {
  double diff = 0;               // of the p50 (or of the value for throughput and goodput)
  double pct = 0;                // diff / baseline x 100
  std::optional<double> diff_p90;
  std::optional<double> ci_low, ci_high;  // bootstrap 95% interval of the p50 difference
};

// One arm's measurement of one metric at one level.
struct AbCell {
  bool present = false;          // the arm has this level and a value for the metric
  double p50 = 0;                // the median, or the value for throughput and goodput
  std::optional<double> p90;
  int64_t count = 0;             // samples behind p50/p90 (requests or gaps)
  std::optional<double> predicted;  // the arm's stored prediction of this metric at this level
  std::optional<AbDelta> delta;  // vs the baseline; absent for the baseline itself
};

struct AbRow {
  int64_t concurrency = 0;
  std::string metric;            // "TTFT", "TPOT", "ITL", "output throughput", "steady decode", "goodput"
  std::string unit;              // "ms", "tok/s", "req/s"
  bool lower_is_better = true;
  std::vector<AbCell> cells;     // one per arm, in arm order
};

struct AbReport {
  std::string title, build;
  std::vector<AbArm> arms;
  std::vector<int64_t> concurrencies;  // the union of the arms' levels, ascending
  std::vector<AbRow> rows;             // by concurrency, then metric
  std::vector<std::string> notes;
};

std::string render_compare_text(const AbReport& report);
Json compare_to_json(const AbReport& report);
std::string render_compare_html(const AbReport& report);

}  // namespace preflight::report
