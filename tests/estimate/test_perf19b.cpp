#include <gtest/gtest.h>

#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

// Issue 19 (round 2): the planner computes each weight group's stored bytes once per (model, variant)
// (estimate::group_bytes_for) and hands them to every card count's fit through Deployment::group_bytes.
// Qwen3-0.6B is unquantized BF16: every group is its parameter count x 2 bytes (written here, not taken
// from the code under test).
TEST(Fit, Issue19_GroupBytesComputedOnceAndUsedByTheFit) {
  auto s = pftest::fit_setup("Qwen/Qwen3-0.6B", "L4", "vllm", "0.11.0");
  estimate::Deployment d;
  d.max_model_len = 4096;
  const estimate::GroupBytes gb = estimate::group_bytes_for(s.model, d);
  ASSERT_EQ(gb.bytes.size(), s.model.weights.size());
  double all = 0;
  for (size_t i = 0; i < gb.bytes.size(); ++i) {
    EXPECT_DOUBLE_EQ(gb.bytes[i], static_cast<double>(s.model.weights[i].params()) * 2) << s.model.weights[i].module;
    all += gb.bytes[i];
  }
  const auto plain = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  d.group_bytes = &gb;
  const auto shared = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(shared.weights_bytes, plain.weights_bytes);
  EXPECT_EQ(shared.num_blocks, plain.num_blocks);

  // The fit reads the struct it is given (not its own recomputation): doubled bytes add every group once more
  // at TP 1 / PP 1.
  estimate::GroupBytes doubled = gb;
  for (double& b : doubled.bytes) b *= 2;
  d.group_bytes = &doubled;
  const auto twice = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_NEAR(twice.weights_bytes - plain.weights_bytes, all, 1.0);

  // A struct made for another model (here a copy: another address) is ignored, not misapplied.
  const model::ModelSpec other = s.model;
  const auto copy = estimate::estimate_fit(other, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(copy.weights_bytes, plain.weights_bytes);
}
