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

TEST(Validation, MalformedLineNamesFileAndLine) {
  const std::string dir = pftest::scratch_dir("validate");
  std::ofstream(dir + "/bad.jsonl") << "{\"id\": \"x\", \"model\": 3}\n";
  auto r = validate::run_validation({dir + "/bad.jsonl"}, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().describe().find("bad.jsonl:1"), std::string::npos) << r.error().describe();
}
