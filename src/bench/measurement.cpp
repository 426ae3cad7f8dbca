#include "bench/measurement.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::bench {

const char* failure_class_name(FailureClass failure) {
  switch (failure) {
    case FailureClass::none: return "none";
    case FailureClass::connect: return "connect";
    case FailureClass::http_status: return "http_status";
    case FailureClass::stream_error: return "stream_error";
    case FailureClass::malformed_sse: return "malformed_sse";
    case FailureClass::line_too_long: return "line_too_long";
    case FailureClass::event_too_large: return "event_too_large";
    case FailureClass::stream_too_large: return "stream_too_large";
    case FailureClass::deadline: return "deadline";
    case FailureClass::truncated: return "truncated";
    case FailureClass::missing_done: return "missing_done";
    case FailureClass::stalled: return "stalled";
    case FailureClass::timeout: return "timeout";
    case FailureClass::no_output: return "no_output";
    case FailureClass::client: return "client";
  }
  return "unknown";
}

namespace {
std::optional<double> since_send_ms(const RequestRecord& r, int64_t t_ns) {
  if (t_ns < 0) return std::nullopt;
  return static_cast<double>(t_ns - r.t_send_ns) / 1e6;
}
}  // namespace

std::optional<double> RequestRecord::ttft_ms() const { return since_send_ms(*this, t_first_token_ns); }
std::optional<double> RequestRecord::ttfb_ms() const { return since_send_ms(*this, t_first_byte_ns); }
std::optional<double> RequestRecord::e2e_ms() const { return since_send_ms(*this, t_last_token_ns); }

std::optional<double> RequestRecord::tpot_ms() const {
  const int64_t n = output_tokens();
  if (n < 2 || t_first_token_ns < 0 || t_last_token_ns < 0) return std::nullopt;
  return static_cast<double>(t_last_token_ns - t_first_token_ns) / 1e6 / static_cast<double>(n - 1);
}

void fail_record(RequestRecord& record, FailureClass failure, std::string reason, int64_t t_ns) {
  if (record.failure == FailureClass::none) {  // the first reason wins
    record.failure = failure;
    record.error = std::move(reason);
  }
  if (record.t_end_ns < 0) record.t_end_ns = t_ns;
}

void apply_chunk(RequestRecord& record, const ChunkInfo& chunk, int64_t t_ns) {
  ++record.events;
  if (chunk.is_done) {
    record.t_done_ns = t_ns;
    return;
  }
  if (chunk.is_error) {
    fail_record(record, FailureClass::stream_error,
                "error inside a 200 stream: " + (chunk.error_message.empty() ? std::string("(no message)") : strip_terminal_controls(clip_text(chunk.error_message, 300))), t_ns);
    return;
  }
  if (chunk.choices > 0 && record.t_first_chunk_ns < 0) record.t_first_chunk_ns = t_ns;
  if (chunk.token_bearing()) {
    if (record.t_first_token_ns < 0) record.t_first_token_ns = t_ns;
    if (chunk.content_chars > 0 && record.t_first_content_ns < 0) record.t_first_content_ns = t_ns;
    record.t_last_token_ns = t_ns;
    record.token_event_ns.push_back(t_ns);
    ++record.token_events;
    record.content_chars += chunk.content_chars;
    record.reasoning_chars += chunk.reasoning_chars;
  }
  if (!chunk.finish_reason.empty()) record.finish_reason = chunk.finish_reason;
  if (chunk.has_usage) {
    if (chunk.prompt_tokens >= 0) record.prompt_tokens = chunk.prompt_tokens;
    if (chunk.completion_tokens >= 0) record.completion_tokens = chunk.completion_tokens;
    if (chunk.reasoning_tokens >= 0) record.reasoning_tokens = chunk.reasoning_tokens;
  }
}

