// bench against MindIE Service (issue 18): its TGI-style /generate_stream (no [DONE]; the last event's details
// carry generated_tokens and MindIE's prompt_tokens) and the differences of its vLLM-compatible chat stream
// (an empty role chunk first, role in every delta, usage with prefill_time / decode_time_arr in the finishing
// chunk). Payloads follow MindIE LLM's service_APIs_usage_guidance.md and its TGI 0.9.4-compatible API pages
// (docs/mindie.md); the live tests run the fake server's --mindie mode on loopback.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/runner.hpp"
#include "bench/sse_parser.hpp"
#include "fake.hpp"

using namespace preflight;
using namespace preflight::bench;

TEST(MindieBench, Issue18_ParsesGenerateStreamTokenAndFinalEvents) {
  auto token = parse_chunk(R"({"token":{"id":5,"text":"ab","logprob":null,"special":null},"generated_text":null,"details":null})");
  ASSERT_TRUE(token.has_value());
  EXPECT_EQ(token->content_chars, 2);
  EXPECT_EQ(token->choices, 1);
  EXPECT_FALSE(token->is_final);
  EXPECT_FALSE(token->has_usage);

  auto last = parse_chunk(
      R"({"token":{"id":6,"text":"c","logprob":null,"special":null},"generated_text":"abc","details":{"finish_reason":"length","generated_tokens":2,)"
      R"("prefill":[{"id":0,"logprob":null,"special":null,"text":"test"}],"prompt_tokens":74,"seed":42,"tokens":[{"id":0,"text":"t"}]}})");
  ASSERT_TRUE(last.has_value()) << last.error().describe();
  EXPECT_TRUE(last->is_final);
  EXPECT_EQ(last->content_chars, 1);
  EXPECT_TRUE(last->has_usage);
  EXPECT_EQ(last->completion_tokens, 2);
  EXPECT_EQ(last->prompt_tokens, 74);
  EXPECT_EQ(last->finish_reason, "length");

  // MindIE's chat chunk: usage (with its own timing keys) in the chunk that finishes.
  auto chat = parse_chunk(
      R"({"id":"endpoint_common_8","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"x"},)"
      R"("finish_reason":"length"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prefill_time":50.1,"decode_time_arr":[10.2,11]}})");
  ASSERT_TRUE(chat.has_value());
  EXPECT_EQ(chat->content_chars, 1);
  EXPECT_EQ(chat->prompt_tokens, 10);
  EXPECT_EQ(chat->completion_tokens, 5);
  EXPECT_EQ(chat->finish_reason, "length");
  EXPECT_FALSE(chat->is_final);
}

TEST(MindieBench, Issue18_GenerateStreamUrlAndBody) {
  EXPECT_EQ(endpoint_url("http://h:1025", Api::generate_stream), "http://h:1025/generate_stream");
  EXPECT_EQ(endpoint_url("http://h:1025/v1/", Api::generate_stream), "http://h:1025/generate_stream");
  EXPECT_EQ(endpoint_url("http://h:1025/generate_stream", Api::generate_stream), "http://h:1025/generate_stream");
  RequestOptions o;
  o.model = "m";
  const Json body = build_generate_stream_body(o, {"hello", 4, 32});
  EXPECT_EQ(body["inputs"], "hello");
  EXPECT_EQ(body["parameters"]["max_new_tokens"], 32);
  EXPECT_EQ(body["parameters"]["details"], true);
  EXPECT_EQ(body["stream"], true);
  EXPECT_FALSE(body.contains("messages"));
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

// TTFT 150 ms and 30 ms between tokens injected by the fake. Without the final-event rule every request would
// fail as missing_done (no [DONE] in TGI framing); without the details reader completion_tokens would be unknown.
TEST(MindieBench, Issue18_GenerateStreamMeasuredAgainstFake) {
  auto fake = pftest::start_fake({"--mindie", "--ttft-ms", "150", "--itl-ms", "30"});
  ASSERT_FALSE(fake.url.empty());
  auto live = pftest::run_against(fake.url, "mindie-generate-stream", pftest::fixed(2, 6), 8, {}, Api::generate_stream);
  ASSERT_EQ(live.result.records.size(), 6u);
  std::vector<double> ttft, itl;
  for (const auto& r : live.result.records) {
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.completion_tokens, 8);
    EXPECT_GT(r.prompt_tokens, 0);
    EXPECT_EQ(r.token_events, 8);
    EXPECT_EQ(r.finish_reason, "length");
    ttft.push_back(*r.ttft_ms());
    itl.push_back(*r.tpot_ms());
  }
  EXPECT_NEAR(median(ttft), 150.0, 40.0);
  EXPECT_NEAR(median(itl), 30.0, 8.0);
}

// MindIE's chat stream opens with an empty-content role chunk at once: TTFT must be the first content (~150 ms),
// not that chunk (~0 ms); usage arrives with finish_reason rather than in a separate chunk.
TEST(MindieBench, Issue18_ChatStreamDifferencesHandled) {
  auto fake = pftest::start_fake({"--mindie", "--ttft-ms", "150", "--itl-ms", "30"});
  ASSERT_FALSE(fake.url.empty());
  auto live = pftest::run_against(fake.url, "mindie-chat", pftest::fixed(2, 4), 6, {}, Api::chat);
  ASSERT_EQ(live.result.records.size(), 4u);
  for (const auto& r : live.result.records) {
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.completion_tokens, 6);
    EXPECT_EQ(r.token_events, 6);
    EXPECT_GT(*r.ttft_ms(), 110.0);
  }
}

TEST(MindieBench, Issue18_CliEndpointGenerateStream) {
  auto fake = pftest::start_fake({"--mindie", "--ttft-ms", "20", "--itl-ms", "5"});
  ASSERT_FALSE(fake.url.empty());
  const std::string db = pftest::scratch_dir("mindie-cli-bench") + "/bench.db";
  auto b = pftest::run_cli("bench --url " + fake.url + " --model m --endpoint generate_stream --num-prompts 3 --input-len 4 --output-len 5 --warmup 0 --db " + db);
  EXPECT_EQ(b.code, 0) << b.out;
  EXPECT_NE(b.out.find("generate_stream"), std::string::npos) << b.out;
}
