// Issue 16 (h-quant24): GPTQModel's per-module "dynamic" overrides, read from a real published descriptor and sized by
// hand. vLLM (vllm/model_executor/layers/quantization/utils/gptq_utils.py get_dynamic_override / override_config /
// get_linear_quant_method, vllm-project/vllm commit 93e5a576): the first entry whose regex matches the module's prefix
// from its start (re.match) decides; "-:" leaves the module unquantized, any other entry overrides bits / group_size /
// desc_act / sym. tests/quantization/test_gptq_dynamic.py loads this very checkpoint family and asserts layer 0 at
// 4 bits group 128, layer 1 at 8 bits group 32, layers >= 2 UnquantizedLinearMethod.
//
// The descriptor: tests/fixtures/quant/ModelCloud__TinyLlama-1.1B-Chat-v1.0-GPTQ-4bits-dynamic-cfg/quantize_config.json
// (575 bytes, as the hub page lists it); the model around it: the config.json of ModelCloud's plain GPTQModel export of
// the same model (TinyLlama-1.1B-Chat-v1.0-GPTQ-4bit-10-25-2024), whose quantization_config this test replaces by the
// dynamic checkpoint's (GPTQModel writes the same object to both files). Sources in tests/fixtures/quant/README.md.
// Before: "dynamic" was not read and every layer was sized at 4 bits group 128 (767,270,912 B of tensors, 0.77 GB).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/json_util.hpp"
#include "model/hf_config.hpp"
#include "model/model_spec.hpp"
#include "model/quant_scheme.hpp"
#include "../test_support.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {

const char* k_dynamic_dir = "ModelCloud__TinyLlama-1.1B-Chat-v1.0-GPTQ-4bits-dynamic-cfg";
const char* k_base_dir = "ModelCloud__TinyLlama-1.1B-Chat-v1.0-GPTQ-4bit-10-25-2024";

Json fixture_json(const std::string& rel) {
  const std::string path = pftest::quant_fixture(rel);
  auto j = parse_json(pftest::read_all(path), path);
  EXPECT_TRUE(j.has_value()) << path;
  return j ? *j : Json{};
}

// The sibling export's config.json with the dynamic checkpoint's descriptor as its quantization_config, optionally
// with `patch` applied to that descriptor.
Json dynamic_config(const std::function<void(Json&)>& patch = {}) {
  Json config = fixture_json(std::string(k_base_dir) + "/config.json");
  Json q = fixture_json(std::string(k_dynamic_dir) + "/quantize_config.json");
  if (patch) patch(q);
  config["quantization_config"] = q;
  return config;
}

std::string write_dir(const std::string& name, const Json& config) {
  const std::string dir = pftest::scratch_dir(name);
  std::ofstream(dir + "/config.json") << config.dump(2);
  return dir;
}

// TinyLlama-1.1B (hidden 2048, intermediate 5632, 22 layers, 32 x 64 query and 4 x 64 KV heads, vocab 32000, untied),
// per layer as out x in: q 2048x2048, k 256x2048, v 256x2048, o 2048x2048, gate 5632x2048, up 5632x2048, down 2048x5632
//   = 44,040,192 weights; inputs (g_idx) 6 x 2048 + 5632 = 17,920.
// Layer 0, 4 bits group 128 (GPTQ layout: qzeros stored though symmetric, g_idx):
//   qweight 44,040,192 / 2 = 22,020,096
//   scales fp16 [in/128, out]: q 16x2048x2 = 65,536, k 8,192, v 8,192, o 65,536, gate 16x5632x2 = 180,224, up 180,224,
//     down 44x2048x2 = 180,224 -> 688,128; qzeros int32 [in/128, out/8] = 688,128 / 4 = 172,032; g_idx 17,920 x 4 = 71,680
//   = 22,951,936
// Layer 1, 8 bits group 32 (the ".*\.1\..*" entry):
//   qweight 44,040,192; scales [in/32, out] x 2: q 64x2048x2 = 262,144, k 32,768, v 32,768, o 262,144,
//     gate 64x5632x2 = 720,896, up 720,896, down 176x2048x2 = 720,896 -> 2,752,512; qzeros [in/32, out/4] int32
//     = 1,376,256; g_idx 71,680  = 48,240,640
// Layers 2..21 ("-:model\.layers\.([2-9]\d*|[1-9]\d+)\..*"): bf16, 20 x 44,040,192 x 2 = 1,761,607,680
// embed_tokens + lm_head ("lm_head": false) bf16: 2 x 32,000 x 2,048 x 2 = 262,144,000; norms (2 x 2048 x 22 + 2048) x 2 = 184,320
constexpr double k_layer0 = 22951936.0, k_layer1 = 48240640.0, k_unquantized_layers = 1761607680.0;
constexpr double k_outside_layers = 262144000.0 + 184320.0;
constexpr double k_tensors = k_layer0 + k_layer1 + k_unquantized_layers + k_outside_layers;  // 2,095,128,576
// vLLM's rotary cos_sin_cache [max_position_embeddings 2048, head_dim 64] x 2 B, in fit's weights term.
constexpr double k_rotary = 2048.0 * 64 * 2;

}  // namespace

