// fake_openai_server: a loopback OpenAI-compatible streaming server for the bench tests. It plays
// scripted SSE with exact, injected timings: the headers go out as soon as a request is read,
// token k (0-based) at t_request + ttft + k * itl on an absolute schedule (no drift), then the
// finish, usage and [DONE] chunks. Faults are injected on every K-th request. One thread, epoll,
// one timerfd; thousands of concurrent streams.
//
// usage: fake_openai_server [--port P] [--ttft-ms 200] [--itl-ms 20] [--tokens N (default: max_tokens)]
//        [--report-lateness: prints "LATE <request> <first-token ns late> <last-token ns late>" per finished stream]
//                           [--fault none|http500|http429|malformed|huge_line|endless_event|escape_error|stream_error|no_done|stall|truncate|echo_auth|usage_1e300]
//                           [--fault-every K] [--no-usage] [--reasoning N] [--role-prelude]
// --mindie: MindIE Service's formats (MindIE LLM service_APIs_usage_guidance.md and the TGI 0.9.4-compatible
// /generate_stream page): POST /generate_stream streams "data:{"token":{...},"generated_text":null,"details":null}"
// events and a last event with generated_text and details {finish_reason, generated_tokens, prompt_tokens}, with
// no [DONE]; /v1/chat/completions sends an empty-content role chunk first, "role" in every delta, and the usage
// (with MindIE's prefill_time and decode_time_arr) in the chunk that carries finish_reason.
// Prints "PORT <n>" on stdout once listening.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

struct Options {
  int port = 0;
  double ttft_ms = 200, itl_ms = 20;
  long tokens = -1;
  std::string fault = "none";
  long fault_every = 1;
  bool usage = true;
  long reasoning = 0;
  bool role_prelude = false;
  bool mindie = false;
  bool report_lateness = false;
};

int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Stream {
  bool active = false;
  long total = 0;        // tokens to send
  long next = 0;         // next token index
  int64_t t0_ns = 0;
  std::string fault = "none";
  std::string model;
  bool chat = true;
  bool tgi = false;  // --mindie /generate_stream
  long prompt_tokens = 0;
  uint64_t id = 0;
  int64_t first_late_ns = 0;  // how late this server wrote token 0 against its own schedule
};

struct Conn {
  int fd = -1;
  std::string in;
  std::string out;
  size_t out_off = 0;
  Stream stream;
  bool close_after_flush = false;
  uint64_t generation = 0;
};

struct Due {
  int64_t t_ns;
  int fd;
  uint64_t generation;
  bool operator>(const Due& o) const { return t_ns > o.t_ns; }
};

Options g_opt;
int g_epoll = -1, g_timer = -1;
std::map<int, std::unique_ptr<Conn>> g_conns;
std::priority_queue<Due, std::vector<Due>, std::greater<Due>> g_due;
uint64_t g_requests = 0;
uint64_t g_generation = 0;

void arm_timer() {
  itimerspec its{};
  if (!g_due.empty()) {
    const int64_t t = std::max<int64_t>(g_due.top().t_ns, 1);
    its.it_value.tv_sec = t / 1'000'000'000;
    its.it_value.tv_nsec = t % 1'000'000'000;
  }
  timerfd_settime(g_timer, TFD_TIMER_ABSTIME, &its, nullptr);
}

