// `preflight bench`, `calibrate` and `report` run as the real binary against the fake server.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

// Issue 19 item 6: these used to end in an uncaught std::bad_alloc (exit 134) or run for minutes
// building prompt text. Each is a usage error naming the flag and its bound, before any request.
TEST(CliBench, Issue19_HugeLoadFlagsAreUsageErrors) {
  struct Case {
    std::string flags;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"--num-prompts 1000000000000", "--num-prompts must be between 1 and 1000000, found 1000000000000"},
      {"--input-len 1000000000000", "--input-len must be between 1 and 1048576, found 1000000000000"},
      {"--input-len 1e12", "--input-len: expected an integer, got '1e12'"},
      {"--output-len 99999999999", "--output-len must be between 1 and 1048576"},
      {"--concurrency 100000000000", "--concurrency must be between 1 and 65536, found 100000000000"},
      {"--concurrency 1e11", "--concurrency: expected positive integers"},
      {"--concurrency 99999999999999999999", "--concurrency: expected positive integers"},
      {"--num-prompts 1000000 --input-len 1000", "1000000 prompts x --input-len 1000 exceeds 100000000 tokens"},
      {"--concurrency 65536 --input-len 1048576", "262144 prompts x --input-len 1048576 exceeds"},
      {"--request-rate 1e-300", "--request-rate must be between 0.001 and 1e+06"},
      {"--max-concurrency 100000000000 --request-rate 1", "--max-concurrency must be between 1 and 65536"},
      {"--warmup 100000000000", "--warmup must be between 0 and 65536"},
      {"--timeout 1e300", "--timeout must be at most 604800 s"},
      {"--stall-timeout 1e300", "--stall-timeout must be at most 604800 s"},
  };
  for (const auto& c : cases) {
    auto r = pftest::run_cli("bench --url http://127.0.0.1:9 --model m " + c.flags);
    EXPECT_EQ(r.code, 2) << c.flags << "\n" << r.out;
    EXPECT_NE(r.out.find(c.fragment), std::string::npos) << c.flags << "\n" << r.out;
    EXPECT_EQ(r.out.find("terminate called"), std::string::npos) << c.flags;
  }
}

namespace {
std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace

// Issue 19 item 7: `bench --url http://user:pw@host` printed the password, stored it twice in
// SQLite (runs.url and the config JSON) and put it in the HTML report. The request still carries
// the credentials; everything shown or stored has "***" in their place.
TEST(CliBench, Issue19_UrlPasswordIsNotPrintedStoredOrReported) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "1"});
  ASSERT_EQ(fake.url.rfind("http://", 0), 0u) << fake.url;
  const std::string secret = "pw-7Hq2Lm";
  const std::string url = "http://bob:" + secret + "@" + fake.url.substr(7);
  const auto dir = pftest::scratch_dir("cli-bench-userinfo");
  const std::string db = dir + "/bench.db", html = dir + "/r.html";
  for (const std::string& extra : {std::string(), std::string(" --json")}) {
    auto b = pftest::run_cli("bench --url " + url + " --model m --num-prompts 2 --input-len 4 --output-len 4 --warmup 0 --db " + db + extra);
    ASSERT_EQ(b.code, 0) << b.out;
    EXPECT_EQ(b.out.find(secret), std::string::npos) << b.out;
    EXPECT_NE(b.out.find("http://***@" + fake.url.substr(7)), std::string::npos) << b.out;
  }
  auto store = preflight::bench::BenchStore::open(db);
  ASSERT_TRUE(store);
  auto runs = store->runs();
  ASSERT_TRUE(runs);
  ASSERT_EQ(runs->size(), 2u);
  for (const auto& r : *runs) {
    EXPECT_EQ(r.info.url, "http://***@" + fake.url.substr(7));
    EXPECT_EQ(r.info.config["url"], "http://***@" + fake.url.substr(7));
  }
  EXPECT_EQ(file_bytes(db).find(secret), std::string::npos);
  auto rep = pftest::run_cli("report --from-db " + db + " --html " + html);
  ASSERT_EQ(rep.code, 0) << rep.out;
  EXPECT_EQ(rep.out.find(secret), std::string::npos) << rep.out;
  const std::string page = file_bytes(html);
  EXPECT_NE(page.find("http://***@"), std::string::npos);
  EXPECT_EQ(page.find(secret), std::string::npos);
  // A CR/LF in the API key would inject a header: refused as a usage error.
  auto crlf = pftest::run_cli("bench --url " + fake.url + " --model m --api-key-env PF_CRLF_KEY", {"PF_CRLF_KEY=\"$(printf 'k\\r\\nX-Injected: 1')\""});
  EXPECT_EQ(crlf.code, 2) << crlf.out;
  EXPECT_NE(crlf.out.find("PF_CRLF_KEY holds a control character"), std::string::npos) << crlf.out;
}

