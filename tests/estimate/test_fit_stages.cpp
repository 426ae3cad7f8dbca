// Issue 15: pipeline stages on their own cards (heterogeneous PP) and vLLM's layer split per PP rank
// (vllm/distributed/utils.py get_pp_indices, VLLM_PP_LAYER_PARTITION). Expected numbers are derived in
// the comments from the model's config.json and the budget rule, never read back from the estimate.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include <fstream>

#include "base/json_util.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/printed_ranks.hpp"
#include "estimate/fit.hpp"
#include "estimate/printed_stage.hpp"
#include "model/model_source.hpp"
#include "validate/validation.hpp"
#include "../test_support.hpp"

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

// Issue 15, vllm#34076 (vLLM 0.15.2rc1, Qwen3-Coder-30B-A3B-Instruct-FP8 on an RTX 5070 Ti + RTX 5090, PP 2 with
// VLLM_PP_LAYER_PARTITION=16,32): "24.0 GiB KV cache is needed, which is larger than the available KV cache memory
// (3.18 GiB) ... estimated maximum model length is 34736". vLLM 0.14-0.15 checks the whole model's KV against the
// smallest stage. Qwen/Qwen3-30B-A3B-FP8 config.json (the same shape): 48 layers, 4 KV heads of head_dim 128, KV
// in bf16 (kv_cache_dtype auto; the FP8 checkpoint quantizes weights only). Page per layer and block (16 tokens):
// K and V x 16 x 4 x 128 x 2 B = 32,768 B. Whole model at max_model_len 262,144 (the model's own):
// 48 x 16,384 blocks x 32,768 B = 25,769,803,776 B = 24.00 GiB.
namespace {
struct Pp34076 {
  model::ModelSpec model;
  device::DeviceSpec small, big;
  engine::Overheads overheads;
  std::optional<engine::EngineCatalog> engines;
  estimate::Deployment dep;
};
Pp34076 pp34076() {
  Pp34076 s;
  auto m = model::resolve_model("Qwen/Qwen3-30B-A3B-FP8");
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().describe());
  s.model = *m;
  auto devices = device::load_device_catalog();
  s.small = *device::find_device(*devices, "RTX5070Ti");
  s.big = *device::find_device(*devices, "RTX5090");
  auto engines = engine::load_engine_catalog();
  s.engines = *engines;
  s.overheads = *engines->overheads_for("cuda");
  s.dep.pipeline_parallel_size = 2;
  s.dep.pp_layer_partition = {16, 32};
  s.dep.stage_devices = {{s.small.id, s.small.usable_total_bytes()}, {s.big.id, s.big.usable_total_bytes()}};
  s.dep.max_model_len = 262144;
  return s;
}
std::string estimated_length(const std::string& message) {
  const std::string key = "estimated maximum model length is ";
  const auto at = message.find(key);
  if (at == std::string::npos) return {};
  return message.substr(at + key.size(), message.find('.', at + key.size()) - at - key.size());
}
}  // namespace

TEST(FitStages, Issue15_PpCheckUsesWholeModelKvOnVllm015) {
  auto s = pp34076();
  const auto engine = *engine::select_engine(*s.engines, "vllm", "0.15.2");
  const auto e = estimate::estimate_fit(s.model, s.small, engine, s.overheads, s.dep);
  ASSERT_EQ(e.stages.size(), 2u);
  EXPECT_EQ(e.stages[0].layers, 16);
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.failure, estimate::Failure::max_model_len_too_large);
  EXPECT_NE(e.failure_message.find("(262144), (24.00 GiB KV cache is needed"), std::string::npos) << e.failure_message;
  EXPECT_DOUBLE_EQ(e.pp_whole_model_kv_bytes, 25769803776.0);
  // The smallest stage's budget (the 5070 Ti's) is what the check compares with.
  const double smallest = std::min(e.stages[0].available_kv_bytes, e.stages[1].available_kv_bytes);
  EXPECT_DOUBLE_EQ(e.available_kv_bytes, smallest);
  // The engine's estimate: the largest length whose 48 layers x ceil(len / 16) x 32,768 B fit = 16 x floor(avail / 1,572,864).
  const auto expected_len = 16 * static_cast<int64_t>(std::floor(smallest / 1572864.0));
  EXPECT_EQ(estimated_length(e.failure_message), std::to_string(expected_len)) << e.failure_message;
  // The fix list's --max-model-len is the length the check passes; the KV token count stays per stage: the
  // tightest stage caches 16 of the 48 layers, so about 3x that length (more than 2.5x).
  EXPECT_EQ(estimate::kv_capacity_tokens(e), expected_len);
  EXPECT_GT(static_cast<double>(e.kv_tokens), 2.5 * static_cast<double>(expected_len));
}

