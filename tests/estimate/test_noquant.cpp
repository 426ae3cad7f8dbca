// Issues 15/16: an msModelSlim checkpoint (quant_model_description.json beside config.json) served without
// `--quantization ascend`. What vLLM-Ascend then runs, by version (engines.json "quantization_auto_detect", read from
// the vllm-ascend tags with git show TAG:path):
//   - quant_model_description.json is detected on its own at 0.15.0rc1 (local directories only, PR #6645), not at
//     0.16.0rc1 (reverted, PR #6873), and from 0.17.0rc1 (PR #7111);
//   - else config.json's quantization_config selects "ascend" through override_quantization_method: any one up to
//     0.11, one naming no quant_method from 0.12 (PR #4831); vLLM asks only when config.json has one;
//   - else quant_config stays None and every layer is built unquantized in the config dtype (held-out case
//     vllm-ascend #4013: DeepSeek-V3.1-Terminus W8A8 on 16 x 910B2C died in UnquantizedFusedMoEMethod.create_weights).
// Expected bytes are derived by hand from the real configs in ../shared/models.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "fit_setup.hpp"
#include "model/model_source.hpp"
#include "plan/fit_search.hpp"
#include "../test_support.hpp"
#include "validate/validation.hpp"

using namespace preflight;

namespace {

constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;

// A local msModelSlim W8A8 checkpoint of the config `config_of` (a ../shared/models folder, linked, not copied):
// config.json and a small quant_model_description.json written here in msModelSlim's per-tensor form (the
// layer-0 entries of vllm-ascend issue #633's description; layers are matched as "layers.*").
std::string modelslim_checkpoint(const std::string& name, const std::string& config_of) {
  const std::string dir = pftest::scratch_dir(name);
  std::filesystem::create_symlink(pftest::shared_path("models/" + config_of + "/config.json"), dir + "/config.json");
  std::ofstream(dir + "/quant_model_description.json") << R"({
    "model_quant_type": "W8A8",
    "model.embed_tokens.weight": "FLOAT",
    "model.layers.0.self_attn.q_proj.weight": "W8A8",
    "model.layers.0.self_attn.k_proj.weight": "W8A8",
    "model.layers.0.self_attn.v_proj.weight": "W8A8",
    "model.layers.0.self_attn.o_proj.weight": "W8A8",
    "model.layers.0.mlp.gate_proj.weight": "W8A8",
    "model.layers.0.mlp.up_proj.weight": "W8A8",
    "model.layers.0.mlp.down_proj.weight": "W8A8",
    "lm_head.weight": "FLOAT"
  })";
  return dir;
}

estimate::FitEstimate fit_on(const model::ModelSpec& m, const std::string& version, const std::string& quantization) {
  auto s = pftest::fit_setup("Qwen/Qwen3-0.6B", "910B3", "vllm-ascend", version);
  estimate::Deployment d;
  d.max_model_len = 4096;
  d.quantization = quantization;
  return estimate::estimate_fit(m, s.device, s.engine, s.overheads, d);
}

bool has_assumption(const estimate::FitEstimate& e, const std::string& fragment) {
  for (const auto& a : e.assumptions)
    if (a.find(fragment) != std::string::npos) return true;
  return false;
}

// Qwen3-32B in bf16, by hand from its config.json (hidden 5,120, 64 layers, 64 heads x 128, 8 KV heads,
// intermediate 25,600, vocab 151,936, untied):
//   per layer: q 5,120 x 8,192 = 41,943,040; k, v 5,120 x 1,024 = 5,242,880 each; o 8,192 x 5,120 = 41,943,040;
//              gate, up, down 3 x 5,120 x 25,600 = 393,216,000; q_norm, k_norm 2 x 128; two layer norms 2 x 5,120
//              = 487,598,336, x 64 layers = 31,206,293,504
//   embed_tokens and lm_head 2 x 151,936 x 5,120 = 1,555,824,640; final norm 5,120
//   32,762,123,264 parameters x 2 B = 65,524,246,528 B. The fit adds the rotary caches: max_position_embeddings
//   40,960 x rotary_dim 128 x the NPU's bytes per element (overheads "rope_cache_bytes_per_element").
double qwen3_32b_bf16_weights_with_rope(const engine::Overheads& oh) { return 65524246528.0 + 40960.0 * 128.0 * oh.rope_cache_bytes_per_element; }

}  // namespace