// Issue 19 item 11: bench had no overall deadline. --deadline (default 3600 s per level) ends a
// level: requests in flight and requests not yet sent fail as "deadline", the run keeps its records.
TEST(CliBench, Issue19_DeadlineEndsALevelAndSaysSo) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "200"});  // 50 tokens: 10 s per request
  const auto dir = pftest::scratch_dir("cli-bench-deadline");
  const auto t0 = std::chrono::steady_clock::now();
  auto b = pftest::run_cli("bench --url " + fake.url + " --model m --concurrency 2 --num-prompts 5 --input-len 4 --output-len 50 --warmup 0 --deadline 1 --db " +
                           dir + "/b.db --json");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(b.code, 1) << b.out;
  EXPECT_LT(seconds, 5.0);
  auto j = preflight::parse_json(b.out.substr(b.out.find('{')), "stdout");
  ASSERT_TRUE(j) << b.out;
  const auto& stats = (*j)["levels"][0]["stats"];
  EXPECT_EQ(stats["failed"], 5) << stats.dump();
  EXPECT_EQ(stats["failures"]["deadline"], 5) << stats.dump();
  EXPECT_NE(stats.dump().find("deadline: the run's 1 s deadline passed (--deadline)"), std::string::npos) << stats.dump();
  auto store = preflight::bench::BenchStore::open(dir + "/b.db");
  ASSERT_TRUE(store);
  EXPECT_EQ(*store->request_count((*j)["levels"][0]["run_id"].get<int64_t>()), 5);
}

// Issue 19, also: an error body from the server reaches the terminal and the database without
// its escape sequences (a hostile server could clear the screen or retitle the window).
TEST(CliBench, Issue19_ServerErrorTextIsStrippedOfTerminalControls) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "1", "--fault", "escape_error", "--fault-every", "1"});
  auto b = pftest::run_cli("bench --url " + fake.url + " --model m --num-prompts 2 --output-len 4 --warmup 0");
  EXPECT_EQ(b.code, 1) << b.out;
  EXPECT_NE(b.out.find("http 500: bad"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("here"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find('\x1b'), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find('\x07'), std::string::npos) << b.out;
}

// Issue 19: calibrate --save created the overlay's directory with the throwing std::filesystem call: a parent that is
// a regular file ended the process with an uncaught filesystem_error (exit 134). It is an environment error naming
// the overlay (exit 3), and nothing is written.
TEST(CliBench, Issue19_CalibrateSaveWhoseDirectoryCannotBeCreated) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "1"});
  const auto dir = pftest::scratch_dir("cli-bench-calibrate-dir");
  const std::string db = dir + "/bench.db", pred = dir + "/pred.json";
  std::ofstream(pred) << R"({"decode_tok_s_single": 200, "ttft_ms": 25, "throughput_tok_s": {"1": 200}})";
  auto b = run("bench --url " + fake.url + " --model m --concurrency 1 --num-prompts 4 --input-len 8 --output-len 8 --ignore-eos --db " + db +
               " --prediction " + pred + " --device H100 --engine vllm --json");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  std::ofstream(dir + "/file") << "a regular file\n";
  const std::string overlay = dir + "/file/preflight/speed.json";
  const auto saved = pftest::run_cli("calibrate --db " + db + " --save", {.env = "PREFLIGHT_SPEED_OVERRIDES=" + overlay});
  EXPECT_EQ(saved.code, 3) << saved.out;
  EXPECT_NE(saved.out.find(overlay + ": cannot create its directory: "), std::string::npos) << saved.out;
}

