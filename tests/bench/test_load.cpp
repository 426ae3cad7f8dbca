#include "bench/load.hpp"
#include "bench/runner.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "../test_support.hpp"

using namespace preflight::bench;

TEST(Load, ArrivalOffsetsSumToNOverRateAndFollowBurstiness) {
  const auto poisson = arrival_offsets_s(2000, 50, 1.0, 7);
  ASSERT_EQ(poisson.size(), 2000u);
  EXPECT_EQ(poisson[0], 0);
  // Gaps rescaled to sum to n / rate: the last send is at 40 s minus the final gap.
  std::vector<double> gaps;
  for (size_t i = 1; i < poisson.size(); ++i) gaps.push_back(poisson[i] - poisson[i - 1]);
  const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / static_cast<double>(gaps.size());
  EXPECT_NEAR(mean, 1.0 / 50, 0.002);
  double var = 0;
  for (double g : gaps) var += (g - mean) * (g - mean);
  const double cv_poisson = std::sqrt(var / static_cast<double>(gaps.size())) / mean;
  EXPECT_NEAR(cv_poisson, 1.0, 0.1);  // exponential gaps: coefficient of variation 1
  // Gamma shape 4: CV = 1/sqrt(4) = 0.5 (smoother); shape 0.25: CV = 2 (burstier).
  for (const auto& [shape, cv] : std::vector<std::pair<double, double>>{{4.0, 0.5}, {0.25, 2.0}}) {
    const auto o = arrival_offsets_s(4000, 50, shape, 11);
    std::vector<double> g;
    for (size_t i = 1; i < o.size(); ++i) g.push_back(o[i] - o[i - 1]);
    const double m = std::accumulate(g.begin(), g.end(), 0.0) / static_cast<double>(g.size());
    double v = 0;
    for (double x : g) v += (x - m) * (x - m);
    EXPECT_NEAR(std::sqrt(v / static_cast<double>(g.size())) / m, cv, cv * 0.15) << shape;
  }
  EXPECT_EQ(arrival_offsets_s(5, 10, 1, 1), arrival_offsets_s(5, 10, 1, 1));
  EXPECT_TRUE(arrival_offsets_s(5, 0, 1, 1).empty());
}

TEST(Load, RequestBodyAsksForUsageAndThinkingSwitch) {
  RequestOptions o;
  o.model = "m";
  o.eos = RequestOptions::Eos::ignore;
  o.thinking = RequestOptions::Thinking::off;
  const auto b = build_request_body(o, {"hi there", 2, 32});
  EXPECT_EQ(b["stream"], true);
  EXPECT_EQ(b["stream_options"]["include_usage"], true);
  EXPECT_EQ(b["max_tokens"], 32);
  EXPECT_EQ(b["ignore_eos"], true);
  EXPECT_EQ(b["chat_template_kwargs"]["enable_thinking"], false);
  EXPECT_EQ(b["messages"][0]["content"], "hi there");
  o.api = Api::completions;
  o.thinking = RequestOptions::Thinking::server_default;
  const auto c = build_request_body(o, {"hi", 1, 8});
  EXPECT_EQ(c["prompt"], "hi");
  EXPECT_FALSE(c.contains("messages"));
  EXPECT_FALSE(c.contains("chat_template_kwargs"));
}

TEST(Load, SyntheticPromptsHaveTheAskedWordCountAndDiffer) {
  const auto p = synthetic_prompts(3, 50, 20, 1);
  ASSERT_EQ(p.size(), 3u);
  for (const auto& x : p) {
    EXPECT_EQ(std::count(x.text.begin(), x.text.end(), ' '), 49);
    EXPECT_EQ(x.output_tokens, 20);
  }
  EXPECT_NE(p[0].text, p[1].text);
}

