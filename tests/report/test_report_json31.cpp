// Issue 16 (ux31, "--json on every command"): `report` printed JSON only about the HTML file it wrote, so a script that
// wanted a stored sweep's statistics had to write an HTML page or read the SQLite file itself.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "../test_support.hpp"
#include "bench_db_support.hpp"

// `report --json` without --html prints the stored sweep: its levels as bench --json gives them. make_db stores two
// sweeps of one run each, three requests with TTFT 100, 110 and 120 ms, four gaps of 20 ms after the first token.
TEST(ReportJson31, Issue16_JsonWithoutHtmlPrintsTheStoredSweep) {
  const std::string dir = pftest::scratch_dir("report-json31");
  const std::string db = pftest::make_db(dir, "Qwen/Qwen3-8B");
  const auto r = pftest::run_cli("report --json --run 1 --db " + db, {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "report");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["sweep_id"], "s1");
  EXPECT_EQ(j["model"], "Qwen/Qwen3-8B");
  ASSERT_EQ(j["levels"].size(), 1u);
  const auto& level = j["levels"][0];
  EXPECT_EQ(level["run_id"], 1);
  EXPECT_EQ(level["concurrency"], 1);
  EXPECT_EQ(level["finished"], true);
  EXPECT_TRUE(level["prediction"].is_null());
  EXPECT_TRUE(level["comparison"].empty());
  EXPECT_NEAR(level["stats"]["ttft_ms"]["mean"].get<double>(), 110.0, 1e-6);  // (100 + 110 + 120) / 3

  // The latest sweep by default; no HTML written; --fit-json belongs to the page.
  const auto latest = nlohmann::json::parse(pftest::run_cli("report --json --db " + db, {.with_stderr = false}).out);
  EXPECT_EQ(latest["sweep_id"], "s2");
  const auto fit_json = pftest::run_cli("report --json --db " + db + " --fit-json " + dir + "/fit.json");
  EXPECT_EQ(fit_json.code, 2) << fit_json.out;
  EXPECT_NE(fit_json.out.find("--fit-json is drawn in the --html page"), std::string::npos) << fit_json.out;
  EXPECT_EQ(pftest::run_cli("report --db " + db).code, 2);  // neither --html nor --json: the usage
}