TEST(NoQuant, Issue15_16_ShippedAutoDetectRecordsByVersion) {
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value()) << engines.error().describe();
  struct Row {
    const char* version;
    bool descriptor, local_only, any_config, config_without_method;
  };
  const Row rows[] = {
      {"0.9.1", false, false, true, false},   {"0.11.0", false, false, true, false}, {"0.12.0", false, false, false, true},
      {"0.14.0", false, false, false, true},  {"0.15.0", true, true, false, true},    {"0.16.0", false, false, false, true},
      {"0.17.0", true, false, false, true},   {"0.23.0", true, false, false, true},
  };
  for (const auto& r : rows) {
    auto p = engine::select_engine(*engines, "vllm-ascend", r.version);
    ASSERT_TRUE(p.has_value()) << r.version;
    const auto* d = p->auto_detect("descriptor_file");
    EXPECT_EQ(d != nullptr, r.descriptor) << r.version;
    if (d) {
      EXPECT_EQ(d->method, "ascend") << r.version;
      EXPECT_EQ(d->local_paths_only, r.local_only) << r.version;
    }
    EXPECT_EQ(p->auto_detect("config_quantization_config") != nullptr, r.any_config) << r.version;
    EXPECT_EQ(p->auto_detect("config_quantization_config_without_quant_method") != nullptr, r.config_without_method) << r.version;
  }
  // vLLM on CUDA has no "ascend" method and no record.
  auto cuda = engine::select_engine(*engines, "vllm", "0.11.0");
  ASSERT_TRUE(cuda.has_value());
  EXPECT_EQ(cuda->auto_detect("descriptor_file"), nullptr);
}

TEST(NoQuant, Issue15_16_BadAutoDetectRecordsAreRejected) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/data/engines/engines.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto shipped = parse_json(text, "engines.json");
  ASSERT_TRUE(shipped.has_value());
  ASSERT_TRUE(engine::parse_engine_catalog(*shipped, "engines.json").has_value());
  struct Bad {
    std::string record, fragment;
  };
  const Bad bad[] = {
      {R"({"engine":"vllm-ascend","version_min":"0.1.0","version_max":"0.1.99","trigger":"guess","method":"ascend","source":"s"})", "trigger 'guess'"},
      {R"({"engine":"vllm-ascend","version_min":"0.2.0","version_max":"0.1.0","trigger":"descriptor_file","method":"ascend","source":"s"})", "bad version range"},
      {R"({"engine":"vllm-ascend","version_min":"0.1.0","version_max":"0.1.99","trigger":"descriptor_file","method":"ascend","source":""})", "empty method or source"},
      {R"({"engine":"vllm-ascend","version_min":"0.1.0","version_max":"0.1.99","trigger":"descriptor_file","method":"ascend","source":"s","x":1})", "x"},
  };
  for (const auto& b : bad) {
    Json root = *shipped;
    auto record = parse_json(b.record, "record");
    ASSERT_TRUE(record.has_value());
    root["quantization_auto_detect"].push_back(*record);
    auto parsed = engine::parse_engine_catalog(root, "engines.json");
    ASSERT_FALSE(parsed.has_value()) << b.record;
    EXPECT_EQ(parsed.error().kind, ErrorKind::corrupt) << b.record;
    EXPECT_NE(parsed.error().message.find(b.fragment), std::string::npos) << parsed.error().message;
  }
}

// The local checkpoint dir: config.json without quantization_config, quant_model_description.json (W8A8).
TEST(NoQuant, Issue15_16_ModelSlimCheckpointWithoutFlagOn0110IsSizedAsBf16) {
  const std::string dir = modelslim_checkpoint("noquant-w8a8", "Qwen__Qwen3-32B");
  auto m = model::resolve_model(dir);
  ASSERT_TRUE(m.has_value()) << m.error().describe();
  ASSERT_EQ(m->quant.method, "ascend");
  EXPECT_EQ(m->quant.config_quant_method, "");
  auto s = pftest::fit_setup("Qwen/Qwen3-0.6B", "910B3", "vllm-ascend", "0.11.0");
  const double bf16 = qwen3_32b_bf16_weights_with_rope(s.overheads);

  // 0.11.0, no flag: unquantized, 61.03 GiB of bf16 weights on a 64 GiB card.
  const auto flagless = fit_on(*m, "0.11.0", "");
  EXPECT_NEAR(flagless.weights_bytes, bf16, 1.0);
  EXPECT_EQ(flagless.quantization, "");
  EXPECT_TRUE(has_assumption(flagless, "add --quantization ascend"));
  EXPECT_TRUE(has_assumption(flagless, "UnquantizedFusedMoEMethod"));

  // With the flag the same checkpoint loads as W8A8: int8 linears, so less than 0.6 x the bf16 bytes
  // (the linears are 31,206,293,504 - 64 x 10,496 norms of the 32.76 B parameters at 1 B + per-channel scales).
  const auto flagged = fit_on(*m, "0.11.0", "ascend");
  EXPECT_EQ(flagged.quantization, "ascend");
  EXPECT_LT(flagged.weights_bytes, 0.6 * bf16);
  EXPECT_FALSE(has_assumption(flagged, "add --quantization ascend"));

  // 0.16.0rc1 reverted the detection: unquantized again. 0.15.0rc1 and 0.17.0+ detect it (as the flag sizes it).
  EXPECT_NEAR(fit_on(*m, "0.16.0", "").weights_bytes, bf16, 1.0);
  for (const char* v : {"0.15.0", "0.17.0", "0.23.0"}) {
    const auto detected = fit_on(*m, v, "");
    EXPECT_EQ(detected.quantization, "ascend") << v;
    EXPECT_LT(detected.weights_bytes, 0.6 * bf16) << v;
    EXPECT_TRUE(has_assumption(detected, "quant_model_description.json is detected")) << v;
  }
  EXPECT_TRUE(has_assumption(fit_on(*m, "0.15.0", ""), "local directory only"));
  EXPECT_TRUE(has_assumption(fit_on(*m, "0.17.0", ""), "PR #7111"));
}