TEST(FitStages, Issue15_PpCheckPerStageOnVllm016) {
  auto s = pp34076();
  const auto old_engine = *engine::select_engine(*s.engines, "vllm", "0.15.2");
  const auto new_engine = *engine::select_engine(*s.engines, "vllm", "0.16.0");
  const auto before = estimate::estimate_fit(s.model, s.small, old_engine, s.overheads, s.dep);
  const auto after = estimate::estimate_fit(s.model, s.small, new_engine, s.overheads, s.dep);
  EXPECT_FALSE(after.pp_whole_model_check);
  // vllm#33698 checks each worker's own layers: the longest context is the tightest stage's, ~3x the merged check's.
  EXPECT_GT(static_cast<double>(estimate::kv_capacity_tokens(after)), 2.5 * static_cast<double>(estimate::kv_capacity_tokens(before)));
  // A length between the two: refused by 0.15's whole-model check, served by a stage-wise check.
  auto mid = s.dep;
  mid.max_model_len = 2 * estimate::kv_capacity_tokens(before);
  EXPECT_FALSE(estimate::estimate_fit(s.model, s.small, old_engine, s.overheads, mid).fits);
  EXPECT_TRUE(estimate::estimate_fit(s.model, s.small, new_engine, s.overheads, mid).fits);
}

// vllm#32105 (vLLM 0.15.0rc1, GLM-4.7-FP8 PP 8 on A100 80GB, max_model_len 202,752, util 0.925): "71.16 GiB KV cache
// is needed, which is larger than the available KV cache memory (28.57 GiB)". GLM-4.5 config.json (the shape GLM-4.7
// keeps): 92 layers, 8 KV heads of head_dim 128, bf16 KV: page 2 x 16 x 8 x 128 x 2 B = 65,536 B; whole model
// 92 x 12,672 blocks x 65,536 B = 76,403,441,664 B (= 202,752 x 376,832 B) = 71.16 GiB. One stage holds 11-12 layers (~8.9 GiB) and fits.
TEST(FitStages, Issue15_Vllm32105GlmPp8RefusedByWholeModelCheck) {
  auto m = model::resolve_model("zai-org/GLM-4.5");
  ASSERT_TRUE(m.has_value()) << m.error().describe();
  auto devices = device::load_device_catalog();
  const auto a100 = *device::find_device(*devices, "A100-80G-SXM");
  auto engines = engine::load_engine_catalog();
  const auto engine = *engine::select_engine(*engines, "vllm", "0.15.0");
  estimate::Deployment d;
  d.pipeline_parallel_size = 8;
  d.max_model_len = 202752;
  d.gpu_memory_utilization = 0.925;
  d.quantization = "fp8";
  const auto e = estimate::estimate_fit(*m, a100, engine, *engines->overheads_for("cuda"), d);
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.failure, estimate::Failure::max_model_len_too_large);
  EXPECT_DOUBLE_EQ(e.pp_whole_model_kv_bytes, 76403441664.0);
  EXPECT_NE(e.failure_message.find("(202752), (71.16 GiB KV cache is needed"), std::string::npos) << e.failure_message;
  EXPECT_GE(e.max_concurrency, 1.0);  // per stage it would fit
}

