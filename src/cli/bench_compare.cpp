#include "cli/bench_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/file.hpp"
#include "base/json_keys.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/model_arg.hpp"
#include "deploy/deployment.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/speed.hpp"

namespace preflight::cli {

namespace {

// user37 (the first seed's "MindIE beside vLLM-Ascend on the same model"): `bench --endpoint generate_stream --engine mindie`
// against a MindIE Service. MindIE is no engine of the vLLM catalogue (fit --engine mindie has its own sizing, cli/cmd_mindie);
// its decode speed is the speed catalogue's mindie/npu profile, as `fit --engine mindie` prints it. The model and the
// card resolve as for vLLM-Ascend on the same NPU.
bool names_mindie(const std::string& engine) {
  const std::string e = to_lower(engine);
  return e == "mindie" || e.rfind("mindie@", 0) == 0;
}

}  // namespace

Expected<BenchPrediction> predict_for_bench(const BenchPredictionRequest& request) {
  PF_TRY(spec, resolve_model_arg(request.spec, ModelArgOptions{}));
  PF_TRY(devices, device::load_device_catalog());
  PF_TRY(engines, engine::load_engine_catalog());
  const bool mindie = names_mindie(request.engine);
  deploy::Inputs in;
  in.model = std::move(spec);
  in.device = {request.device, "--device", deploy::DeviceForm::name};
  in.engine = {mindie ? std::string("vllm-ascend") : request.engine, "", "--engine", "", "", deploy::UnknownVersion::error};
  // The context one benchmark request needs: its prompt and its output.
  in.flags.max_model_len = deploy::Given<int64_t>{std::max<int64_t>(1, request.input_len + request.output_len), "--input-len + --output-len"};
  auto resolved_or = deploy::resolve_deployment(in, {&devices, &engines});
  if (!resolved_or && mindie)
    return make_error(ErrorKind::invalid_argument, "--engine " + request.engine + ": MindIE Service runs on Ascend NPUs (" + resolved_or.error().message + ")");
  PF_TRY(resolved, std::move(resolved_or));
  const device::DeviceSpec& dev = resolved.device;
  const engine::EngineProfile& eng = resolved.engine;
  const estimate::Deployment& d = resolved.deployment;
  PF_TRY(speeds, engine::load_speed_catalog());
  const std::string speed_engine = mindie ? std::string("mindie") : eng.engine;
  const engine::SpeedProfile* sp = speeds.find(speed_engine, dev.platform, dev.id);
  if (!sp) return make_error(ErrorKind::unsupported, "no prediction available: no speed profile for " + speed_engine + " on " + dev.platform);
  const auto fit = estimate::estimate_fit(resolved.model, dev, eng, resolved.overheads, d);
  estimate::SpeedWorkload w;
  w.concurrency = request.concurrencies.empty() ? std::vector<int64_t>{1} : request.concurrencies;
  w.input_tokens = std::max<int64_t>(1, request.input_len);
  w.context_tokens = std::max<int64_t>(1, request.input_len + request.output_len / 2);  // mean position while decoding
  const auto speed = estimate::estimate_speed(resolved.model, dev, *sp, speeds, d, w);
  if (speed.points.empty())
    return make_error(ErrorKind::unsupported, "no prediction available: " + (speed.assumptions.empty() ? std::string("speed not estimable") : speed.assumptions.back().str()));
  BenchPrediction p;
  p.decode_tok_s_single = speed.single_stream_tokens_per_s;
  if (speed.single_stream_high > 0) p.decode_tok_s_single_band = PredictionBand{speed.single_stream_low, speed.single_stream_high};
  if (speed.ttft_s > 0) p.ttft_ms = speed.ttft_s * 1e3;
  if (speed.ttft_s > 0 && speed.ttft_high_s > 0) p.ttft_ms_band = PredictionBand{speed.ttft_low_s * 1e3, speed.ttft_high_s * 1e3};
  for (const auto& pt : speed.points) {
    p.throughput_tok_s[pt.concurrency] = pt.aggregate_tokens_per_s;
    // aggregate = concurrency x per-stream speed, so the per-stream band scales the same way
    const auto c = static_cast<double>(pt.concurrency);
    if (pt.per_stream_high > 0) p.throughput_band[pt.concurrency] = PredictionBand{c * pt.per_stream_low, c * pt.per_stream_high};
  }
  // MindIE's KV pool is its own (fit --engine mindie), not vLLM's "GPU KV cache size" line; llama.cpp prints no such
  // line either: its KV cells are the -c the server was started with (llama_kv_cache's "N cells"), not a budget's
  // remainder (user37: bench --engine llama.cpp predicted a vLLM token line).
  if (fit.fits && !mindie && eng.engine != "llama.cpp") p.kv_tokens = fit.kv_tokens;
  p.source = fmt::format("preflight speed model ({} {}, {} mode, {:.0f} GB/s copy bandwidth; {})", mindie ? std::string("mindie (its own speed profile)") : eng.id,
                         dev.id, speed.mode.str(), speed.bandwidth_bytes_per_s / 1e9, sp->origin);
  return p;
}

Json comparison_rows_to_json(const std::vector<ComparisonRow>& rows) {
  Json cmp = Json::array();
  for (const auto& c : rows) {
    cmp.push_back({{"metric", c.metric}, {"concurrency", c.concurrency}, {"predicted", c.predicted}, {"measured", c.measured}, {"unit", c.unit}, {"error_pct", c.error_pct()}});
    if (c.band) cmp.back()["predicted_band"] = Json::array({c.band->low, c.band->high}), cmp.back()["in_band"] = c.in_band();
  }
  return cmp;
}

namespace {

// A band stored as [low, high] with 0 <= low <= high.
Expected<std::optional<PredictionBand>> band_from_json(const Json* v, const std::string& field, const std::string& origin) {
  if (!v || v->is_null()) return std::optional<PredictionBand>{};
  if (!v->is_array() || v->size() != 2 || !(*v)[0].is_number() || !(*v)[1].is_number()) {
    return make_error(ErrorKind::corrupt, fmt::format("{}: expected [low, high], found {}", field, v->dump()), origin);
  }
  const PredictionBand b{(*v)[0].get<double>(), (*v)[1].get<double>()};
  if (!(b.low >= 0) || !(b.high >= b.low)) return make_error(ErrorKind::corrupt, fmt::format("{}: expected 0 <= low <= high, found {}", field, v->dump()), origin);
  return std::optional<PredictionBand>{b};
}

Json band_to_json(const PredictionBand& b) { return Json::array({b.low, b.high}); }

// Positive integer concurrency keys of throughput_tok_s / throughput_tok_s_band.
Expected<int64_t> concurrency_key(const std::string& key, const std::string& field, const std::string& origin) {
  char* end = nullptr;
  const long long c = std::strtoll(key.c_str(), &end, 10);
  if (!end || *end || c < 1) return make_error(ErrorKind::corrupt, fmt::format("{}: expected positive integer keys, found \"{}\"", field, key), origin);
  return static_cast<int64_t>(c);
}

Status read_bands(const JsonObject& o, BenchPrediction& p, const std::string& origin) {
  PF_TRY(decode, band_from_json(o.find("decode_tok_s_single_band"), "decode_tok_s_single_band", origin));
  PF_TRY(ttft, band_from_json(o.find("ttft_ms_band"), "ttft_ms_band", origin));
  p.decode_tok_s_single_band = decode;
  p.ttft_ms_band = ttft;
  const Json* t = o.find("throughput_tok_s_band");
  if (!t || t->is_null()) return Ok{};
  if (!t->is_object()) return o.wrong_type("throughput_tok_s_band", "an object of concurrency -> [low, high]");
  for (const auto& [key, value] : t->items()) {
    PF_TRY(c, concurrency_key(key, "throughput_tok_s_band", origin));
    PF_TRY(b, band_from_json(&value, "throughput_tok_s_band." + key, origin));
    if (b) p.throughput_band[c] = *b;
  }
  return Ok{};
}

}  // namespace

Expected<BenchPrediction> prediction_from_json(const Json& j, const std::string& origin) {
  if (!j.is_object()) return make_error(ErrorKind::corrupt, "expected a JSON object", origin);
  JsonObject o(j, origin);
  PF_TRY(keys, o.only_keys({"decode_tok_s_single", "ttft_ms", "throughput_tok_s", "kv_tokens", "source", "decode_tok_s_single_band", "ttft_ms_band",
                            "throughput_tok_s_band"}));
  (void)keys;
  BenchPrediction p;
  PF_TRY(decode, o.opt_number("decode_tok_s_single"));
  PF_TRY(ttft, o.opt_number("ttft_ms"));
  PF_TRY(kv, o.opt_int("kv_tokens"));
  PF_TRY(source, o.opt_string("source"));
  p.decode_tok_s_single = decode;
  p.ttft_ms = ttft;
  p.kv_tokens = kv;
  p.source = source.value_or(origin);
  if (const Json* t = o.find("throughput_tok_s")) {
    if (!t->is_object()) return o.wrong_type("throughput_tok_s", "an object of concurrency -> tokens/s");
    for (const auto& [key, value] : t->items()) {
      char* end = nullptr;
      const long long c = std::strtoll(key.c_str(), &end, 10);
      if (!end || *end || c < 1 || !value.is_number()) {
        return make_error(ErrorKind::corrupt, fmt::format("throughput_tok_s: expected positive integer keys and numbers, found \"{}\"", key), origin);
      }
      p.throughput_tok_s[c] = value.get<double>();
    }
  }
  for (double v : {p.decode_tok_s_single.value_or(1), p.ttft_ms.value_or(1)}) {
    if (!(v > 0)) return make_error(ErrorKind::invalid_argument, "predicted values must be positive", origin);
  }
  PF_TRY(bands, read_bands(o, p, origin));
  (void)bands;
  return p;
}

Expected<BenchPrediction> load_prediction_file(const std::string& path) {
  PF_TRY(j, load_owned_json_file(path));  // hard31: preflight's own form (fit --json's prediction): 4 MiB, a repeated key refused
  return prediction_from_json(j, path);
}

Json prediction_to_json(const BenchPrediction& p) {
  Json t = Json::object();
  for (const auto& [c, v] : p.throughput_tok_s) t[std::to_string(c)] = v;
  Json j = {{"throughput_tok_s", t}, {"source", p.source}};
  j["decode_tok_s_single"] = p.decode_tok_s_single ? Json(*p.decode_tok_s_single) : Json();
  j["ttft_ms"] = p.ttft_ms ? Json(*p.ttft_ms) : Json();
  j["kv_tokens"] = p.kv_tokens ? Json(*p.kv_tokens) : Json();
  if (p.decode_tok_s_single_band) j["decode_tok_s_single_band"] = band_to_json(*p.decode_tok_s_single_band);
  if (p.ttft_ms_band) j["ttft_ms_band"] = band_to_json(*p.ttft_ms_band);
  if (!p.throughput_band.empty()) {
    Json tb = Json::object();
    for (const auto& [c, b] : p.throughput_band) tb[std::to_string(c)] = band_to_json(b);
    j["throughput_tok_s_band"] = tb;
  }
  return j;
}

std::vector<ComparisonRow> compare_level(const BenchPrediction& p, int64_t concurrency, const bench::RunStats& s) {
  std::vector<ComparisonRow> rows;
  if (s.succeeded == 0) return rows;
  if (concurrency == 1) {
    if (p.decode_tok_s_single && s.tpot_ms.count > 0 && s.tpot_ms.mean > 0) {
      rows.push_back({"decode tok/s (1 stream)", 1, *p.decode_tok_s_single, 1000.0 / s.tpot_ms.mean, "tok/s", ComparisonRow::Kind::rate, p.decode_tok_s_single_band});
    }
    if (p.ttft_ms) rows.push_back({"TTFT ms", 1, *p.ttft_ms, s.ttft_ms.mean, "ms", ComparisonRow::Kind::time, p.ttft_ms_band});
  }
  const auto it = p.throughput_tok_s.find(concurrency);
  if (it != p.throughput_tok_s.end()) {
    const double measured = s.steady_decode_tok_s ? *s.steady_decode_tok_s : s.output_throughput_tok_s;
    const auto band = p.throughput_band.find(concurrency);
    rows.push_back({"throughput tok/s", concurrency, it->second, measured, "tok/s", ComparisonRow::Kind::rate,
                    band == p.throughput_band.end() ? std::nullopt : std::optional<PredictionBand>(band->second)});
  }
  return rows;
}

namespace {
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return bench::percentile_sorted(v, 50);
}
}  // namespace

