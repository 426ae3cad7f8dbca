// `preflight bench`, `calibrate` and `report` run as the real binary against the fake server.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "base/json_util.hpp"
#include "fake.hpp"

namespace {

struct Result {
  int exit_code = -1;
  std::string out;
};

Result run(const std::string& args, const std::string& env = {}) {
  Result r;
  FILE* p = popen((env + std::string(PREFLIGHT_BINARY) + " " + args + " 2>/dev/null").c_str(), "r");
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

TEST(CliBench, BenchCalibrateReportEndToEnd) {
  auto fake = pftest::start_fake({"--ttft-ms", "30", "--itl-ms", "4"});
  const auto dir = pftest::scratch_dir("cli-bench");
  const std::string db = dir + "/bench.db", pred = dir + "/pred.json", html = dir + "/r.html";
  std::ofstream(pred) << R"({"decode_tok_s_single": 200, "ttft_ms": 25, "throughput_tok_s": {"1": 200, "2": 400}})";
  auto b = run("bench --url " + fake.url + " --model m --concurrency 1,2 --num-prompts 6 --input-len 8 --output-len 8 --ignore-eos --db " + db +
               " --prediction " + pred + " --device H100 --engine vllm --json");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  auto j = preflight::parse_json(b.out, "stdout");
  ASSERT_TRUE(j);
  EXPECT_EQ((*j)["command"], "bench");
  EXPECT_TRUE(j->contains("schema_version"));
  ASSERT_EQ((*j)["levels"].size(), 2u);
  EXPECT_EQ((*j)["levels"][0]["stats"]["succeeded"], 6);
  EXPECT_EQ((*j)["levels"][0]["stats"]["output_tokens"], 48);
  EXPECT_EQ((*j)["levels"][0]["comparison"].size(), 3u);
  EXPECT_EQ((*j)["levels"][1]["comparison"].size(), 1u);
  auto store = preflight::bench::BenchStore::open(db);
  ASSERT_TRUE(store);
  EXPECT_EQ(store->runs()->size(), 2u);
  EXPECT_EQ(*store->request_count((*j)["levels"][0]["run_id"].get<int64_t>()), 6);  // warm-up requests are not stored

  auto c = run("calibrate --db " + db + " --json");
  ASSERT_EQ(c.exit_code, 0) << c.out;
  auto cj = preflight::parse_json(c.out, "stdout");
  ASSERT_TRUE(cj);
  ASSERT_EQ((*cj)["fits"].size(), 1u);
  EXPECT_EQ((*cj)["fits"][0]["engine"], "vllm");
  EXPECT_EQ((*cj)["fits"][0]["pairs"], 4);
  EXPECT_LE((*cj)["fits"][0]["median_abs_error_after_pct"].get<double>(), (*cj)["fits"][0]["median_abs_error_before_pct"].get<double>());

  // --save stores the factor as H100's own speed profile in the user's overlay; fit then uses it.
  const std::string overlay = dir + "/speed.json";
  auto saved = run("calibrate --db " + db + " --save --json", "PREFLIGHT_SPEED_OVERRIDES=" + overlay + " ");
  ASSERT_EQ(saved.exit_code, 0) << saved.out;
  auto overlay_json = preflight::load_json_file(overlay);
  ASSERT_TRUE(overlay_json) << overlay_json.error().describe();
  ASSERT_EQ((*overlay_json)["profiles"].size(), 1u);
  EXPECT_EQ((*overlay_json)["profiles"][0]["device"], "H100-SXM");
  EXPECT_NE((*overlay_json)["profiles"][0]["evidence"].get<std::string>().find("preflight calibrate"), std::string::npos);
  auto fit = run("fit Qwen/Qwen3-8B --device H100 --json", "PREFLIGHT_SPEED_OVERRIDES=" + overlay + " ");
  EXPECT_NE(fit.out.find("calibrated on H100-SXM"), std::string::npos);

  auto r = run("report --from-db " + db + " --html " + html);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("id=\"latency-chart\""), std::string::npos);
  EXPECT_NE(page.find("id=\"comparison-chart\""), std::string::npos);
}

TEST(CliBench, FailuresGiveExitOneAndUsageErrorsExitTwo) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "1", "--fault", "http429", "--fault-every", "2"});
  auto b = run("bench --url " + fake.url + " --model m --concurrency 2 --num-prompts 6 --output-len 4 --warmup 0");
  EXPECT_EQ(b.exit_code, 1) << b.out;
  EXPECT_NE(b.out.find("http 429: injected rate limit"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("3/3"), std::string::npos) << b.out;
  for (const std::string& bad : {"bench --url http://x", "bench --url http://x --model m --endpoint foo", "bench --url http://x --model m --concurrency 0",
                                 "bench --url http://x --model m --concurrency 2 --request-rate 3", "bench --url http://x --model m --api-key-env PF_UNSET_VAR",
                                 "bench --url http://x --model m --prediction /no/such.json", "report --html /tmp/x.html --from-db /no/such.db",
                                 "calibrate --db /no/such.db"}) {
    EXPECT_EQ(run(bad).exit_code, 2) << bad;
  }
}
