// libcurl multi interface (curl.se/libcurl/c/libcurl-multi.html): one multi handle keeps the
// connection cache, so consecutive requests to the same host reuse connections; each attempt is an
// easy handle. Returning a short count from the write callback aborts a transfer (CURLE_WRITE_ERROR),
// which is how a body that runs past the wanted bytes is cut.
#include "hub/http_fetcher.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "base/curl_api.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "hub/hub_ref.hpp"

namespace preflight::hub {

namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t k_error_body_cap = 4096;

struct Transfer {
  size_t index = 0;
  int attempt = 0;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  const HttpRequest* request = nullptr;
  // Response state, reset on every status line (redirects deliver several header blocks).
  long status = 0;
  std::optional<uint64_t> content_length;
  std::optional<uint64_t> content_range_total;
  std::optional<long> retry_after_s;
  uint64_t body_seen = 0;  // body bytes received for the final response
  std::string body;
  bool cut = false;        // aborted on purpose: the wanted bytes are in
  bool too_large = false;  // whole-body request above its cap
  uint64_t header_bytes = 0;
};

std::optional<uint64_t> parse_u64(const std::string& s) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoull(s);
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  t->header_bytes += n;
  const std::string line = trim(std::string(data, n));
  if (starts_with(line, "HTTP/")) {
    t->content_length.reset();
    t->content_range_total.reset();
    t->retry_after_s.reset();
    const auto parts = split(line, ' ');
    t->status = parts.size() > 1 ? static_cast<long>(parse_u64(parts[1]).value_or(0)) : 0;
    return n;
  }
  const auto colon = line.find(':');
  if (colon == std::string::npos) return n;
  const std::string name = to_lower(trim(line.substr(0, colon)));
  const std::string value = trim(line.substr(colon + 1));
  if (name == "content-length") {
    t->content_length = parse_u64(value);
  } else if (name == "content-range") {
    const auto slash = value.rfind('/');
    if (slash != std::string::npos) t->content_range_total = parse_u64(value.substr(slash + 1));
  } else if (name == "retry-after") {
    if (auto v = parse_u64(value)) t->retry_after_s = static_cast<long>(std::min<uint64_t>(*v, 86400));
  }
  return n;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  const HttpRequest& r = *t->request;
  const uint64_t start = t->body_seen;
  t->body_seen += n;
  if (t->status < 200 || t->status >= 300) {
    if (t->body.size() < k_error_body_cap) t->body.append(data, std::min<size_t>(n, k_error_body_cap - t->body.size()));
    return n;
  }
  if (r.length == 0) {
    if (t->body_seen > r.max_body_bytes) {
      t->too_large = true;
      return 0;
    }
    t->body.append(data, n);
    return n;
  }
  // A 206 starts at offset; a 200 (Range ignored) starts at byte 0 of the file.
  const uint64_t file_pos = t->status == 206 ? r.offset + start : start;
  const uint64_t want_end = r.offset + r.length;
  const uint64_t chunk_end = file_pos + n;
  const uint64_t keep_begin = std::max(file_pos, r.offset);
  const uint64_t keep_end = std::min(chunk_end, want_end);
  if (keep_end > keep_begin) t->body.append(data + (keep_begin - file_pos), keep_end - keep_begin);
  // A 200 runs on into the weights; a 206 longer than asked is cut too.
  if (chunk_end > want_end || (chunk_end == want_end && t->status == 200)) {
    t->cut = true;
    return 0;
  }
  return n;
}

bool retryable_status(long status) { return status == 429 || status == 408 || (status >= 500 && status <= 599); }

bool retryable_curl(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT: case CURLE_RECV_ERROR: case CURLE_SEND_ERROR: case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE: case CURLE_OPERATION_TIMEDOUT: case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR: case CURLE_COULDNT_RESOLVE_HOST:
      return true;
    default:
      return false;
  }
}

}  // namespace

struct HttpFetcher::Impl {
  FetchOptions options;
  FetchStats stats;
  uint64_t queued_total = 0;  // requests asked for over every fetch() call (progress)
  uint64_t done_total = 0;
  const CurlApi* curl = nullptr;    // null when libcurl could not be loaded; then load_error says why
  std::optional<Error> load_error;
  CURLM* multi = nullptr;
  Clock::time_point deadline;
  std::mt19937_64 rng{std::random_device{}()};