// The entries are read with their prefixes, bits and groups; the checkpoint's own bits and group stay the base.
TEST(GptqDynamic, Issue16_RealDescriptorRulesAreRead) {
  const Json q = fixture_json(std::string(k_dynamic_dir) + "/quantize_config.json");
  auto s = parse_quantization_config(q, "quantize_config.json");
  ASSERT_TRUE(s.has_value()) << s.error().describe();
  EXPECT_EQ(s->linear_format, WeightFormat::int4_group);
  EXPECT_EQ(s->group_size, 128);
  EXPECT_TRUE(s->group_index);
  EXPECT_FALSE(s->lm_head_quantized);
  ASSERT_EQ(s->gptq_dynamic.size(), 2u);
  EXPECT_TRUE(s->gptq_dynamic[0].skip);
  EXPECT_EQ(s->gptq_dynamic[0].pattern, "model\\.layers\\.([2-9]\\d*|[1-9]\\d+)\\..*");
  EXPECT_FALSE(s->gptq_dynamic[1].skip);
  EXPECT_EQ(s->gptq_dynamic[1].pattern, ".*\\.1\\..*");
  EXPECT_EQ(s->gptq_dynamic[1].bits, 8);
  EXPECT_EQ(s->gptq_dynamic[1].group_size, 32);
  EXPECT_NE(s->detail.find("2 dynamic rules"), std::string::npos) << s->detail;
}

// One module per rule outcome, at vLLM's prefixes (test_gptq_dynamic.py's names): the match is anchored at the start
// and not at the end, the first matching entry decides.
TEST(GptqDynamic, Issue16_ModuleBytesFollowTheFirstMatchingRule) {
  const Json q = fixture_json(std::string(k_dynamic_dir) + "/quantize_config.json");
  auto s = parse_quantization_config(q, "quantize_config.json");
  ASSERT_TRUE(s.has_value());
  // qkv of layer 0 as one q 2048x2048: 4 bits, 16 groups: 2,097,152 + 65,536 + 16,384 + 8,192
  EXPECT_DOUBLE_EQ(gptq_dynamic_linear_bytes(*s, WeightFormat::int4_group, "model.layers.0.self_attn.qkv_proj", 2048, 2048, 2),
                   2097152.0 + 65536.0 + 16384.0 + 8192.0);
  // layer 1: 8 bits, 64 groups: 4,194,304 + 262,144 + 131,072 + 8,192
  EXPECT_DOUBLE_EQ(gptq_dynamic_linear_bytes(*s, WeightFormat::int4_group, "model.layers.1.self_attn.qkv_proj", 2048, 2048, 2),
                   4194304.0 + 262144.0 + 131072.0 + 8192.0);
  // layers 2, 10, 21: unquantized, 2048 x 2048 x 2
  for (const char* layer : {"model.layers.2.mlp.gate_up_proj", "model.layers.10.mlp.down_proj", "model.layers.21.self_attn.o_proj"})
    EXPECT_DOUBLE_EQ(gptq_dynamic_linear_bytes(*s, WeightFormat::int4_group, layer, 2048, 2048, 2), 2048.0 * 2048 * 2) << layer;
  // re.match is anchored at the start: "xmodel.layers.5..." does not match the negative entry and stays at 4 bits
  EXPECT_DOUBLE_EQ(gptq_dynamic_linear_bytes(*s, WeightFormat::int4_group, "xmodel.layers.5.mlp.down_proj", 2048, 2048, 2),
                   2097152.0 + 65536.0 + 16384.0 + 8192.0);
  // a module the scheme leaves in the model dtype stays there whatever the rules say
  EXPECT_DOUBLE_EQ(gptq_dynamic_linear_bytes(*s, WeightFormat::native, "model.layers.1.self_attn.qkv_proj", 2048, 2048, 2), 2048.0 * 2048 * 2);

  // Group -1 is one group per input row (vLLM gptq.py: group_size -1 -> input_size): 4 bits, 1 group
  QuantScheme per_channel = *s;
  per_channel.gptq_dynamic = {GptqDynamicRule{.pattern = ".*", .skip = false, .bits = 4, .group_size = -1}};
  EXPECT_DOUBLE_EQ(gptq_dynamic_linear_bytes(per_channel, WeightFormat::int4_group, "model.layers.3.mlp.down_proj", 2048, 2048, 2),
                   2097152.0 + 4096.0 + 1024.0 + 8192.0);
}

