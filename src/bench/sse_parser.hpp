// bench/sse_parser: the incremental Server-Sent-Events framer and the OpenAI chunk reader that the
// streaming client feeds with every read. Events may be split across reads and several may arrive in
// one read; lines end in "\n" or "\r\n"; ":" lines are comments; "data:" lines of one event are
// joined with "\n" and the event is dispatched at the blank line that ends it (or at end of stream).
// Each line is capped (SseLimits::max_line_bytes) so a hostile server cannot make us allocate
// without bound. The chunk reader scans the JSON payload without building a DOM and without heap
// allocation on the token path: it extracts only what the metrics need (content, reasoning and
// tool-call deltas, finish_reason, usage, and error objects inside a 200 stream), and the TGI-style
// events of MindIE's /generate_stream (token text, the final event's details).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/error.hpp"

namespace preflight::bench {

// What one "data:" payload carried.
struct ChunkInfo {
  bool is_done = false;              // "data: [DONE]"
  int choices = 0;                   // entries in "choices" (0 for the usage-only chunk)
  int64_t content_chars = 0;         // delta.content (chat) or text (completions)
  int64_t reasoning_chars = 0;       // delta.reasoning or delta.reasoning_content (both accepted, summed)
  int64_t tool_call_chars = 0;       // bytes of delta.tool_calls fragments
  std::string finish_reason;         // empty when null or absent (short strings: no heap allocation)
  bool has_usage = false;
  int64_t prompt_tokens = -1;        // usage.prompt_tokens, -1 when absent
  int64_t completion_tokens = -1;    // usage.completion_tokens, -1 when absent
  int64_t reasoning_tokens = -1;     // usage.completion_tokens_details.reasoning_tokens
  bool is_error = false;             // {"error": ...} or vLLM's {"object": "error", ...}
  std::string error_message;
  // TGI-style streams (MindIE's /generate_stream): {"token": {"text": ...}, "generated_text": null, "details": null}
  // per token; the last event carries generated_text and details (finish_reason, generated_tokens, and MindIE's
  // prompt_tokens) and no "[DONE]" follows, so it ends the stream.
  bool is_final = false;

  // True when the chunk carried output: a non-empty content, reasoning or tool-call delta.
  bool token_bearing() const { return content_chars > 0 || reasoning_chars > 0 || tool_call_chars > 0; }
};

// Reads one payload ("[DONE]" or a JSON object). Corrupt error with the byte offset when the
// payload is not valid JSON; nesting deeper than 64 levels is rejected.
Expected<ChunkInfo> parse_chunk(std::string_view payload);

struct SseLimits {
  // A line longer than this fails the stream. 256 KiB holds any real chunk (vLLM chunks with
  // logprobs are a few KiB) while bounding memory per stream.
  size_t max_line_bytes = 256 * 1024;
  // The joined data lines of one event. Servers send one data line per event; a stream of data
  // lines that never reaches the blank line would otherwise grow one event without bound. 1 MiB
  // is four of the longest lines accepted.
  size_t max_event_bytes = 1024 * 1024;
  // Every byte of one response body. 1 GiB holds a 128k-token answer with logprobs (a few KiB per
  // chunk) and stops a server that streams forever.
  uint64_t max_stream_bytes = 1ull << 30;
};

// Why a framer stopped, so the client can class the failure without reading the message.
enum class SseFailure { none, line_too_long, event_too_large, stream_too_large, event_rejected };

// Frames a byte stream into events. Not thread-safe; one per request.
class SseFramer {
 public:
  // Called with each complete event's joined data payload and the timestamp of the read that
  // completed it. Returning an error stops the framer and is returned from feed().
  using EventFn = std::function<Status(std::string_view data, int64_t t_ns)>;

  explicit SseFramer(EventFn on_event, SseLimits limits = {});

  // Feeds the bytes of one read. Errors: corrupt when a line, an event or the stream exceeds its
  // cap (failure() says which), or what on_event returned. After an error, further input is ignored and the same error is returned.
  Status feed(std::string_view bytes, int64_t t_ns);
  // End of stream: dispatches an event that was not closed by a blank line.
  Status finish(int64_t t_ns);

  int64_t events() const { return m_events; }
  int64_t bytes() const { return m_bytes; }
  SseFailure failure() const { return m_failure; }

 private:
  Status fail(SseFailure failure, Error error);
  Status line(std::string_view text, int64_t t_ns);
  Status dispatch(int64_t t_ns);

  EventFn m_on_event;
  SseLimits m_limits;
  std::string m_partial;   // an unfinished line carried over from the previous read
  std::string m_data;      // data lines of the current event, joined with "\n"
  bool m_has_data = false;
  bool m_failed = false;
  SseFailure m_failure = SseFailure::none;
  Error m_error;
  int64_t m_events = 0;
  int64_t m_bytes = 0;
};

}  // namespace preflight::bench
