// Issue 16: one variant list for fit, plan and validate, checked through the real binary.
#include <gtest/gtest.h>

#include <cmath>

#include "base/json_util.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using pftest::json_of;

namespace {
double weights_gib(const Json& fit) { return pftest::term_gib(fit, "weights"); }
}  // namespace

// The plan's recommended row and `fit --variant` with that row's variant name and layout give the
// same weights and KV tokens: both size the variant from the same record.
TEST(VariantCli, Issue16_FitVariantAgreesWithPlanOnTheSameDeployment) {
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4 --context 32768 --json", {.with_stderr = false});
  ASSERT_EQ(plan.code, 0) << plan.out;
  const Json p = json_of(plan);
  ASSERT_FALSE(p["recommended"].empty());
  const Json& row = p["recommended"][0];
  const std::string variant = row["variant_id"].get<std::string>();
  ASSERT_FALSE(variant.empty()) << row.dump();  // BF16 does not fit 2 x 32 GB at 32K: a quantized variant is chosen
  const int64_t n = row["num_devices"].get<int64_t>();
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B4 --num-devices " + std::to_string(n) + " --max-model-len 32768 --variant " + variant + " --json",
                                   {.with_stderr = false});
  ASSERT_EQ(fit.code, 0) << fit.out;
  const Json f = json_of(fit);
  EXPECT_DOUBLE_EQ(weights_gib(f), row["weights_gib_per_device"].get<double>());
  EXPECT_EQ(f["kv_cache"]["tokens"].get<int64_t>(), row["kv_cache_tokens"].get<int64_t>());
  EXPECT_EQ(f["settings"]["quantization"], row["quantization"]);
}

// W4A8_DYNAMIC of Qwen3-32B on 2 x 910B4, by hand from config.json (hidden 5120, intermediate 25600,
// 64 layers, 64 x 128 query and 8 x 128 KV heads, vocab 151936, untied):
//   attention (W8A8_DYNAMIC: int8 + bf16 scale and offset per output row):
//     q 8192x5120 + o 5120x8192: 2 x 41,943,040 + (8192 + 5120) x 4 = 83,939,328
//     k, v 1024x5120: 2 x (5,242,880 + 4,096) = 10,493,952
//   MLP (W4A8_DYNAMIC: int4 + fp32 scale, offset, scale_bias per output row):
//     gate, up 25600x5120: 2 x (65,536,000 + 307,200); down 5120x25600: 65,536,000 + 61,440 = 197,283,840
//   norms (bf16, replicated): (5120 + 5120 + 128 + 128) x 2 = 20,992
//   per layer 291,738,112; 64 layers = 18,671,239,168; TP 2 halves all but the norms: 9,336,291,328
//   embed_tokens + lm_head, bf16, vocab-parallel: 2 x 151936 x 5120 x 2 / 2 = 1,555,824,640; final norm 10,240
//   rotary cache 40960 x 128 x 8 B = 41,943,040 (the engine catalogue's calibrated element size)
//   = 10,934,069,248 bytes = 10.183 GiB per device
TEST(VariantCli, Issue16_W4A8DynamicWeightsByHand) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B4 --num-devices 2 --max-model-len 32768 --variant w4a8_dynamic --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 0) << fit.out;
  const double want = 10934069248.0 / 1073741824.0;
  EXPECT_NEAR(weights_gib(json_of(fit)), want, 0.001 * want);
}

TEST(VariantCli, Issue16_BadVariantInput) {
  // Unknown name: exit 2 and the known names.
  const auto unknown = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B4 --variant w3a7");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.out.find("unknown variant 'w3a7'"), std::string::npos) << unknown.out;
  EXPECT_NE(unknown.out.find("w4a8_dynamic"), std::string::npos) << unknown.out;
  // --variant sets --quantization: both is ambiguous.
  const auto both = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B4 --variant awq --quantization fp8");
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.out.find("give one of the two"), std::string::npos) << both.out;
  // A variant the engine rejects on that card: the engine's own message, exit 1.
  const auto dense_w4a16 = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B4 --num-devices 4 --variant w4a16");
  EXPECT_EQ(dense_w4a16.code, 1);
  // vLLM-Ascend 0.23+ (the newest profile) words it so (modelslim_config.py create_scheme_for_layer at v0.23.0).
  EXPECT_NE(dense_w4a16.out.find("NotImplementedError: Currently, vLLM Ascend doesn't support quant_type=W4A16 for layer_type=linear. Please use a supported "
                                 "quantization format or load the model with its original float weights."),
            std::string::npos)
      << dense_w4a16.out;
  const auto awq_volta = pftest::run_cli("fit Qwen/Qwen3-8B --device V100-SXM2-32G --variant awq --json", {.with_stderr = false});
  EXPECT_EQ(awq_volta.code, 1);
  const Json j = json_of(awq_volta);
  EXPECT_EQ(j["failure"], "unsupported_quantization");
  EXPECT_EQ(j["failure_message"], "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.");
}

