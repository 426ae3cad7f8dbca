#include "cli/cmd_report_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace preflight::cli {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double resampled_median(const std::vector<double>& v, uint64_t& state, std::vector<double>& scratch) {
  scratch.resize(v.size());
  for (auto& x : scratch) x = v[splitmix64(state) % v.size()];
  std::sort(scratch.begin(), scratch.end());
  return bench::percentile_sorted(scratch, 50);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return bench::percentile_sorted(v, 50);
}

double p90(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return bench::percentile_sorted(v, 90);
}

const AbLevelInput* find_level(const AbArmInput& arm, int64_t concurrency) {
  for (const auto& l : arm.levels)
    if (l.concurrency == concurrency) return &l;
  return nullptr;
}

enum class Sample { ttft, tpot, itl };

const std::vector<double>& samples(const AbLevelInput& l, Sample s) { return s == Sample::ttft ? l.ttft_ms : s == Sample::tpot ? l.tpot_ms : l.itl_ms; }

std::optional<double> predicted_latency(const AbLevelInput& l, Sample s) {
  if (!l.prediction || l.concurrency != 1) return std::nullopt;
  if (s == Sample::ttft) return l.prediction->ttft_ms;
  if (s == Sample::tpot && l.prediction->decode_tok_s_single && *l.prediction->decode_tok_s_single > 0) return 1000.0 / *l.prediction->decode_tok_s_single;
  return std::nullopt;
}

report::AbRow latency_row(const std::vector<AbArmInput>& arms, int64_t c, const char* metric, Sample s) {
  report::AbRow row{c, metric, "ms", true, {}};
  const AbLevelInput* base = find_level(arms.front(), c);
  for (size_t a = 0; a < arms.size(); ++a) {
    report::AbCell cell;
    const AbLevelInput* l = find_level(arms[a], c);
    if (l && !samples(*l, s).empty()) {
      const auto& v = samples(*l, s);
      cell.present = true;
      cell.p50 = median(v);
      cell.p90 = p90(v);
      cell.count = static_cast<int64_t>(v.size());
      cell.predicted = predicted_latency(*l, s);
      if (a > 0 && base && !samples(*base, s).empty()) {
        const auto& b = samples(*base, s);
        report::AbDelta d;
        d.diff = cell.p50 - median(b);
        d.pct = median(b) != 0 ? d.diff / median(b) * 100 : 0;
        d.diff_p90 = *cell.p90 - p90(b);
        const Interval ci = bootstrap_median_difference(b, v);
        d.ci_low = ci.low;
        d.ci_high = ci.high;
        cell.delta = d;
      }
    }
    row.cells.push_back(cell);
  }
  return row;
}

// A value per level (throughput, goodput): the relative difference, no interval (one value per run).
report::AbRow value_row(const std::vector<AbArmInput>& arms, int64_t c, const char* metric, const char* unit,
                        std::optional<double> (*value)(const AbLevelInput&), std::optional<double> (*prediction)(const AbLevelInput&)) {
  report::AbRow row{c, metric, unit, false, {}};
  const AbLevelInput* base = find_level(arms.front(), c);
  const std::optional<double> base_opt = base ? value(*base) : std::nullopt;
  const bool has_base = base_opt.has_value();
  const double base_value = base_opt.value_or(0.0);  // a plain double: GCC 12 flags *optional as maybe-uninitialized here
  for (size_t a = 0; a < arms.size(); ++a) {
    report::AbCell cell;
    const AbLevelInput* l = find_level(arms[a], c);
    if (const auto v = l ? value(*l) : std::nullopt) {
      cell.present = true;
      cell.p50 = *v;
      cell.count = l->stats.succeeded;
      cell.predicted = prediction(*l);
      if (a > 0 && has_base) cell.delta = report::AbDelta{*v - base_value, base_value != 0 ? (*v - base_value) / base_value * 100 : 0, {}, {}, {}};
    }
    row.cells.push_back(cell);
  }
  return row;
}

std::optional<double> throughput_of(const AbLevelInput& l) {
  return l.stats.succeeded > 0 ? std::optional<double>(l.stats.output_throughput_tok_s) : std::nullopt;
}
std::optional<double> predicted_throughput(const AbLevelInput& l) {
  if (!l.prediction) return std::nullopt;
  const auto it = l.prediction->throughput_tok_s.find(l.concurrency);
  return it == l.prediction->throughput_tok_s.end() ? std::nullopt : std::optional<double>(it->second);
}
// The aggregate decode rate in the steady window at fixed concurrency (bench's "steady tok/s"): what the prediction's
// throughput_tok_s is, and what bench compares it with (bench_compare.cpp compare_level).
std::optional<double> steady_decode_of(const AbLevelInput& l) { return l.stats.succeeded > 0 ? l.stats.steady_decode_tok_s : std::nullopt; }
std::optional<double> goodput_of(const AbLevelInput& l) { return l.stats.goodput_req_s; }
std::optional<double> no_prediction(const AbLevelInput&) { return std::nullopt; }

}  // namespace

