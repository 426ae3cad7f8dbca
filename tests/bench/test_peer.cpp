// The client against a real third-party OpenAI-compatible mock, the npm package @dwmkerr/mock-llm
// (tests/peer, installed with `npm ci` by scripts/test.sh), started on loopback. It streams a fixed
// 40-character answer in 4-character chunks every 20 ms, without usage, so N falls back to the
// event count; a second model name makes it send an error object inside the 200 stream.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bench/measurement.hpp"
#include "fake.hpp"

using namespace preflight::bench;

namespace {

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

const char* k_config = R"(streaming:
  chunkSize: 4
  chunkIntervalMs: 20
rules:
  - path: "/v1/chat/completions"
    method: "POST"
    match: "@"
    response:
      status: 200
      content: |
        {"id": "chatcmpl-1", "object": "chat.completion", "model": "{{jmes request body.model}}",
         "choices": [{"message": {"role": "assistant", "content": "abcdefghijklmnopqrstuvwxyz0123456789ABCD"}, "finish_reason": "stop"}]}
  - path: "/v1/chat/completions"
    method: "POST"
    match: "body.model == 'broken'"
    response:
      status: 500
      content: |
        {"error": {"message": "peer injected failure", "type": "server_error"}}
)";

}  // namespace

TEST(Peer, MockLlmStreamsAndFails) {
  const std::string main_js = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/peer/node_modules/@dwmkerr/mock-llm/dist/main.js";
  if (!std::filesystem::exists(main_js) || std::system("node --version >/dev/null 2>&1") != 0) {
    if (pftest::require_services()) FAIL() << "node or " << main_js << " missing (run npm ci in tests/peer)";
    GTEST_SKIP() << "node or tests/peer/node_modules missing (run npm ci in tests/peer); skipped";
  }
  const auto dir = pftest::scratch_dir("peer");
  std::ofstream(dir + "/mock-llm.yaml") << k_config;
  const int port = free_port();
  pftest::Service peer({"node", main_js, "--config", dir + "/mock-llm.yaml"}, {"PORT=" + std::to_string(port), "HOST=127.0.0.1"}, dir);
  ASSERT_FALSE(peer.wait_for_line("server running").empty()) << "mock-llm did not start";
  const std::string url = "http://127.0.0.1:" + std::to_string(port);

  auto live = pftest::run_against(url, "peer", pftest::fixed(4, 8), 10);
  auto s = compute_run_stats(live.result.records, {});
  EXPECT_EQ(s.succeeded, 8) << (s.failure_examples.empty() ? "" : s.failure_examples[0]);
  EXPECT_EQ(s.tokens_source, "events");          // mock-llm sends no usage
  EXPECT_EQ(s.output_tokens, 8 * 10);            // 40 characters in 4-character chunks
  EXPECT_EQ(s.finish_reasons["stop"], 8);
  // Node's setInterval(20 ms): first chunk after one interval, then one per interval.
  EXPECT_GT(s.ttft_ms.mean, 18);
  EXPECT_LT(s.ttft_ms.mean, 150);  // one interval plus Express start-up; not an accuracy check
  EXPECT_GT(s.tpot_ms.mean, 18);
  EXPECT_LT(s.tpot_ms.mean, 60);  // Node timers drift late under load, never early
  std::printf("[peer mock-llm] mean TTFT %.2f ms, mean TPOT %.2f ms (chunk interval 20 ms)\n", s.ttft_ms.mean, s.tpot_ms.mean);
  auto store = BenchStore::open(live.db_path);
  EXPECT_EQ(*store->request_count(live.run_id), 8);

  auto broken = pftest::run_against(url, "peer-broken", pftest::fixed(2, 2), 10, {}, Api::chat, "broken");
  auto b = compute_run_stats(broken.result.records, {});
  EXPECT_EQ(b.failed, 2);
  EXPECT_EQ(b.failures["stream_error"], 2);
  ASSERT_FALSE(b.failure_examples.empty());
  EXPECT_NE(b.failure_examples[0].find("peer injected failure"), std::string::npos) << b.failure_examples[0];
}