// Issue 16: the vLLM-Ascend version limits are rules fit and plan apply to the version --engine names (the
// 0.7-0.12 profile spans them: W4A8_DYNAMIC enters the quantizer table at v0.9.1rc2 / v0.10.0rc1). Messages
// as vllm_ascend/quantization/quantizer.py (v0.9.0rc2) and _310p/quantization/modelslim_config.py (v0.23.0)
// raise them; exit 1 (the engine refuses the deployment), as documented in fit --help.
TEST(VariantCli, Issue16_AscendVersionRulesInFitAndPlan) {
  const std::string fit32 = "fit Qwen/Qwen3-32B --device 910B4 --num-devices 2 --max-model-len 32768 --variant w4a8_dynamic --json --engine vllm-ascend@";
  const auto old = pftest::run_cli(fit32 + "0.9.0", {.with_stderr = false});
  EXPECT_EQ(old.code, 1) << old.out.substr(0, 400);
  const Json o = json_of(old);
  EXPECT_EQ(o["failure"], "unsupported_quantization");
  EXPECT_EQ(o["failure_message"], "NotImplementedError: Currently, vLLM Ascend only supports following quant types:['W8A8', 'W8A8_DYNAMIC']");
  const auto gap = pftest::run_cli(fit32 + "0.9.2rc1", {.with_stderr = false});
  EXPECT_EQ(json_of(gap)["failure_message"], "NotImplementedError: Currently, vLLM Ascend only supports following quant types:['W8A8', 'W8A8_DYNAMIC', 'C8']");
  const auto ok = pftest::run_cli(fit32 + "0.10.0", {.with_stderr = false});
  EXPECT_NE(json_of(ok)["failure"], "unsupported_quantization") << ok.out.substr(0, 400);
  // Plan: no W4A8_DYNAMIC row for 0.9.0; asked for by name, every row carries the engine's message.
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4 --context 32768 --engine vllm-ascend@0.9.0 --json", {.with_stderr = false});
  ASSERT_EQ(plan.code, 0) << plan.out.substr(0, 400);
  const Json p = json_of(plan);
  for (const char* list : {"recommended", "rejected"})
    for (const auto& row : p[list]) EXPECT_NE(row["variant_id"], "w4a8_dynamic") << row.dump().substr(0, 200);
  const auto named = pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4 --context 32768 --engine vllm-ascend@0.9.0 --variant w4a8_dynamic --json", {.with_stderr = false});
  const Json n = json_of(named);
  EXPECT_TRUE(n["recommended"].empty());
  ASSERT_FALSE(n["rejected"].empty());
  for (const auto& row : n["rejected"])
    EXPECT_EQ(row["reason"], "engine rejects it: NotImplementedError: Currently, vLLM Ascend only supports following quant types:['W8A8', 'W8A8_DYNAMIC']");
  // 310P builds its layers from its own registry (no W4A8_DYNAMIC): rejected on that card only.
  const auto p310 = pftest::run_cli("fit Qwen/Qwen3-8B --device 310P3 --max-model-len 4096 --variant w4a8_dynamic --engine vllm-ascend@0.23 --json", {.with_stderr = false});
  EXPECT_EQ(p310.code, 1);
  EXPECT_EQ(json_of(p310)["failure_message"], "NotImplementedError: Unsupported quant_type=W4A8_DYNAMIC for layer_type=linear.");
  const auto a2 = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --max-model-len 4096 --variant w4a8_dynamic --engine vllm-ascend@0.23 --json", {.with_stderr = false});
  EXPECT_NE(json_of(a2)["failure"], "unsupported_quantization");
}

