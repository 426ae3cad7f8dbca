// bench/runner: the streaming client. One thread drives every stream through libcurl's multi
// interface with curl_multi_socket_action on an epoll set, so thousands of streams cost one
// epoll_wait per wake-up and no per-handle polling. Connections are kept alive and reused (pool
// sized to the concurrency). Every timestamp comes from the one Clock, taken in the libcurl
// callbacks as the bytes arrive; the token path does not allocate (per-stream buffers are reused
// and the arrival list is reserved from max_tokens).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "bench/clock.hpp"
#include "bench/load.hpp"
#include "bench/measurement.hpp"
#include "bench/sse_parser.hpp"

namespace preflight::bench {

struct TransportLimits {
  int64_t connect_timeout_ms = 10'000;
  int64_t stall_timeout_s = 30;        // no byte for this long fails the request as stalled
  int64_t request_timeout_ms = 0;      // whole request; 0 = none (stall detection still applies)
  // The whole run_load call (one level), from the first measured send. When it passes, requests in
  // flight fail as FailureClass::deadline and requests not yet sent are recorded as deadline
  // failures too, so the run ends with its records. One hour bounds a run against a server that
  // answers each request just fast enough to pass the stall and request limits; 0 = none.
  int64_t run_deadline_ms = 3'600'000;
  SseLimits sse;
};

struct RunTarget {
  std::string url;   // base URL, e.g. http://127.0.0.1:8000 (the /v1/... path is appended)
  RequestOptions request;
};

// Called on the client thread as each request finishes (successful or not), before the next
// launch; used to commit each request to the store at once.
using FinishedFn = std::function<void(const RequestRecord&)>;

struct RunResult {
  std::vector<RequestRecord> records;   // in completion order
  int64_t t_start_ns = 0;
  int64_t t_end_ns = 0;
  double schedule_lag_p99_ms = 0;       // open loop: how late sends were against the schedule
};

// Sends plan.num_prompts requests (prompts are cycled) and returns when every one has finished.
// Errors only for setup problems: invalid_argument (bad URL scheme), environment (libcurl, opened
// with dlopen on first use, missing or failing to initialise); request failures are records.
Expected<RunResult> run_load(const RunTarget& target, const std::vector<Prompt>& prompts, const LoadPlan& plan, const TransportLimits& limits,
                             const Clock& clock, const FinishedFn& on_finished);

// The endpoint path for the API: /v1/chat/completions, /v1/completions, or /generate_stream (at the root).
std::string endpoint_url(const std::string& base_url, Api api);

// MindIE's /generate_stream body (TGI 0.9.4 form): {"inputs", "parameters": {"max_new_tokens", "details": true,
// "temperature" when set}, "stream": true}. details makes the last event carry generated_tokens and prompt_tokens.
Json build_generate_stream_body(const RequestOptions& options, const Prompt& prompt);

}  // namespace preflight::bench
