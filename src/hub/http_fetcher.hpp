// hub/http_fetcher: GETs over libcurl's multi interface: many requests at once on reused
// connections, redirects followed (the hubs redirect file downloads to a CDN), byte ranges, timeouts,
// and retries with exponential backoff and jitter on 429 (honouring Retry-After), 5xx, resets and
// truncated bodies. A range request is also safe against a server that ignores Range and starts
// the whole file: the transfer is cut as soon as the wanted bytes have arrived, so weights are never
// downloaded. Never prints: progress goes to a callback, failures are error values whose text never
// holds the token.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace preflight::hub {

struct HttpRequest {
  std::string url;
  std::string file;               // the repo file, named in errors ("model-00001-of-00004.safetensors")
  uint64_t offset = 0;            // first byte wanted
  uint64_t length = 0;            // bytes wanted from offset; 0 = the whole body
  uint64_t max_body_bytes = 64ull << 20;  // whole-body requests: larger is an error
  bool missing_ok = false;        // 404 is an answer (status 404, empty body), not an error
};

struct HttpResponse {
  long status = 0;
  std::string body;                     // the wanted bytes (may be fewer at the end of the file)
  std::optional<uint64_t> total_size;   // the whole file: Content-Range ".../N", or Content-Length of a 200
  bool range_ignored = false;           // a 200 to a range request, cut after the wanted bytes
};

// Counts over the fetcher's life: a later round adds to the total.
struct FetchProgress {
  uint64_t requests_done = 0;   // files answered (retries and redirects not counted)
  uint64_t requests_total = 0;  // files asked for so far
  uint64_t bytes_received = 0;
};

struct FetchOptions {
  std::string token;          // sent as "Authorization: Bearer"; curl drops it on a redirect to another host
  std::string token_source;   // where the token came from ("HF_TOKEN", a token file's path): named by a 401/403
  std::string label;          // the repo reference that opens every error message ("hf:org/name@main")
  int max_parallel = 16;      // transfers at once (and connections per host)
  long connect_timeout_ms = 10'000;
  // Low-speed limit: a transfer that moves fewer than low_speed_bytes_per_s for stall_timeout_ms
  // fails with timeout. Metadata files are small: a hub under 1 KiB/s for 30 s is broken, and one
  // that sends nothing at all is caught by the same rule.
  long low_speed_bytes_per_s = 1024;
  long stall_timeout_ms = 30'000;
  long request_timeout_ms = 120'000;  // one attempt of one request
  // Every request of this fetcher together, retries and backoff included, counted from its
  // creation: 300 s bounds a run against a hub that answers just above the low-speed limit.
  long total_deadline_ms = 300'000;
  int max_attempts = 5;              // first try included
  long backoff_base_ms = 250;        // doubled per retry, with up to 50% random jitter
  long backoff_max_ms = 30'000;      // also caps Retry-After
  std::function<void(const FetchProgress&)> on_progress;
};

struct FetchStats {
  uint64_t requests = 0;        // HTTP requests sent, retries and redirects included
  uint64_t bytes_received = 0;  // response headers and bodies
  uint64_t retries = 0;
};

class HttpFetcher {
 public:
  explicit HttpFetcher(FetchOptions options);
  ~HttpFetcher();
  HttpFetcher(const HttpFetcher&) = delete;
  HttpFetcher& operator=(const HttpFetcher&) = delete;

  // Runs every request and returns one result per request, in order. Errors: not_found (404),
  // network (401/403 naming the token variable, other statuses, connection failures after the
  // retries), timeout (the message says which limit fired: connect, low-speed, request or the total
  // deadline), invalid_argument (a token holding a control character), corrupt (a body above max_body_bytes, a range answer without a size).
  // environment for every request when libcurl (opened with dlopen on first use) cannot be loaded.
  std::vector<Expected<HttpResponse>> fetch(const std::vector<HttpRequest>& requests);

  const FetchStats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace preflight::hub
