// cli/bench_compare: measured-versus-predicted for `preflight bench --device/--spec` and
// `preflight calibrate`. It sits above both estimate and bench (STYLE.md): bench never sees a
// prediction's origin, estimate never sees a measurement.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "bench/measurement.hpp"
#include "bench/store.hpp"

namespace preflight::cli {

// The range a predicted figure may take (the speed model's band: bandwidth range, efficiency spread).
struct PredictionBand {
  double low = 0, high = 0;
};

// What preflight predicts for a deployment, in the units the benchmark measures.
struct BenchPrediction {
  std::optional<double> decode_tok_s_single;       // one stream's decode speed, tokens/s
  std::optional<double> ttft_ms;                   // time to first token at the benchmark's input length, one stream
  std::map<int64_t, double> throughput_tok_s;      // aggregate decode tokens/s by concurrency
  std::optional<int64_t> kv_tokens;                // KV-cache capacity in tokens
  std::string source;                              // what produced it ("speed model <version>", a file path)
  // Bands of the figures above, when the source gives them (stored with the run, shaded by report).
  std::optional<PredictionBand> decode_tok_s_single_band, ttft_ms_band;
  std::map<int64_t, PredictionBand> throughput_band;
};

struct BenchPredictionRequest {
  std::string spec, device, engine;
  int64_t input_len = 0, output_len = 0;
  std::vector<int64_t> concurrencies;
};

// The single place the speed model is asked for a benchmark prediction (fit for the KV capacity,
// estimate_speed for the rest); not_found "no prediction available: ..." when it cannot answer.
Expected<BenchPrediction> predict_for_bench(const BenchPredictionRequest& request);

// A prediction given by hand: {"decode_tok_s_single": .., "ttft_ms": .., "throughput_tok_s": {"1": .., "4": ..}, "kv_tokens": ..},
// optionally with bands [low, high]: "decode_tok_s_single_band", "ttft_ms_band", "throughput_tok_s_band": {"1": [..]}.
Expected<BenchPrediction> load_prediction_file(const std::string& path);
Expected<BenchPrediction> prediction_from_json(const Json& j, const std::string& origin);
Json prediction_to_json(const BenchPrediction& p);

// One predicted/measured pair. `kind` says which way efficiency scales it: a rate (tokens/s) is
// predicted x efficiency; a time (ms) is predicted / efficiency.
struct ComparisonRow {
  std::string metric;
  int64_t concurrency = 0;
  double predicted = 0, measured = 0;
  std::string unit;
  enum class Kind { rate, time } kind = Kind::rate;
  std::optional<PredictionBand> band;  // the prediction's band, when it carries one
  bool in_band() const { return band && measured >= band->low && measured <= band->high; }
  double error_pct() const { return measured != 0 ? (predicted - measured) / measured * 100 : 0; }
};

// Pairs for one measured level (fixed concurrency). Single-stream metrics pair only at concurrency 1.
std::vector<ComparisonRow> compare_level(const BenchPrediction& prediction, int64_t concurrency, const bench::RunStats& stats);
// The rows as bench --json and report --json print them: metric, concurrency, predicted, measured, unit, error_pct, and
// predicted_band / in_band where the prediction has a band.
Json comparison_rows_to_json(const std::vector<ComparisonRow>& rows);

// One multiplicative efficiency per group, fitted by least squares in log space:
// log e = mean(log(measured / predicted)) for rates, mean(log(predicted / measured)) for times.
struct EfficiencyFit {
  std::string engine, device;
  int64_t pairs = 0;
  double efficiency = 1;
  double median_abs_error_before_pct = 0, median_abs_error_after_pct = 0;
};
EfficiencyFit fit_efficiency(const std::string& engine, const std::string& device, const std::vector<ComparisonRow>& rows);

// A stored run with statistics recomputed from its stored requests (so an interrupted run counts),
// using the load mode, concurrency and SLO it was run with.
struct StoredLevel {
  bench::StoredRun run;
  bench::RunStats stats;
  std::optional<BenchPrediction> prediction;
};
Expected<StoredLevel> load_level(bench::BenchStore& store, const bench::StoredRun& run);
// Every run of the sweep that `run_id` belongs to (the newest sweep when run_id is 0), by concurrency.
Expected<std::vector<StoredLevel>> load_sweep(bench::BenchStore& store, int64_t run_id);

}  // namespace preflight::cli