EfficiencyFit fit_efficiency(const std::string& engine, const std::string& device, const std::vector<ComparisonRow>& rows) {
  EfficiencyFit f{engine, device};
  double sum_log = 0;
  std::vector<double> before, after;
  for (const auto& r : rows) {
    if (!(r.predicted > 0) || !(r.measured > 0)) continue;
    sum_log += r.kind == ComparisonRow::Kind::rate ? std::log(r.measured / r.predicted) : std::log(r.predicted / r.measured);
    ++f.pairs;
  }
  if (f.pairs == 0) return f;
  f.efficiency = std::exp(sum_log / static_cast<double>(f.pairs));
  for (const auto& r : rows) {
    if (!(r.predicted > 0) || !(r.measured > 0)) continue;
    const double corrected = r.kind == ComparisonRow::Kind::rate ? r.predicted * f.efficiency : r.predicted / f.efficiency;
    before.push_back(std::abs(r.predicted - r.measured) / r.measured * 100);
    after.push_back(std::abs(corrected - r.measured) / r.measured * 100);
  }
  f.median_abs_error_before_pct = median(before);
  f.median_abs_error_after_pct = median(after);
  return f;
}

Expected<StoredLevel> load_level(bench::BenchStore& store, const bench::StoredRun& run) {
  StoredLevel level;
  level.run = run;
  PF_TRY(records, store.requests(run.id));
  bench::StatsOptions o;
  o.mode = run.info.mode == "request_rate" ? bench::LoadMode::request_rate : bench::LoadMode::concurrency;
  o.concurrency = run.info.concurrency;
  if (run.info.config.is_object() && run.info.config.contains("slo") && run.info.config["slo"].is_object()) {
    const Json& slo = run.info.config["slo"];
    auto get = [&](const char* k) -> std::optional<double> {
      if (slo.contains(k) && slo[k].is_number()) return slo[k].get<double>();
      return std::nullopt;
    };
    o.slo = {get("ttft_ms"), get("tpot_ms"), get("e2e_ms")};
  }
  level.stats = bench::compute_run_stats(records, o);
  if (!run.info.prediction.is_null()) {
    PF_TRY(p, prediction_from_json(run.info.prediction, fmt::format("{}: run {} prediction", store.path(), run.id)));
    level.prediction = p;
  }
  return level;
}

Expected<std::vector<StoredLevel>> load_sweep(bench::BenchStore& store, int64_t run_id) {
  PF_TRY(runs, store.runs());
  if (runs.empty()) return make_error(ErrorKind::not_found, "no benchmark runs in the database", store.path());
  std::string sweep = runs.front().info.sweep_id;
  if (run_id > 0) {
    PF_TRY(r, store.run(run_id));
    sweep = r.info.sweep_id;
  }
  std::vector<StoredLevel> out;
  for (const auto& r : runs) {
    if (r.info.sweep_id != sweep) continue;
    PF_TRY(level, load_level(store, r));
    out.push_back(std::move(level));
  }
  std::sort(out.begin(), out.end(), [](const StoredLevel& x, const StoredLevel& y) {
    return x.run.info.concurrency != y.run.info.concurrency ? x.run.info.concurrency < y.run.info.concurrency : x.run.id < y.run.id;
  });
  return out;
}

}  // namespace preflight::cli
