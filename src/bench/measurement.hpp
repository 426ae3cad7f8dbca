// bench/measurement: the raw record of one streamed request (every timestamp from the one
// monotonic clock, nanoseconds) and the statistics of a run, with the metric definitions of
// ../shared/reference/benchmark-metrics.md section 11.1:
//   TTFT  = first event with a non-empty content, reasoning or tool-call delta - t_send
//   TTFB  = first response byte (status line) - t_send
//   E2E   = last token-bearing event - t_send (usage chunk and [DONE] excluded)
//   N     = usage.completion_tokens, else the number of token-bearing events (flagged "events")
//   TPOT  = (E2E - TTFT) / (N - 1) per request, N >= 2, request-weighted
//   ITL   = every gap between consecutive token-bearing events, pooled over requests
//   output throughput = sum N / (last completion - first send)
// Summaries use population std and NumPy's linear percentile interpolation.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "bench/sse_parser.hpp"

namespace preflight::bench {

// Why a request failed. Names are stable: they are stored and counted.
enum class FailureClass { none, connect, http_status, stream_error, malformed_sse, line_too_long, event_too_large, stream_too_large, truncated, missing_done, stalled, timeout,
                          deadline, no_output, client };

const char* failure_class_name(FailureClass failure);

struct RequestRecord {
  int64_t index = 0;
  int64_t t_sched_ns = 0;            // when the schedule wanted it sent (closed loop: when it was launched)
  int64_t t_send_ns = 0;             // right before the request was written (after any connect)
  int64_t t_first_byte_ns = -1;      // first response byte
  int64_t t_first_chunk_ns = -1;     // first event with a non-empty choices list (vLLM's TTFT event)
  int64_t t_first_token_ns = -1;     // first token-bearing event
  int64_t t_first_content_ns = -1;   // first non-reasoning content (TTFO)
  int64_t t_last_token_ns = -1;      // last token-bearing event
  int64_t t_done_ns = -1;            // "data: [DONE]"
  int64_t t_end_ns = -1;             // transfer finished (or failed)
  std::vector<int64_t> token_event_ns;  // arrival of every token-bearing event (reserved up front)
  int http_status = 0;
  FailureClass failure = FailureClass::none;
  std::string error;                 // reason, empty when the request succeeded
  std::string finish_reason;
  int64_t requested_output_tokens = -1;
  int64_t requested_input_tokens = -1;  // the prompt length the dataset asked for (approximate)
  int64_t prompt_tokens = -1;        // usage.prompt_tokens
  int64_t completion_tokens = -1;    // usage.completion_tokens
  int64_t reasoning_tokens = -1;
  int64_t token_events = 0;
  int64_t content_chars = 0;
  int64_t reasoning_chars = 0;
  int64_t events = 0;                // SSE events of any kind
  int64_t response_bytes = 0;

  bool ok() const { return failure == FailureClass::none; }
  bool usage_tokens() const { return completion_tokens >= 0; }
  int64_t output_tokens() const { return completion_tokens >= 0 ? completion_tokens : token_events; }
  int64_t input_tokens() const { return prompt_tokens >= 0 ? prompt_tokens : requested_input_tokens; }
  std::optional<double> ttft_ms() const;
  std::optional<double> ttfb_ms() const;
  std::optional<double> e2e_ms() const;
  std::optional<double> tpot_ms() const;   // N >= 2 only
};

// Applies one parsed SSE chunk that arrived at t_ns to the record. Errors inside a 200 stream
// fail the request (stream_error) with the server's message.
void apply_chunk(RequestRecord& record, const ChunkInfo& chunk, int64_t t_ns);

// Marks the end of a transfer that the transport reported as complete: a stream without [DONE]
// or without any output fails with its reason.
void finish_record(RequestRecord& record, int64_t t_ns);

void fail_record(RequestRecord& record, FailureClass failure, std::string reason, int64_t t_ns);

struct Summary {
  int64_t count = 0;
  double mean = 0, std = 0, min = 0, max = 0, p50 = 0, p90 = 0, p95 = 0, p99 = 0;
};

// Linear-interpolated percentile (NumPy default) of sorted values, q in [0, 100].
double percentile_sorted(const std::vector<double>& sorted, double q);
Summary summarize(std::vector<double> values);

// Per-request service-level objectives for goodput (DistServe / vLLM --goodput): a request is good
// when it succeeded and every set limit holds (TPOT counts as 0 when N <= 1).
struct Slo {
  std::optional<double> ttft_ms, tpot_ms, e2e_ms;
};

enum class LoadMode { concurrency, request_rate };

struct RunStats {
  int64_t requests = 0, succeeded = 0, failed = 0;
  std::map<std::string, int64_t> failures;        // failure class -> count
  std::vector<std::string> failure_examples;      // first reasons, at most 5
  std::map<std::string, int64_t> finish_reasons;
  std::string tokens_source;                      // "usage", "events" or "mixed"
  int64_t output_length_mismatches = 0;           // N != requested output length
  double duration_s = 0;                          // last completion - first send
  Summary ttft_ms, ttfb_ms, ttfo_ms, tpot_ms, itl_ms, e2e_ms;
  int64_t output_tokens = 0, input_tokens = 0;
  double output_throughput_tok_s = 0, input_throughput_tok_s = 0, total_throughput_tok_s = 0, request_throughput_per_s = 0;
  std::optional<double> token_weighted_decode_tok_s;  // sum(N-1) / sum(E2E-TTFT), per stream
  std::optional<double> steady_decode_tok_s;          // aggregate, steady window at fixed concurrency
  std::optional<double> steady_window_s;
  double mean_concurrency = 0;                        // Little's law: sum E2E / duration
  int64_t peak_concurrency = 0;
  std::optional<double> goodput_req_s, good_fraction;  // with an SLO; errors in the denominator
  std::vector<std::string> notes;
};

struct StatsOptions {
  LoadMode mode = LoadMode::concurrency;
  int64_t concurrency = 1;  // the fixed concurrency (mode concurrency)
  Slo slo;
};

RunStats compute_run_stats(const std::vector<RequestRecord>& records, const StatsOptions& options);

Json summary_to_json(const Summary& s);
Json run_stats_to_json(const RunStats& stats);
Json record_to_json(const RequestRecord& record);

}  // namespace preflight::bench