// Issue 16: fit --variant on a checkpoint published in another format says what the variant is made from:
// DeepSeek-V3 (FP8 only) after the cast to BF16, Qwen3-32B-FP8 from its BF16 original; a BF16 model has no
// such line.
TEST(VariantCli, Issue16_FitVariantOfAPublishedFp8CheckpointSaysWhatItIsMadeFrom) {
  auto made_from = [](const std::string& args) {
    const auto fit = pftest::run_cli("fit " + args + " --variant w4a8_dynamic --json", {.with_stderr = false});
    std::string line;
    const Json j = json_of(fit);
    for (const auto& a : j["assumptions"])
      if (a.get<std::string>().find("variant w4a8_dynamic of ") == 0) line = a.get<std::string>();
    return line;
  };
  const std::string ds = made_from("deepseek-ai/DeepSeek-V3 --device 910B3 --num-devices 16");
  EXPECT_NE(ds.find("(published as FP8 block 128x128 (DeepSeek / Qwen FP8 checkpoints)): made after a cast to BF16 with DeepSeek-V3 "
                    "inference/fp8_cast_bf16.py"),
            std::string::npos)
      << ds;
  EXPECT_NE(ds.find("`preflight plan deepseek-ai/DeepSeek-V3 --variant w4a8_dynamic --commands`"), std::string::npos) << ds;
  const std::string qwen = made_from("Qwen/Qwen3-32B-FP8 --device 910B4 --num-devices 2");
  EXPECT_NE(qwen.find("made from its BF16 original Qwen/Qwen3-32B;"), std::string::npos) << qwen;
  EXPECT_EQ(made_from("Qwen/Qwen3-32B --device 910B4 --num-devices 2"), "");
}