// With --quantization ascend the engine loads the checkpoint as stored, so its own safetensors bytes count (as they do
// with no flag): one int8 tensor of 4,096 x 4,096 = 16,777,216 B in a one-shard checkpoint. Without the flag on 0.11
// the engine allocates the bf16 model instead, whatever the shards hold.
TEST(NoQuant, Issue15_16_FlagNamingTheCheckpointsOwnMethodKeepsItsHeaderBytes) {
  const std::string dir = modelslim_checkpoint("noquant-shard", "Qwen__Qwen3-32B");
  const std::string header = R"J({"model.layers.0.mlp.down_proj.weight":{"dtype":"I8","shape":[4096,4096],"data_offsets":[0,16777216]}})J";
  {
    std::ofstream out(dir + "/model-00001-of-00001.safetensors", std::ios::binary);
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << header;
  }
  std::filesystem::resize_file(dir + "/model-00001-of-00001.safetensors", 8 + header.size() + 16777216);
  auto m = model::resolve_model(dir);
  ASSERT_TRUE(m.has_value()) << m.error().describe();
  ASSERT_TRUE(m->exact_weight_bytes.has_value());
  auto s = pftest::fit_setup("Qwen/Qwen3-0.6B", "910B3", "vllm-ascend", "0.11.0");
  const double rope = 40960.0 * 128.0 * s.overheads.rope_cache_bytes_per_element;
  EXPECT_NEAR(fit_on(*m, "0.11.0", "ascend").weights_bytes, 16777216.0 + rope, 1.0);
  EXPECT_NEAR(fit_on(*m, "0.23.0", "").weights_bytes, 16777216.0 + rope, 1.0);
  EXPECT_NEAR(fit_on(*m, "0.11.0", "").weights_bytes, qwen3_32b_bf16_weights_with_rope(s.overheads), 1.0);
}

