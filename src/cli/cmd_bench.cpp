#include "base/build_info.hpp"
#include "cli/cmd_bench.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
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
  std::string b = std::string("preflight ") + PREFLIGHT_VERSION + " (" + build_commit() + ")";
#if defined(__SANITIZE_ADDRESS__)
  b += ", sanitized build: timings are slower";
#elif !defined(NDEBUG)
  b += ", debug build: timings are slower";
#endif
  return b;
}

struct Level {
  int64_t run_id = 0;
  int64_t concurrency = 0;
  bench::RunStats stats;
  std::vector<ComparisonRow> comparison;
};

std::string ms(double v) { return fixed(v, v >= 100 ? 1 : 2); }

// What `preflight bench` takes, written by its flag declarations (each checked against its bound).
struct BenchRequest {
  std::optional<std::string> url, model, endpoint, dataset, api_key_env, device, spec, engine, prediction, db;
  std::optional<std::vector<int64_t>> concurrency;
  std::optional<double> request_rate, burstiness, stall_timeout, timeout, deadline, slo_ttft_ms, slo_tpot_ms, slo_e2e_ms;
  std::optional<int64_t> num_prompts, input_len, output_len, max_concurrency, warmup, seed;
  bool ignore_eos = false, no_thinking = false, save = false, json = false;
};

std::vector<Option> bench_options(BenchRequest& r) {
  const RealRange seconds{.most = k_max_timeout_s, .unit = "s"};
  return join({{text_flag("url", "URL", r.url, "the server's base URL"), text_flag("model", "NAME", r.model, "the served model name")},
               under("load:", {int_list_flag("concurrency", "1,4,16,64", r.concurrency, {1, bench::k_max_concurrency}, "closed-loop levels (default 1)"),
                               real_flag("request-rate", "R", r.request_rate,
                                         {bench::k_min_request_rate, bench::k_max_request_rate, RealRange::Lower::inclusive, "requests/s"}, "open-loop arrivals per second"),
                               real_flag("burstiness", "B", r.burstiness, {}, "gamma shape of the arrivals (1: Poisson)"),
                               int_flag("max-concurrency", "N", r.max_concurrency, {1, bench::k_max_concurrency}, "cap on in-flight requests at --request-rate"),
                               int_flag("num-prompts", "N", r.num_prompts, {1, bench::k_max_num_prompts}, "requests per level"),
                               int_flag("input-len", "I", r.input_len, {1, bench::k_max_tokens_per_request}, "synthetic prompt tokens (default 128)"),
                               int_flag("output-len", "O", r.output_len, {1, bench::k_max_tokens_per_request}, "tokens to generate (default 128)"),
                               text_flag("dataset", "FILE", r.dataset, "JSONL prompts instead of synthetic ones"),
                               text_flag("endpoint", "chat|completions|generate_stream", r.endpoint, "the API used (default chat); generate_stream: MindIE's TGI-style\n/generate_stream",
                                         {"chat", "completions", "generate_stream"}),
                               switch_flag("ignore-eos", r.ignore_eos, "generate exactly --output-len tokens"),
                               switch_flag("no-thinking", r.no_thinking, "ask the server to skip reasoning"),
                               text_flag("api-key-env", "VAR", r.api_key_env, "the environment variable holding the API key"),
                               int_flag("warmup", "N", r.warmup, {0, bench::k_max_concurrency}, "untimed requests first"),
                               int_flag("seed", "S", r.seed, {INT64_MIN, INT64_MAX}, "synthetic prompt seed"),
                               real_flag("timeout", "s", r.timeout, seconds, "per request"),
                               real_flag("stall-timeout", "s", r.stall_timeout, seconds, "longest silence within a stream"),
                               real_flag("deadline", "s", r.deadline, seconds, "each level (default 3600)"),
                               real_flag("slo-ttft-ms", "T", r.slo_ttft_ms, {}, "goodput target: time to first token"),
                               real_flag("slo-tpot-ms", "T", r.slo_tpot_ms, {}, "goodput target: time per output token"),
                               real_flag("slo-e2e-ms", "T", r.slo_e2e_ms, {}, "goodput target: end to end")}),
               under("comparison with the prediction:",
                     {text_flag("device", "D", r.device, "with --spec: the device the server runs on"), text_flag("spec", "MODEL", r.spec, "the model for the prediction"),
                      text_flag("engine", "E", r.engine, "the engine for the prediction (mindie: MindIE's own speed profile, on an NPU)"),
                      text_flag("prediction", "FIT.json", r.prediction, "a stored prediction instead")}),
               under("output:", {switch_flag("save", r.save, "store the runs in the bench database"),
                                 text_flag("db", "FILE", r.db, "the database (default: ~/.local/share/preflight/bench.db)"), json_flag(r.json)})});
}