  // Which of the limits ended a transfer that libcurl reports as CURLE_OPERATION_TIMEDOUT.
  std::string timeout_reason(CURL* easy) const {
    curl_off_t connect_us = 0, total_us = 0;
    curl->easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connect_us);
    curl->easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total_us);
    if (connect_us == 0) return format("connect timeout (%ld ms)", options.connect_timeout_ms);
    if (total_us / 1000 >= options.request_timeout_ms) return format("request timeout (%ld ms per attempt)", options.request_timeout_ms);
    return format("low-speed limit (under %ld bytes/s for %ld ms)", options.low_speed_bytes_per_s, options.stall_timeout_ms);
  }

  long backoff_ms(int attempt, std::optional<long> retry_after_s) {
    const long base = std::min(options.backoff_max_ms, options.backoff_base_ms << std::min(attempt - 1, 16));
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    long delay = static_cast<long>(static_cast<double>(base) * jitter(rng));
    if (retry_after_s) delay = std::max(delay, std::min(options.backoff_max_ms, *retry_after_s * 1000));
    return delay;
  }

  std::string where(const HttpRequest& r) const { return redact(options.label + ": " + r.file, options.token); }

  Error http_error(const HttpRequest& r, long status) const {
    const std::string url = redact(r.url, options.token);
    if (status == 404) return make_error(ErrorKind::not_found, format("%s: not found (HTTP 404)", where(r).c_str()), url);
    if (status == 401 || status == 403) {
      const bool hf = starts_with(options.label, "hf:");
      const std::string source = !options.token.empty() && !options.token_source.empty() ? options.token_source : hf ? "HF_TOKEN" : "MODELSCOPE_API_TOKEN";
      return make_error(ErrorKind::network, format("%s: access denied (HTTP %ld): the repo is gated or private, or the token lacks access; %s %s", where(r).c_str(),
                                                   status, options.token.empty() ? "set" : "check", source.c_str()),
                        url);
    }
    return make_error(ErrorKind::network, format("%s: HTTP %ld", where(r).c_str(), status), url);
  }

  CURL* start(Transfer& t) {
    CURL* e = curl->easy_init();
    t.easy = e;
    curl->easy_setopt(e, CURLOPT_URL, t.request->url.c_str());
    curl->easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl->easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
    curl->easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl->easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, options.connect_timeout_ms);
    curl->easy_setopt(e, CURLOPT_TIMEOUT_MS, options.request_timeout_ms);
    curl->easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, std::max(1L, options.low_speed_bytes_per_s));
    curl->easy_setopt(e, CURLOPT_LOW_SPEED_TIME, std::max(1L, options.stall_timeout_ms / 1000));
    curl->easy_setopt(e, CURLOPT_USERAGENT, "preflight/" PREFLIGHT_VERSION);
    curl->easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "identity");
    curl->easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl->easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl->easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl->easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl->easy_setopt(e, CURLOPT_PRIVATE, &t);
    if (t.request->length > 0) {
      const std::string range = format("%llu-%llu", static_cast<unsigned long long>(t.request->offset),
                                       static_cast<unsigned long long>(t.request->offset + t.request->length - 1));
      curl->easy_setopt(e, CURLOPT_RANGE, range.c_str());
    }
    if (!options.token.empty()) {
      // A custom Authorization header is not sent on to another host after a redirect (curl >= 7.58).
      t.headers = curl->slist_append(nullptr, ("Authorization: Bearer " + options.token).c_str());
      curl->easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
    }
    return e;
  }

  void reset(Transfer& t) {
    if (t.easy) {
      curl->multi_remove_handle(multi, t.easy);
      curl->easy_cleanup(t.easy);
    }
    curl->slist_free_all(t.headers);
    const size_t index = t.index;
    const int attempt = t.attempt;
    const HttpRequest* request = t.request;
    t = Transfer{};
    t.index = index;
    t.attempt = attempt;
    t.request = request;
  }
};

HttpFetcher::HttpFetcher(FetchOptions options) : m_impl(std::make_unique<Impl>()) {
  m_impl->options = std::move(options);
  m_impl->options.max_parallel = std::max(1, m_impl->options.max_parallel);
  m_impl->options.max_attempts = std::max(1, m_impl->options.max_attempts);
  m_impl->deadline = Clock::now() + std::chrono::milliseconds(std::max(1L, m_impl->options.total_deadline_ms));
  auto api = load_curl_api();
  if (!api) {
    m_impl->load_error = api.error();  // every fetch() answers with it
    return;
  }
  const CurlApi* curl = *api;
  m_impl->curl = curl;
  m_impl->multi = curl->multi_init();
  curl->multi_setopt(m_impl->multi, CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(m_impl->options.max_parallel));
  curl->multi_setopt(m_impl->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, static_cast<long>(m_impl->options.max_parallel));
}

HttpFetcher::~HttpFetcher() {
  if (m_impl->curl && m_impl->multi) m_impl->curl->multi_cleanup(m_impl->multi);
}

const FetchStats& HttpFetcher::stats() const { return m_impl->stats; }