// The whole model: parse_hf_config's weight groups sum to the hand total, and that total is inside the published file
// (model.safetensors 2.1 GB on the hub page: 2.05e9 .. 2.15e9 B); the 4-bit-everywhere reading (no rules) is not.
TEST(GptqDynamic, Issue16_WholeModelSizedByHandAndAgainstThePublishedFile) {
  auto spec = parse_hf_config(dynamic_config(), "config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  double total = 0;
  for (const auto& g : spec->weights) total += weight_group_bytes(*spec, g);
  EXPECT_NEAR(total, k_tensors, 1.0);
  EXPECT_GT(k_tensors, 2.05e9);
  EXPECT_LT(k_tensors, 2.15e9);

  auto plain = parse_hf_config(dynamic_config([](Json& q) { q["dynamic"] = nullptr; }), "config.json");
  ASSERT_TRUE(plain.has_value());
  double plain_total = 0;
  for (const auto& g : plain->weights) plain_total += weight_group_bytes(*plain, g);
  EXPECT_NEAR(plain_total, 22 * k_layer0 + k_outside_layers, 1.0);  // 767,270,912 B: outside the published 2.1 GB
  EXPECT_LT(plain_total, 2.05e9);
}

// `fit` on the checkpoint directory sizes the same tensors (plus vLLM's rotary cache) on a GPU.
TEST(GptqDynamic, Issue16_FitOnTheCheckpointDirectory) {
  const std::string dir = write_dir("gptq-dynamic", dynamic_config());
  const double weights = pftest::fit_weights_bytes(dir);
  EXPECT_NEAR(weights, k_tensors + k_rotary, 1e-6 * k_tensors);
}

// Bad descriptors name the file and the entry (exit 2 from fit, as any corrupt config.json).
TEST(GptqDynamic, Issue16_BadDynamicEntriesAreRefused) {
  struct Row {
    std::function<void(Json&)> patch;
    std::string fragment;
  };
  const std::vector<Row> rows = {
      {[](Json& q) { q["dynamic"] = Json::array(); }, "quantization_config.dynamic: expected an object"},
      {[](Json& q) { q["dynamic"] = {{"-:model\\.layers\\.(", Json::object()}}; }, "is not a regular expression"},
      {[](Json& q) { q["dynamic"] = {{"+:.*", {{"bits", 5}}}}; }, "bits 5: GPTQ takes 2, 3, 4 or 8 bits"},
      {[](Json& q) { q["dynamic"] = {{"+:.*", {{"group_size", 0}}}}; }, "group_size 0: expected a positive size or -1"},
      {[](Json& q) { q["dynamic"] = {{"-:.*", true}}; }, "quantization_config.dynamic.-:.*: expected an object"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.fragment);
    const std::string dir = write_dir("gptq-dynamic-bad", dynamic_config(row.patch));
    const auto r = pftest::run_cli("fit " + dir + " --device H100-SXM --max-model-len 2048");
    EXPECT_EQ(r.code, 2) << r.out.substr(0, 300);
    EXPECT_NE(r.out.find(row.fragment), std::string::npos) << r.out.substr(0, 300);
    EXPECT_NE(r.out.find("config.json"), std::string::npos) << r.out.substr(0, 300);
  }
}

// GPTQ's per-channel export ("group_size": -1, as TheBloke's quantize_config.json files write it, e.g.
// https://huggingface.co/TheBloke/Saily_220B-GPTQ/commit/6801dbadc3b090ade88b2a1630fb3cf600220f4d): vLLM gptq.py sizes
// scales and qzeros [1, out] (group_size -1 -> input_size). One 4096 x 4096 linear at 4 bits:
//   qweight 8,388,608 + scales 1 x 4096 x 2 = 8,192 + qzeros 1 x 4096 / 2 = 2,048 + g_idx 4096 x 4 = 16,384 = 8,415,232 B
// (read as group 128 before: 32 groups, 8,388,608 + 262,144 + 65,536 + 16,384 = 8,732,672 B).
TEST(GptqDynamic, Issue16_GroupMinusOneIsOneGroupPerRow) {
  auto q = parse_json(R"({"bits": 4, "group_size": -1, "desc_act": true, "sym": true, "quant_method": "gptq"})", "quantize_config.json");
  ASSERT_TRUE(q.has_value());
  auto s = parse_quantization_config(*q, "quantize_config.json");
  ASSERT_TRUE(s.has_value()) << s.error().describe();
  EXPECT_EQ(s->group_size, -1);
  EXPECT_NE(s->detail.find("one group per row"), std::string::npos) << s->detail;
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::int4_group, 4096, 4096, *s, 2), 8388608.0 + 8192.0 + 2048.0 + 16384.0);
  // AWQ has no per-channel form: -1 stays the default group 128 there
  auto awq = parse_json(R"({"bits": 4, "group_size": -1, "zero_point": true, "quant_method": "awq", "version": "gemm"})", "config.json");
  ASSERT_TRUE(awq.has_value());
  auto a = parse_quantization_config(*awq, "config.json");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->group_size, 128);
}