// The cheapest fix of the unquantized fit names the flag: Qwen3-32B as bf16 on 2 x 910B4 (29.49 GiB each) needs
// 65,524,246,528 / 2 B = 30.51 GiB of weights per card (weights_oom); with --quantization ascend the int8 linears
// (31.2 G of the 32.76 G parameters at about 1 B) leave room for the KV cache.
TEST(NoQuant, Issue15_16_CheapestFixOfTheUnquantizedCheckpointIsTheFlag) {
  const std::string dir = modelslim_checkpoint("noquant-fix", "Qwen__Qwen3-32B");
  auto m = model::resolve_model(dir);
  ASSERT_TRUE(m.has_value()) << m.error().describe();
  auto s = pftest::fit_setup("Qwen/Qwen3-0.6B", "910B4", "vllm-ascend", "0.11.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.max_model_len = 4096;
  const auto base = estimate::estimate_fit(*m, s.device, s.engine, s.overheads, d);
  ASSERT_EQ(base.failure, estimate::Failure::weights_oom);
  EXPECT_NE(base.failure_message.find("add --quantization ascend"), std::string::npos) << base.failure_message;
  const auto fixes = plan::search_fixes(*m, s.device, s.engine, s.overheads, d, base);
  ASSERT_FALSE(fixes.fix_flags.empty());
  EXPECT_EQ(fixes.fix_flags.front(), "--quantization ascend");
  // Where the version detects the descriptor there is nothing to fix.
  auto detected = pftest::fit_setup("Qwen/Qwen3-0.6B", "910B4", "vllm-ascend", "0.23.0");
  EXPECT_TRUE(estimate::estimate_fit(*m, detected.device, detected.engine, detected.overheads, d).fits);
}

// A checkpoint whose config.json kept the original's quantization_config (Qwen3-32B-FP8's fp8 block config): up to
// 0.11 override_quantization_method turns any quantization_config into "ascend"; from 0.12 a quant_method is kept,
// so 0.13 runs fp8, which its platform refuses, until 0.17 detects the descriptor first.
TEST(NoQuant, Issue15_16_ConfigThatKeptAQuantizationConfigByVersion) {
  const std::string dir = modelslim_checkpoint("noquant-fp8cfg", "Qwen__Qwen3-32B-FP8");
  auto m = model::resolve_model(dir);
  ASSERT_TRUE(m.has_value()) << m.error().describe();
  ASSERT_EQ(m->quant.method, "ascend");
  EXPECT_EQ(m->quant.config_quant_method, "fp8");
  const auto old = fit_on(*m, "0.11.0", "");
  EXPECT_EQ(old.quantization, "ascend");
  EXPECT_TRUE(has_assumption(old, "selects 'ascend'"));
  const auto mid = fit_on(*m, "0.13.0", "");
  EXPECT_EQ(mid.failure, estimate::Failure::unsupported_quantization);
  EXPECT_NE(mid.failure_message.find("fp8 quantization is currently not supported in npu."), std::string::npos) << mid.failure_message;
  EXPECT_EQ(fit_on(*m, "0.17.0", "").quantization, "ascend");
}

// The held-out case itself, through validate: DeepSeek-V3.1 (config_hint) as an msModelSlim W8A8 checkpoint without
// --quantization on vllm-ascend 0.11.0, TP 16 on 910B2C (60.97 GiB total). Before: unsupported_quantization (the
// hint's fp8 quantization_config, which the msModelSlim checkpoint does not keep). Now the bf16 model: its
// 671,026,419,200 parameters (docs/quant-variants.md) x 2 B / 16 ranks = 83,878,302,400 B = 78.12 GiB even with
// every tensor sharded (the replicated MLA down-projections and routers only add), above the 60.97 GiB card.
TEST(NoQuant, Issue15_16_HeldOutCase4013IsWeightsOomWithoutTheFlag) {
  const std::string dir = pftest::scratch_dir("noquant-4013");
  const std::string path = dir + "/case.jsonl";
  const std::string common =
      R"J("model":"DeepSeek-V3.1-Terminus-w8a8-QuaRot (local path)","config_hint":"deepseek-ai/DeepSeek-V3.1","engine":"vllm-ascend",)J"
      R"J("engine_version":"0.11.0","device":"Ascend 910B2C 64GB (16 per node; PyTorch: 60.97 GiB total capacity)","num_devices":16,)J"
      R"J("tensor_parallel_size":16,"gpu_memory_utilization":0.96,"max_model_len":1024,"max_num_seqs":1,"max_num_batched_tokens":1024,)J"
      R"J("enforce_eager":true,"enable_expert_parallel":false,"fits":false,"failure":"weights_oom","quantization":null)J";
  std::ofstream(path) << "{\"id\":\"with\"," << common << R"J(,"checkpoint_quantization":"w8a8 (msModelSlim)"})J" << "\n"
                      << "{\"id\":\"without\"," << common << "}\n"
                      << "{\"id\":\"flag\"," << R"J("model":"x","config_hint":"deepseek-ai/DeepSeek-V3.1","engine":"vllm-ascend","engine_version":"0.11.0",)J"
                      << R"J("device":"910B2C","num_devices":16,"tensor_parallel_size":16,"gpu_memory_utilization":0.96,"max_model_len":1024,)J"
                      << R"J("fits":false,"failure":"weights_oom","quantization":"ascend","checkpoint_quantization":"w8a8 (msModelSlim)"})J" << "\n";
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({path}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  for (const auto& row : r->rows) ASSERT_FALSE(row.skipped) << row.id << ": " << row.skip_reason;
  const auto& with = r->rows[0];
  EXPECT_EQ(with.predicted_failure, "weights_oom");
  EXPECT_GE(with.memory_terms.at("weights"), 83878302400.0);
  EXPECT_GT(with.memory_terms.at("weights"), 60.97 * k_gib);
  // The case without the field keeps the hint's fp8 config: what preflight predicted before.
  EXPECT_EQ(r->rows[1].predicted_failure, "unsupported_quantization");
  // With --quantization ascend the W8A8 checkpoint is sized as W8A8: about half the bf16 bytes.
  EXPECT_LT(r->rows[2].memory_terms.at("weights"), 0.6 * 83878302400.0);
}

TEST(NoQuant, Issue15_16_UnknownCheckpointQuantizationIsBadInput) {
  const std::string dir = pftest::scratch_dir("noquant-bad");
  const std::string path = dir + "/case.jsonl";
  std::ofstream(path) << R"({"id":"bad","model":"Qwen/Qwen3-32B","engine":"vllm-ascend","device":"910B3","fits":true,"checkpoint_quantization":"zz9 magic"})" << "\n";
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({path}, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(r.error().message.find("checkpoint_quantization 'zz9 magic'"), std::string::npos) << r.error().message;
}