// Issue 19: a server that quotes the request back in its error ("bad credentials Bearer sk-... for POST /?token=...")
// put the API key and the URL's query token on the terminal, in the database (twice) and in the HTML report; only the
// URL's userinfo was redacted. Neither the key, the password nor the token reaches any output, stored or printed; the
// reason itself is kept, with "***" in their place.
TEST(CliBench, Issue19_SecretsReachNoOutput) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "1", "--fault", "echo_auth"});
  const auto dir = pftest::scratch_dir("cli-bench-secrets");
  const std::string db = dir + "/bench.db", html = dir + "/r.html";
  const std::string url = "http://user:PASSWD99@" + fake.url.substr(7) + "/v1?token=QTOKEN77&n=1";
  const pftest::CliOptions env{.env = "PF_TEST_API_KEY=sk-SECRETKEY123 timeout 60"};
  const std::string bench = "bench --url '" + url + "' --model m --concurrency 1 --num-prompts 2 --input-len 8 --output-len 8 --api-key-env PF_TEST_API_KEY --db " + db;
  const auto text = pftest::run_cli(bench, env);
  const auto json = pftest::run_cli(bench + " --json", env);
  const auto report = pftest::run_cli("report --html " + html + " --from-db " + db, env);
  const auto report_json = pftest::run_cli("report --html " + html + " --from-db " + db + " --json", env);
  EXPECT_EQ(text.code, 1) << text.out;
  EXPECT_NE(text.out.find("http 401: bad credentials Bearer *** for POST /v1?token=***&n=1/v1/chat/completions HTTP/1.1"), std::string::npos) << text.out;
  EXPECT_EQ(report.code, 0) << report.out;
  const std::string stored = pftest::read_all(db) + pftest::read_all(db + "-wal");
  EXPECT_NE(stored.find("Bearer ***"), std::string::npos);  // the reason is stored, redacted
  for (const std::string& secret : {"SECRETKEY", "PASSWD99", "QTOKEN77"}) {
    const std::vector<std::pair<std::string, std::string>> outputs = {{"bench", text.out},   {"bench --json", json.out}, {"report", report.out},
                                                                      {"report --json", report_json.out}, {"database", stored}, {"html", pftest::read_all(html)}};
    for (const auto& [name, out] : outputs) {
      EXPECT_EQ(out.find(secret), std::string::npos) << secret << " in " << name;
    }
  }
}

// Issue 19: report --compare --urls benched each server without a key: it had no --api-key-env, so a server behind a
// key could not be compared. It takes bench's flag: the key reaches each server (the echoing server's 401 quotes the
// Authorization header, stored redacted as "Bearer ***"; without a key it would read "(none)"), and never reaches the
// output, the database or the HTML report. An unset variable is bad input before any server is benched.
TEST(CliBench, Issue19_ReportCompareUrlsTakesTheApiKeyFromTheEnvironment) {
  auto a = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "1", "--fault", "echo_auth"});
  auto b = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "1", "--fault", "echo_auth"});
  const auto dir = pftest::scratch_dir("cli-report-compare-key");
  const std::string db = dir + "/bench.db", html = dir + "/ab.html";
  const std::string compare = "report --compare --urls " + a.url + "," + b.url + " --model m --concurrency 1 --num-prompts 2 --input-len 8 --output-len 8 --from-db " + db +
                              " --html " + html + " --api-key-env PF_TEST_API_KEY";
  const auto r = pftest::run_cli(compare, {.env = "PF_TEST_API_KEY=sk-SECRETKEY123 timeout 60"});
  EXPECT_EQ(r.code, 0) << r.out;
  const std::string stored = pftest::read_all(db) + pftest::read_all(db + "-wal");
  EXPECT_NE(stored.find("bad credentials Bearer ***"), std::string::npos);  // the key was sent to the servers
  EXPECT_EQ(stored.find("bad credentials (none)"), std::string::npos);
  for (const auto& [name, out] : std::vector<std::pair<std::string, std::string>>{{"report", r.out}, {"database", stored}, {"html", pftest::read_all(html)}}) {
    EXPECT_EQ(out.find("SECRETKEY"), std::string::npos) << "the key in " << name;
  }
  const auto unset = pftest::run_cli(compare, {.env = "env -u PF_TEST_API_KEY timeout 60"});
  EXPECT_EQ(unset.code, 2) << unset.out;
  EXPECT_NE(unset.out.find("--api-key-env: environment variable PF_TEST_API_KEY is not set"), std::string::npos) << unset.out;
  const auto alone = pftest::run_cli("report --html " + html + " --from-db " + db + " --api-key-env PF_TEST_API_KEY");
  EXPECT_EQ(alone.code, 2) << alone.out;
}

