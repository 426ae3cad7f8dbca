// Issue 15: pipeline stages on their own cards (heterogeneous PP) and vLLM's layer split per PP rank
// (vllm/distributed/utils.py get_pp_indices, VLLM_PP_LAYER_PARTITION). Expected numbers are derived in
// the comments from the model's config.json and the budget rule, never read back from the estimate.
#include <gtest/gtest.h>

#include <cmath>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "model/model_source.hpp"

using namespace preflight;

namespace {
struct Setup {
  model::ModelSpec model;
  device::DeviceSpec a100, l40s;
  engine::EngineProfile engine;
  engine::Overheads overheads;
};
Setup setup() {
  Setup s;
  auto m = model::resolve_model("Qwen/Qwen3-8B");
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().describe());
  s.model = *m;
  auto devices = device::load_device_catalog();
  s.a100 = *device::find_device(*devices, "A100-80G-SXM");
  s.l40s = *device::find_device(*devices, "L40S");
  auto engines = engine::load_engine_catalog();
  s.engine = *engine::select_engine(*engines, "vllm", "0.11.0");
  s.overheads = *engines->overheads_for(s.engine.platform);
  return s;
}

estimate::Deployment pp2() {
  estimate::Deployment d;
  d.pipeline_parallel_size = 2;
  d.max_model_len = 8192;
  d.gpu_memory_utilization = 0.9;
  return d;
}

// Qwen3-8B config.json: hidden 4096, 32 query heads and 8 KV heads of head_dim 128, intermediate 12288, bf16.
// One decoder layer: q 4096 x 4096 + k, v 2 x 4096 x 1024 + o 4096 x 4096 + MLP 3 x 4096 x 12288
// = 16,777,216 x 2 + 4,194,304 x 2 + 150,994,944 = 192,937,984 matrix parameters, + norms 2 x 4096 + q/k norms
// 2 x 128 = 192,946,432 parameters x 2 B = 385,892,864 B.
constexpr double k_layer_bytes = 385892864.0;
// KV page per layer and block (block 16): K and V x 16 tokens x 8 heads x 128 x 2 B = 65,536 B.
constexpr int64_t k_page_bytes = 65536;
}  // namespace