const CommandText k_bench_text{
    "usage: preflight bench --url URL --model NAME [load] [--save [--db FILE]] [--json]",
    R"(Measures a live OpenAI-compatible server: TTFT, TPOT, ITL, E2E (median, p90, p99), request and token
throughput, goodput against SLOs, per concurrency level or request rate; progress on stderr.)",
    "",
    R"(exit: 0, 1 when requests failed (an unreachable server included), 2 bad input (a flag given twice included; a --spec,
      --device or --engine that does not resolve, before any request), 3 network failure outside the measured requests (a --spec
      hub model that cannot be fetched) or a --db that cannot be created)"};

}  // namespace

CommandHelp bench_help() {
  static BenchRequest scratch;
  return {k_bench_text, bench_options(scratch)};
}

Expected<std::string> api_key_from_env(const std::string& variable) {
  const char* key = std::getenv(variable.c_str());
  if (!key || !*key) return make_error(ErrorKind::invalid_argument, fmt::format("--api-key-env: environment variable {} is not set", variable));
  for (const char* c = key; *c; ++c) {
    if (static_cast<unsigned char>(*c) < 0x20 || *c == 0x7f) {
      return make_error(ErrorKind::invalid_argument, fmt::format("--api-key-env: {} holds a control character (a CR or LF would inject an HTTP header)", variable));
    }
  }
  return std::string(key);
}

namespace {

// What one bench invocation shares across its concurrency levels.
struct Sweep {
  const BenchRequest& req;
  bench::RunTarget target;
  std::string shown_url;  // the URL without a password (the request still uses it)
  std::string endpoint;
  bool rate_mode = false;
  int64_t input_len = 0, output_len = 0;
  std::string sweep_id;
  Json config;
  std::optional<BenchPrediction> prediction;
  std::vector<std::string> notes;
  std::optional<bench::BenchStore> store;
  bench::SteadyClock clock;
  bench::TransportLimits limits;

