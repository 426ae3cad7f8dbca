// The HTML report rendered for real by headless Chromium (Debian `chromium`): the dumped DOM holds
// every chart, and a screenshot is produced.
#include "report/html_report.hpp"

#include <gtest/gtest.h>

#include <cmath>
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
  const std::string dumped = pftest::read_all(dom);
  // The DOM as Chromium parsed it: four SVG charts with their drawn elements.
  const std::regex chart_re("<svg[^>]*class=\"chart\"");
  EXPECT_EQ(std::distance(std::sregex_iterator(dumped.begin(), dumped.end(), chart_re), std::sregex_iterator()), 4);
  for (const char* id : {"latency-chart", "throughput-chart", "comparison-chart", "memory-chart"}) EXPECT_NE(dumped.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_NE(dumped.find("<polyline"), std::string::npos);
  EXPECT_NE(dumped.find("class=\"predicted\""), std::string::npos);
  EXPECT_NE(dumped.find("class=\"measured\""), std::string::npos);
  EXPECT_NE(dumped.find("class=\"bar memory\""), std::string::npos);
  ASSERT_EQ(std::system(("timeout 90 " + browser + flags + " --window-size=900,1400 --screenshot=" + shot + " file://" + page + " >/dev/null 2>&1").c_str()), 0);
  const std::string png = pftest::read_all(shot);
  ASSERT_GT(png.size(), 10000u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

namespace {

std::vector<double> measured_x(const std::string& html) {
  const std::regex re("<circle class=\"measured\" cx=\"([0-9.]+)\"");
  std::vector<double> xs;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), re); it != std::sregex_iterator(); ++it) xs.push_back(std::stod((*it)[1]));
  return xs;
}

std::string scale_of(const std::string& html, const std::string& id) {
  const std::regex re("id=\"" + id + "\"[^>]*data-scale=\"([a-z]+)\"");
  std::smatch m;
  return std::regex_search(html, m, re) ? m[1].str() : "";
}

}  // namespace

// Issue 18: one 14x TTFT miss used to set a linear bar axis to 0..20, leaving the throughput bars
// near 1 a few pixels tall. Now each metric is a row on a measured/predicted axis, logarithmic when
// the ratios span 10x, so 0.91x and 1x stay apart.
TEST(HtmlReport, Issue18_ComparisonChartLogScaleWhenRatiosSpanADecade) {
  auto d = sample();
  d.comparison = {{"TTFT ms", 1, 10.0, 140.0, "ms"}, {"throughput tok/s", 1, 110.0, 100.0, "tok/s"}, {"throughput tok/s", 16, 1760.0, 1600.0, "tok/s"}};
  const std::string html = report::render_bench_html(d);
  EXPECT_EQ(scale_of(html, "comparison-chart"), "log");
  // The axis: ratios 100/110 = 0.909 to 140/10 = 14, a quarter of margin each side, drawn over
  // x = 170 .. 640 - 190 = 450: x(r) = 170 + 280 x log10(r / lo) / log10(hi / lo).
  const double lo = (100.0 / 110.0) / 1.25, hi = 14.0 * 1.25;
  auto x = [&](double r) { return 170 + 280 * std::log10(r / lo) / std::log10(hi / lo); };
  const auto xs = measured_x(html);
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_NEAR(xs[0], x(14.0), 0.06);
  EXPECT_NEAR(xs[1], x(100.0 / 110.0), 0.06);
  EXPECT_NEAR(xs[2], x(1600.0 / 1760.0), 0.06);
  EXPECT_GT(x(1.0) - xs[1], 8.0);  // 0.91x sits 8 px left of the prediction (1.8 px on the old 0..20 bars)
  EXPECT_NE(html.find("140 vs 10.0 ms (14x)"), std::string::npos);
  EXPECT_NE(html.find("1600 vs 1760 tok/s (0.91x)"), std::string::npos);
  // Within a decade the axis stays linear, in steps of 0.2 with one step of margin: 0.909 -> 0.8 -> 0.6,
  // 1.05 -> 1.2 -> 1.4.
  d.comparison = {{"throughput tok/s", 1, 110.0, 100.0, "tok/s"}, {"TTFT ms", 1, 100.0, 105.0, "ms"}};
  const std::string lin = report::render_bench_html(d);
  EXPECT_EQ(scale_of(lin, "comparison-chart"), "linear");
  const auto lx = measured_x(lin);
  ASSERT_EQ(lx.size(), 2u);
  EXPECT_NEAR(lx[0], 170 + 280 * (100.0 / 110.0 - 0.6) / 0.8, 0.06);
  EXPECT_NEAR(lx[1], 170 + 280 * (1.05 - 0.6) / 0.8, 0.06);
}

TEST(HtmlReport, Issue18_ComparisonChartDrawsThePredictedBand) {
  auto d = sample();
  d.comparison = {{"decode tok/s (1 stream)", 1, 50.0, 45.0, "tok/s", 40.0, 60.0}};
  const std::string html = report::render_bench_html(d);
  // Axis: ratios 0.8 (band low), 0.9, 1.2 (band high) -> linear 0.6 .. 1.4; band from x(0.8) to x(1.2).
  auto x = [](double r) { return 170 + 280 * (r - 0.6) / 0.8; };
  const std::regex band("<rect class=\"band\" x=\"([0-9.]+)\" y=\"[0-9.]+\" width=\"([0-9.]+)\"");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, band));
  EXPECT_NEAR(std::stod(m[1]), x(0.8), 0.06);
  EXPECT_NEAR(std::stod(m[2]), x(1.2) - x(0.8), 0.1);
  EXPECT_NE(html.find("predicted band: 40.0 to 60.0 tok/s"), std::string::npos);
  // The latency chart's TTFT p99 (ms) and ITL p99 stay on one linear axis: within 20x.
  EXPECT_EQ(scale_of(html, "latency-chart"), "linear");
}