// Issue 16 (h-quant25): vLLM applies the "dynamic" rules in the file's order, the first match deciding
// (gptq_utils.py get_dynamic_override: `for pattern, pattern_dict in config.dynamic.items()`, vllm-project/vllm
// 02239f5e). Two overlapping rules written "-:" first: layer 0's MLP matches both. preflight::Json sorts '+' (0x2B)
// before '-' (0x2D), so a sorted reading applies the 8-bit rule to it; the file's order leaves it unquantized.
//   rule 1 "-:model\.layers\.[0-9]+\.mlp\..*": every MLP unquantized
//   rule 2 "+:model\.layers\.0\..*": layer 0 at 8 bits, group 32
// TinyLlama, per layer (shapes above):
//   MLP weights 3 x 5632 x 2048 = 34,603,008; bf16 69,206,016
//   MLP at 8 bits g32 (the sorted reading, layer 0): 34,603,008 + scales 2,162,688 + qzeros 1,081,344 + g_idx 38,912
//     = 37,885,952
//   attention q 2048x2048, k/v 256x2048, o 2048x2048 = 9,437,184 weights;
//     layer 0 at 8 bits g32: 9,437,184 + scales (64 x (2048+256+256+2048) x 2 = 589,824) + qzeros 294,912
//       + g_idx 4 x 2048 x 4 = 32,768 -> 10,354,688
//     layers 1..21 at 4 bits g128: 4,718,592 + scales 147,456 + qzeros 36,864 + g_idx 32,768 = 4,935,680
// File order: 10,354,688 + 69,206,016 + 21 x (4,935,680 + 69,206,016) + embed/head/norms 262,328,320 = 1,898,864,640
// Sorted order: 1,898,864,640 - 69,206,016 + 37,885,952 = 1,867,544,576
TEST(GptqDynamic, Issue16_RulesApplyInTheFilesOrder) {
  Json config = fixture_json(std::string(k_base_dir) + "/config.json");
  Json q = fixture_json(std::string(k_dynamic_dir) + "/quantize_config.json");
  q["dynamic"] = "DYNAMIC_RULES";
  config["quantization_config"] = q;
  std::string text = config.dump(2);
  const std::string rules = R"({
      "-:model\\.layers\\.[0-9]+\\.mlp\\..*": {},
      "+:model\\.layers\\.0\\..*": {"bits": 8, "group_size": 32}
    })";
  const size_t at = text.find("\"DYNAMIC_RULES\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 15, rules);
  const std::string dir = pftest::scratch_dir("gptq-dynamic-order");
  std::ofstream(dir + "/config.json") << text;

  auto spec = load_hf_config(dir + "/config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  ASSERT_EQ(spec->quant.gptq_dynamic.size(), 2u);
  EXPECT_TRUE(spec->quant.gptq_dynamic[0].skip);
  EXPECT_EQ(spec->quant.gptq_dynamic[1].bits, 8);
  double total = 0;
  for (const auto& g : spec->weights) total += weight_group_bytes(*spec, g);
  EXPECT_NEAR(total, 1898864640.0, 1.0);

  // The same text read without the key scan (parse_hf_config of the parsed object): the sorted order.
  auto parsed = parse_json(text, "config.json");
  ASSERT_TRUE(parsed.has_value());
  auto sorted = parse_hf_config(*parsed, "config.json");
  ASSERT_TRUE(sorted.has_value());
  double sorted_total = 0;
  for (const auto& g : sorted->weights) sorted_total += weight_group_bytes(*sorted, g);
  EXPECT_NEAR(sorted_total, 1867544576.0, 1.0);

  // fit on the directory sizes the file's order (plus vLLM's rotary cache).
  const double weights = pftest::fit_weights_bytes(dir);
  EXPECT_NEAR(weights, 1898864640.0 + k_rotary, 1e-6 * 1898864640.0);
}

// The real ModelCloud descriptor read from its own text: its two rules do not overlap, and its size is unchanged.
TEST(GptqDynamic, Issue16_RealDescriptorThroughTheFileReader) {
  const std::string dir = pftest::scratch_dir("gptq-dynamic-real-text");
  Json config = fixture_json(std::string(k_base_dir) + "/config.json");
  config["quantization_config"] = "QUANT";
  std::string text = config.dump(2);
  const size_t at = text.find("\"QUANT\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 7, pftest::read_all(pftest::quant_fixture(std::string(k_dynamic_dir) + "/quantize_config.json")));
  std::ofstream(dir + "/config.json") << text;
  auto spec = load_hf_config(dir + "/config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  ASSERT_EQ(spec->quant.gptq_dynamic.size(), 2u);
  EXPECT_TRUE(spec->quant.gptq_dynamic[0].skip);
  double total = 0;
  for (const auto& g : spec->weights) total += weight_group_bytes(*spec, g);
  EXPECT_NEAR(total, k_tensors, 1.0);
}

// Issue 19: a map with one rule per layer and 2,000 rules that match nothing (a hub config may hold tens of thousands;
// `fit` on 20,000 took 2.2 s while each module prefix compared the whole rule list and allocated per regex run). Every
// even layer at 8 bits group 32 ("+:model\.layers\.<i>\..*"), the odd ones at the checkpoint's 4 bits group 128:
// 11 x k_layer1 + 11 x k_layer0 + the bf16 embeddings, head and norms, by the arithmetic above. Layer 2's rule must not
// take layer 20 ("model.layers.20." does not start with the rule's literal "model.layers.2."), nor layer 1's the
// layers 10..19. A second scheme sized in between (the rule lists are cached per thread by value) keeps its own answer.
TEST(GptqDynamic, Issue19_OneRulePerLayerAmongThousands) {
  Json rules = Json::object();
  for (int i = 0; i < 2000; ++i) rules["-:visual\\.blocks\\." + std::to_string(i) + "\\..*"] = Json::object();
  for (int i = 0; i < 22; i += 2) rules["+:model\\.layers\\." + std::to_string(i) + "\\..*"] = Json{{"bits", 8}, {"group_size", 32}};
  auto spec = parse_hf_config(dynamic_config([&](Json& q) { q["dynamic"] = rules; }), "config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  ASSERT_EQ(spec->quant.gptq_dynamic.size(), 2011u);
  auto real = parse_hf_config(dynamic_config(), "config.json");
  ASSERT_TRUE(real.has_value());
  for (int round = 0; round < 2; ++round) {
    double total = 0, real_total = 0;
    for (const auto& g : spec->weights) {
      total += weight_group_bytes(*spec, g);
      real_total += weight_group_bytes(*real, g);
    }
    EXPECT_NEAR(total, 11 * k_layer1 + 11 * k_layer0 + k_outside_layers, 1.0) << "round " << round;
    EXPECT_NEAR(real_total, k_tensors, 1.0) << "round " << round;
  }
}
