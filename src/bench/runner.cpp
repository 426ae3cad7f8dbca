#include "bench/runner.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>

#include "base/json_writer.hpp"
#include "base/text.hpp"
#include "base/curl_api.hpp"
#include "base/units.hpp"

namespace preflight::bench {

std::string endpoint_url(const std::string& base_url, Api api) {
  std::string url = base_url;
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (api == Api::generate_stream) {
    if (ends_with(url, "/generate_stream")) return url;
    if (ends_with(url, "/v1")) url.resize(url.size() - 3);
    return url + "/generate_stream";
  }
  const std::string path = api == Api::chat ? "/chat/completions" : "/completions";
  if (ends_with(url, path)) return url;
  if (ends_with(url, "/v1")) return url + path;
  return url + "/v1" + path;
}

Json build_generate_stream_body(const RequestOptions& options, const Prompt& prompt) {
  Json parameters = {{"max_new_tokens", prompt.output_tokens}, {"details", true}};
  if (options.temperature) parameters["temperature"] = *options.temperature;
  return {{"inputs", prompt.text}, {"parameters", parameters}, {"stream", true}};
}

namespace {

constexpr size_t k_error_body_cap = 4096;

struct Transfer {
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string body;
  std::string error_body;
  char errbuf[CURL_ERROR_SIZE] = {};
  RequestRecord record;
  std::unique_ptr<SseFramer> framer;
  const Clock* clock = nullptr;
  bool status_seen = false;
  bool http_ok = false;
  bool active = false;  // added to the multi handle and not yet finished
};

FailureClass framer_failure(const SseFramer& framer) {
  switch (framer.failure()) {
    case SseFailure::line_too_long: return FailureClass::line_too_long;
    case SseFailure::event_too_large: return FailureClass::event_too_large;
    case SseFailure::stream_too_large: return FailureClass::stream_too_large;
    default: return FailureClass::malformed_sse;
  }
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->record.t_first_byte_ns < 0) t->record.t_first_byte_ns = t->clock->now_ns();
  // Each response (there may be a 100-continue first) starts with a status line.
  if (n > 9 && std::strncmp(data, "HTTP/", 5) == 0) {
    const char* sp = static_cast<const char*>(std::memchr(data, ' ', n));
    if (sp && sp + 4 <= data + n) {
      t->record.http_status = std::atoi(sp + 1);
      t->http_ok = t->record.http_status >= 200 && t->record.http_status < 300;
      t->status_seen = true;
    }
  }
  return n;
}

// Called by libcurl right before it writes the request (after any connect): the t_send of the
// reference definitions. The launch time stays in t_sched, so client-side queueing and connection
// set-up are visible as t_send - t_sched and never inflate TTFT.
int on_prereq(void* user, char*, char*, int, int) {
  auto* t = static_cast<Transfer*>(user);
  t->record.t_send_ns = t->clock->now_ns();
  return CURL_PREREQFUNC_OK;
}

size_t on_write(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  const int64_t now = t->clock->now_ns();
  if (!t->http_ok) {
    t->error_body.append(data, std::min(n, k_error_body_cap - std::min(k_error_body_cap, t->error_body.size())));
    return n;
  }
  auto st = t->framer->feed(std::string_view(data, n), now);
  if (!st) {
    fail_record(t->record, framer_failure(*t->framer), st.error().message, now);
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  if (t->record.failure == FailureClass::stream_error && t->record.t_done_ns >= 0) return 0;
  return n;
}

// The server's error message from a JSON error body, else the body's first line.
std::string http_error_reason(int status, const std::string& body) {
  std::string message;
  auto j = parse_json(body, "response");
  if (j && j->is_object()) {
    const Json& o = *j;
    if (o.contains("error") && o["error"].is_object() && o["error"].contains("message") && o["error"]["message"].is_string()) {
      message = o["error"]["message"].get<std::string>();
    } else if (o.contains("message") && o["message"].is_string()) {
      message = o["message"].get<std::string>();
    } else if (o.contains("error") && o["error"].is_string()) {
      message = o["error"].get<std::string>();
    }
  }
  if (message.empty()) message = trim(body.substr(0, body.find('\n')));
  message = strip_terminal_controls(clip_text(message, 300));  // server text reaches the terminal and the database
  return format("http %d%s%s", status, message.empty() ? "" : ": ", message.c_str());
}

class Runner {
 public:
  Runner(const RunTarget& target, const TransportLimits& limits, const Clock& clock, const FinishedFn& on_finished)
      : m_target(target), m_limits(limits), m_clock(clock), m_on_finished(on_finished), m_url(endpoint_url(target.url, target.request.api)) {}

  ~Runner() {
    if (m_curl) {  // else init() failed before any libcurl handle was made
      for (auto& t : m_pool) {
        if (t->easy) m_curl->easy_cleanup(t->easy);
        if (t->headers) m_curl->slist_free_all(t->headers);
      }
      if (m_multi) m_curl->multi_cleanup(m_multi);
    }
    if (m_epoll >= 0) ::close(m_epoll);
  }

  Status init() {
    if (!starts_with(m_url, "http://") && !starts_with(m_url, "https://")) {
      return make_error(ErrorKind::invalid_argument, "url must start with http:// or https://", redact_url_credentials(m_target.url));
    }
    PF_TRY(curl, load_curl_api());
    m_curl = curl;
    m_multi = m_curl->multi_init();
    m_epoll = epoll_create1(EPOLL_CLOEXEC);
    if (!m_multi || m_epoll < 0) return make_error(ErrorKind::io, "cannot create the event loop");
    m_curl->multi_setopt(m_multi, CURLMOPT_SOCKETFUNCTION, &Runner::on_socket);
    m_curl->multi_setopt(m_multi, CURLMOPT_SOCKETDATA, this);
    m_curl->multi_setopt(m_multi, CURLMOPT_TIMERFUNCTION, &Runner::on_timer);
    m_curl->multi_setopt(m_multi, CURLMOPT_TIMERDATA, this);
    return Ok{};
  }

  RunResult run(const std::vector<Prompt>& prompts, const LoadPlan& plan) {
    RunResult result;
    const int64_t n = plan.num_prompts;
    result.records.reserve(static_cast<size_t>(n));
    const int64_t pool = plan.mode == LoadMode::concurrency ? plan.concurrency : (plan.max_concurrency > 0 ? plan.max_concurrency : std::min<int64_t>(n, 4096));
    m_curl->multi_setopt(m_multi, CURLMOPT_MAXCONNECTS, static_cast<long>(std::max<int64_t>(pool, 1)));
    warm_up(prompts, std::min<int64_t>(plan.warmup_requests, pool));
    std::vector<double> offsets;
    if (plan.mode == LoadMode::request_rate) offsets = arrival_offsets_s(n, plan.request_rate, plan.burstiness, plan.seed);
    std::vector<double> lag_ms;
    result.t_start_ns = m_clock.now_ns();
    int64_t next = 0, finished = 0, in_flight = 0;
    auto prompt = [&](int64_t i) -> const Prompt& { return prompts[static_cast<size_t>(i % static_cast<int64_t>(prompts.size()))]; };
    auto due = [&](int64_t i) { return result.t_start_ns + static_cast<int64_t>(offsets[static_cast<size_t>(i)] * 1e9); };
    const int64_t deadline_ns = m_limits.run_deadline_ms > 0 ? result.t_start_ns + m_limits.run_deadline_ms * 1'000'000 : -1;
    while (finished < n) {
      const int64_t now = m_clock.now_ns();
      if (deadline_ns >= 0 && now >= deadline_ns) {
        expire(result, next, n, now);
        break;
      }
      if (plan.mode == LoadMode::concurrency) {
        while (in_flight < plan.concurrency && next < n) {
          launch(prompt(next), next, now, prompt(next).output_tokens);
          ++next, ++in_flight;
        }
      } else {
        while (next < n && (plan.max_concurrency <= 0 || in_flight < plan.max_concurrency) && due(next) <= m_clock.now_ns()) {
          launch(prompt(next), next, due(next), prompt(next).output_tokens);
          lag_ms.push_back(static_cast<double>(m_clock.now_ns() - due(next)) / 1e6);
          ++next, ++in_flight;
        }
      }
      int64_t wake_ns = -1;
      if (plan.mode == LoadMode::request_rate && next < n && (plan.max_concurrency <= 0 || in_flight < plan.max_concurrency)) wake_ns = due(next);
      if (deadline_ns >= 0) wake_ns = wake_ns < 0 ? deadline_ns : std::min(wake_ns, deadline_ns);
      poll_once(wake_ns);
      for (Transfer* t : m_done) {
        if (m_on_finished) m_on_finished(t->record);
        result.records.push_back(std::move(t->record));
        m_free.push_back(t);
        ++finished, --in_flight;
      }
    }
    result.t_end_ns = m_clock.now_ns();
    if (!lag_ms.empty()) result.schedule_lag_p99_ms = summarize(lag_ms).p99;
    return result;
  }

 private:
  // Opens the connection pool with `count` one-token requests in parallel; not recorded.
  void warm_up(const std::vector<Prompt>& prompts, int64_t count) {
    for (int64_t i = 0; i < count; ++i) launch(prompts[static_cast<size_t>(i % static_cast<int64_t>(prompts.size()))], -1 - i, m_clock.now_ns(), 1);
    int64_t finished = 0;
    while (finished < count) {
      poll_once(-1);
      for (Transfer* t : m_done) {
        m_free.push_back(t);
        ++finished;
      }
    }
  }

  // The run's deadline passed: every request in flight fails, every request not yet sent is
  // recorded as failed without a send; all of them go to on_finished like any other.
  void expire(RunResult& result, int64_t next, int64_t n, int64_t now) {
    const std::string reason = format("deadline: the run's %.0f s deadline passed (--deadline)", static_cast<double>(m_limits.run_deadline_ms) / 1000.0);
    for (auto& t : m_pool) {
      if (!t->active) continue;
      m_curl->multi_remove_handle(m_multi, t->easy);
      t->active = false;
      t->record.response_bytes = t->framer->bytes();
      fail_record(t->record, FailureClass::deadline, reason, now);
      if (m_on_finished) m_on_finished(t->record);
      result.records.push_back(std::move(t->record));
      m_free.push_back(t.get());
    }
    for (int64_t i = next; i < n; ++i) {
      RequestRecord r;
      r.index = i;
      r.t_sched_ns = r.t_send_ns = now;
      fail_record(r, FailureClass::deadline, reason + ", not sent", now);
      if (m_on_finished) m_on_finished(r);
      result.records.push_back(std::move(r));
    }
  }

  // Waits for socket activity, libcurl's timer, or wake_ns (-1: none); drives libcurl; leaves the
  // finished transfers in m_done.
  void poll_once(int64_t wake_ns) {
    m_done.clear();
    int64_t wait_ns = m_timer_ns < 0 ? 1'000'000'000 : std::max<int64_t>(0, m_timer_ns - m_clock.now_ns());
    if (wake_ns >= 0) wait_ns = std::min(wait_ns, std::max<int64_t>(0, wake_ns - m_clock.now_ns()));
    const int wait_ms = static_cast<int>((wait_ns + 999'999) / 1'000'000);
    const int ready = epoll_wait(m_epoll, m_events, k_max_events, wait_ms);
    int running = 0;
    for (int i = 0; i < ready; ++i) {
      int mask = 0;
      if (m_events[i].events & EPOLLIN) mask |= CURL_CSELECT_IN;
      if (m_events[i].events & EPOLLOUT) mask |= CURL_CSELECT_OUT;
      if (m_events[i].events & (EPOLLERR | EPOLLHUP)) mask |= CURL_CSELECT_ERR;
      m_curl->multi_socket_action(m_multi, m_events[i].data.fd, mask, &running);
    }
    if (m_timer_ns >= 0 && m_clock.now_ns() >= m_timer_ns) {
      m_timer_ns = -1;
      m_curl->multi_socket_action(m_multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    int left = 0;
    while (CURLMsg* msg = m_curl->multi_info_read(m_multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      Transfer* t = nullptr;
      m_curl->easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, reinterpret_cast<char**>(&t));
      const CURLcode code = msg->data.result;
      m_curl->multi_remove_handle(m_multi, msg->easy_handle);
      t->active = false;
      complete(*t, code);
      scrub_secrets(t->record);
      m_done.push_back(t);
    }
  }

  Transfer* acquire() {
    if (!m_free.empty()) {
      Transfer* t = m_free.back();
      m_free.pop_back();
      return t;
    }
    auto t = std::make_unique<Transfer>();
    t->clock = &m_clock;
    t->easy = m_curl->easy_init();
    t->headers = m_curl->slist_append(t->headers, "Content-Type: application/json");
    t->headers = m_curl->slist_append(t->headers, "Accept: text/event-stream");
    t->headers = m_curl->slist_append(t->headers, "Expect:");
    if (m_target.request.api_key) t->headers = m_curl->slist_append(t->headers, ("Authorization: Bearer " + *m_target.request.api_key).c_str());
    CURL* e = t->easy;
    m_curl->easy_setopt(e, CURLOPT_URL, m_url.c_str());
    m_curl->easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    m_curl->easy_setopt(e, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    m_curl->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    m_curl->easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    m_curl->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(m_limits.connect_timeout_ms));
    if (m_limits.request_timeout_ms > 0) m_curl->easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(m_limits.request_timeout_ms));
    m_curl->easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    m_curl->easy_setopt(e, CURLOPT_LOW_SPEED_TIME, static_cast<long>(m_limits.stall_timeout_s));
    m_curl->easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_write);
    m_curl->easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    m_curl->easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
    m_curl->easy_setopt(e, CURLOPT_HEADERDATA, t.get());
    m_curl->easy_setopt(e, CURLOPT_ERRORBUFFER, t->errbuf);
    m_curl->easy_setopt(e, CURLOPT_PREREQFUNCTION, &on_prereq);
    m_curl->easy_setopt(e, CURLOPT_PREREQDATA, t.get());
    m_curl->easy_setopt(e, CURLOPT_PRIVATE, t.get());
    m_pool.push_back(std::move(t));
    return m_pool.back().get();
  }

  void launch(const Prompt& prompt, int64_t index, int64_t t_sched_ns, int64_t output_tokens) {
    Transfer* t = acquire();
    t->record = RequestRecord{};
    t->record.index = index;
    t->record.t_sched_ns = t_sched_ns;
    t->record.requested_output_tokens = output_tokens;
    t->record.requested_input_tokens = prompt.input_tokens;
    t->record.token_event_ns.reserve(static_cast<size_t>(std::clamp<int64_t>(output_tokens + 8, 16, 1 << 16)));
    t->error_body.clear();
    t->errbuf[0] = '\0';
    t->status_seen = t->http_ok = false;
    Transfer* self = t;
    t->framer = std::make_unique<SseFramer>(
        [self](std::string_view data, int64_t t_ns) -> Status {
          auto chunk = parse_chunk(data);
          if (!chunk) return chunk.error();
          apply_chunk(self->record, *chunk, t_ns);
          if (chunk->is_final && self->record.t_done_ns < 0) self->record.t_done_ns = t_ns;  // TGI-style: no [DONE]
          return Ok{};
        },
        m_limits.sse);
    Prompt sized = prompt;
    sized.output_tokens = output_tokens;
    t->body = dump_json(m_target.request.api == Api::generate_stream ? build_generate_stream_body(m_target.request, sized)
                                                                     : build_request_body(m_target.request, sized));
    m_curl->easy_setopt(t->easy, CURLOPT_POSTFIELDS, t->body.c_str());
    m_curl->easy_setopt(t->easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(t->body.size()));
    t->record.t_send_ns = m_clock.now_ns();  // replaced in on_prereq when the request is written
    t->active = true;
    m_curl->multi_add_handle(m_multi, t->easy);
  }

  // Issue 19: a server may echo the request's credentials in its error text ("bad auth: Bearer sk-...", its own URL
  // with ?token=); the record's reason is printed, stored in the database and put in the HTML report, so the API key
  // and URL credentials leave it first.
  void scrub_secrets(RequestRecord& r) const {
    if (r.error.empty()) return;
    std::vector<std::string> secrets = url_credentials(m_target.url);
    if (const auto& key = m_target.request.api_key) secrets.push_back(*key);
    for (const auto& secret : secrets) {
      if (secret.empty()) continue;
      for (size_t p = r.error.find(secret); p != std::string::npos; p = r.error.find(secret, p + 3)) r.error.replace(p, secret.size(), "***");
    }
    r.error = redact_url_credentials(std::move(r.error));
  }

  void complete(Transfer& t, CURLcode code) {
    RequestRecord& r = t.record;
    const int64_t now = m_clock.now_ns();
    r.response_bytes = t.framer->bytes();
    long status = 0;
    m_curl->easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    if (status > 0) r.http_status = static_cast<int>(status);
    const std::string detail = redact_url_credentials(t.errbuf[0] ? std::string(t.errbuf) : std::string(m_curl->easy_strerror(code)));
    if (code == CURLE_OK) {
      if (!t.http_ok) {
        fail_record(r, FailureClass::http_status, http_error_reason(r.http_status, t.error_body), now);
        return;
      }
      auto st = t.framer->finish(now);
      if (!st) fail_record(r, framer_failure(*t.framer), st.error().message, now);
      finish_record(r, now);
      return;
    }
    if (r.failure != FailureClass::none) {  // we aborted it from a callback
      r.t_end_ns = now;
      return;
    }
    switch (code) {
      case CURLE_COULDNT_CONNECT:
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_RESOLVE_PROXY:
        fail_record(r, FailureClass::connect, "connect: " + detail, now);
        break;
      case CURLE_OPERATION_TIMEDOUT:
        if (r.t_first_byte_ns < 0 && detail.find("onnect") != std::string::npos) {
          fail_record(r, FailureClass::connect, "connect: " + detail, now);
        } else if (detail.find("too slow") != std::string::npos) {
          fail_record(r, FailureClass::stalled, format("stalled: no data for %lld s (%s)", static_cast<long long>(m_limits.stall_timeout_s), detail.c_str()), now);
        } else {
          fail_record(r, FailureClass::timeout, "timeout: " + detail, now);
        }
        break;
      default:
        if (!t.status_seen) {
          fail_record(r, FailureClass::truncated, "no response: " + detail, now);
        } else if (!t.http_ok) {
          fail_record(r, FailureClass::http_status, http_error_reason(r.http_status, t.error_body), now);
        } else {
          fail_record(r, FailureClass::truncated, format("stream truncated after %lld events: %s", static_cast<long long>(r.events), detail.c_str()), now);
        }
    }
  }

  static int on_socket(CURL*, curl_socket_t s, int what, void* user, void*) {
    auto* self = static_cast<Runner*>(user);
    epoll_event ev{};
    ev.data.fd = s;
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(self->m_epoll, EPOLL_CTL_DEL, s, &ev);
      return 0;
    }
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    if (epoll_ctl(self->m_epoll, EPOLL_CTL_MOD, s, &ev) != 0) epoll_ctl(self->m_epoll, EPOLL_CTL_ADD, s, &ev);
    return 0;
  }

  static int on_timer(CURLM*, long timeout_ms, void* user) {
    auto* self = static_cast<Runner*>(user);
    self->m_timer_ns = timeout_ms < 0 ? -1 : self->m_clock.now_ns() + static_cast<int64_t>(timeout_ms) * 1'000'000;
    return 0;
  }

  const RunTarget& m_target;
  const TransportLimits& m_limits;
  const Clock& m_clock;
  const FinishedFn& m_on_finished;
  std::string m_url;
  const CurlApi* m_curl = nullptr;  // set by init(); no libcurl handle exists before it
  CURLM* m_multi = nullptr;
  int m_epoll = -1;
  int64_t m_timer_ns = -1;
  std::deque<std::unique_ptr<Transfer>> m_pool;
  std::vector<Transfer*> m_free;
  std::vector<Transfer*> m_done;
  static constexpr int k_max_events = 512;
  epoll_event m_events[k_max_events];
};

}  // namespace

Expected<RunResult> run_load(const RunTarget& target, const std::vector<Prompt>& prompts, const LoadPlan& plan, const TransportLimits& limits,
                             const Clock& clock, const FinishedFn& on_finished) {
  if (prompts.empty()) return make_error(ErrorKind::invalid_argument, "no prompts to send");
  if (plan.num_prompts <= 0) return make_error(ErrorKind::invalid_argument, "--num-prompts must be positive");
  if (plan.mode == LoadMode::concurrency && plan.concurrency < 1) return make_error(ErrorKind::invalid_argument, "concurrency must be at least 1");
  if (plan.mode == LoadMode::request_rate && !(plan.request_rate > 0)) return make_error(ErrorKind::invalid_argument, "--request-rate must be positive");
  if (plan.mode == LoadMode::request_rate && !(plan.burstiness > 0)) return make_error(ErrorKind::invalid_argument, "--burstiness must be positive");
  PF_TRY(bounded, check_load_bounds(plan));
  (void)bounded;
  Runner runner(target, limits, clock, on_finished);
  PF_TRY(ready, runner.init());
  (void)ready;
  return runner.run(prompts, plan);
}

}  // namespace preflight::bench
