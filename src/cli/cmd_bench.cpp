#include "cli/cmd_bench.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <tuple>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "base/text.hpp"
#include "base/units.hpp"
#include "bench/clock.hpp"
#include "bench/load.hpp"
#include "bench/runner.hpp"
#include "bench/store.hpp"
#include "cli/args.hpp"
#include "cli/help.hpp"
#include "cli/bench_compare.hpp"
#include "cli/common.hpp"
#include "report/render.hpp"

namespace preflight::cli {

namespace {

// --timeout and --stall-timeout above a week are typos, and they must stay within int64 nanoseconds.
constexpr double k_max_timeout_s = 7 * 86400.0;

int usage_error(const Error& e) { return report_error(e); }  // exit code by kind (cli/common.hpp)

std::string build_label() {
  std::string b = std::string("preflight ") + PREFLIGHT_VERSION + " (" + PREFLIGHT_COMMIT + ")";
#if defined(__SANITIZE_ADDRESS__)
  b += ", sanitized build: timings are slower";
#elif !defined(NDEBUG)
  b += ", debug build: timings are slower";
#endif
  return b;
}

Expected<std::vector<int64_t>> parse_int_list(const std::string& text, const char* flag) {
  std::vector<int64_t> out;
  for (const auto& item : split(text, ',')) {
    const std::string text_item = trim(item);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text_item.c_str(), &end, 10);
    if (text_item.empty() || (end && *end) || v < 1 || errno == ERANGE) return make_error(ErrorKind::invalid_argument, format("%s: expected positive integers like 1,4,16,64, found \"%s\"", flag, text.c_str()));
    out.push_back(v);
  }
  return out;
}

Expected<std::optional<double>> positive_double(const Args& a, const char* name) {
  auto v = a.get_double(name);
  if (!v) return v.error();
  if (v->has_value() && !(**v > 0)) return make_error(ErrorKind::invalid_argument, format("--%s must be positive", name));
  return *v;
}

struct Level {
  int64_t run_id = 0;
  int64_t concurrency = 0;
  bench::RunStats stats;
  std::vector<ComparisonRow> comparison;
};

std::string ms(double v) { return fixed(v, v >= 100 ? 1 : 2); }

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, command_flags("bench"));
  if (!args) return usage_error(args.error());
  const Args& a = *args;
  if (!a.has("url") || !a.has("model") || !a.positional.empty()) {
    return usage_error(make_error(ErrorKind::invalid_argument,
                                  command_usage("bench")));
  }
  bench::RunTarget target;
  target.url = *a.get("url");
  // What is printed and stored: the URL without a password (the request still uses it).
  const std::string shown_url = redact_url_credentials(target.url);
  target.request.model = *a.get("model");
  const std::string endpoint = a.get("endpoint").value_or("chat");
  if (endpoint != "chat" && endpoint != "completions") return usage_error(make_error(ErrorKind::invalid_argument, "--endpoint must be chat or completions"));
  target.request.api = endpoint == "chat" ? bench::Api::chat : bench::Api::completions;
  if (a.has("ignore-eos")) target.request.eos = bench::RequestOptions::Eos::ignore;
  if (a.has("no-thinking")) target.request.thinking = bench::RequestOptions::Thinking::off;
  if (auto var = a.get("api-key-env")) {
    const char* key = std::getenv(var->c_str());
    if (!key || !*key) return usage_error(make_error(ErrorKind::invalid_argument, format("--api-key-env: environment variable %s is not set", var->c_str())));
    for (const char* c = key; *c; ++c) {
      if (static_cast<unsigned char>(*c) < 0x20 || *c == 0x7f) {
        return usage_error(make_error(ErrorKind::invalid_argument, format("--api-key-env: %s holds a control character (a CR or LF would inject an HTTP header)", var->c_str())));
      }
    }
    target.request.api_key = key;
  }
  if (a.has("concurrency") && a.has("request-rate")) return usage_error(make_error(ErrorKind::invalid_argument, "--concurrency and --request-rate exclude each other"));
  if (a.has("dataset") && a.has("input-len")) return usage_error(make_error(ErrorKind::invalid_argument, "--dataset and --input-len exclude each other"));
  auto rate = positive_double(a, "request-rate");
  auto burst = positive_double(a, "burstiness");
  auto stall = positive_double(a, "stall-timeout");
  auto timeout = positive_double(a, "timeout");
  auto deadline = positive_double(a, "deadline");
  auto slo_ttft = positive_double(a, "slo-ttft-ms");
  auto slo_tpot = positive_double(a, "slo-tpot-ms");
  auto slo_e2e = positive_double(a, "slo-e2e-ms");
  for (const auto* e : {&rate, &burst, &stall, &timeout, &deadline, &slo_ttft, &slo_tpot, &slo_e2e}) if (!*e) return usage_error(e->error());
  auto num = a.get_int("num-prompts");
  auto in_len = a.get_int("input-len");
  auto out_len = a.get_int("output-len");
  auto cap = a.get_int("max-concurrency");
  auto warm = a.get_int("warmup");
  auto seed = a.get_int("seed");
  for (const auto* e : {&num, &in_len, &out_len, &cap, &warm, &seed}) if (!*e) return usage_error(e->error());
  for (const auto& [v, name, most] : {std::tuple{*num, "num-prompts", bench::k_max_num_prompts}, {*in_len, "input-len", bench::k_max_tokens_per_request},
                                       {*out_len, "output-len", bench::k_max_tokens_per_request}, {*cap, "max-concurrency", bench::k_max_concurrency},
                                       {*warm, "warmup", bench::k_max_concurrency}}) {
    const int64_t least = std::string_view(name) == "warmup" ? 0 : 1;
    if (v && (*v < least || *v > most)) {
      return usage_error(make_error(ErrorKind::invalid_argument, format("--%s must be between %lld and %lld, found %lld", name, static_cast<long long>(least),
                                                                        static_cast<long long>(most), static_cast<long long>(*v))));
    }
  }
  for (const auto& [v, name] : {std::pair{&stall, "stall-timeout"}, {&timeout, "timeout"}, {&deadline, "deadline"}}) {
    if (v->value().has_value() && *v->value() > k_max_timeout_s) {
      return usage_error(make_error(ErrorKind::invalid_argument, format("--%s must be at most %.0f s, found %g", name, k_max_timeout_s, *v->value())));
    }
  }
  std::vector<int64_t> levels = {1};
  if (auto c = a.get("concurrency")) {
    auto list = parse_int_list(*c, "--concurrency");
    if (!list) return usage_error(list.error());
    levels = *list;
    for (int64_t level : levels) {
      if (level > bench::k_max_concurrency) {
        return usage_error(make_error(ErrorKind::invalid_argument, format("--concurrency must be between 1 and %lld, found %lld", static_cast<long long>(bench::k_max_concurrency),
                                                                          static_cast<long long>(level))));
      }
    }
  }
  if (rate->has_value() && !(**rate >= bench::k_min_request_rate && **rate <= bench::k_max_request_rate)) {
    return usage_error(make_error(ErrorKind::invalid_argument, format("--request-rate must be between %g and %g requests/s, found %g", bench::k_min_request_rate,
                                                                      bench::k_max_request_rate, **rate)));
  }
  const bool rate_mode = rate->has_value();
  if (rate_mode) levels = {cap->value_or(0)};
  const int64_t input_len = in_len->value_or(128), output_len = out_len->value_or(128);
  auto level_prompts = [&](int64_t level) { return num->value_or(rate_mode ? 100 : std::max<int64_t>(16, 4 * level)); };
  for (int64_t level : levels) {
    if (!a.has("dataset") && level_prompts(level) * input_len > bench::k_max_synthetic_tokens) {
      return usage_error(make_error(ErrorKind::invalid_argument, format("%lld prompts x --input-len %lld exceeds %lld tokens of synthetic prompt text; lower --num-prompts or --input-len",
                                                                        static_cast<long long>(level_prompts(level)), static_cast<long long>(input_len),
                                                                        static_cast<long long>(bench::k_max_synthetic_tokens))));
    }
  }
  std::vector<bench::Prompt> prompts;
  if (auto ds = a.get("dataset")) {
    auto loaded = bench::load_dataset(*ds, output_len);
    if (!loaded) return usage_error(loaded.error());
    prompts = std::move(*loaded);
  }

  // Prediction: a file given by hand, else the speed model for --device/--spec.
  std::optional<BenchPrediction> prediction;
  std::vector<std::string> notes;
  if (auto pf = a.get("prediction")) {
    auto p = load_prediction_file(*pf);
    if (!p) return usage_error(p.error());
    prediction = *p;
  } else if (a.has("device") || a.has("spec")) {
    if (!a.has("device") || !a.has("spec")) return usage_error(make_error(ErrorKind::invalid_argument, "--device and --spec go together"));
    auto p = predict_for_bench({*a.get("spec"), *a.get("device"), a.get("engine").value_or(""), input_len, output_len, levels});
    if (p) prediction = *p;
    else notes.push_back(p.error().message);
  }

  std::optional<bench::BenchStore> store;
  if (a.has("save") || a.has("db")) {
    const std::string path = a.get("db").value_or(bench::default_db_path());
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    auto s = bench::BenchStore::open(path);
    if (!s) return usage_error(s.error());
    store.emplace(std::move(*s));
  }

  bench::SteadyClock clock;
  bench::TransportLimits limits;
  if (stall->has_value()) limits.stall_timeout_s = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(**stall)));
  if (timeout->has_value()) limits.request_timeout_ms = static_cast<int64_t>(**timeout * 1000);
  if (deadline->has_value()) limits.run_deadline_ms = std::max<int64_t>(1, static_cast<int64_t>(**deadline * 1000));
  const std::string started_at = bench::utc_now_rfc3339();
  const std::string sweep_id = started_at + "-" + std::to_string(::getpid());
  Json config = {{"url", shown_url}, {"model", target.request.model}, {"endpoint", endpoint}, {"ignore_eos", a.has("ignore-eos")},
                 {"no_thinking", a.has("no-thinking")}, {"input_len", a.has("dataset") ? Json() : Json(input_len)}, {"output_len", output_len},
                 {"dataset", a.get("dataset").value_or("")}, {"seed", seed->value_or(0)},
                 {"slo", {{"ttft_ms", slo_ttft->has_value() ? Json(**slo_ttft) : Json()}, {"tpot_ms", slo_tpot->has_value() ? Json(**slo_tpot) : Json()},
                          {"e2e_ms", slo_e2e->has_value() ? Json(**slo_e2e) : Json()}}}};
  std::vector<Level> results;
  bool any_failed = false;
  for (int64_t level : levels) {
    bench::LoadPlan plan;
    plan.mode = rate_mode ? bench::LoadMode::request_rate : bench::LoadMode::concurrency;
    plan.concurrency = rate_mode ? 0 : level;
    plan.request_rate = rate_mode ? **rate : 0;
    plan.burstiness = burst->value_or(1.0);
    plan.max_concurrency = rate_mode ? level : 0;
    plan.num_prompts = level_prompts(level);
    plan.warmup_requests = warm->value_or(rate_mode ? 1 : level);
    plan.seed = static_cast<uint64_t>(seed->value_or(0));
    if (!a.has("dataset")) prompts = bench::synthetic_prompts(plan.num_prompts, input_len, output_len, plan.seed + static_cast<uint64_t>(level));
    Level out;
    out.concurrency = level;
    std::optional<bench::StoreWriter> writer;
    if (store) {
      bench::RunInfo info;
      info.sweep_id = sweep_id;
      info.started_at = bench::utc_now_rfc3339();
      info.url = shown_url;
      info.model = target.request.model;
      info.endpoint = endpoint;
      info.mode = rate_mode ? "request_rate" : "concurrency";
      info.concurrency = level;
      info.request_rate = plan.request_rate;
      info.burstiness = plan.burstiness;
      info.num_prompts = plan.num_prompts;
      info.input_len = a.has("dataset") ? -1 : input_len;
      info.output_len = output_len;
      info.device = a.get("device").value_or("");
      info.engine = a.get("engine").value_or("");
      info.spec = a.get("spec").value_or("");
      info.config = config;
      info.prediction = prediction ? prediction_to_json(*prediction) : Json();
      info.build = build_label();
      auto id = store->begin_run(info, clock.now_ns());
      if (!id) return usage_error(id.error());
      out.run_id = *id;
      writer.emplace(*store, *id);
    }
    if (rate_mode) std::fprintf(stderr, "preflight bench: %.3g requests/s, %lld requests...\n", plan.request_rate, static_cast<long long>(plan.num_prompts));
    else std::fprintf(stderr, "preflight bench: concurrency %lld, %lld requests...\n", static_cast<long long>(level), static_cast<long long>(plan.num_prompts));
    auto run = bench::run_load(target, prompts, plan, limits, clock, [&](const bench::RequestRecord& r) {
      if (writer) writer->push(r);
    });
    if (!run) return usage_error(run.error());
    if (writer) {
      auto st = writer->close();
      if (!st) notes.push_back("database: " + st.error().describe());
    }
    bench::StatsOptions so;
    so.mode = plan.mode;
    so.concurrency = level;
    so.slo = {*slo_ttft, *slo_tpot, *slo_e2e};
    out.stats = bench::compute_run_stats(run->records, so);
    if (rate_mode && run->schedule_lag_p99_ms > 10) out.stats.notes.push_back(format("client send lag p99 %.1f ms behind the schedule", run->schedule_lag_p99_ms));
    if (store) {
      auto st = store->finish_run(out.run_id, bench::run_stats_to_json(out.stats), bench::utc_now_rfc3339());
      if (!st) notes.push_back("database: " + st.error().describe());
    }
    if (prediction && !rate_mode) out.comparison = compare_level(*prediction, level, out.stats);
    any_failed = any_failed || out.stats.failed > 0;
    results.push_back(std::move(out));
  }

  if (a.has("json")) {
    Json j = report::envelope("bench");
    j["build"] = build_label();
    j["config"] = config;
    j["sweep_id"] = sweep_id;
    j["database"] = store ? Json(store->path()) : Json();
    Json lv = Json::array();
    for (const auto& l : results) {
      Json cmp = Json::array();
      for (const auto& c : l.comparison) {
        cmp.push_back({{"metric", c.metric}, {"concurrency", c.concurrency}, {"predicted", c.predicted}, {"measured", c.measured}, {"unit", c.unit}, {"error_pct", c.error_pct()}});
      }
      lv.push_back({{"run_id", store ? Json(l.run_id) : Json()}, {"concurrency", rate_mode ? Json() : Json(l.concurrency)},
                    {"request_rate", rate_mode ? Json(**rate) : Json()}, {"stats", bench::run_stats_to_json(l.stats)}, {"comparison", cmp}});
    }
    j["levels"] = lv;
    j["prediction"] = prediction ? prediction_to_json(*prediction) : Json();
    j["notes"] = notes;
    std::cout << j.dump(2) << "\n";
    return any_failed ? k_exit_fail : k_exit_ok;
  }
  std::printf("bench %s  model %s  %s  input %s tokens  output %lld tokens%s\n", shown_url.c_str(), target.request.model.c_str(), endpoint.c_str(),
              a.has("dataset") ? "(dataset)" : std::to_string(input_len).c_str(), static_cast<long long>(output_len), a.has("ignore-eos") ? " (ignore_eos)" : "");
  std::printf("%-6s %9s %10s %9s %9s %10s %9s %9s %9s %10s %11s %12s\n", rate_mode ? "cap" : "conc", "ok/fail", "TTFT mean", "TTFT p50", "TTFT p99",
              "TPOT mean", "TPOT p99", "ITL p50", "ITL p99", "E2E mean", "out tok/s", "steady tok/s");
  for (const auto& l : results) {
    const auto& s = l.stats;
    std::printf("%-6lld %9s %10s %9s %9s %10s %9s %9s %9s %10s %11s %12s\n", static_cast<long long>(l.concurrency),
                (std::to_string(s.succeeded) + "/" + std::to_string(s.failed)).c_str(), ms(s.ttft_ms.mean).c_str(), ms(s.ttft_ms.p50).c_str(),
                ms(s.ttft_ms.p99).c_str(), ms(s.tpot_ms.mean).c_str(), ms(s.tpot_ms.p99).c_str(), ms(s.itl_ms.p50).c_str(), ms(s.itl_ms.p99).c_str(),
                ms(s.e2e_ms.mean).c_str(), fixed(s.output_throughput_tok_s, 1).c_str(), s.steady_decode_tok_s ? fixed(*s.steady_decode_tok_s, 1).c_str() : "-");
  }
  std::printf("times in ms; TTFT = first content/reasoning/tool-call delta; TPOT = (E2E-TTFT)/(N-1); N from %s\n",
              results.empty() ? "-" : results.front().stats.tokens_source.c_str());
  for (const auto& l : results) {
    if (l.stats.good_fraction) std::printf("goodput at %lld: %.2f req/s, %.1f%% of requests met the SLO\n", static_cast<long long>(l.concurrency), l.stats.goodput_req_s.value_or(0), *l.stats.good_fraction * 100);
    for (const auto& [name, count] : l.stats.failures) std::printf("failed at %lld: %s x %lld\n", static_cast<long long>(l.concurrency), name.c_str(), static_cast<long long>(count));
    for (const auto& e : l.stats.failure_examples) std::printf("  %s\n", e.c_str());
    for (const auto& n : l.stats.notes) notes.push_back(n);
  }
  bool header = false;
  for (const auto& l : results) {
    for (const auto& c : l.comparison) {
      if (!header) std::printf("predicted vs measured (%s)\n", prediction->source.c_str()), header = true;
      std::printf("  %-26s @%-4lld predicted %10s  measured %10s %-5s  error %+.1f%%\n", c.metric.c_str(), static_cast<long long>(c.concurrency),
                  fixed(c.predicted, 2).c_str(), fixed(c.measured, 2).c_str(), c.unit.c_str(), c.error_pct());
    }
  }
  if (prediction && prediction->kv_tokens) notes.push_back(format("predicted KV capacity %lld tokens; the server's own figure is not read yet", static_cast<long long>(*prediction->kv_tokens)));
  std::sort(notes.begin(), notes.end());
  notes.erase(std::unique(notes.begin(), notes.end()), notes.end());
  for (const auto& n : notes) std::printf("note: %s\n", n.c_str());
  if (store) {
    std::printf("saved to %s (runs", store->path().c_str());
    for (const auto& l : results) std::printf(" %lld", static_cast<long long>(l.run_id));
    std::printf(")\n");
  }
  return any_failed ? k_exit_fail : k_exit_ok;
}

}  // namespace preflight::cli
