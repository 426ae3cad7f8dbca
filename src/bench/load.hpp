// bench/load: what to send and when. A prompt set (synthetic or from a dataset file), the request
// body for the chat or completions endpoint, and the schedule: closed loop at fixed concurrency, or
// open loop at a request rate with gamma-distributed gaps (burstiness 1 = Poisson), optionally
// capped at a maximum concurrency.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "bench/measurement.hpp"

namespace preflight::bench {

enum class Api { chat, completions, generate_stream };  // generate_stream: MindIE's TGI-style /generate_stream

struct Prompt {
  std::string text;
  int64_t input_tokens = -1;   // approximate length the prompt was built for (-1: unknown)
  int64_t output_tokens = 0;   // max_tokens to ask for
};

struct RequestOptions {
  std::string model;
  Api api = Api::chat;
  enum class Eos { respect, ignore } eos = Eos::respect;                 // ignore_eos (vLLM, SGLang, llama-server)
  enum class Thinking { server_default, off } thinking = Thinking::server_default;  // chat_template_kwargs.enable_thinking=false
  std::optional<std::string> api_key;
  std::optional<double> temperature;
};

// The JSON body: stream on, stream_options.include_usage on, max_tokens.
Json build_request_body(const RequestOptions& options, const Prompt& prompt);

// `count` prompts of about `input_tokens` tokens each (space-separated words that common
// tokenizers read as one token each, varied per prompt so a prefix cache does not hit).
std::vector<Prompt> synthetic_prompts(int64_t count, int64_t input_tokens, int64_t output_tokens, uint64_t seed);

// Reads a JSONL dataset: one object per line with "prompt" (string) and optional "output_len";
// lines without "output_len" get `default_output_tokens`. Errors name the file and line.
Expected<std::vector<Prompt>> load_dataset(const std::string& path, int64_t default_output_tokens);

struct LoadPlan {
  LoadMode mode = LoadMode::concurrency;
  int64_t concurrency = 1;          // mode concurrency: in-flight requests kept
  double request_rate = 0;          // mode request_rate: mean requests per second
  double burstiness = 1.0;          // gamma shape; 1 = Poisson, < 1 burstier, > 1 smoother
  int64_t max_concurrency = 0;      // mode request_rate: cap on in-flight requests (0 = none)
  int64_t num_prompts = 0;
  int64_t warmup_requests = 0;      // one-token requests sent first to open the connection pool; not recorded
  uint64_t seed = 0;
};

// Bounds on one run. Beyond them the prompt text, the records or the sockets would not fit in a
// machine, so they are refused up front (invalid_argument) instead of failing an allocation.
inline constexpr int64_t k_max_num_prompts = 1'000'000;           // records: a few hundred bytes each plus token times
inline constexpr int64_t k_max_tokens_per_request = 1'048'576;    // --input-len, --output-len: 2^20, above any served context
inline constexpr int64_t k_max_concurrency = 65'536;              // in-flight streams: one socket each
inline constexpr int64_t k_max_synthetic_tokens = 100'000'000;    // num_prompts x input_len: about 600 MB of prompt text
inline constexpr double k_min_request_rate = 1e-3;                // requests/s; slower schedules run past any deadline
inline constexpr double k_max_request_rate = 1e6;

// invalid_argument naming the flag and its bound when the plan exceeds the bounds above.
Status check_load_bounds(const LoadPlan& plan);

// Send offsets (seconds from the start) for an open-loop run: gamma gaps with shape
// `burstiness` and mean 1/rate, rescaled so that they sum to exactly n/rate (as vLLM does, so
// the offered load does not drift with the seed). The first request goes at 0.
std::vector<double> arrival_offsets_s(int64_t n, double rate, double burstiness, uint64_t seed);

}  // namespace preflight::bench