void finish_record(RequestRecord& record, int64_t t_ns) {
  record.t_end_ns = t_ns;
  if (record.failure != FailureClass::none) return;
  if (record.t_done_ns < 0) {
    fail_record(record, FailureClass::missing_done, format("stream ended without [DONE] after %lld events", static_cast<long long>(record.events)), t_ns);
  } else if (record.t_first_token_ns < 0) {
    fail_record(record, FailureClass::no_output, "stream carried no content, reasoning or tool-call delta", t_ns);
  }
}

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.count = static_cast<int64_t>(values.size());
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  double var = 0;
  for (double v : values) var += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(var / static_cast<double>(values.size()));
  s.min = values.front();
  s.max = values.back();
  s.p50 = percentile_sorted(values, 50);
  s.p90 = percentile_sorted(values, 90);
  s.p95 = percentile_sorted(values, 95);
  s.p99 = percentile_sorted(values, 99);
  return s;
}

namespace {

// The steady windows at fixed concurrency C: the times when C streams were all in decode (between
// their first and last token). For a one-batch run this is SGLang's window (last first token ->
// first finish); in a longer closed-loop run it is the union of such stretches, which leaves out
// the ramp-up, the drain, and the gaps while a replacement request waits for its first token.
std::vector<std::pair<int64_t, int64_t>> steady_windows(const std::vector<const RequestRecord*>& ok, int64_t concurrency) {
  std::vector<std::pair<int64_t, int>> edges;
  for (const auto* r : ok) {
    if (r->t_last_token_ns <= r->t_first_token_ns) continue;
    edges.push_back({r->t_first_token_ns, +1});
    edges.push_back({r->t_last_token_ns, -1});
  }
  std::sort(edges.begin(), edges.end());  // a finish sorts before a start at the same instant
  std::vector<std::pair<int64_t, int64_t>> windows;
  int64_t level = 0, open_at = -1;
  for (const auto& e : edges) {
    level += e.second;
    if (level >= concurrency && open_at < 0) open_at = e.first;
    if (level < concurrency && open_at >= 0) {
      if (e.first > open_at) windows.push_back({open_at, e.first});
      open_at = -1;
    }
  }
  return windows;
}

}  // namespace

