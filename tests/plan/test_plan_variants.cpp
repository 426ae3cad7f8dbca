// Issue 16 loose ends, through the real binary: plan rows of a published quantized checkpoint carry
// the variant's full name, and "what runs on 8 x 910B4" has a 4-bit Ascend answer for the big MoE models
// whose start command converts first (or serves a published checkpoint).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using pftest::json_of;

namespace {
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

// Qwen/Qwen3-32B-FP8's config.json says quant_method fp8, weight_block_size [128, 128]: the row is
// "FP8 block 128x128 (...)" (the fp8_block record of data/variants/quant_variants.json), in the table
// and in --json; the storage detail ("fp8 e4m3 weights, fp32 scale per 128x128 block") was shown before.
TEST(PlanVariants, Issue16_PublishedCheckpointRowsCarryTheVariantsFullName) {
  const std::string fp8_block = "FP8 block 128x128 (DeepSeek / Qwen FP8 checkpoints)";
  const auto text = pftest::run_cli("plan Qwen/Qwen3-32B-FP8 --devices H100 --context 32768", {.with_stderr = false});
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_TRUE(contains(text.out, "Qwen/Qwen3-32B-FP8                 " + fp8_block + " H100-SXM")) << text.out;
  EXPECT_TRUE(contains(text.out, "start the first one (Qwen/Qwen3-32B-FP8, " + fp8_block + "):")) << text.out;
  EXPECT_FALSE(contains(text.out, "fp8 e4m3 weights")) << text.out;

  const auto js = pftest::run_cli("plan Qwen/Qwen3-32B-FP8 --devices H100 --context 32768 --json", {.with_stderr = false});
  ASSERT_EQ(js.code, 0);
  const Json j = json_of(js);
  ASSERT_FALSE(j["recommended"].empty());
  EXPECT_EQ(j["recommended"][0]["variant"], fp8_block);
  EXPECT_EQ(j["recommended"][0]["variant_id"], "");  // as published: no conversion, no --quantization
  EXPECT_FALSE(contains(j["recommended"][0]["launch"]["serve"].get<std::string>(), "--quantization")) << j["recommended"][0]["launch"].dump();

  // The rejected rows name it too: DeepSeek-V3 (FP8 block) on vLLM-Ascend.
  const auto npu = pftest::run_cli("plan deepseek-ai/DeepSeek-V3 --devices 910B4 --all", {.with_stderr = false});
  EXPECT_TRUE(contains(npu.out, "deepseek-ai/DeepSeek-V3 [" + fp8_block + "] on ")) << npu.out.substr(0, 2000);
  // A BF16 checkpoint is still "bf16 as published".
  const auto bf16 = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100 --variant bf16 --json", {.with_stderr = false});
  ASSERT_EQ(bf16.code, 0) << bf16.out.substr(0, 400);
  EXPECT_EQ(json_of(bf16)["recommended"][0]["variant"], "bf16 as published");
}

// `plan --device 910B4 --num-devices 8` (910B4: 32 GB, 29.5 GiB usable, budget 0.92 x 29.5 = 27.1 GiB):
//  - Qwen3-235B-A22B in BF16 (54.9 GiB per device) and W8A8 do not fit; W4A8_DYNAMIC does. Its routed experts
//    by hand (config.json: hidden 4096, moe_intermediate_size 1536, 128 experts, 94 layers): 94 x 128 x 3 x
//    1536 x 4096 = 227,096,395,776 int4 weights = 113,548,197,888 B, + fp32 scale, offset and scale_bias per
//    output row (12 B x (1536 + 1536 + 4096) rows x 128 x 94 = 1,034,944,512 B) = 114,583,142,400 B, / TP 8 =
//    14,322,892,800 B = 13.339 GiB per device; attention (W8A8_DYNAMIC), embeddings and norms add at most 1.5 GiB.
//  - No published W4A8 checkpoint of it is known, so its start command runs msModelSlim's W4A8 conversion first
//    and serves the output with --quantization ascend; never the BF16 repo id with --quantization.
//  - Every row with --quantization ascend serves a conversion output made in its own prepare step, a published
//    checkpoint of the catalogue (vllm-ascend/..., Eco-Tech/... on ModelScope), or (W4A16, no catalogued recipe) the path its prepare step says
//    to produce first.
TEST(PlanVariants, Issue16_EightTimes910B4HasAFourBitAscendRowForTheBigMoEs) {
  const auto js = pftest::run_cli("plan --device 910B4 --num-devices 8 --json", {.with_stderr = false});
  ASSERT_EQ(js.code, 0) << js.out.substr(0, 400);
  const Json j = json_of(js);
  bool w4a8_tp8 = false;
  const auto catalog = engine::load_quantized_catalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  for (const auto& r : j["recommended"]) {
    const std::string serve = r["launch"]["serve"].get<std::string>();
    const std::string checkpoint = r["launch"]["checkpoint"].get<std::string>();
    std::string prepare;
    for (const auto& p : r["launch"]["prepare"]) prepare += p.get<std::string>() + "\n";
    SCOPED_TRACE(r["model"].get<std::string>() + " " + r["variant"].get<std::string>());
    EXPECT_EQ(serve.rfind("vllm serve " + checkpoint + " ", 0), 0u) << serve;
    if (contains(serve, "--quantization ascend")) {
      if (prepare.empty()) {
        // A published msModelSlim export of the quantized-checkpoint catalogue (vllm-ascend/..., Eco-Tech/... on ModelScope).
        const auto* published = engine::find_checkpoint_by_repo(*catalog, checkpoint);
        ASSERT_NE(published, nullptr) << checkpoint;
        EXPECT_EQ(published->quantization_flag, "ascend") << checkpoint;
      } else if (contains(prepare, "no conversion recipe on npu")) {
        // W4A16: no msModelSlim recipe is catalogued; the command says so and names the path it serves.
        EXPECT_TRUE(contains(prepare, "produce one at " + checkpoint + " first")) << prepare;
      } else {
        EXPECT_TRUE(contains(prepare, "msmodelslim quant --model_path ")) << prepare;
        EXPECT_TRUE(contains(prepare, "--save_path " + checkpoint + " ")) << prepare;  // serves what the conversion wrote
        // Issue 16: Qwen's FP8 releases are converted from their BF16 originals (data/engines/quantized_checkpoints.json),
        // never from the FP8 weights, and never cast: msModelSlim reads the original's download.
        const std::string model = r["model"].get<std::string>();
        if (model.size() > 4 && model.compare(model.size() - 4, 4, "-FP8") == 0) {
          const std::string original = model.substr(0, model.size() - 4);
          const std::string dir = "/models/" + original.substr(original.find('/') + 1);
          EXPECT_TRUE(contains(prepare, "hf download " + original + " --local-dir " + dir + "\n")) << prepare;
          EXPECT_TRUE(contains(prepare, "msmodelslim quant --model_path " + dir + " ")) << prepare;
          EXPECT_FALSE(contains(prepare, "fp8_cast_bf16.py")) << prepare;
        }
      }
    }
    if (r["model"] != "Qwen/Qwen3-235B-A22B") continue;
    EXPECT_NE(r["variant_id"], "") << "BF16 does not fit 8 x 910B4";
    EXPECT_NE(r["variant_id"], "w8a8");
    if (r["variant_id"] != "w4a8_dynamic" || r["tensor_parallel_size"] != 8) continue;
    w4a8_tp8 = true;
    EXPECT_EQ(r["variant"], "msModelSlim W4A8_DYNAMIC (attention W8A8_DYNAMIC)");
    EXPECT_EQ(r["context_tokens"], 32768);
    const double experts_gib = 14322892800.0 / 1073741824.0;
    EXPECT_GE(r["weights_gib_per_device"].get<double>(), experts_gib);
    EXPECT_LE(r["weights_gib_per_device"].get<double>(), experts_gib + 1.5);
    EXPECT_TRUE(contains(prepare, "hf download Qwen/Qwen3-235B-A22B --local-dir /models/Qwen3-235B-A22B")) << prepare;
    EXPECT_TRUE(contains(prepare, "--quant_type w4a8")) << prepare;
    EXPECT_EQ(checkpoint, "/models/Qwen3-235B-A22B-W4A8");
    EXPECT_TRUE(contains(serve, " --quantization ascend")) << serve;
    EXPECT_TRUE(contains(serve, " --tensor-parallel-size 8 ")) << serve;
  }
  EXPECT_TRUE(w4a8_tp8) << "no TP 8 W4A8_DYNAMIC row of Qwen/Qwen3-235B-A22B";
  // DeepSeek-V3 is published in FP8, which vLLM-Ascend rejects; it has no row that meets the targets.
  for (const auto& r : j["recommended"]) EXPECT_NE(r["model"], "deepseek-ai/DeepSeek-V3");
  bool engine_message = false;
  for (const auto& r : j["rejected"])
    if (r["model"] == "deepseek-ai/DeepSeek-V3" && contains(r["reason"].get<std::string>(), "engine rejects it: AttributeError")) engine_message = true;
  EXPECT_TRUE(engine_message);
}

// DeepSeek-V3 in W4A8_DYNAMIC on 8 x 910B4 (what its msModelSlim conversion would give) still does not fit:
// routed experts alone, by hand (config.json: hidden 7168, moe_intermediate_size 2048, 256 experts in layers
// 3..60 = 58 layers; the MTP layer is not loaded): 58 x 256 x 3 x 2048 x 7168 = 653,908,770,816 int4 weights =
// 326,954,385,408 B + 12 B x (2048 + 2048 + 7168) rows x 256 x 58 = 2,006,876,160 B, / 8 = 41,120,157,696 B =
// 38.30 GiB per device, over the 27.1 GiB budget. The rest (MLA attention W8A8, 3 dense layers, shared
// experts, embeddings) adds under 3.5 GiB.
TEST(PlanVariants, Issue16_DeepSeekV3InW4A8StillNeedsMoreThanEight910B4) {
  const auto fit = pftest::run_cli("fit deepseek-ai/DeepSeek-V3 --device 910B4 --num-devices 8 --variant w4a8_dynamic --json", {.with_stderr = false});
  EXPECT_EQ(fit.code, 1) << fit.out.substr(0, 400);
  const Json f = json_of(fit);
  EXPECT_EQ(f["failure"], "weights_oom");
  double weights = -1;
  for (const auto& t : f["memory_per_device"]["terms"])
    if (t["name"] == "weights") weights = t["gib"].get<double>();
  const double experts_gib = 41120157696.0 / 1073741824.0;
  EXPECT_GE(weights, experts_gib);
  EXPECT_LE(weights, experts_gib + 3.5);
}

// Issue 16 (h-conv12): vLLM quantizes a BF16 checkpoint to bitsandbytes NF4 itself while loading
// (`--quantization bitsandbytes`, bitsandbytes_loader._unquantized_generator: quantize_4bit(compress_statistics=True,
// quant_type="nf4"), then dequantize_dq turns the nested absmax into fp32). Before, the bnb_4bit row of a model with
// no published NF4 checkpoint served "/models/Qwen3-8B-bnb_4bit" after "produce one at ... first".
// Weights by hand (Qwen3-8B config.json: hidden 4096, intermediate 12288, 36 layers, 32 heads x 128, 8 KV heads,
// vocab 151936, untied): linear weights 36 x (2 x 4096 x 4096 + 2 x 4096 x 1024 + 3 x 4096 x 12288) = 6,945,767,424,
// x (0.5 B code + 4 B fp32 absmax / 64) = 3,906,994,176 B, + a 16-entry fp32 quant_map per linear (252 x 64 B =
// 16,128 B); embed_tokens and lm_head in bf16 2 x 151936 x 4096 x 2 B = 2,489,319,424 B; norms (36 x (2 x 4096 + 2 x
// 128) + 4096) x 2 B = 616,448 B; vLLM's rotary cos_sin_cache 40960 x 128 x 2 B = 10,485,760 B.
// Total 6,407,431,936 B = 5.96739 GiB: the in-flight layout is the pre-quantized one.
TEST(PlanVariants, Issue16_InFlightBitsAndBytesServesTheBf16RepoSizedAsNf4) {
  const auto js = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100 --variant bnb_4bit --json", {.with_stderr = false});
  ASSERT_EQ(js.code, 0) << js.out.substr(0, 400);
  const Json j = json_of(js);
  ASSERT_FALSE(j["recommended"].empty());
  const Json& r = j["recommended"][0];
  ASSERT_EQ(r["tensor_parallel_size"], 1);
  const std::string serve = r["launch"]["serve"].get<std::string>();
  EXPECT_EQ(serve.rfind("vllm serve Qwen/Qwen3-8B --", 0), 0u) << serve;
  EXPECT_TRUE(contains(serve, " --quantization bitsandbytes")) << serve;
  EXPECT_TRUE(r["launch"]["prepare"].empty()) << r["launch"].dump();
  bool says_so = false;
  for (const auto& n : r["launch"]["notes"]) says_so |= contains(n.get<std::string>(), "--quantization bitsandbytes on a BF16 checkpoint: vLLM's bitsandbytes loader quantizes");
  EXPECT_TRUE(says_so) << r["launch"]["notes"].dump();
  EXPECT_NEAR(r["weights_gib_per_device"].get<double>(), 6407431936.0 / 1073741824.0, 1e-6);
}

// Issue 16 (h-conv12): conversions from each tool's own documentation where no checkpoint is published and the
// engine does not quantize at load: AutoAWQ GEMM (docs/examples.md quant_config), ModelOpt's hf_ptq.py for FP8 and
// NVFP4 (examples/hf_ptq/README.md; --kv_cache_qformat none so the KV cache stays as sized). Before, each row said
// "no conversion recipe on cuda: produce one at /models/Qwen2.5-7B-<variant> first".
TEST(PlanVariants, Issue16_AwqAndModelOptRowsConvertFirstWithTheToolsOwnCommand) {
  struct Row {
    std::string variant, output, command, flag;
  };
  const std::vector<Row> rows = {
      {"awq", "/models/Qwen2.5-7B-AWQ",
       "model.quantize(tokenizer, quant_config={\"zero_point\": True, \"q_group_size\": 128, \"w_bit\": 4, \"version\": \"GEMM\"}); "
       "model.save_quantized(\"/models/Qwen2.5-7B-AWQ\")",
       ""},  // ux28: no --quantization, vLLM reads awq from config.json and upgrades to awq_marlin (checked below)
      {"modelopt_fp8", "/models/Qwen2.5-7B-FP8-ModelOpt",
       "python3 Model-Optimizer/examples/hf_ptq/hf_ptq.py --pyt_ckpt_path Qwen/Qwen2.5-7B --qformat fp8 --kv_cache_qformat none "
       "--export_path /models/Qwen2.5-7B-FP8-ModelOpt --trust_remote_code",
       " --quantization modelopt "},
      {"modelopt_nvfp4", "/models/Qwen2.5-7B-NVFP4-ModelOpt",
       "python3 Model-Optimizer/examples/hf_ptq/hf_ptq.py --pyt_ckpt_path Qwen/Qwen2.5-7B --qformat nvfp4 --kv_cache_qformat none "
       "--export_path /models/Qwen2.5-7B-NVFP4-ModelOpt --trust_remote_code",
       " --quantization modelopt_fp4"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.variant);
    const auto js = pftest::run_cli("plan Qwen/Qwen2.5-7B --devices B200 --variant " + row.variant + " --json", {.with_stderr = false});
    ASSERT_EQ(js.code, 0) << js.out.substr(0, 400);
    const Json j = json_of(js);
    ASSERT_FALSE(j["recommended"].empty());
    const Json& l = j["recommended"][0]["launch"];
    std::string prepare;
    for (const auto& p : l["prepare"]) prepare += p.get<std::string>() + "\n";
    EXPECT_FALSE(contains(prepare, "produce one at")) << prepare;
    EXPECT_TRUE(contains(prepare, row.command)) << prepare;
    EXPECT_EQ(l["checkpoint"], row.output);
    const std::string serve = l["serve"].get<std::string>();
    EXPECT_EQ(serve.rfind("vllm serve " + row.output + " ", 0), 0u) << serve;
    if (row.flag.empty()) EXPECT_FALSE(contains(serve, " --quantization ")) << serve;
    else EXPECT_TRUE(contains(serve + " ", row.flag)) << serve;
  }
}

// Issue 16 (h-mss12): a W8A8_DYNAMIC row with no published checkpoint converts first. msModelSlim's --quant_type has
// no w8a8_dynamic (docs/en/feature_guide/quick_quantization_v1/usage.md: w4a8, w4a8c8, w8a8, w8a8s, w8a8c8, w8a16,
// w16a16s) and --quant_type w8a8 picks Qwen3's static W8A8 practice, so the command passes msModelSlim's default
// W8A8 config (per_token activations, per_channel weights: "W8A8_DYNAMIC" in the export) by --config_path, and vLLM
// serves that output with --quantization ascend. Before, the row said "no conversion recipe on npu: produce one at
// /models/Qwen3-14B-w8a8_dynamic first". Qwen3-32B (32.8e9 parameters, about 1 B each in int8 = 30.5 GiB) is over the
// 27.1 GiB budget of one 910B4 and fits at TP 2, so it calibrates on the two cards it is served on: --device npu:0,1.
TEST(PlanVariants, Issue16_W8A8DynamicRowsConvertWithMsModelSlimsDefaultDynamicConfig) {
  struct Row {
    std::string model, name, devices;
  };
  const std::vector<Row> rows = {{"Qwen/Qwen3-14B", "Qwen3-14B", "npu"}, {"Qwen/Qwen3-32B", "Qwen3-32B", "npu:0,1"}};
  for (const auto& row : rows) {
    SCOPED_TRACE(row.model);
    const auto js = pftest::run_cli("plan " + row.model + " --device 910B4 --num-devices 8 --variant w8a8_dynamic --json", {.with_stderr = false});
    ASSERT_EQ(js.code, 0) << js.out.substr(0, 400);
    const Json j = json_of(js);
    ASSERT_FALSE(j["recommended"].empty()) << js.out.substr(0, 400);
    const Json& r = j["recommended"][0];
    EXPECT_EQ(r["variant_id"], "w8a8_dynamic");
    const Json& l = r["launch"];
    std::string prepare;
    for (const auto& p : l["prepare"]) prepare += p.get<std::string>() + "\n";
    const std::string input = "/models/" + row.name, output = "/models/" + row.name + "-W8A8-DYNAMIC";
    EXPECT_FALSE(contains(prepare, "produce one at")) << prepare;
    EXPECT_TRUE(contains(prepare, "hf download " + row.model + " --local-dir " + input + "\n")) << prepare;
    EXPECT_TRUE(contains(prepare, "msmodelslim quant --model_path " + input + " --save_path " + output + " --device " + row.devices +
                                      " --model_type " + row.name + " --config_path msmodelslim/lab_practice/default/default-w8a8.yaml ")) << prepare;
    EXPECT_FALSE(contains(prepare, "--quant_type")) << prepare;  // mutually exclusive with --config_path, and w8a8 is static here
    EXPECT_EQ(l["checkpoint"], output);
    const std::string serve = l["serve"].get<std::string>();
    EXPECT_EQ(serve.rfind("vllm serve " + output + " ", 0), 0u) << serve;
    EXPECT_TRUE(contains(serve, " --quantization ascend")) << serve;
  }
}

// Issue 16 (h-quant13): every row `plan --variant` recommends has a start command that produces its checkpoint; a
// variant with none is a rejected row with the reason, and a variant the engine rejects on the card is a rejected row
// with the engine's message (exit 1 when no row is left, as plan --help documents; fit --variant exits 1 with the same
// message). Each expected command is the tool's own, filled for the row by hand:
//  - bnb_8bit: transformers BitsAndBytesConfig(load_in_8bit=True) + save_pretrained (transformers bitsandbytes docs;
//    bitsandbytes 0.38.0 serializes Linear8bitLt), served with --quantization bitsandbytes at TP 1; above TP 1 vLLM's
//    bitsandbytes_loader.py raises "Prequant BitsAndBytes models with tensor parallelism is not supported. Please try
//    with pipeline parallelism." for a pre-quantized checkpoint, and vLLM has no 8-bit load-time path: the variant's
//    rule (tensor_parallel_above 1), in plan and in fit --variant alike.
//  - fp8_block: transformers FineGrainedFP8Config(weight_block_size=(128, 128)) writes quant_method fp8 with
//    weight_block_size [128, 128] (docs, Fine-grained FP8), served with --quantization fp8 (Fp8Config).
//  - ct_w8a8_int8 on 910B4: llm-compressor's SmoothQuant + GPTQ W8A8 recipe, as vLLM-Ascend's example
//    examples/quantization/llm-compressor/w8a8_int8_dynamic.py runs it, served with --quantization compressed-tensors.
//  - ct_w4a16 / ct_w8a16 / ct_nvfp4 on 910B4: vllm_ascend/quantization/compressed_tensors_config.py (v0.14.0rc1 to
//    main) raises "No compressed-tensors compatible scheme was found for quant_type=W4A16, layer_type=linear." (W4A16
//    is registered for moe only) and "No compressed-tensors compatible quantization type was found." (int8 weight-only,
//    fp4: no quant type matches).
//  - mxfp4 of a model with no MXFP4 release, msModelSlim w4a16 of a MoE: no published checkpoint and no recipe, so no
//    row (before: recommended rows serving /models/NAME-mxfp4 and /models/NAME-w4a16, which no command writes).
TEST(PlanVariants, Issue16_EveryVariantRowHasACommandOrIsRejectedWithTheReason) {
  struct Served {
    std::string plan, command, checkpoint;
    std::vector<std::string> in_serve;
  };
  const std::vector<Served> served = {
      {"plan Qwen/Qwen3-8B --device H100-SXM --num-devices 1 --variant bnb_8bit",
       "python3 -c 'from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig; model = AutoModelForCausalLM.from_pretrained(\"Qwen/Qwen3-8B\", "
       "dtype=\"auto\", device_map=\"auto\", quantization_config=BitsAndBytesConfig(load_in_8bit=True)); model.save_pretrained(\"/models/Qwen3-8B-bnb-8bit\"); "
       "AutoTokenizer.from_pretrained(\"Qwen/Qwen3-8B\").save_pretrained(\"/models/Qwen3-8B-bnb-8bit\")'",
       "/models/Qwen3-8B-bnb-8bit", {" --tensor-parallel-size 1 ", " --quantization bitsandbytes"}},
      {"plan meta-llama/Meta-Llama-3.1-8B --device H100-SXM --num-devices 1 --variant fp8_block",
       "AutoModelForCausalLM.from_pretrained(\"meta-llama/Meta-Llama-3.1-8B\", dtype=\"auto\", device_map=\"auto\", "
       "quantization_config=FineGrainedFP8Config(weight_block_size=(128, 128))); model.save_pretrained(\"/models/Meta-Llama-3.1-8B-FP8-Block\")",
       "/models/Meta-Llama-3.1-8B-FP8-Block", {" --quantization fp8"}},
      {"plan Qwen/Qwen3-8B --device 910B4 --num-devices 1 --variant ct_w8a8_int8",
       "oneshot(model=\"Qwen/Qwen3-8B\", dataset=\"open_platypus\", recipe=[SmoothQuantModifier(smoothing_strength=0.8), GPTQModifier(scheme=\"W8A8\", "
       "targets=\"Linear\", ignore=[\"lm_head\", \"re:.*mlp.gate$\", \"re:.*mlp.shared_expert_gate$\"])], output_dir=\"/models/Qwen3-8B-W8A8-INT8\"",
       "/models/Qwen3-8B-W8A8-INT8", {" --quantization compressed-tensors"}},
  };
  for (const auto& row : served) {
    SCOPED_TRACE(row.plan);
    const auto js = pftest::run_cli(row.plan + " --json", {.with_stderr = false});
    ASSERT_EQ(js.code, 0) << js.out.substr(0, 600);
    const Json j = json_of(js);
    ASSERT_FALSE(j["recommended"].empty());
    const Json& l = j["recommended"][0]["launch"];
    std::string prepare;
    for (const auto& p : l["prepare"]) prepare += p.get<std::string>() + "\n";
    EXPECT_TRUE(contains(prepare, row.command)) << prepare;
    EXPECT_FALSE(contains(prepare, "produce one at")) << prepare;
    EXPECT_EQ(l["checkpoint"], row.checkpoint);
    const std::string serve = l["serve"].get<std::string>();
    EXPECT_EQ(serve.rfind("vllm serve " + row.checkpoint + " ", 0), 0u) << serve;
    for (const auto& part : row.in_serve) EXPECT_TRUE(contains(serve, part)) << serve;
  }

  struct Rejected {
    std::string plan, fit, reason;
  };
  const std::string tp_message = "ValueError: Prequant BitsAndBytes models with tensor parallelism is not supported. Please try with pipeline parallelism.";
  const std::vector<Rejected> rejected = {
      {"plan --device H100-SXM --num-devices 8 --model Qwen/Qwen3-8B --variant bnb_8bit", "fit Qwen/Qwen3-8B --device H100-SXM --num-devices 2 --variant bnb_8bit",
       "engine rejects it: " + tp_message},
      {"plan Qwen/Qwen3-8B --device 910B4 --num-devices 1 --variant ct_w4a16", "fit Qwen/Qwen3-8B --device 910B4 --variant ct_w4a16",
       "engine rejects it: NotImplementedError: No compressed-tensors compatible scheme was found for quant_type=W4A16, layer_type=linear."},
      {"plan Qwen/Qwen3-30B-A3B --device 910B4 --num-devices 2 --variant ct_w4a16", "fit Qwen/Qwen3-30B-A3B --device 910B4 --num-devices 2 --variant ct_w4a16",
       "engine rejects it: NotImplementedError: No compressed-tensors compatible scheme was found for quant_type=W4A16, layer_type=linear."},
      {"plan Qwen/Qwen3-8B --device 910B4 --num-devices 1 --variant ct_w8a16", "fit Qwen/Qwen3-8B --device 910B4 --variant ct_w8a16",
       "engine rejects it: NotImplementedError: No compressed-tensors compatible quantization type was found."},
      {"plan Qwen/Qwen3-8B --device 910B4 --num-devices 1 --variant ct_nvfp4", "fit Qwen/Qwen3-8B --device 910B4 --variant ct_nvfp4",
       "engine rejects it: NotImplementedError: No compressed-tensors compatible quantization type was found."},
      {"plan Qwen/Qwen3-30B-A3B --device H100-SXM --num-devices 1 --variant mxfp4", "",
       "no start command: no published checkpoint of Qwen/Qwen3-30B-A3B in this variant (MXFP4 experts (gpt-oss; other weights in model dtype)) and no conversion recipe on cuda"},
      {"plan Qwen/Qwen3-30B-A3B --device 910B4 --num-devices 4 --variant w4a16", "",
       "no start command: no published checkpoint of Qwen/Qwen3-30B-A3B in this variant (msModelSlim W4A16 (routed experts; other linears in model dtype)) and no "
       "conversion recipe on npu: msModelSlim's one documented W4A16 command quantizes every linear layer of a dense model (example/Qwen, "
       "Qwen2.5-72B-Instruct: quant_qwen.py --w_bit 4 --a_bit 16 --group_size 128), and vLLM-Ascend registers W4A16 for MoE experts only (no linear "
       "scheme); msModelSlim has no W4A16 quant_type, practice or example for the routed experts alone"},  // quant31: the reason (no_recipe)
  };
  for (const auto& row : rejected) {
    SCOPED_TRACE(row.plan);
    const auto js = pftest::run_cli(row.plan + " --json", {.with_stderr = false});
    EXPECT_EQ(js.code, 1) << js.out.substr(0, 600);  // nothing to recommend
    const Json j = json_of(js);
    EXPECT_TRUE(j["recommended"].empty()) << j["recommended"].dump().substr(0, 600);
    size_t with_reason = 0;  // a row too large for the card keeps its memory reason
    for (const auto& r : j["rejected"]) with_reason += r["reason"] == row.reason ? 1 : 0;
    EXPECT_GE(with_reason, 1u) << j["rejected"].dump().substr(0, 1200);
    if (row.fit.empty()) continue;
    const auto fit = pftest::run_cli(row.fit);
    EXPECT_EQ(fit.code, 1) << fit.out.substr(0, 600);
    EXPECT_TRUE(contains(fit.out, row.reason.substr(std::string("engine rejects it: ").size()))) << fit.out.substr(0, 1200);
  }
  // bnb_8bit at TP 1 is no rejection: fit sizes it (the rule holds above TP 1 only).
  EXPECT_EQ(pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM --variant bnb_8bit", {.with_stderr = false}).code, 0);
  // The gpt-oss release is the MXFP4 checkpoint itself: served as published.
  const auto gpt = pftest::run_cli("plan openai/gpt-oss-20b --device H100-SXM --num-devices 1 --variant mxfp4 --json", {.with_stderr = false});
  ASSERT_EQ(gpt.code, 0) << gpt.out.substr(0, 600);
  EXPECT_EQ(json_of(gpt)["recommended"][0]["launch"]["checkpoint"], "openai/gpt-oss-20b");
}