// Issue 15 (pp35): data/engines/printed_ranks.json, which workers print "Available KV cache memory" by engine and version:
// every worker up to vLLM 0.11.0 (gpu_worker.py logger.info), the first local rank from 0.12.0 (logger.info_once(...,
// scope="local")); vLLM-Ascend every worker in 0.9, the first local rank from 0.15. A version between (vLLM 0.11.1 -
// 0.11.x, vLLM-Ascend 0.10 - 0.14) has no record. Each malformed record is refused naming the file and the record.
TEST(FitStages, Issue15_PrintedRanksByEngineVersion) {
  const auto& shipped = engine::shipped_printed_ranks();
  ASSERT_TRUE(shipped.has_value()) << shipped.error().describe();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  const struct {
    const char* engine;
    const char* version;
    std::optional<engine::PrintingRanks> ranks;
  } rows[] = {{"vllm", "0.10.1", engine::PrintingRanks::every_rank},          {"vllm", "0.11.0", engine::PrintingRanks::every_rank},
              {"vllm", "0.12.0", engine::PrintingRanks::local_first_rank},    {"vllm", "0.19.0", engine::PrintingRanks::local_first_rank},
              {"vllm", "0.27.1", engine::PrintingRanks::local_first_rank},    {"vllm-ascend", "0.9.2", engine::PrintingRanks::every_rank},
              {"vllm-ascend", "0.13.0", std::nullopt},                          {"vllm-ascend", "0.23.0", engine::PrintingRanks::local_first_rank}};
  for (const auto& r : rows) {
    auto profile = engine::select_engine(*engines, r.engine, r.version);
    ASSERT_TRUE(profile.has_value()) << r.engine << " " << r.version;
    const auto* rec = shipped->record_for(*profile, "available_kv");
    EXPECT_EQ(rec != nullptr, r.ranks.has_value()) << r.engine << " " << r.version;
    if (rec && r.ranks) EXPECT_EQ(rec->ranks, *r.ranks) << r.engine << " " << r.version;
  }
  const std::string good = R"J({"id":"a","engines":["vllm"],"version_min":"0.8.0","version_max":"0.9.0","line":"available_kv","ranks":"every_rank","source":"s"})J";
  const std::pair<std::string, const char*> bad[] = {
      {R"J({"id":"b","engines":["vllm"],"version_min":"0.8.0","version_max":"0.9.0","line":"available_kv","ranks":"all","source":"s"})J",
       "records[b]: ranks 'all': expected every_rank or local_first_rank"},
      {R"J({"id":"b","engines":["vllm"],"version_min":"0.8.0","version_max":"0.9.0","line":"tokens","ranks":"every_rank","source":"s"})J",
       "records[b]: line 'tokens': expected available_kv"},
      {R"J({"id":"b","engines":["vllm"],"version_min":"0.9.0","version_max":"0.10.0","line":"available_kv","ranks":"every_rank","source":"s"})J",
       "records[b]: its versions overlap record a's for vllm"},
      {R"J({"id":"b","engines":["vllm"],"version_min":"0.10.0","version_max":"0.11.0","line":"available_kv","ranks":"every_rank","source":" "})J",
       "source is empty"},
      {R"J({"id":"b","engines":["vllm"],"version_min":"0.10.0","version_max":"0.11.0","line":"available_kv","ranks":"every_rank","source":"s","x":1})J",
       "x"},
  };
  for (const auto& [record, fragment] : bad) {
    auto json = parse_json(R"J({"schema_version":1,"records":[)J" + good + "," + record + "]}", "t.json");
    ASSERT_TRUE(json.has_value());
    auto parsed = engine::parse_printed_ranks(*json, "t.json");
    ASSERT_FALSE(parsed.has_value()) << record;
    EXPECT_EQ(parsed.error().kind, ErrorKind::corrupt) << record;
    EXPECT_NE(parsed.error().describe().find(fragment), std::string::npos) << parsed.error().describe();
  }
}