AbLevelInput ab_level_from_records(int64_t concurrency, const bench::RunStats& stats, const std::vector<bench::RequestRecord>& records) {
  AbLevelInput l;
  l.concurrency = concurrency;
  l.stats = stats;
  for (const auto& r : records) {
    if (!r.ok()) continue;
    if (const auto t = r.ttft_ms()) l.ttft_ms.push_back(*t);
    if (const auto t = r.tpot_ms()) l.tpot_ms.push_back(*t);
    for (size_t i = 1; i < r.token_event_ns.size(); ++i) l.itl_ms.push_back(static_cast<double>(r.token_event_ns[i] - r.token_event_ns[i - 1]) / 1e6);
  }
  return l;
}

Expected<AbArmInput> load_ab_arm(bench::BenchStore& store, int64_t run_id, const std::string& letter, int64_t& skipped) {
  PF_TRY(sweep, load_sweep(store, run_id));
  AbArmInput arm;
  const bench::RunInfo& info = sweep.front().run.info;
  const std::string what = !info.engine.empty() ? info.engine + (info.device.empty() ? "" : " on " + info.device) : info.model;
  arm.arm = {letter, fmt::format("{}: {} (run {})", letter, what, run_id), run_id, info.sweep_id, info.url, info.model, info.engine, info.device, info.started_at, ""};
  for (const auto& level : sweep) {
    if (level.run.info.mode != "concurrency") {
      ++skipped;
      continue;
    }
    PF_TRY(records, store.requests(level.run.id));
    AbLevelInput l = ab_level_from_records(level.run.info.concurrency, level.stats, records);
    l.prediction = level.prediction;
    if (level.prediction && arm.arm.prediction_source.empty()) arm.arm.prediction_source = level.prediction->source;
    arm.levels.push_back(std::move(l));
  }
  return arm;
}

Interval bootstrap_median_difference(const std::vector<double>& a, const std::vector<double>& b, int resamples, uint64_t seed) {
  uint64_t state = seed;
  std::vector<double> diffs, scratch;
  diffs.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double ma = resampled_median(a, state, scratch);
    diffs.push_back(resampled_median(b, state, scratch) - ma);
  }
  std::sort(diffs.begin(), diffs.end());
  return {bench::percentile_sorted(diffs, 2.5), bench::percentile_sorted(diffs, 97.5)};
}

report::AbReport build_ab_report(const std::vector<AbArmInput>& arms) {
  report::AbReport r;
  for (const auto& a : arms) r.arms.push_back(a.arm);
  std::set<int64_t> levels;
  for (const auto& a : arms)
    for (const auto& l : a.levels) levels.insert(l.concurrency);
  r.concurrencies.assign(levels.begin(), levels.end());
  if (arms.empty()) return r;
  for (int64_t c : r.concurrencies) {
    r.rows.push_back(latency_row(arms, c, "TTFT", Sample::ttft));
    r.rows.push_back(latency_row(arms, c, "TPOT", Sample::tpot));
    r.rows.push_back(latency_row(arms, c, "ITL", Sample::itl));
    // ux29: the predicted throughput is a decode rate; it stood beside output throughput, which counts the prefill and
    // TTFT too (61.0 predicted against 44.0 output while bench set the same prediction against 49.0 steady decode). It
    // stands beside the steady decode rate, as in bench, when a run has one.
    r.rows.push_back(value_row(arms, c, "output throughput", "tok/s", throughput_of, no_prediction));
    report::AbRow steady = value_row(arms, c, "steady decode", "tok/s", steady_decode_of, predicted_throughput);
    if (std::any_of(steady.cells.begin(), steady.cells.end(), [](const report::AbCell& x) { return x.present; })) r.rows.push_back(steady);
    report::AbRow goodput = value_row(arms, c, "goodput", "req/s", goodput_of, no_prediction);
    if (std::any_of(goodput.cells.begin(), goodput.cells.end(), [](const report::AbCell& x) { return x.present; })) r.rows.push_back(goodput);
  }
  for (const auto& a : arms) {
    for (int64_t c : r.concurrencies)
      if (!find_level(a, c)) r.notes.push_back(fmt::format("{} has no level at concurrency {}", a.arm.label, c));
  }
  return r;
}

}  // namespace preflight::cli
