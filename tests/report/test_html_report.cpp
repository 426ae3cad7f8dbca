// The HTML report rendered for real by headless Chromium (Debian `chromium`): the dumped DOM holds
// every chart, and a screenshot is produced.
#include "report/html_report.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "../bench/service.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

report::HtmlReportData sample() {
  report::HtmlReportData d;
  d.title = "preflight bench: Qwen/Qwen3-8B <test>";
  d.url = "http://127.0.0.1:8000";
  d.model = "Qwen/Qwen3-8B";
  d.sweep_id = "s1";
  d.build = "preflight test";
  for (int64_t c : {1, 4, 16}) {
    report::BenchLevel l;
    l.concurrency = c;
    l.stats.requests = l.stats.succeeded = 8;
    l.stats.ttft_ms = bench::summarize({50.0 + c, 60.0 + c});
    l.stats.tpot_ms = bench::summarize({10.0, 11.0});
    l.stats.itl_ms = bench::summarize({9.0, 10.0, 12.0});
    l.stats.output_throughput_tok_s = 90.0 * static_cast<double>(c);
    l.stats.steady_decode_tok_s = 100.0 * static_cast<double>(c);
    l.stats.tokens_source = "usage";
    d.levels.push_back(l);
    d.comparison.push_back({"throughput tok/s", c, 110.0 * static_cast<double>(c), 100.0 * static_cast<double>(c), "tok/s"});
  }
  d.levels[2].stats.failed = 1;
  d.levels[2].stats.failures["truncated"] = 1;
  d.levels[2].stats.failure_examples.push_back("request 3: stream truncated after 2 events");
  d.memory_device = "H100";
  d.memory_total_gib = 79.1;
  d.memory = {{"weights", 15.3}, {"kv_cache", 50.2}, {"activations", 2.1}, {"cuda_graphs", 0.5}};
  return d;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(HtmlReport, SelfContainedWithEveryChart) {
  const std::string html = report::render_bench_html(sample());
  for (const char* id : {"latency-chart", "throughput-chart", "comparison-chart", "memory-chart"}) EXPECT_NE(html.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_NE(html.find("&lt;test&gt;"), std::string::npos);  // escaped title
  EXPECT_NE(html.find("stream truncated after 2 events"), std::string::npos);
  EXPECT_NE(html.find("+10.0%"), std::string::npos);  // predicted 1760 vs measured 1600 at 16: (1760 - 1600) / 1600
  EXPECT_EQ(report::render_bench_html(sample()), html);  // deterministic
}

TEST(HtmlReport, ChromiumRendersTheCharts) {
  const char* candidates[] = {"chromium", "chromium-browser"};
  std::string browser;
  for (const char* c : candidates) {
    if (std::system((std::string("command -v ") + c + " >/dev/null 2>&1").c_str()) == 0) {
      browser = c;
      break;
    }
  }
  if (browser.empty()) {
    if (pftest::require_services()) FAIL() << "chromium is not installed (scripts/install-deps.sh installs it)";
    GTEST_SKIP() << "chromium is not installed; skipped";
  }
  const auto dir = pftest::scratch_dir("html-report");
  const std::string page = dir + "/report.html", dom = dir + "/dom.html", shot = dir + "/shot.png";
  std::ofstream(page) << report::render_bench_html(sample());
  const std::string flags = " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update"
                            " --disable-sync --user-data-dir=" + dir + "/profile";
  ASSERT_EQ(std::system(("timeout 90 " + browser + flags + " --dump-dom file://" + page + " > " + dom + " 2>/dev/null").c_str()), 0);
  const std::string dumped = read_all(dom);
  // The DOM as Chromium parsed it: four SVG charts with their drawn elements.
  const std::regex chart_re("<svg[^>]*class=\"chart\"");
  EXPECT_EQ(std::distance(std::sregex_iterator(dumped.begin(), dumped.end(), chart_re), std::sregex_iterator()), 4);
  for (const char* id : {"latency-chart", "throughput-chart", "comparison-chart", "memory-chart"}) EXPECT_NE(dumped.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(dumped.find("<polyline"), std::string::npos);
  EXPECT_NE(dumped.find("class=\"bar predicted\""), std::string::npos);
  EXPECT_NE(dumped.find("class=\"bar memory\""), std::string::npos);
  ASSERT_EQ(std::system(("timeout 90 " + browser + flags + " --window-size=900,1400 --screenshot=" + shot + " file://" + page + " >/dev/null 2>&1").c_str()), 0);
  const std::string png = read_all(shot);
  ASSERT_GT(png.size(), 10000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}