// Plan as a user reads it: full variant names in the table, a start command for every row with
// --commands, and one in --json for every recommended row.
TEST(VariantCli, Issue16_PlanShowsFullNamesAndEveryStartCommand) {
  const std::string args = "plan Qwen/Qwen3.6-27B --devices 910B4,H100-SXM --context 4096";
  const auto text = pftest::run_cli(args + " --commands", {.with_stderr = false});
  ASSERT_EQ(text.code, 0) << text.out;
  // With its Gated-DeltaNet projections in bf16 (msModelSlim's qwen3_5 practices, docs/quant-variants.md) W4A8_DYNAMIC no
  // longer leaves KV room on one 910B4; W8A8 on two is the 910B4 row.
  EXPECT_NE(text.out.find("msModelSlim W8A8 (static; MoE experts W8A8_DYNAMIC) 910B4"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("start Qwen/Qwen3.6-27B (msModelSlim W8A8 (static; MoE experts W8A8_DYNAMIC)) on 2x 910B4:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("start Qwen/Qwen3.6-27B (bf16 as published) on 1x H100-SXM:"), std::string::npos) << text.out;
  const auto plain = pftest::run_cli(args, {.with_stderr = false});
  EXPECT_EQ(plain.out.find("start Qwen/Qwen3.6-27B (bf16"), std::string::npos);  // without --commands only the first
  const auto js = pftest::run_cli(args + " --json", {.with_stderr = false});
  const Json j = json_of(js);
  ASSERT_EQ(j["recommended"].size(), 2u);
  for (const auto& row : j["recommended"]) EXPECT_NE(row["launch"]["serve"].get<std::string>().find("vllm serve "), std::string::npos) << row.dump().substr(0, 200);
}

// The same name in plan --variant and fit --variant: the same weights and KV tokens; an unknown one is
// exit 2 in both.
TEST(VariantCli, Issue16_SameNameInPlanAndFit) {
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4 --context 32768 --variant w4a8_dynamic --json", {.with_stderr = false});
  ASSERT_EQ(plan.code, 0) << plan.out;
  const Json p = json_of(plan);
  ASSERT_EQ(p["recommended"].size(), 1u);
  const Json& row = p["recommended"][0];
  EXPECT_EQ(row["variant_id"], "w4a8_dynamic");
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B4 --num-devices " + std::to_string(row["num_devices"].get<int64_t>()) +
                                       " --max-model-len 32768 --variant w4a8_dynamic --json",
                                   {.with_stderr = false});
  ASSERT_EQ(fit.code, 0) << fit.out;
  const Json f = json_of(fit);
  EXPECT_DOUBLE_EQ(weights_gib(f), row["weights_gib_per_device"].get<double>());
  EXPECT_EQ(f["kv_cache"]["tokens"].get<int64_t>(), row["kv_cache_tokens"].get<int64_t>());
  const auto unknown = pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4 --variant w3a7");
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.out.find("known variants: bf16, w8a8"), std::string::npos) << unknown.out;
}

// Issue 16: a published checkpoint that is a variant of the list (read from its own descriptor) meets that
// variant's engine rules, in fit and in plan: Qwen3-8B-FP8 (block FP8) on a V100 is refused with vLLM's own
// capability message and exit 1 (it used to say "fits"), on an A100 it loads through FP8 Marlin and says so.
TEST(VariantCli, Issue16_CheckpointMeetsItsVariantsEngineRules) {
  const std::string refusal = "The quantization method fp8 is not supported for the current GPU. Minimum capability: 75. Current capability: 70.";
  const auto v100 = pftest::run_cli("fit Qwen/Qwen3-8B-FP8 --device V100-SXM2-32G --max-model-len 4096", {.with_stderr = false});
  EXPECT_EQ(v100.code, 1) << v100.out;
  EXPECT_NE(v100.out.find(refusal), std::string::npos) << v100.out;

  const auto a100 = pftest::run_cli("fit Qwen/Qwen3-8B-FP8 --device A100-80G-SXM --max-model-len 4096 --json", {.with_stderr = false});
  ASSERT_EQ(a100.code, 0) << a100.out.substr(0, 400);
  const Json f = json_of(a100);
  bool marlin = false, named = false;
  for (const auto& a : f["assumptions"]) {
    const std::string s = a.get<std::string>();
    marlin |= s.find("variant fp8_block on A100-80G-SXM") != std::string::npos && s.find("Marlin") != std::string::npos;
    named |= s.rfind("variant fp8_block: ", 0) == 0;
  }
  EXPECT_TRUE(marlin) << f["assumptions"].dump();
  EXPECT_TRUE(named) << f["assumptions"].dump();

  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B-FP8 --devices V100-SXM2-32G --json", {.with_stderr = false});
  const Json p = json_of(plan);
  EXPECT_TRUE(p["recommended"].empty()) << plan.out.substr(0, 400);
  ASSERT_FALSE(p["rejected"].empty());
  for (const auto& row : p["rejected"]) EXPECT_NE(row["reason"].get<std::string>().find(refusal), std::string::npos) << row.dump().substr(0, 300);
}

// Issue 16, read as a user reads it: `fit --variant` names the variant in one assumption line (the storage scheme is
// not said twice), and the layout with its sources, a paragraph for msModelSlim W8A8, is in --json's provenance,
// word for word as data/variants/quant_variants.json records it.
TEST(VariantCli, Issue16_VariantLayoutGoesToProvenanceNotTheAssumptions) {
  const Json variants = pftest::source_json("data/variants/quant_variants.json");
  const Json* w8a8 = nullptr;
  for (const auto& v : variants["variants"])
    if (v["id"] == "w8a8") w8a8 = &v;
  ASSERT_NE(w8a8, nullptr);
  const std::string source = (*w8a8)["source"].get<std::string>();
  const std::string name = (*w8a8)["name"].get<std::string>();
  ASSERT_GT(source.size(), 1000u);  // the paragraph that made the assumption unreadable
  const auto fit = pftest::run_cli("fit Qwen/Qwen3.6-27B --device 910B4 --variant w8a8 --json", {.with_stderr = false});
  const Json f = json_of(fit);
  int naming = 0, bare = 0;
  for (const auto& a : f["assumptions"]) {
    const std::string s = a.get<std::string>();
    EXPECT_EQ(s.find(source), std::string::npos) << s.substr(0, 200);
    if (s.rfind("variant w8a8: " + name, 0) == 0) ++naming;
    if (s == name) ++bare;
  }
  EXPECT_EQ(naming, 1) << f["assumptions"].dump().substr(0, 600);
  EXPECT_EQ(bare, 0) << f["assumptions"].dump().substr(0, 600);
  bool in_provenance = false;
  for (const auto& p : f["provenance"]) in_provenance |= p.get<std::string>().find(source) != std::string::npos;
  EXPECT_TRUE(in_provenance) << f["provenance"].dump().substr(0, 600);
  const auto text = pftest::run_cli("fit Qwen/Qwen3.6-27B --device 910B4 --variant w8a8", {.with_stderr = false});
  EXPECT_EQ(text.out.find(source), std::string::npos);
  EXPECT_NE(text.out.find("variant w8a8: " + name), std::string::npos) << text.out.substr(0, 600);
}

// Issue 16 (ux28), the seed's journey (seeds/000 4.3.1-4.3.3) end to end. A quantization vLLM-Ascend refuses on the card
// is refused before anything is sized: the text said "max_model_len 0; block 0", an empty "weights stored" and
// "requested 0.00", and printed pydantic's second line ("  Value error, ...") at the verdict's own indent. A W8A8 that
// does not load on one 910B4 listed "Loading model weights took 33.6129 GB" and "Available KV cache memory: -11.01 GiB"
// under "the engine will print", lines an engine that runs out of memory inside load_model never prints.
TEST(VariantCli, Issue16_SeedJourneyTextSaysOnlyWhatTheEngineDoes) {
  const auto fp8 = pftest::run_cli("fit Qwen/Qwen3.6-27B --device 910B4 --engine vllm-ascend@0.18 --variant fp8_block", {.with_stderr = false});
  EXPECT_EQ(fp8.code, 1) << fp8.out;
  EXPECT_EQ(fp8.out.find("max_model_len 0"), std::string::npos) << fp8.out;
  EXPECT_EQ(fp8.out.find("block 0"), std::string::npos) << fp8.out;
  EXPECT_EQ(fp8.out.find("requested "), std::string::npos) << fp8.out;
  EXPECT_EQ(fp8.out.find("weights stored"), std::string::npos) << fp8.out;
  EXPECT_NE(fp8.out.find("not sized: the engine refuses this deployment"), std::string::npos) << fp8.out;
  EXPECT_NE(fp8.out.find("\n    pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
                         "      Value error, fp8 quantization is currently not supported in npu.\n"),
            std::string::npos)
      << fp8.out;

  const auto w8a8 = pftest::run_cli("fit Qwen/Qwen3.6-27B --device 910B4 --engine vllm-ascend@0.18 --variant w8a8 --max-model-len 4096",
                                    {.with_stderr = false});
  EXPECT_EQ(w8a8.code, 1) << w8a8.out;
  EXPECT_NE(w8a8.out.find("does not fit (weights_oom)"), std::string::npos) << w8a8.out;
  EXPECT_EQ(w8a8.out.find("the engine will print"), std::string::npos) << w8a8.out;
  EXPECT_EQ(w8a8.out.find("Loading model weights took"), std::string::npos) << w8a8.out;
  EXPECT_NE(w8a8.out.find("--tensor-parallel-size 2 on 2 x 910B4"), std::string::npos) << w8a8.out;
  const Json j = json_of(pftest::run_cli("fit Qwen/Qwen3.6-27B --device 910B4 --engine vllm-ascend@0.18 --variant w8a8 --max-model-len 4096 --json",
                                         {.with_stderr = false}));
  EXPECT_TRUE(j["engine_lines"].empty()) << j["engine_lines"].dump();
}

// Issue 16 (ux28), seeds/000 4.3.3 then 4.3.1: AWQ of Qwen3.6-27B is refused on NPU ("awq quantization is currently not
// supported in npu."), and fit's fix was "--quantization ascend (a ModelSlim W8A8 export ...; fits)" on one 910B4: it
// sized the W8A8 checkpoint with the AWQ variant's int4 bytes. The seed's W8A8 upload (34G of files) ran out of memory
// on that card four times. Sized as --variant w8a8 (33.6 GiB of weights against 29.49 GiB total), the fix now says it
// needs --tensor-parallel-size 2, and fit --variant w8a8 agrees on both counts.
TEST(VariantCli, Issue16_RefusedAwqFixIsSizedAsTheCheckpointItNames) {
  const std::string base = "fit Qwen/Qwen3.6-27B --device 910B4 --engine vllm-ascend@0.18 --max-model-len 4096";
  const auto awq = pftest::run_cli(base + " --variant awq", {.with_stderr = false});
  EXPECT_EQ(awq.code, 1) << awq.out;
  EXPECT_NE(awq.out.find("awq quantization is currently not supported in npu."), std::string::npos) << awq.out;
  EXPECT_NE(awq.out.find("--quantization ascend (a ModelSlim W8A8 export with quant_model_description.json, sized as --variant w8a8; does not fit on 1 x "
                         "910B4; fits with --tensor-parallel-size 2)"),
            std::string::npos)
      << awq.out;
  const auto one = pftest::run_cli(base + " --variant w8a8", {.with_stderr = false});
  EXPECT_EQ(one.code, 1) << one.out;
  EXPECT_NE(one.out.find("does not fit (weights_oom)"), std::string::npos) << one.out;
  const auto two = pftest::run_cli(base + " --variant w8a8 --tensor-parallel-size 2", {.with_stderr = false});
  EXPECT_EQ(two.code, 0) << two.out;
}