// vLLM's own test goldens (tests/distributed/test_pipeline_partition.py) and its default split rule.
TEST(FitStages, Issue15_VllmLayerPartition) {
  const std::vector<std::tuple<int64_t, int64_t, std::vector<int64_t>, std::vector<int64_t>>> rows = {
      {20, 4, {5, 5, 5, 5}, {5, 5, 5, 5}},
      {20, 4, {4, 6, 6, 4}, {4, 6, 6, 4}},
      {36, 2, {}, {18, 18}},
      {61, 4, {}, {15, 15, 16, 15}},  // 61 // 4 = 15, remainder 1 to partitions[-2]
      {20, 3, {}, {7, 7, 6}},         // 20 // 3 = 6, remainder 2 to partitions[-2] and [-3]
      {47, 2, {}, {24, 23}},
  };
  for (const auto& [n, pp, given, expected] : rows) {
    auto p = estimate::pp_layer_partition(n, pp, given);
    ASSERT_TRUE(p.has_value()) << p.error().describe();
    EXPECT_EQ(*p, expected) << n << " layers, pp " << pp;
  }
  const std::vector<std::tuple<int64_t, int64_t, std::vector<int64_t>, std::string>> bad = {
      {36, 2, {12, 12, 12}, "ValueError: len(partitions)=3 does not match pp_size=2."},
      {36, 2, {12, 20}, "ValueError: sum(partitions)=32 does not match num_hidden_layers=36."},
      {36, 2, {36, 0}, "expected at least 1 per stage"},
  };
  for (const auto& [n, pp, given, message] : bad) {
    auto p = estimate::pp_layer_partition(n, pp, given);
    ASSERT_FALSE(p.has_value()) << message;
    EXPECT_EQ(p.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(p.error().message.find(message), std::string::npos) << p.error().message;
  }
}

// A100-80G + L40S, PP 2: every term of the L40S stage is what it is on an A100 except its requested memory, so its
// budget is lower by exactly (total A100 - total L40S) x 0.9; the engine keeps the smaller num_blocks, the L40S's:
// floor(available / (65,536 B x 18 layers)).
TEST(FitStages, Issue15_HeterogeneousStagesTightestSetsTheBlocks) {
  auto s = setup();
  const auto same = estimate::estimate_fit(s.model, s.a100, s.engine, s.overheads, pp2());
  auto mixed_dep = pp2();
  mixed_dep.stage_devices = {{s.a100.id, s.a100.usable_total_bytes()}, {s.l40s.id, s.l40s.usable_total_bytes()}};
  const auto mixed = estimate::estimate_fit(s.model, s.a100, s.engine, s.overheads, mixed_dep);
  ASSERT_EQ(same.stages.size(), 2u);
  ASSERT_EQ(mixed.stages.size(), 2u);
  EXPECT_EQ(mixed.stages[0].layers, 18);
  EXPECT_EQ(mixed.stages[1].first_layer, 18);
  EXPECT_EQ(mixed.stages[1].device_id, "L40S");
  EXPECT_DOUBLE_EQ(mixed.stages[0].available_kv_bytes, same.stages[0].available_kv_bytes);
  const double lower = (s.a100.usable_total_bytes() - s.l40s.usable_total_bytes()) * 0.9;
  EXPECT_NEAR(same.stages[1].available_kv_bytes - mixed.stages[1].available_kv_bytes, lower, 2.0);  // two floors
  const auto blocks = static_cast<int64_t>(mixed.stages[1].available_kv_bytes) / (k_page_bytes * 18);
  EXPECT_EQ(mixed.stages[1].num_blocks, blocks);
  EXPECT_TRUE(mixed.stages[1].tightest);
  EXPECT_FALSE(mixed.stages[0].tightest);
  EXPECT_EQ(mixed.num_blocks, blocks);
  EXPECT_DOUBLE_EQ(mixed.available_kv_bytes, mixed.stages[1].available_kv_bytes);
  // One load and one KV line per stage, named by stage, card and layers.
  int stage_lines = 0;
  for (const auto& line : mixed.lines) stage_lines += line.rfind("(PP stage 1, L40S, layers 18-35) ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(stage_lines, 2);
}

// VLLM_PP_LAYER_PARTITION "12,24" moves 6 layers from the first stage to the last: the first stage's weights drop by
// 6 x 385,892,864 B, the last's rise by as much, and each budget moves the other way by the same bytes.
TEST(FitStages, Issue15_LayerPartitionMovesWeightsBetweenStages) {
  auto s = setup();
  const auto even = estimate::estimate_fit(s.model, s.a100, s.engine, s.overheads, pp2());
  auto dep = pp2();
  dep.pp_layer_partition = {12, 24};
  const auto uneven = estimate::estimate_fit(s.model, s.a100, s.engine, s.overheads, dep);
  ASSERT_EQ(uneven.stages.size(), 2u);
  EXPECT_EQ(uneven.stages[0].layers, 12);
  EXPECT_EQ(uneven.stages[1].layers, 24);
  const double tolerance = 0.002 * 6 * k_layer_bytes;  // checkpoint-header scaling of the computed bytes
  EXPECT_NEAR(even.stages[0].weights_bytes - uneven.stages[0].weights_bytes, 6 * k_layer_bytes, tolerance);
  EXPECT_NEAR(uneven.stages[1].weights_bytes - even.stages[1].weights_bytes, 6 * k_layer_bytes, tolerance);
  EXPECT_NEAR(uneven.stages[0].available_kv_bytes - even.stages[0].available_kv_bytes, 6 * k_layer_bytes, tolerance + 1);
  // The last stage now caches 24 layers: its blocks are its budget / (65,536 x 24), and it is the tighter one.
  EXPECT_EQ(uneven.stages[1].num_blocks, static_cast<int64_t>(uneven.stages[1].available_kv_bytes) / (k_page_bytes * 24));
  EXPECT_TRUE(uneven.stages[1].tightest);
  EXPECT_EQ(uneven.num_blocks, uneven.stages[1].num_blocks);
  // A partition that does not sum to the layers is refused with vLLM's message.
  dep.pp_layer_partition = {12, 20};
  const auto bad = estimate::estimate_fit(s.model, s.a100, s.engine, s.overheads, dep);
  EXPECT_FALSE(bad.fits);
  EXPECT_EQ(bad.failure, estimate::Failure::invalid_layout);
  EXPECT_EQ(bad.failure_message, "ValueError: sum(partitions)=32 does not match num_hidden_layers=36.");
}

// PP 3 (12 layers each): the middle stage holds neither the embedding nor the head, so it holds its 12 layers and the
// shared buffers only, less than the first stage by the embedding: 151,936 x 4096 x 2 B = 1,244,659,712 B.
TEST(FitStages, Issue15_MiddleStageHoldsOnlyItsLayers) {
  auto s = setup();
  auto dep = pp2();
  dep.pipeline_parallel_size = 3;
  const auto e = estimate::estimate_fit(s.model, s.a100, s.engine, s.overheads, dep);
  ASSERT_EQ(e.stages.size(), 3u);
  EXPECT_EQ(e.stages[1].layers, 12);
  const double embedding = 151936.0 * 4096 * 2;
  EXPECT_NEAR(e.stages[0].weights_bytes - e.stages[1].weights_bytes, embedding, 0.002 * embedding + 0.002 * 12 * k_layer_bytes);
}
