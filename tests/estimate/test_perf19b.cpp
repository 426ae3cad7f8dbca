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

// Issue 19 (round 13): group_bytes_for also records where each group sits (GroupPlace, read from its module name)
// and its storage format, so that every card count's weights skip the name searches. Qwen3-0.6B (BF16, tied
// embeddings): the decoder layers' groups are named "model.layers.*...", the embedding "model.embed_tokens"; no
// shared experts; every format is the unquantized one. A struct missing the places is not used (for_model).
TEST(Fit, Issue19_GroupPlacesRecordedOncePerModel) {
  auto s = pftest::fit_setup("Qwen/Qwen3-0.6B", "L4", "vllm", "0.11.0");
  estimate::Deployment d;
  d.max_model_len = 4096;
  const estimate::GroupBytes gb = estimate::group_bytes_for(s.model, d);
  ASSERT_EQ(gb.places.size(), s.model.weights.size());
  ASSERT_EQ(gb.formats.size(), s.model.weights.size());
  int layers = 0, embeddings = 0;
  for (size_t i = 0; i < gb.places.size(); ++i) {
    const auto& g = s.model.weights[i];
    const bool layer = g.module.rfind("model.layers.*", 0) == 0;
    EXPECT_EQ(gb.places[i].layer, layer) << g.module;
    EXPECT_EQ(gb.places[i].embed_tokens, g.module == "model.embed_tokens") << g.module;
    EXPECT_FALSE(gb.places[i].shared_expert) << g.module;
    layers += layer ? 1 : 0;
    embeddings += gb.places[i].embed_tokens ? 1 : 0;
  }
  EXPECT_GT(layers, 0);
  EXPECT_EQ(embeddings, 1);
  EXPECT_TRUE(estimate::group_place({.module = "model.layers.*.mlp.shared_expert.up_proj", .part = model::Part::text}).shared_expert);
  EXPECT_TRUE(estimate::group_place({.module = "lm_head", .part = model::Part::text}).lm_head);
  EXPECT_FALSE(estimate::group_place({.module = "model.layers.*.self_attn.q_proj", .part = model::Part::vision}).layer);  // text layers only

  EXPECT_NE(gb.for_model(s.model, *gb.scheme), nullptr);
  estimate::GroupBytes no_places = gb;
  no_places.places.clear();
  EXPECT_EQ(no_places.for_model(s.model, *gb.scheme), nullptr);
}