// Issue 15 (pp35): validate compares a PP case's printed "Available KV cache memory" with the stage that printed it. The
// llm-d-planner sweep's Llama-3.1-8B at PP 2 on H100s, vLLM 0.19.0 (data/evidence pub-llmdplanner-llama31-8b-2xh100-pp2-
// v019-len8192) printed 'Available KV cache memory: 66.54 GiB' from Worker_PP0 only (0.19 prints from the first local
// rank); its DEBUG breakdowns give Worker_PP0 'Total non KV cache memory: 8.69GiB' and Worker_PP1 '9.6GiB' (the last stage
// runs the sampler: torch peak 2.01 against 1.1 GiB), so stage 1's budget is 9.6 - 8.69 = 0.91 GiB below stage 0's. The
// tightest stage's budget, which validate compared before, sits 0.91 GiB (1.4%) below the printed line.
TEST(FitStages, Issue15_PrintedAvailableKvIsTheStageThatPrintedIt) {
  const std::string dir = pftest::scratch_dir("pp35-printed-stage");
  const std::string path = dir + "/cases.jsonl";
  auto head = [](const char* version) {
    return std::string(R"J({"engine":"vllm","engine_version":")J") + version +
           R"J(","device":"NVIDIA H100 80GB HBM3","num_devices":2,"model":"meta-llama/Llama-3.1-8B-Instruct","pipeline_parallel_size":2,"gpu_memory_utilization":0.95,"max_model_len":8192,"enable_prefix_caching":false,"available_kv_gib":66.54,)J";
  };
  std::ofstream(path) << head("0.19.0") << R"J("id":"rule"})J" "\n"
                      << head("0.19.0") << R"J("id":"pp0","available_kv_stage":0})J" "\n"
                      << head("0.19.0") << R"J("id":"pp1","available_kv_stage":1})J" "\n"
                      << head("0.10.1") << R"J("id":"every"})J" "\n"
                      << head("0.10.1") << R"J("id":"every-pp1","available_kv_stage":1})J" "\n";
  validate::ValidateOptions o;
  o.model_dirs = {pftest::shared_path("models")};
  auto r = validate::run_validation({path}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 5u);
  auto predicted = [&](size_t i) {
    for (const auto& f : r->rows[i].fields)
      if (f.field == "available_kv_gib") return f.predicted;
    ADD_FAILURE() << r->rows[i].id << ": no available_kv_gib field: " << r->rows[i].skip_reason;
    return 0.0;
  };
  // 0.19 without a stage named: stage 0's line, as the log's; within 0.5% of the printed 66.54 GiB.
  EXPECT_NEAR(predicted(0), 66.54, 66.54 * 0.005);
  EXPECT_DOUBLE_EQ(predicted(0), predicted(1));
  // Stage 1's budget: the sampler's 0.91 GiB below (the DEBUG lines), within 0.3 GiB.
  EXPECT_NEAR(predicted(0) - predicted(2), 0.91, 0.3);
  // 0.10.1: every worker prints; without a stage the smallest line (stage 1's) is the one kept.
  EXPECT_DOUBLE_EQ(predicted(3), predicted(4));
  // A stage the deployment does not have is bad input naming the field.
  for (const char* stage : {"2", "-1"}) {
    std::ofstream(path) << head("0.19.0") << R"J("id":"bad","available_kv_stage":)J" << stage << "}\n";
    auto bad = validate::run_validation({path}, o);
    ASSERT_FALSE(bad.has_value()) << stage;
    EXPECT_EQ(bad.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(bad.error().describe().find(std::string("(case bad): available_kv_stage: PP stage ") + stage + ": expected 0 to 1 (pipeline parallel size 2)"),
              std::string::npos)
        << bad.error().describe();
  }
}