void close_conn(int fd) {
  epoll_ctl(g_epoll, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  g_conns.erase(fd);
}

void flush(Conn& c) {
  while (c.out_off < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_off += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    close_conn(c.fd);
    return;
  }
  if (c.out_off == c.out.size()) {
    c.out.clear();
    c.out_off = 0;
    if (c.close_after_flush) {
      close_conn(c.fd);
      return;
    }
  }
  epoll_event ev{};
  ev.data.fd = c.fd;
  ev.events = EPOLLIN | (c.out.empty() ? 0u : EPOLLOUT);
  epoll_ctl(g_epoll, EPOLL_CTL_MOD, c.fd, &ev);
}

void chunk(Conn& c, const std::string& payload) {
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", payload.size());
  c.out += size;
  c.out += payload;
  c.out += "\r\n";
}

void event(Conn& c, const std::string& data) { chunk(c, "data: " + data + "\n\n"); }

std::string token_chunk(const Stream& s, long k, bool last) {
  nlohmann::json j = {{"id", "cmpl-" + std::to_string(s.id)}, {"created", 0}, {"model", s.model}};
  nlohmann::json choice = {{"index", 0}, {"finish_reason", last ? nlohmann::json("length") : nlohmann::json()}};
  const std::string text = "t" + std::to_string(k) + " ";
  if (s.chat) {
    j["object"] = "chat.completion.chunk";
    choice["delta"] = k < g_opt.reasoning ? nlohmann::json{{"reasoning_content", text}} : nlohmann::json{{"content", text}};
  } else {
    j["object"] = "text_completion";
    choice["text"] = text;
  }
  j["choices"] = nlohmann::json::array({choice});
  return j.dump();
}

void end_response(Conn& c) { c.out += "0\r\n\r\n"; }

// MindIE /generate_stream (TGI framing, "data:" without a space); the last token's event is the final one.
std::string tgi_event(const Stream& s, long k, bool last) {
  const std::string text = "t" + std::to_string(k) + " ";
  nlohmann::json j = {{"token", {{"id", k}, {"text", text}, {"logprob", nullptr}, {"special", nullptr}}}, {"generated_text", nullptr}, {"details", nullptr}};
  if (last) {
    std::string all;
    for (long i = 0; i < s.total; ++i) all += "t" + std::to_string(i) + " ";
    j["generated_text"] = all;
    j["details"] = {{"finish_reason", "length"}, {"generated_tokens", s.total}, {"prompt_tokens", s.prompt_tokens}, {"seed", 0}};
  }
  return "data:" + j.dump() + "\n\n";
}

// MindIE's vLLM-compatible chat chunk: role in every delta; the last chunk carries usage with MindIE's timings.
std::string mindie_chat_chunk(const Stream& s, long k, bool last) {
  nlohmann::json j = nlohmann::json::parse(token_chunk(s, k, last));
  j["choices"][0]["delta"]["role"] = "assistant";
  if (last && g_opt.usage)
    j["usage"] = {{"prompt_tokens", s.prompt_tokens}, {"completion_tokens", s.total}, {"total_tokens", s.prompt_tokens + s.total},
                  {"prefill_time", g_opt.ttft_ms}, {"decode_time_arr", nlohmann::json::array()}};
  return j.dump();
}

void simple_response(Conn& c, int status, const char* reason, const std::string& body) {
  c.out += "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
}

// Emits what is due for this stream now and schedules the next token.
void step(Conn& c) {
  Stream& s = c.stream;
  if (!s.active) return;
  const long k = s.next;
  if (s.fault == "stall" && k == 3) return;  // keeps the connection open, sends nothing more
  if (s.fault == "truncate" && k == 3) {
    s.active = false;
    c.close_after_flush = true;
    flush(c);
    return;
  }
  if (s.fault == "endless_event" && k >= 1) {
    // 1 KiB data lines with no blank line, so the event never ends; refilled while the client reads.
    if (c.out.size() < (1u << 20)) {
      std::string lines;
      for (int i = 0; i < 64; ++i) lines += "data: " + std::string(1024, 'e') + "\n";
      chunk(c, lines);
    }
    g_due.push({now_ns() + 1'000'000, c.fd, c.generation});
    flush(c);
    return;
  }
  if (s.fault == "malformed" && k == 2) event(c, R"({"choices":[{"index":0,"delta":{"content":"x"})");
  if (s.fault == "huge_line" && k == 1) event(c, "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + std::string(1 << 20, 'x') + "\"}}]}");
  if (s.fault == "stream_error" && k == 3) {
    event(c, R"({"error":{"message":"injected error inside a 200 stream","type":"internal_error","code":500}})");
    event(c, "[DONE]");
    end_response(c);
    s.active = false;
    flush(c);
    return;
  }
  const bool last = k == s.total - 1;
  // Lateness against the server's own schedule: on a loaded machine the single thread writes a burst of
  // first tokens late. The accuracy test adds it to the injected truth, since the client measures it rightly.
  const int64_t late_ns = now_ns() - (s.t0_ns + static_cast<int64_t>((g_opt.ttft_ms + g_opt.itl_ms * static_cast<double>(k)) * 1e6));
  if (k == 0) s.first_late_ns = late_ns;
  if (last && g_opt.report_lateness) {
    std::printf("LATE %llu %lld %lld\n", static_cast<unsigned long long>(s.id), static_cast<long long>(s.first_late_ns), static_cast<long long>(late_ns));
    std::fflush(stdout);
  }
  if (s.tgi) chunk(c, tgi_event(s, k, last));
  else event(c, g_opt.mindie && s.chat ? mindie_chat_chunk(s, k, last) : token_chunk(s, k, last));
  s.next = k + 1;
  if (last && s.tgi) {
    end_response(c);
    s.active = false;
  } else if (last && g_opt.mindie && s.chat) {
    event(c, "[DONE]");
    end_response(c);
    s.active = false;
  } else if (last) {
    if (g_opt.usage) {
      nlohmann::json u = {{"id", "cmpl-" + std::to_string(s.id)},
                          {"object", s.chat ? "chat.completion.chunk" : "text_completion"},
                          {"model", s.model},
                          {"choices", nlohmann::json::array()},
                          {"usage", {{"prompt_tokens", s.prompt_tokens}, {"completion_tokens", s.total}, {"total_tokens", s.prompt_tokens + s.total}}}};
      if (s.fault == "usage_1e300") u["usage"]["completion_tokens"] = 1e300;  // a lying server: no int64_t holds it
      event(c, u.dump());
    }
    if (s.fault != "no_done") event(c, "[DONE]");
    end_response(c);
    s.active = false;
  } else {
    g_due.push({s.t0_ns + static_cast<int64_t>((g_opt.ttft_ms + g_opt.itl_ms * static_cast<double>(s.next)) * 1e6), c.fd, c.generation});
  }
  flush(c);
}

void handle_request(Conn& c, const std::string& head, const std::string& body) {
  const int64_t t0 = now_ns();
  const uint64_t number = g_requests++;
  const bool faulted = g_opt.fault != "none" && g_opt.fault_every > 0 && (number + 1) % static_cast<uint64_t>(g_opt.fault_every) == 0;
  const std::string fault = faulted ? g_opt.fault : "none";
  if (head.rfind("GET /v1/models", 0) == 0) {
    simple_response(c, 200, "OK", R"({"object":"list","data":[{"id":"fake-model","object":"model","owned_by":"preflight-tests","max_model_len":4096}]})");
    flush(c);
    return;
  }
  if (head.rfind("GET /health", 0) == 0) {
    simple_response(c, 200, "OK", "{}");
    flush(c);
    return;
  }
  if (fault == "echo_auth") {  // a hostile or careless server: its 401 quotes the request line and the Authorization header
    const size_t line_end = head.find("\r\n");
    const size_t auth = head.find("Authorization: ");
    const std::string auth_value = auth == std::string::npos ? std::string("(none)") : head.substr(auth + 15, head.find("\r\n", auth) - auth - 15);
    const nlohmann::json e = {{"error", {{"message", "bad credentials " + auth_value + " for " + head.substr(0, line_end)}}}};
    simple_response(c, 401, "Unauthorized", e.dump());
    flush(c);
    return;
  }
  const bool chat = head.rfind("POST /v1/chat/completions", 0) == 0;
  const bool tgi = g_opt.mindie && head.rfind("POST /generate_stream", 0) == 0;
  if (!chat && !tgi && head.rfind("POST /v1/completions", 0) != 0) {
    simple_response(c, 404, "Not Found", R"({"error":{"message":"no such route"}})");
    flush(c);
    return;
  }
  if (fault == "escape_error") {
    simple_response(c, 500, "Internal Server Error", R"({"error":{"message":"bad \u001b[2J\u001b]0;owned\u0007input\u001b[31m here"}})");
    flush(c);
    return;
  }
  if (fault == "http500" || fault == "http429") {
    const bool r500 = fault == "http500";
    simple_response(c, r500 ? 500 : 429, r500 ? "Internal Server Error" : "Too Many Requests",
                    r500 ? R"({"error":{"message":"injected internal error","type":"server_error"}})" : R"({"error":{"message":"injected rate limit","type":"rate_limit"}})");
    flush(c);
    return;
  }
  const auto j = nlohmann::json::parse(body, nullptr, false);
  Stream& s = c.stream;
  s = Stream{};
  s.active = true;
  s.chat = chat;
  s.tgi = tgi;
  s.t0_ns = t0;
  s.fault = fault;
  s.id = number;
  s.model = j.is_object() && j.contains("model") && j["model"].is_string() ? j["model"].get<std::string>() : "fake-model";
  s.total = g_opt.tokens > 0 ? g_opt.tokens : (j.is_object() && j.contains("max_tokens") && j["max_tokens"].is_number_integer() ? j["max_tokens"].get<long>() : 16);
  if (tgi && g_opt.tokens <= 0) {
    const bool has = j.is_object() && j.contains("parameters") && j["parameters"].is_object() && j["parameters"].contains("max_new_tokens") &&
                     j["parameters"]["max_new_tokens"].is_number_integer();
    s.total = has ? j["parameters"]["max_new_tokens"].get<long>() : 20;  // TGI 0.9.4 default max_new_tokens 20
  }
  if (s.total < 1) s.total = 1;
  const std::string prompt = j.is_object() && j.contains("inputs") && j["inputs"].is_string()   ? j["inputs"].get<std::string>()
                             : j.is_object() && j.contains("prompt") && j["prompt"].is_string() ? j["prompt"].get<std::string>()
                             : j.is_object() && j.contains("messages") ? j["messages"].dump()
                                                                       : "";
  s.prompt_tokens = 1;
  for (char ch : prompt) s.prompt_tokens += ch == ' ';
  c.generation = ++g_generation;
  c.out += "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
  if ((g_opt.role_prelude || g_opt.mindie) && chat) {
    event(c, R"({"id":"cmpl-)" + std::to_string(number) + R"(","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})");
  }
  g_due.push({t0 + static_cast<int64_t>(g_opt.ttft_ms * 1e6), c.fd, c.generation});
  flush(c);
}

void on_readable(Conn& c) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      c.in.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    close_conn(c.fd);
    return;
  }
  for (;;) {
    const size_t end = c.in.find("\r\n\r\n");
    if (end == std::string::npos) return;
    const std::string head = c.in.substr(0, end);
    size_t length = 0;
    for (const char* key : {"\r\nContent-Length:", "\r\ncontent-length:"}) {
      const size_t p = head.find(key);
      if (p != std::string::npos) length = std::strtoul(head.c_str() + p + std::strlen(key), nullptr, 10);
    }
    if (c.in.size() < end + 4 + length) return;
    const std::string body = c.in.substr(end + 4, length);
    c.in.erase(0, end + 4 + length);
    const int fd = c.fd;
    handle_request(c, head, body);
    if (!g_conns.count(fd)) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fake_openai_server: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--port") g_opt.port = std::atoi(value().c_str());
    else if (a == "--ttft-ms") g_opt.ttft_ms = std::atof(value().c_str());
    else if (a == "--itl-ms") g_opt.itl_ms = std::atof(value().c_str());
    else if (a == "--tokens") g_opt.tokens = std::atol(value().c_str());
    else if (a == "--fault") g_opt.fault = value();
    else if (a == "--fault-every") g_opt.fault_every = std::atol(value().c_str());
    else if (a == "--no-usage") g_opt.usage = false;
    else if (a == "--reasoning") g_opt.reasoning = std::atol(value().c_str());
    else if (a == "--role-prelude") g_opt.role_prelude = true;
    else if (a == "--mindie") g_opt.mindie = true;
    else if (a == "--report-lateness") g_opt.report_lateness = true;
    else {
      std::fprintf(stderr, "fake_openai_server: unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  const int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(g_opt.port));
  if (::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(lfd, 4096) != 0) {
    std::perror("fake_openai_server: bind/listen");
    return 1;
  }
  socklen_t len = sizeof addr;
  getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
  g_epoll = epoll_create1(EPOLL_CLOEXEC);
  g_timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = lfd;
  epoll_ctl(g_epoll, EPOLL_CTL_ADD, lfd, &ev);
  ev.data.fd = g_timer;
  epoll_ctl(g_epoll, EPOLL_CTL_ADD, g_timer, &ev);
  std::printf("PORT %d\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  epoll_event events[512];
  for (;;) {
    const int n = epoll_wait(g_epoll, events, 512, -1);
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == lfd) {
        for (;;) {
          const int cfd = ::accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (cfd < 0) break;
          setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          auto c = std::make_unique<Conn>();
          c->fd = cfd;
          g_conns[cfd] = std::move(c);
          epoll_event cev{};
          cev.events = EPOLLIN;
          cev.data.fd = cfd;
          epoll_ctl(g_epoll, EPOLL_CTL_ADD, cfd, &cev);
        }
      } else if (fd == g_timer) {
        uint64_t expirations = 0;
        (void)!::read(g_timer, &expirations, sizeof expirations);
      } else {
        auto it = g_conns.find(fd);
        if (it == g_conns.end()) continue;
        if (events[i].events & (EPOLLERR | EPOLLHUP)) {
          close_conn(fd);
          continue;
        }
        if (events[i].events & EPOLLOUT) flush(*it->second);
        it = g_conns.find(fd);
        if (it != g_conns.end() && (events[i].events & EPOLLIN)) on_readable(*it->second);
      }
    }
    const int64_t now = now_ns();
    while (!g_due.empty() && g_due.top().t_ns <= now) {
      const Due d = g_due.top();
      g_due.pop();
      auto it = g_conns.find(d.fd);
      if (it != g_conns.end() && it->second->generation == d.generation) step(*it->second);
    }
    arm_timer();
  }
}
