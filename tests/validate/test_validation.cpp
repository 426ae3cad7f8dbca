#include <gtest/gtest.h>

#include <fstream>

#include "validate/validation.hpp"
#include "../test_support.hpp"

using namespace preflight;

TEST(Validation, SharedCasesMeetTheTargets) {
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({pftest::shared_path("validation/seed-cases.jsonl"), pftest::shared_path("validation/vllm-startup.dev.jsonl")}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->cases, r->evaluated + r->skipped);
  for (const auto& row : r->rows) {
    if (row.skipped) EXPECT_FALSE(row.skip_reason.empty()) << row.id;
  }
  ASSERT_TRUE(r->fields.count("weights_gib"));
  EXPECT_LE(r->fields["weights_gib"].median_abs_pct, 2.0);
  EXPECT_GT(r->verdicts_n, 10);
}

// Issue 4: decode speeds through validate: median absolute error at most 15%; no case off by more
// than 2x (README "Speed model" explains the skipped cases).
TEST(Validation, DecodeSpeedCasesMeetTheTargets) {
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({pftest::shared_path("validation/decode-speed.dev.jsonl")}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_TRUE(r->fields.count("tokens_per_s"));
  EXPECT_GE(r->fields["tokens_per_s"].n, 9);
  EXPECT_LE(r->fields["tokens_per_s"].median_abs_pct, 15.0);
  for (const auto& row : r->rows)
    for (const auto& f : row.fields)
      if (f.field == "tokens_per_s") {
        EXPECT_LT(f.predicted, 2.0 * f.observed) << row.id;
        EXPECT_GT(f.predicted, 0.5 * f.observed) << row.id;
        EXPECT_FALSE(row.speed_terms.empty()) << row.id;
      }
}

TEST(Validation, MalformedLineNamesFileAndLine) {
  const std::string dir = pftest::scratch_dir("validate");
  std::ofstream(dir + "/bad.jsonl") << "{\"id\": \"x\", \"model\": 3}\n";
  auto r = validate::run_validation({dir + "/bad.jsonl"}, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().describe().find("bad.jsonl:1"), std::string::npos) << r.error().describe();
}