  int64_t prompts_at(int64_t level) const { return req.num_prompts.value_or(rate_mode ? 100 : std::max<int64_t>(16, 4 * level)); }
};

// URL, model, API and the API key from the variable --api-key-env names (refused when it holds a control character).
Expected<bench::RunTarget> bench_target(const BenchRequest& req) {
  // Issue 19 (hard30): a URL holding a CR/LF or space ran the whole sweep, every request failing inside libcurl ("URL using
  // bad/illegal format"), and stored the run with the text raw; a model name's escape sequence reached the terminal
  // through every report of the database. Neither has a control character (nor the URL a space): bad input, exit 2.
  for (const auto& [flag, text, space_too] : {std::tuple{"--url", &*req.url, true}, std::tuple{"--model", &*req.model, false}}) {
    for (size_t i = 0; i < text->size(); ++i) {
      const auto c = static_cast<unsigned char>((*text)[i]);
      if (c < 0x20 || c == 0x7f || (space_too && c == ' '))
        return make_error(ErrorKind::invalid_argument, fmt::format("{}: holds {} 0x{:02x} at byte {}{}", flag, c == ' ' ? "a space" : "control character", c, i,
                                                                   space_too ? " (a URL has none: percent-encode it)" : ""));
    }
  }
  // user37: a URL of another scheme was refused only when the first level started, after `--save` had stored an empty,
  // unfinished run that `report` then took for the latest sweep; it is bad input before anything runs or is stored.
  if (req.url->rfind("http://", 0) != 0 && req.url->rfind("https://", 0) != 0)
    return make_error(ErrorKind::invalid_argument, "url must start with http:// or https://", redact_url_credentials(*req.url));
  bench::RunTarget target;
  target.url = *req.url;
  target.request.model = *req.model;
  target.request.api = req.endpoint.value_or("chat") == "chat" ? bench::Api::chat : bench::Api::completions;
  if (req.endpoint == "generate_stream") target.request.api = bench::Api::generate_stream;
  if (req.ignore_eos) target.request.eos = bench::RequestOptions::Eos::ignore;
  if (req.no_thinking) target.request.thinking = bench::RequestOptions::Thinking::off;
  if (const auto& var = req.api_key_env) {
    PF_TRY(key, api_key_from_env(*var));
    target.request.api_key = key;
  }
  return target;
}

// The prediction printed beside the measurement: a file given by hand, else the speed model for --device/--spec.
Status load_bench_prediction(Sweep& s, const std::vector<int64_t>& levels) {
  const BenchRequest& req = s.req;
  if (const auto& pf = req.prediction) {
    PF_TRY(p, load_prediction_file(*pf));
    s.prediction = p;
  } else if (req.device || req.spec) {
    // Issue 16: say which half is missing and what it is; --model is the name the server serves, not the model sized.
    if (!req.spec)
      return make_error(ErrorKind::invalid_argument, "--device " + *req.device + " needs --spec MODEL, the model to predict for (a catalogue id, a directory or "
                                                     "a config.json; --model is only the name the server serves), or --prediction FILE");
    if (!req.device) return make_error(ErrorKind::invalid_argument, "--spec " + *req.spec + " needs --device D, the device the server runs on");
    // user37: a model, card or engine that does not resolve (a typo, a hub model that cannot be fetched) stops here, before
    // anything is measured, with its exit code (2 bad input, 3 network); only a deployment the speed model has no answer
    // for (no profile for the engine on the platform) is measured without a prediction, and said so.
    auto p = predict_for_bench({*req.spec, *req.device, req.engine.value_or(""), s.input_len, s.output_len, levels});
    if (p) s.prediction = *p;
    else if (p.error().kind == ErrorKind::unsupported) s.notes.push_back(p.error().message);
    else return p.error();
  }
  return Ok{};
}

bench::RunInfo run_info(const Sweep& s, const bench::LoadPlan& plan, int64_t level) {
  const BenchRequest& req = s.req;
  bench::RunInfo info;
  info.sweep_id = s.sweep_id;
  info.started_at = bench::utc_now_rfc3339();
  info.url = s.shown_url;
  info.model = s.target.request.model;
  info.endpoint = s.endpoint;
  info.mode = s.rate_mode ? "request_rate" : "concurrency";
  info.concurrency = level;
  info.request_rate = plan.request_rate;
  info.burstiness = plan.burstiness;
  info.num_prompts = plan.num_prompts;
  info.input_len = req.dataset.has_value() ? -1 : s.input_len;
  info.output_len = s.output_len;
  info.device = req.device.value_or("");
  info.engine = req.engine.value_or("");
  info.spec = req.spec.value_or("");
  info.config = s.config;
  info.prediction = s.prediction ? prediction_to_json(*s.prediction) : Json();
  info.build = build_label();
  return info;
}

// One concurrency level (or the rate run): requests streamed, each finished one committed when a store is open.
Expected<Level> run_level(Sweep& s, int64_t level, std::vector<bench::Prompt>& prompts) {
  const BenchRequest& req = s.req;
  bench::LoadPlan plan;
  plan.mode = s.rate_mode ? bench::LoadMode::request_rate : bench::LoadMode::concurrency;
  plan.concurrency = s.rate_mode ? 0 : level;
  plan.request_rate = s.rate_mode ? *req.request_rate : 0;
  plan.burstiness = req.burstiness.value_or(1.0);
  plan.max_concurrency = s.rate_mode ? level : 0;
  plan.num_prompts = s.prompts_at(level);
  plan.warmup_requests = req.warmup.value_or(s.rate_mode ? 1 : level);
  plan.seed = static_cast<uint64_t>(req.seed.value_or(0));
  if (!req.dataset.has_value()) prompts = bench::synthetic_prompts(plan.num_prompts, s.input_len, s.output_len, plan.seed + static_cast<uint64_t>(level));
  Level out;
  out.concurrency = level;
  std::optional<bench::StoreWriter> writer;
  if (s.store) {
    PF_TRY(id, s.store->begin_run(run_info(s, plan, level), s.clock.now_ns()));
    out.run_id = id;
    writer.emplace(*s.store, id);
  }
  if (s.rate_mode) fmt::print(stderr, "preflight bench: {:.3g} requests/s, {} requests...\n", plan.request_rate, plan.num_prompts);
  else fmt::print(stderr, "preflight bench: concurrency {}, {} requests...\n", level, plan.num_prompts);
  PF_TRY(run, bench::run_load(s.target, prompts, plan, s.limits, s.clock, [&](const bench::RequestRecord& r) {
    if (writer) writer->push(r);
  }));
  if (writer) {
    auto st = writer->close();
    if (!st) s.notes.push_back("database: " + st.error().describe());
  }
  bench::StatsOptions so;
  so.mode = plan.mode;
  so.concurrency = level;
  so.slo = {req.slo_ttft_ms, req.slo_tpot_ms, req.slo_e2e_ms};
  out.stats = bench::compute_run_stats(run.records, so);
  if (s.rate_mode && run.schedule_lag_p99_ms > 10) out.stats.notes.push_back(fmt::format("client send lag p99 {:.1f} ms behind the schedule", run.schedule_lag_p99_ms));
  if (s.store) {
    auto st = s.store->finish_run(out.run_id, bench::run_stats_to_json(out.stats), bench::utc_now_rfc3339());
    if (!st) s.notes.push_back("database: " + st.error().describe());
  }
  if (s.prediction && !s.rate_mode) out.comparison = compare_level(*s.prediction, level, out.stats);
  return out;
}

void print_bench_json(const Sweep& s, const std::vector<Level>& results) {
  Json j = report::envelope("bench");
  j["build"] = build_label();
  j["config"] = s.config;
  j["sweep_id"] = s.sweep_id;
  j["database"] = s.store ? Json(s.store->path()) : Json();
  Json lv = Json::array();
  for (const auto& l : results) {
    const Json cmp = comparison_rows_to_json(l.comparison);
    lv.push_back({{"run_id", s.store ? Json(l.run_id) : Json()}, {"concurrency", s.rate_mode ? Json() : Json(l.concurrency)},
                  {"request_rate", s.rate_mode ? Json(*s.req.request_rate) : Json()}, {"stats", bench::run_stats_to_json(l.stats)}, {"comparison", cmp}});
  }
  j["levels"] = lv;
  j["prediction"] = s.prediction ? prediction_to_json(*s.prediction) : Json();
  j["notes"] = s.notes;
  print_json(j);
}

void print_bench_text(Sweep& s, const std::vector<Level>& results) {
  const BenchRequest& req = s.req;
  fmt::print("bench {}  model {}  {}  input {} tokens  output {} tokens{}\n", s.shown_url, s.target.request.model, s.endpoint,
              req.dataset.has_value() ? "(dataset)" : std::to_string(s.input_len), s.output_len, req.ignore_eos ? " (ignore_eos)" : "");
  fmt::print("{:<6} {:>9} {:>10} {:>9} {:>9} {:>10} {:>9} {:>9} {:>9} {:>10} {:>11} {:>12}\n", s.rate_mode ? "cap" : "conc", "ok/fail", "TTFT mean", "TTFT p50", "TTFT p99",
              "TPOT mean", "TPOT p99", "ITL p50", "ITL p99", "E2E mean", "out tok/s", "steady tok/s");
  for (const auto& l : results) {
    const auto& st = l.stats;
    fmt::print("{:<6} {:>9} {:>10} {:>9} {:>9} {:>10} {:>9} {:>9} {:>9} {:>10} {:>11} {:>12}\n", l.concurrency,
                (std::to_string(st.succeeded) + "/" + std::to_string(st.failed)), ms(st.ttft_ms.mean), ms(st.ttft_ms.p50),
                ms(st.ttft_ms.p99), ms(st.tpot_ms.mean), ms(st.tpot_ms.p99), ms(st.itl_ms.p50), ms(st.itl_ms.p99),
                ms(st.e2e_ms.mean), fixed(st.output_throughput_tok_s, 1), st.steady_decode_tok_s ? fixed(*st.steady_decode_tok_s, 1) : "-");
  }
  fmt::print("times in ms; TTFT = first content/reasoning/tool-call delta; TPOT = (E2E-TTFT)/(N-1); N from {}\n",
              results.empty() ? "-" : results.front().stats.tokens_source);
  std::vector<std::string> notes = s.notes;
  for (const auto& l : results) {
    if (l.stats.good_fraction) fmt::print("goodput at {}: {:.2f} req/s, {:.1f}% of requests met the SLO\n", l.concurrency, l.stats.goodput_req_s.value_or(0), *l.stats.good_fraction * 100);
    for (const auto& [name, count] : l.stats.failures) fmt::print("failed at {}: {} x {}\n", l.concurrency, name, count);
    for (const auto& e : l.stats.failure_examples) fmt::print("  {}\n", e);
    for (const auto& n : l.stats.notes) notes.push_back(n);
  }
  bool header = false;
  for (const auto& l : results) {
    for (const auto& c : l.comparison) {
      if (!header) fmt::print("predicted vs measured ({})\n", s.prediction->source), header = true;
      fmt::print("  {:<26} @{:<4} predicted {:>10}  measured {:>10} {:<5}  error {:+.1f}%{}\n", c.metric, c.concurrency,
                  fixed(c.predicted, 2), fixed(c.measured, 2), c.unit, c.error_pct(),
                  c.band ? fmt::format("  band {} - {}{}", fixed(c.band->low, 2), fixed(c.band->high, 2), c.in_band() ? "" : " (outside)") : "");
    }
  }
  if (s.prediction && s.prediction->kv_tokens) {
    // ux31: the speed model sizes the deployment at max_model_len = prompt + output, and vLLM >= 0.21 prints its token
    // line from the concurrency at that length (43,470 for Qwen3-8B on a 910B4 at 138 tokens, 80,640 at 40,960): the
    // figure is the engine's line at that length, not the server's capacity.
    const std::string at = s.req.prediction ? std::string()
                                            : fmt::format(" as the engine prints it at max_model_len {} (--input-len + --output-len; the server's own max_model_len changes it)",
                                                          std::max<int64_t>(1, s.input_len + s.output_len));
    notes.push_back(fmt::format("predicted GPU KV cache size {} tokens{}; the server's own figure is not read yet", *s.prediction->kv_tokens, at));
  }
  std::sort(notes.begin(), notes.end());
  notes.erase(std::unique(notes.begin(), notes.end()), notes.end());
  for (const auto& n : notes) fmt::print("note: {}\n", n);
  if (s.store) {
    fmt::print("saved to {} (runs", s.store->path());
    for (const auto& l : results) fmt::print(" {}", l.run_id);
    fmt::print(")\n");
  }
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  BenchRequest req;
  auto positional = parse_options(argv, bench_options(req));
  if (!positional) return usage_error(positional.error());
  if (!req.url || !req.model || !positional->empty()) return usage_error(make_error(ErrorKind::invalid_argument, command_usage("bench")));
  auto target = bench_target(req);
  if (!target) return usage_error(target.error());
  Sweep s{.req = req, .target = *target};
  s.shown_url = redact_url_credentials(s.target.url);
  s.endpoint = req.endpoint.value_or("chat");
  if (req.concurrency && req.request_rate) return usage_error(make_error(ErrorKind::invalid_argument, "--concurrency and --request-rate exclude each other"));
  if (req.dataset && req.input_len) return usage_error(make_error(ErrorKind::invalid_argument, "--dataset and --input-len exclude each other"));
  std::vector<int64_t> levels = req.concurrency.value_or(std::vector<int64_t>{1});
  s.rate_mode = req.request_rate.has_value();
  if (s.rate_mode) levels = {req.max_concurrency.value_or(0)};
  s.input_len = req.input_len.value_or(128);
  s.output_len = req.output_len.value_or(128);
  for (int64_t level : levels) {
    if (!req.dataset.has_value() && s.prompts_at(level) * s.input_len > bench::k_max_synthetic_tokens) {
      return usage_error(make_error(ErrorKind::invalid_argument, fmt::format("{} prompts x --input-len {} exceeds {} tokens of synthetic prompt text; lower --num-prompts or --input-len",
                                                                        s.prompts_at(level), s.input_len, bench::k_max_synthetic_tokens)));
    }
  }
  std::vector<bench::Prompt> prompts;
  if (const auto& ds = req.dataset) {
    auto loaded = bench::load_dataset(*ds, s.output_len);
    if (!loaded) return usage_error(loaded.error());
    prompts = std::move(*loaded);
  }
  if (auto st = load_bench_prediction(s, levels); !st) return usage_error(st.error());
  if (req.save || req.db) {
    const std::string path = req.db.value_or(bench::default_db_path());
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    auto opened = bench::BenchStore::open(path);
    if (!opened) return usage_error(opened.error());
    s.store.emplace(std::move(*opened));
  }
  if (req.stall_timeout) s.limits.stall_timeout_s = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(*req.stall_timeout)));
  if (req.timeout) s.limits.request_timeout_ms = static_cast<int64_t>(*req.timeout * 1000);
  if (req.deadline) s.limits.run_deadline_ms = std::max<int64_t>(1, static_cast<int64_t>(*req.deadline * 1000));
  const std::string started_at = bench::utc_now_rfc3339();
  // One process can run several sweeps in the same second (report --compare --urls benches each server in
  // process): the sweep id carries a per-process sequence number so their levels never merge.
  static std::atomic<int> sweeps_in_process{0};
  s.sweep_id = started_at + "-" + std::to_string(::getpid()) + "-" + std::to_string(++sweeps_in_process);
  s.config = {{"url", s.shown_url}, {"model", s.target.request.model}, {"endpoint", s.endpoint}, {"ignore_eos", req.ignore_eos},
              {"no_thinking", req.no_thinking}, {"input_len", req.dataset.has_value() ? Json() : Json(s.input_len)}, {"output_len", s.output_len},
              {"dataset", req.dataset.value_or("")}, {"seed", req.seed.value_or(0)},
              {"slo", {{"ttft_ms", req.slo_ttft_ms ? Json(*req.slo_ttft_ms) : Json()}, {"tpot_ms", req.slo_tpot_ms ? Json(*req.slo_tpot_ms) : Json()},
                       {"e2e_ms", req.slo_e2e_ms ? Json(*req.slo_e2e_ms) : Json()}}}};
  std::vector<Level> results;
  bool any_failed = false;
  for (int64_t level : levels) {
    auto out = run_level(s, level, prompts);
    if (!out) return usage_error(out.error());
    any_failed = any_failed || out->stats.failed > 0;
    results.push_back(std::move(*out));
  }
  if (req.json) print_bench_json(s, results);
  else print_bench_text(s, results);
  return any_failed ? k_exit_fail : k_exit_ok;
}

}  // namespace preflight::cli