RunStats compute_run_stats(const std::vector<RequestRecord>& records, const StatsOptions& options) {
  RunStats s;
  s.requests = static_cast<int64_t>(records.size());
  if (records.empty()) return s;
  std::vector<double> ttft, ttfb, ttfo, tpot, itl, e2e;
  std::vector<const RequestRecord*> ok;
  int64_t first_send = records.front().t_send_ns, last_end = records.front().t_end_ns;
  int usage_count = 0;
  double decode_tokens = 0, decode_seconds = 0, sum_e2e_s = 0;
  int64_t good = 0;
  for (const auto& r : records) {
    first_send = std::min(first_send, r.t_send_ns);
    last_end = std::max(last_end, std::max(r.t_end_ns, r.t_last_token_ns));
    if (!r.ok()) {
      ++s.failed;
      ++s.failures[failure_class_name(r.failure)];
      if (s.failure_examples.size() < 5) s.failure_examples.push_back(format("request %lld: %s", static_cast<long long>(r.index), r.error.c_str()));
      continue;
    }
    ++s.succeeded;
    ok.push_back(&r);
    if (!r.finish_reason.empty()) ++s.finish_reasons[r.finish_reason];
    if (r.usage_tokens()) ++usage_count;
    const int64_t n = r.output_tokens();
    if (r.requested_output_tokens > 0 && n != r.requested_output_tokens) ++s.output_length_mismatches;
    s.output_tokens += n;
    if (r.input_tokens() > 0) s.input_tokens += r.input_tokens();
    ttft.push_back(*r.ttft_ms());
    if (auto b = r.ttfb_ms()) ttfb.push_back(*b);
    if (r.t_first_content_ns >= 0) ttfo.push_back(static_cast<double>(r.t_first_content_ns - r.t_send_ns) / 1e6);
    e2e.push_back(*r.e2e_ms());
    sum_e2e_s += *r.e2e_ms() / 1e3;
    const auto t = r.tpot_ms();
    if (t) {
      tpot.push_back(*t);
      decode_tokens += static_cast<double>(n - 1);
      decode_seconds += static_cast<double>(r.t_last_token_ns - r.t_first_token_ns) / 1e9;
    }
    for (size_t i = 1; i < r.token_event_ns.size(); ++i) itl.push_back(static_cast<double>(r.token_event_ns[i] - r.token_event_ns[i - 1]) / 1e6);
    const bool meets = (!options.slo.ttft_ms || *r.ttft_ms() <= *options.slo.ttft_ms) && (!options.slo.tpot_ms || t.value_or(0) <= *options.slo.tpot_ms) &&
                       (!options.slo.e2e_ms || *r.e2e_ms() <= *options.slo.e2e_ms);
    if (meets) ++good;
  }
  s.tokens_source = usage_count == s.succeeded ? "usage" : usage_count == 0 ? "events" : "mixed";
  if (s.succeeded > 0 && s.tokens_source != "usage") {
    s.notes.push_back(format("%lld of %lld successful requests had no usage.completion_tokens; their N counts token-bearing events (approximate)",
                             static_cast<long long>(s.succeeded - usage_count), static_cast<long long>(s.succeeded)));
  }
  if (s.output_length_mismatches > 0) {
    s.notes.push_back(format("%lld requests returned a different number of output tokens than requested (is ignore_eos honoured?)",
                             static_cast<long long>(s.output_length_mismatches)));
  }
  s.ttft_ms = summarize(std::move(ttft));
  s.ttfb_ms = summarize(std::move(ttfb));
  s.ttfo_ms = summarize(std::move(ttfo));
  s.tpot_ms = summarize(std::move(tpot));
  s.itl_ms = summarize(std::move(itl));
  s.e2e_ms = summarize(std::move(e2e));
  s.duration_s = static_cast<double>(last_end - first_send) / 1e9;
  if (s.duration_s > 0) {
    s.output_throughput_tok_s = static_cast<double>(s.output_tokens) / s.duration_s;
    s.input_throughput_tok_s = static_cast<double>(s.input_tokens) / s.duration_s;
    s.total_throughput_tok_s = s.output_throughput_tok_s + s.input_throughput_tok_s;
    s.request_throughput_per_s = static_cast<double>(s.succeeded) / s.duration_s;
    s.mean_concurrency = sum_e2e_s / s.duration_s;
  }
  if (decode_seconds > 0) s.token_weighted_decode_tok_s = decode_tokens / decode_seconds;
  // Peak concurrency: sweep over [send, end) intervals of every request.
  std::vector<std::pair<int64_t, int>> edges;
  for (const auto& r : records) {
    edges.push_back({r.t_send_ns, +1});
    edges.push_back({std::max(r.t_send_ns, r.t_end_ns), -1});
  }
  std::sort(edges.begin(), edges.end());  // an end sorts before a start at the same instant
  int64_t level = 0;
  for (const auto& e : edges) s.peak_concurrency = std::max(s.peak_concurrency, level += e.second);
  if (options.slo.ttft_ms || options.slo.tpot_ms || options.slo.e2e_ms) {
    s.good_fraction = static_cast<double>(good) / static_cast<double>(s.requests);
    if (s.duration_s > 0) s.goodput_req_s = static_cast<double>(good) / s.duration_s;
  }
  if (options.mode != LoadMode::concurrency) {
    s.notes.push_back("steady-state decode speed needs a fixed-concurrency run");
  } else if (const auto windows = steady_windows(ok, options.concurrency); !windows.empty()) {
    // Tokens inside the windows, each request's decode tokens spread evenly over its decode span.
    double tokens = 0;
    int64_t span_ns = 0;
    for (const auto& w : windows) span_ns += w.second - w.first;
    for (const auto* r : ok) {
      const int64_t n = r->output_tokens();
      if (n < 2 || r->t_last_token_ns <= r->t_first_token_ns) continue;
      for (const auto& w : windows) {
        const int64_t lo = std::max(w.first, r->t_first_token_ns), hi = std::min(w.second, r->t_last_token_ns);
        if (hi > lo) tokens += static_cast<double>(n - 1) * static_cast<double>(hi - lo) / static_cast<double>(r->t_last_token_ns - r->t_first_token_ns);
      }
    }
    s.steady_window_s = static_cast<double>(span_ns) / 1e9;
    s.steady_decode_tok_s = tokens / *s.steady_window_s;
  } else {
    s.notes.push_back("no steady window: the streams never all decoded at once (too few successful requests or too short outputs)");
  }
  return s;
}