std::vector<Expected<HttpResponse>> HttpFetcher::fetch(const std::vector<HttpRequest>& requests) {
  Impl& m = *m_impl;
  std::vector<Expected<HttpResponse>> results(requests.size(), Expected<HttpResponse>(make_error(ErrorKind::network, "not run")));
  if (auto bad = check_token_characters(m.options.token, m.options.token_source.empty() ? "token" : m.options.token_source); !bad) {
    for (auto& r : results) r = bad.error();
    return results;
  }
  if (!m.curl) {
    for (auto& r : results) r = *m.load_error;
    return results;
  }
  std::vector<Transfer> transfers(requests.size());
  struct Pending {
    size_t index;
    Clock::time_point not_before;
  };
  std::deque<Pending> pending;
  for (size_t i = 0; i < requests.size(); ++i) {
    transfers[i].index = i;
    transfers[i].request = &requests[i];
    pending.push_back({i, Clock::now()});
  }
  size_t running = 0, done = 0;
  m.queued_total += requests.size();
  auto report = [&] {
    ++m.done_total;
    if (m.options.on_progress) m.options.on_progress({m.done_total, m.queued_total, m.stats.bytes_received});
  };
  while (done < requests.size()) {
    const auto now = Clock::now();
    if (now >= m.deadline) {
      // The total deadline: every unfinished request fails, running transfers are dropped.
      for (size_t i = 0; i < transfers.size(); ++i) {
        Transfer& t = transfers[i];
        if (t.request == nullptr) continue;  // finished
        results[i] = make_error(ErrorKind::timeout,
                                redact(format("%s: total deadline (%ld ms for all requests, retries included) passed", m.where(*t.request).c_str(), m.options.total_deadline_ms),
                                       m.options.token),
                                redact(t.request->url, m.options.token));
        m.reset(t);
        t.request = nullptr;
      }
      return results;
    }
    // Start what may start now, up to the parallel limit.
    for (auto it = pending.begin(); it != pending.end() && running < static_cast<size_t>(m.options.max_parallel);) {
      if (it->not_before > now) {
        ++it;
        continue;
      }
      Transfer& t = transfers[it->index];
      ++t.attempt;
      m.curl->multi_add_handle(m.multi, m.start(t));
      ++running;
      it = pending.erase(it);
    }
    int still = 0;
    m.curl->multi_perform(m.multi, &still);
    int queued = 0;
    while (CURLMsg* msg = m.curl->multi_info_read(m.multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* tp = nullptr;
      m.curl->easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&tp));
      Transfer& t = *tp;
      const HttpRequest& r = *t.request;
      const CURLcode code = msg->data.result;
      long redirects = 0;
      m.curl->easy_getinfo(t.easy, CURLINFO_REDIRECT_COUNT, &redirects);
      m.stats.requests += 1 + static_cast<uint64_t>(redirects);
      m.stats.bytes_received += t.header_bytes + t.body_seen;
      --running;
      const bool ok_cut = code == CURLE_WRITE_ERROR && t.cut;
      std::optional<Expected<HttpResponse>> outcome;
      std::optional<long> retry_after = t.retry_after_s;
      bool retry = false;
      if (code == CURLE_OK || ok_cut) {
        if (t.status == 404 && r.missing_ok) {
          HttpResponse resp;
          resp.status = 404;
          outcome = resp;
        } else if (retryable_status(t.status)) {
          retry = true;
          outcome = m.http_error(r, t.status);
        } else if (t.status != 200 && t.status != 206) {
          outcome = m.http_error(r, t.status);
        } else {
          HttpResponse resp;
          resp.status = t.status;
          resp.body = std::move(t.body);
          resp.range_ignored = r.length > 0 && t.status == 200;
          resp.total_size = t.status == 206 ? t.content_range_total : t.content_length;
          if (r.length > 0 && !resp.total_size) {
            outcome = make_error(ErrorKind::corrupt, format("%s: the server gave no file size with its answer to a range request", m.where(r).c_str()),
                                 redact(r.url, m.options.token));
          } else {
            outcome = std::move(resp);
          }
        }
      } else if (code == CURLE_WRITE_ERROR && t.too_large) {
        outcome = make_error(ErrorKind::corrupt, format("%s: larger than the %llu bytes accepted for this file", m.where(r).c_str(),
                                                        static_cast<unsigned long long>(r.max_body_bytes)),
                             redact(r.url, m.options.token));
      } else {
        retry = retryable_curl(code);
        const bool timed_out = code == CURLE_OPERATION_TIMEDOUT;
        const std::string what = timed_out ? m.timeout_reason(t.easy) : std::string(m.curl->easy_strerror(code));
        outcome = make_error(timed_out ? ErrorKind::timeout : ErrorKind::network,
                             redact(format("%s: %s after %d attempt%s", m.where(r).c_str(), what.c_str(), t.attempt, t.attempt == 1 ? "" : "s"), m.options.token),
                             redact(r.url, m.options.token));
      }
      if (retry && t.attempt < m.options.max_attempts) {
        ++m.stats.retries;
        const long delay = m.backoff_ms(t.attempt, retry_after);
        m.reset(t);
        pending.push_back({t.index, Clock::now() + std::chrono::milliseconds(delay)});
        continue;
      }
      results[t.index] = std::move(*outcome);
      m.reset(t);
      t.easy = nullptr;
      t.request = nullptr;  // finished
      ++done;
      report();
    }
    if (done == requests.size()) break;
    if (running == 0) {
      // Only retries waiting for their backoff: sleep until the first is due.
      auto first = Clock::time_point::max();
      for (const auto& p : pending) first = std::min(first, p.not_before);
      first = std::min(first, m.deadline);
      if (first > Clock::now()) std::this_thread::sleep_until(first);
    } else {
      m.curl->multi_poll(m.multi, nullptr, 0, 50, nullptr);
    }
  }
  return results;
}

}  // namespace preflight::hub