TEST(Load, DatasetFileErrorsNameFileAndLine) {
  const auto dir = pftest::scratch_dir("bench-dataset");
  const std::string good = dir + "/good.jsonl", bad = dir + "/bad.jsonl";
  std::ofstream(good) << R"({"prompt":"a b c","output_len":7})" << "\n\n" << R"({"prompt":"d"})" << "\n";
  std::ofstream(bad) << R"({"prompt":"a"})" << "\n" << R"({"prompt":5})" << "\n";
  auto ok = load_dataset(good, 16);
  ASSERT_TRUE(ok) << ok.error().describe();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].output_tokens, 7);
  EXPECT_EQ((*ok)[1].output_tokens, 16);
  auto e = load_dataset(bad, 16);
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().describe().find("bad.jsonl:2"), std::string::npos) << e.error().describe();
  EXPECT_FALSE(load_dataset(dir + "/missing.jsonl", 16));
}

// Issue 19 (hard31): a dataset line is preflight's own form (prompt, input_len, output_len), written by hand or by a
// script: a repeated key took the last value silently, so {"prompt": "long...", "prompt": "x"} sent "x". Refused by
// file, line and key.
TEST(Load, Issue19_DatasetLineWithARepeatedKeyIsRefused) {
  const auto dir = pftest::scratch_dir("bench-dataset-repeat");
  const std::string path = dir + "/twice.jsonl";
  std::ofstream(path) << R"({"prompt":"a"})" << "\n" << R"({"prompt":"a long prompt","output_len":7,"prompt":"x"})" << "\n";
  auto e = load_dataset(path, 16);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().message, path + ":2: prompt: key appears twice in one object");
}

// Issue 19: std::getline took a dataset line of any length and every prompt was kept: one 300 MB line took 1.7 GB
// and 51 s, then was sent. A line over 16 MiB is refused by file and line, a dataset over 1 GiB by its size (a sparse
// file here); lines longer than the reader's 64 KiB buffer, a line of exactly that length and a last line without a
// newline still read whole.
TEST(Load, Issue19_DatasetLineAndFileSizesAreBounded) {
  const std::string dir = pftest::scratch_dir("load-dataset-bounds");
  const std::string long_prompt(200'000, 'p'), exact(65'535 - 14, 'e');  // {"prompt": "..."} around `exact` is 65,535 bytes
  {
    std::ofstream f(dir + "/ok.jsonl");
    f << R"({"prompt": ")" << long_prompt << "\"}\n" << R"({"prompt": ")" << exact << "\"}\n\n" << R"({"prompt": "last", "output_len": 3})";
  }
  auto ok = load_dataset(dir + "/ok.jsonl", 16);
  ASSERT_TRUE(ok) << ok.error().message;
  ASSERT_EQ(ok->size(), 3u);
  EXPECT_EQ((*ok)[0].text, long_prompt);
  EXPECT_EQ((*ok)[1].text, exact);
  EXPECT_EQ((*ok)[2].text, "last");
  EXPECT_EQ((*ok)[2].output_tokens, 3);
  {
    std::ofstream f(dir + "/long.jsonl");
    f << R"({"prompt": "a"})" << "\n" << R"({"prompt": ")" << std::string((16u << 20) + 10, 'x') << "\"}\n";
  }
  auto long_line = load_dataset(dir + "/long.jsonl", 16);
  ASSERT_FALSE(long_line);
  EXPECT_EQ(long_line.error().kind, preflight::ErrorKind::invalid_argument);
  EXPECT_EQ(long_line.error().message, dir + "/long.jsonl:2: a line longer than the 16777216 bytes accepted for one prompt");
  {
    std::ofstream f(dir + "/huge.jsonl");
  }
  std::filesystem::resize_file(dir + "/huge.jsonl", (1ull << 30) + 1);
  auto huge = load_dataset(dir + "/huge.jsonl", 16);
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().message, dir + "/huge.jsonl: a dataset of 1073741825 bytes, more than the 1073741824 accepted");
  std::filesystem::remove_all(dir);
}

TEST(Load, EndpointUrl) {
  EXPECT_EQ(endpoint_url("http://h:1", Api::chat), "http://h:1/v1/chat/completions");
  EXPECT_EQ(endpoint_url("http://h:1/v1/", Api::completions), "http://h:1/v1/completions");
  EXPECT_EQ(endpoint_url("http://h:1/v1/chat/completions", Api::chat), "http://h:1/v1/chat/completions");
}