Json summary_to_json(const Summary& s) {
  return {{"count", s.count}, {"mean", s.mean}, {"std", s.std}, {"min", s.min}, {"max", s.max},
          {"p50", s.p50},     {"p90", s.p90},   {"p95", s.p95}, {"p99", s.p99}};
}

namespace {
Json opt(const std::optional<double>& v) { return v ? Json(*v) : Json(); }
}  // namespace

Json run_stats_to_json(const RunStats& s) {
  Json j = {{"requests", s.requests},
            {"succeeded", s.succeeded},
            {"failed", s.failed},
            {"failures", s.failures},
            {"failure_examples", s.failure_examples},
            {"finish_reasons", s.finish_reasons},
            {"tokens_source", s.tokens_source},
            {"output_length_mismatches", s.output_length_mismatches},
            {"duration_s", s.duration_s},
            {"ttft_ms", summary_to_json(s.ttft_ms)},
            {"ttfb_ms", summary_to_json(s.ttfb_ms)},
            {"ttfo_ms", summary_to_json(s.ttfo_ms)},
            {"tpot_ms", summary_to_json(s.tpot_ms)},
            {"itl_ms", summary_to_json(s.itl_ms)},
            {"e2e_ms", summary_to_json(s.e2e_ms)},
            {"output_tokens", s.output_tokens},
            {"input_tokens", s.input_tokens},
            {"output_throughput_tok_s", s.output_throughput_tok_s},
            {"input_throughput_tok_s", s.input_throughput_tok_s},
            {"total_throughput_tok_s", s.total_throughput_tok_s},
            {"request_throughput_per_s", s.request_throughput_per_s},
            {"token_weighted_decode_tok_s", opt(s.token_weighted_decode_tok_s)},
            {"steady_decode_tok_s", opt(s.steady_decode_tok_s)},
            {"steady_window_s", opt(s.steady_window_s)},
            {"mean_concurrency", s.mean_concurrency},
            {"peak_concurrency", s.peak_concurrency},
            {"goodput_req_s", opt(s.goodput_req_s)},
            {"good_fraction", opt(s.good_fraction)},
            {"notes", s.notes}};
  return j;
}

Json record_to_json(const RequestRecord& r) {
  Json itl = Json::array();
  for (size_t i = 1; i < r.token_event_ns.size(); ++i) itl.push_back(std::round(static_cast<double>(r.token_event_ns[i] - r.token_event_ns[i - 1]) / 1e3) / 1e3);
  return {{"index", r.index},
          {"ok", r.ok()},
          {"failure", failure_class_name(r.failure)},
          {"error", r.error},
          {"http_status", r.http_status},
          {"ttfb_ms", opt(r.ttfb_ms())},
          {"ttft_ms", opt(r.ttft_ms())},
          {"e2e_ms", opt(r.e2e_ms())},
          {"tpot_ms", opt(r.tpot_ms())},
          {"output_tokens", r.output_tokens()},
          {"tokens_source", r.usage_tokens() ? "usage" : "events"},
          {"prompt_tokens", r.prompt_tokens},
          {"finish_reason", r.finish_reason},
          {"itl_ms", itl}};
}

}  // namespace preflight::bench