// Issue 19: report --html on a FIFO waited for a reader for ever (std::ofstream); it is refused, exit 2, at once.
TEST(CliBench, Issue19_ReportHtmlOnAFifoIsRefused) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "1"});
  const auto dir = pftest::scratch_dir("cli-bench-report-fifo");
  const std::string db = dir + "/bench.db";
  auto b = run("bench --url " + fake.url + " --model m --concurrency 1 --num-prompts 2 --input-len 8 --output-len 8 --ignore-eos --db " + db);
  ASSERT_EQ(b.exit_code, 0) << b.out;
  ASSERT_EQ(::mkfifo((dir + "/r.html").c_str(), 0644), 0);
  const auto r = pftest::run_cli("report --html " + dir + "/r.html --from-db " + db, {.env = "timeout 60"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/r.html: expected a regular file to write, found a FIFO; nothing written"), std::string::npos) << r.out;
  const auto ab = pftest::run_cli("report --compare 1 1 --html " + dir + "/r.html --from-db " + db, {.env = "timeout 60"});
  EXPECT_NE(ab.code, 124) << ab.out;  // refused or answered, never waiting on the FIFO
}

// Issue 19: calibrate --save read the speed overlay, merged its fits and renamed the result over it with no lock (bw
// --save has held one since issue 19 item 8): saves at once each wrote what they had read, and the last rename won.
// Six saves for six devices at once now keep all six.
TEST(CliBench, Issue19_ConcurrentCalibrateSavesAllSurvive) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "1"});
  const auto dir = pftest::scratch_dir("cli-bench-calibrate-lock");
  const std::string pred = dir + "/pred.json", overlay = dir + "/speed.json";
  std::ofstream(pred) << R"({"decode_tok_s_single": 200, "ttft_ms": 25, "throughput_tok_s": {"1": 200}})";
  const std::vector<std::string> devices = {"T4", "A10", "L4", "L40S", "A100-40G-SXM", "V100-SXM2-32G"};
  std::string saves;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string db = dir + "/bench" + std::to_string(i) + ".db";
    auto b = run("bench --url " + fake.url + " --model m --concurrency 1 --num-prompts 4 --input-len 8 --output-len 8 --ignore-eos --db " + db +
                 " --prediction " + pred + " --device " + devices[i] + " --engine vllm");
    ASSERT_EQ(b.exit_code, 0) << devices[i] << "\n" << b.out;
    saves += std::string(PREFLIGHT_BINARY) + " calibrate --db " + db + " --save >/dev/null 2>&1 & ";
  }
  ASSERT_EQ(std::system(("export PREFLIGHT_SPEED_OVERRIDES=" + overlay + "; " + saves + "wait").c_str()), 0);
  auto j = preflight::parse_json(pftest::read_all(overlay), overlay);
  ASSERT_TRUE(j) << pftest::read_all(overlay);
  std::set<std::string> saved;
  for (const auto& p : (*j)["profiles"]) saved.insert(p.value("device", ""));
  EXPECT_EQ(saved.size(), devices.size()) << j->dump();
}

// ux31 (issue 16, bench as the seed's user reads it): the note beside a speed-model prediction said "predicted KV
// capacity 43470 tokens" for Qwen3-8B on a 910B4, while fit on the same card prints 80,640: the prediction is sized
// at max_model_len = prompt + output, and vLLM >= 0.21 prints its token line from the concurrency at that length. The
// note now says which length the figure belongs to; fit at that length prints the same line.
TEST(CliBench, Ux31_Issue16_PredictedKvNoteSaysItsLength) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "2"});
  const auto b = run("bench --url " + fake.url + " --model qwen3-8b --spec Qwen/Qwen3-8B --device 910B4 --engine vllm-ascend@0.23 --num-prompts 2 --input-len 8 "
                     "--output-len 8 --ignore-eos");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  EXPECT_EQ(b.out.find("predicted KV capacity"), std::string::npos) << b.out;
  const auto at = b.out.find(" tokens as the engine prints it at max_model_len 16 (--input-len + --output-len");
  ASSERT_NE(at, std::string::npos) << b.out;
  const std::string prefix = "predicted GPU KV cache size ";
  const auto start = b.out.rfind(prefix, at);
  ASSERT_NE(start, std::string::npos) << b.out;
  const std::string tokens = b.out.substr(start + prefix.size(), at - start - prefix.size());
  const auto fit = run("fit Qwen/Qwen3-8B --device 910B4 --engine vllm-ascend@0.23 --max-model-len 16");
  EXPECT_NE(fit.out.find("GPU KV cache size: " + tokens.substr(0, tokens.size() - 3) + "," + tokens.substr(tokens.size() - 3) + " tokens"), std::string::npos)
      << tokens << "\n" << fit.out;
}
