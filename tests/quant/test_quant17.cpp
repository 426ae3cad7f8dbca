// Issue 16, remaining "done when" items: validate applies a variant's engine-version rules like fit and plan
// do; the recognizer reads real descriptor files; bad descriptors and bad variants get the documented exit.
// The case file tests/fixtures/quant/version_rules_cases.jsonl is hand-written (see its README).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/json_util.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

const Json* row_of(const Json& report, const std::string& id) {
  for (const auto& r : report["rows"])
    if (r["id"] == id) return &r;
  return nullptr;
}

// The strings vLLM-Ascend / vLLM raise, copied by hand from their sources at each tag (the same text the
// docs/quant-variants.md "Versions" table cites):
//   vllm_ascend/quantization/quantizer.py (v0.9.0, v0.9.2rc1) and utils.py (v0.11.0): "Currently, vLLM Ascend only
//   supports following quant types:" + str(list(table keys));
//   modelslim_config.py create_scheme_for_layer (v0.12.0rc1 .. v0.19.x; 310P registry from v0.15.0rc1):
//   "Currently, vLLM Ascend doesn't support {quant_type} for {layer_type}.";
//   vllm/model_executor/layers/quantization (fp8 get_min_capability 75 = Turing), V100 is capability 70.
const std::string k_only = "NotImplementedError: Currently, vLLM Ascend only supports following quant types:";

struct Expect {
  std::string id;
  std::string message;  // "" = the engine loads it (the verdict is not unsupported_quantization)
  std::string fit_args;  // the same deployment as `fit` flags
};

const std::vector<Expect>& expectations() {
  static const std::vector<Expect> table = {
      {"q17-w4a8-v0.9.0", k_only + "['W8A8', 'W8A8_DYNAMIC']",
       "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.9.0 --num-devices 2 --max-model-len 8192 --variant w4a8_dynamic"},
      {"q17-w4a8-v0.9.1rc2", "", "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.9.1rc2 --num-devices 2 --max-model-len 8192 --variant w4a8_dynamic"},
      {"q17-w4a8-v0.9.2rc1", k_only + "['W8A8', 'W8A8_DYNAMIC', 'C8']",
       "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.9.2rc1 --num-devices 2 --max-model-len 8192 --variant w4a8_dynamic"},
      {"q17-w4a8-v0.10.0rc1", "", "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.10.0rc1 --num-devices 2 --max-model-len 8192 --variant w4a8_dynamic"},
      {"q17-w4a16-moe-v0.11.0", k_only + "['W4A8_DYNAMIC', 'W4A4_FLATQUANT_DYNAMIC', 'W8A8', 'W8A8_DYNAMIC', 'C8']",
       "Qwen/Qwen3-30B-A3B --device 910B4 --engine vllm-ascend@0.11.0 --num-devices 1 --max-model-len 8192 --variant w4a16"},
      {"q17-w4a16-moe-v0.12.0rc1", "", "Qwen/Qwen3-30B-A3B --device 910B4 --engine vllm-ascend@0.12.0rc1 --num-devices 1 --max-model-len 8192 --variant w4a16"},
      {"q17-w4a16-dense-v0.12.0rc1", "NotImplementedError: Currently, vLLM Ascend doesn't support W4A16 for linear.",
       "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.12.0rc1 --num-devices 2 --max-model-len 8192 --variant w4a16"},
      {"q17-310p-w8a8dyn-v0.15.0rc1", "NotImplementedError: Currently, vLLM Ascend doesn't support W8A8_DYNAMIC for linear.",
       "Qwen/Qwen3-8B --device 310P3 --engine vllm-ascend@0.15.0rc1 --num-devices 1 --max-model-len 8192 --variant w8a8_dynamic"},
      {"q17-310p-w8a8-v0.15.0rc1", "", "Qwen/Qwen3-8B --device 310P3 --engine vllm-ascend@0.15.0rc1 --num-devices 1 --max-model-len 8192 --variant w8a8"},
      // A checkpoint whose own descriptor is fp8_block (config.json quantization_config) meets that variant's rules.
      {"q17-fp8ckpt-v100", "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 75. Current capability: 70.",
       "Qwen/Qwen3-32B-FP8 --device V100-SXM2-32G --engine vllm@0.10.0 --num-devices 2 --max-model-len 8192"},
  };
  return table;
}

}  // namespace

// (a) A case whose quantization the engine version it names rejects is predicted unsupported_quantization with
// the engine's own message (JSON predicted_failure_message, text under the verdict), like `fit --variant` at that
// version; a version that accepts it is sized. Before this change validate sized every case with the variant's
// storage and never consulted the rules, so all ten rows read "fits" or a memory verdict.
TEST(Quant17, Issue16_ValidateAppliesTheVariantsEngineVersionRules) {
  const auto r = pftest::run_cli("validate " + pftest::quant_fixture("version_rules_cases.jsonl") + " --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  auto j = parse_json(r.out, "stdout");
  ASSERT_TRUE(j.has_value()) << r.out.substr(0, 400);
  EXPECT_EQ((*j)["evaluated"].get<int>(), 10) << (*j)["skipped"].dump();
  for (const auto& e : expectations()) {
    SCOPED_TRACE(e.id);
    const Json* row = row_of(*j, e.id);
    ASSERT_NE(row, nullptr);
    const auto fit = pftest::run_cli("fit " + e.fit_args + " --json", {.with_stderr = false});
    auto f = parse_json(fit.out, "stdout");
    ASSERT_TRUE(f.has_value()) << fit.out.substr(0, 300);
    if (e.message.empty()) {
      EXPECT_NE((*row)["predicted_failure"], "unsupported_quantization") << (*row).value("predicted_failure_message", "");
      EXPECT_FALSE(row->contains("predicted_failure_message") && (*row)["predicted_failure"] == "unsupported_quantization");
      // quant30: fit --variant refuses a variant no start command serves as plan does (W4A16 MoE: no checkpoint, no
      // recipe), but with no engine rule: the version takes it. validate sizes the case, whose deployment had its checkpoint.
      if ((*f)["failure"] == "unsupported_quantization")
        EXPECT_EQ((*f)["failure_message"].get<std::string>().rfind("no start command: ", 0), 0u) << (*f)["failure_message"];
      continue;
    }
    EXPECT_EQ((*row)["predicted_failure"], "unsupported_quantization");
    EXPECT_EQ((*row)["predicted_fits"], false);
    EXPECT_EQ((*row).value("predicted_failure_message", ""), e.message);
    // fit of the same deployment says the same, and exits 1 (does not fit), as documented.
    EXPECT_EQ(fit.code, 1);
    EXPECT_EQ((*f)["failure"], "unsupported_quantization");
    EXPECT_EQ((*f)["failure_message"], e.message);
    // A rejected case has no memory comparison: the engine never got that far.
    EXPECT_TRUE((*row)["fields"].empty()) << (*row)["fields"].dump();
  }
  // Every hand-written verdict is the predicted one: 10 of 10 (the file records the engines' behaviour by source).
  EXPECT_EQ((*j)["verdicts"]["correct"].get<int>(), 10);

  const auto text = pftest::run_cli("validate " + pftest::quant_fixture("version_rules_cases.jsonl"), {.with_stderr = false});
  EXPECT_NE(text.out.find(k_only + "['W8A8', 'W8A8_DYNAMIC', 'C8']"), std::string::npos) << text.out.substr(0, 600);
}

namespace {

// A copy of a real shared checkpoint directory in a scratch folder, with one of its files replaced by `text`.
std::string corrupt_copy(const std::string& scratch, const std::string& dir, const std::string& file, const std::string& text) {
  const std::string out = scratch + "/acme__" + dir;
  std::filesystem::create_directories(out);
  for (const auto& e : std::filesystem::directory_iterator(pftest::shared_path("models/" + dir)))
    std::filesystem::copy_file(e.path(), out + "/" + e.path().filename().string(), std::filesystem::copy_options::overwrite_existing);
  std::ofstream(out + "/" + file, std::ios::trunc) << text;
  return out;
}

}  // namespace

// (b) Every real descriptor file of ../shared/models (read in place; sources in ../shared/models/SOURCES.md) is
// recognized by `fit` on that directory as the variant named here by hand from the file (quant_method / quant_algo,
// block, group), and sized: the weights are below the same model's BF16 weights by at least the fraction the
// format saves on its quantized linears (fp8 <= 0.6, 4-bit <= 0.4 of BF16 for those; embeddings stay BF16, so the
// bounds are loose but a descriptor read as BF16 fails them).
TEST(Quant17, Issue16_RealSharedDescriptorsAreReadAsTheirVariantAndSized) {
  struct Row {
    std::string dir, device, variant, bf16_model;
    double max_fraction_of_bf16;
  };
  const std::vector<Row> rows = {
      {"Qwen__Qwen3-32B-FP8", "H100-SXM", "fp8_block", "Qwen/Qwen3-32B", 0.60},             // config.json: fp8, weight_block_size [128, 128]
      {"Qwen__Qwen3-30B-A3B-FP8", "H100-SXM", "fp8_block", "Qwen/Qwen3-30B-A3B", 0.60},
      {"nvidia__Qwen3-32B-NVFP4", "B200", "modelopt_nvfp4", "Qwen/Qwen3-32B", 0.40},        // hf_quant_config.json: NVFP4, group 16
      {"nvidia__Qwen3-30B-A3B-NVFP4", "B200", "modelopt_nvfp4", "Qwen/Qwen3-30B-A3B", 0.40},
      {"nvidia__Llama-3.1-70B-Instruct-FP8", "H100-SXM", "modelopt_fp8", "meta-llama/Llama-3.3-70B-Instruct", 0.60},  // hf_quant_config.json: FP8
      {"DocPang__Qwen3.6-35B-A3B-W8A8-DCU", "H100-SXM", "ct_w8a8_int8", "Qwen/Qwen3.6-35B-A3B", 0.60},  // compressed-tensors int8 channel
      {"openai__gpt-oss-20b", "H100-SXM", "mxfp4", "", 0},                                  // config.json: mxfp4 experts (no BF16 release)
  };
  auto weights_of = [](const Json& j) {
    for (const auto& t : j["memory_per_device"]["terms"])
      if (t["name"] == "weights") return t["gib"].get<double>();
    return -1.0;
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.dir);
    const auto fit = pftest::run_cli("fit " + pftest::shared_path("models/" + r.dir) + " --device " + r.device + " --num-devices 4 --max-model-len 8192 --json",
                                     {.with_stderr = false});
    ASSERT_NE(fit.code, 2) << fit.out.substr(0, 300);
    auto j = parse_json(fit.out, "stdout");
    ASSERT_TRUE(j.has_value()) << fit.out.substr(0, 300);
    bool named = false;
    for (const auto& a : (*j)["assumptions"]) named |= a.get<std::string>().rfind("variant " + r.variant + ": ", 0) == 0;
    EXPECT_TRUE(named) << (*j)["assumptions"].dump().substr(0, 600);
    const double w = weights_of(*j);
    EXPECT_GT(w, 0);
    if (r.bf16_model.empty()) continue;
    const auto base = pftest::run_cli("fit " + r.bf16_model + " --device " + r.device + " --num-devices 4 --max-model-len 8192 --json", {.with_stderr = false});
    auto b = parse_json(base.out, "stdout");
    ASSERT_TRUE(b.has_value()) << base.out.substr(0, 300);
    EXPECT_LT(w, r.max_fraction_of_bf16 * weights_of(*b) + 2.0) << "bf16 " << weights_of(*b);  // + 2 GiB: BF16 embeddings per rank
  }
}

// (b) A corrupt copy of each real descriptor kind is bad input: exit 2 with a message naming the file and the field,
// from fit and (new) from validate, which used to skip such a case as "model not resolvable" without naming the file.
// A ModelOpt quant_algo no reader knows used to be sized as BF16 ("fits"); vLLM rejects it at config validation
// ("ModelOpt currently only supports: {QUANT_ALGOS} quantizations in vLLM", vllm/model_executor/layers/quantization/modelopt.py).
TEST(Quant17, Issue16_CorruptRealDescriptorIsExit2NamingTheFile) {
  const std::string nvfp4 = pftest::read_all(pftest::shared_path("models/nvidia__Qwen3-32B-NVFP4/hf_quant_config.json"));
  std::string unknown_algo = nvfp4;
  unknown_algo.replace(unknown_algo.find("\"NVFP4\""), 7, "\"NVFP9\"");
  std::string fp8_config = pftest::read_all(pftest::shared_path("models/Qwen__Qwen3-32B-FP8/config.json"));
  const auto block = fp8_config.find("\"weight_block_size\"");
  ASSERT_NE(block, std::string::npos);
  fp8_config.replace(block, std::string("\"weight_block_size\"").size(), "\"weight_block_size\": \"128x128\", \"unused\"");
  struct Case {
    std::string dir, file, text, fragment;
  };
  const std::vector<Case> cases = {
      {"nvidia__Qwen3-32B-NVFP4", "hf_quant_config.json", nvfp4.substr(0, nvfp4.size() / 2), "hf_quant_config.json: malformed JSON"},
      {"nvidia__Qwen3-32B-NVFP4", "hf_quant_config.json", unknown_algo, "hf_quant_config.json: quantization.quant_algo 'NVFP9': expected a ModelOpt algorithm"},
      {"Qwen__Qwen3-32B-FP8", "config.json", fp8_config, "config.json: quantization_config.weight_block_size: expected two integers"},
      {"Qwen__Qwen3-8B", "quant_model_description.json", R"({"model_quant_type": "W8A8", "model.layers.0.self_attn.q_proj.weight": )",
       "quant_model_description.json: malformed JSON"},
      {"Qwen__Qwen3-8B", "quant_model_description.json", R"({"model_quant_type": "W8A8", "version": "1.0.0"})",
       "quant_model_description.json: no per-tensor quant types"},
  };
  int n = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file + ": " + c.fragment);
    const std::string scratch = pftest::scratch_dir("quant17-corrupt-" + std::to_string(n++));
    const std::string dir = corrupt_copy(scratch, c.dir, c.file, c.text);
    const auto fit = pftest::run_cli("fit " + dir + " --device H100-SXM");
    EXPECT_EQ(fit.code, 2) << fit.out.substr(0, 300);
    EXPECT_NE(fit.out.find(dir + "/" + c.fragment), std::string::npos) << fit.out.substr(0, 300);
    const std::string cases_file = scratch + "/cases.jsonl";
    std::ofstream(cases_file) << Json({{"id", "corrupt"}, {"model", "acme/" + c.dir}, {"device", "H100-SXM"}, {"engine", "vllm"}, {"num_devices", 1},
                                       {"max_model_len", 8192}, {"weights_gib", 10.0}})
                                     .dump()
                              << "\n";
    const auto v = pftest::run_cli("validate " + cases_file + " --models " + scratch);
    EXPECT_EQ(v.code, 2) << v.out.substr(0, 300);
    EXPECT_NE(v.out.find(dir + "/" + c.fragment), std::string::npos) << v.out.substr(0, 300);
    EXPECT_NE(v.out.find("cases.jsonl:1 (case corrupt)"), std::string::npos) << v.out.substr(0, 300);
  }
}

// (d) Bad input on the variant list, as documented in docs/quant-variants.md and `fit --help`: an unknown name is
// exit 2 listing the known ones in fit and plan; a variant the engine rejects on that card is exit 1 with the
// engine's message in fit and as the reason of every plan row; --variant with the llama.cpp or MindIE fit (which
// size the file they are given) is exit 2 saying so, not "unknown flag --variant; did you mean --engine".
TEST(Quant17, Issue16_BadVariantInputInFitAndPlan) {
  for (const std::string cmd : {"fit Qwen/Qwen3-8B --device H100-SXM --variant w3a7", "plan Qwen/Qwen3-8B --devices H100-SXM --variant w3a7"}) {
    const auto r = pftest::run_cli(cmd);
    EXPECT_EQ(r.code, 2) << cmd;
    EXPECT_NE(r.out.find("unknown variant 'w3a7'; known variants: bf16, w8a8, w8a8_dynamic"), std::string::npos) << r.out.substr(0, 300);
  }
  // AWQ on a V100 (capability 70; vLLM's AWQ needs 75): vLLM's verify_quantization message, by hand.
  const std::string awq_volta = "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.";
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices V100-SXM2-32G --variant awq --json", {.with_stderr = false});
  EXPECT_EQ(plan.code, 1);
  auto p = parse_json(plan.out, "stdout");
  ASSERT_TRUE(p.has_value()) << plan.out.substr(0, 300);
  EXPECT_TRUE((*p)["recommended"].empty());
  ASSERT_FALSE((*p)["rejected"].empty()) << plan.out.substr(0, 400);
  for (const auto& row : (*p)["rejected"]) EXPECT_NE(row["reason"].get<std::string>().find(awq_volta), std::string::npos) << row["reason"];
  // W8A8 (msModelSlim, --quantization ascend) on vLLM for CUDA: exit 1 with vLLM's argparse refusal, the first thing
  // `vllm serve ... --quantization ascend` prints (quant29: data/engines/quantization_methods.json; before, the
  // ModelConfig message "ValueError: Unknown quantization method: ascend", which the parser never lets it reach).
  const auto ascend_on_cuda = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM --variant w8a8 --json", {.with_stderr = false});
  EXPECT_EQ(ascend_on_cuda.code, 1);
  auto a = parse_json(ascend_on_cuda.out, "stdout");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ((*a)["failure"], "unsupported_quantization");
  EXPECT_EQ((*a)["failure_message"].get<std::string>().rfind("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, "
                                                             "Unknown quantization method: ascend. Must be one of [", 0), 0u)
      << (*a)["failure_message"];
  const auto llama = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM --engine llama.cpp --variant gguf_q4_k_m");
  EXPECT_EQ(llama.code, 2);
  EXPECT_NE(llama.out.find("--variant with --engine llama.cpp: llama.cpp's fit sizes the GGUF file it is given"), std::string::npos) << llama.out;
  const auto mindie = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --engine mindie --variant w8a8");
  EXPECT_EQ(mindie.code, 2);
  EXPECT_NE(mindie.out.find("--variant with --engine mindie: MindIE's fit sizes the checkpoint it is given"), std::string::npos) << mindie.out;
}

// (b) Real published descriptors kept under tests/fixtures/quant (whole config.json files; URL and commit of each in
// the README there): `fit` on each directory names the variant the descriptor is and sizes it as the checkpoint's
// tensors, derived here by hand from the layouts vLLM creates (awq.py / gptq.py create_weights), plus vLLM's rotary
// cos_sin_cache [max_position_embeddings, head_dim] in the model dtype, which "Model loading took" includes.
//   Llama-3(.1)-8B linears per layer (in x out): q 4096x4096, k/v 4096x1024, o 4096x4096, gate/up 4096x14336,
//   down 14336x4096 -> n = 218,103,808 x 32 = 6,979,321,856 weights; embed + lm_head 2 x 128,256 x 4,096 x 2 B =
//   2,101,346,304; norms (2 x 4,096 x 32 + 4,096) x 2 B = 532,480.
//   AWQ g128: qweight n/2 + scales fp16 n/128 x 2 + qzeros int32 n/256 = 3,489,660,928 + 109,051,904 + 27,262,976.
//   GPTQ g128 (sym): the same three (qzeros stored even when symmetric) + g_idx int32 [in] = 4 x 38,912 x 32 = 4,980,736.
//   QwQ-32B (Qwen2, 64 layers, q/k/v bias): linears 487,587,840 x 64 = 31,205,621,760 weights -> AWQ x 133/256 =
//   16,212,295,680; q/k/v bias fp16 (5,120 + 2 x 1,024) x 64 x 2 B = 917,504; embed + lm_head 2 x 152,064 x 5,120 x 2 B
//   = 3,114,270,720; norms (2 x 5,120 x 64 + 5,120) x 2 B = 1,320,960.
// Before: the GPTQ checkpoint was sized 32,243,712 B short (no qzeros for sym, no g_idx: 5,700,591,616 B of tensors,
// 0.56% under hugging-quants/Meta-Llama-3.1-8B-Instruct-GPTQ-INT4's files, 4.97 GB + 764 MB; now 5,732,835,328 B).
TEST(Quant17, Issue16_RealHubDescriptorFixturesAreReadAsTheirVariantAndSizedByHand) {
  struct Row {
    std::string dir, variant;
    double weights_bytes;
  };
  const std::vector<Row> rows = {
      {"dahara1__llama3.1-8b-Instruct-awq", "awq", 3489660928.0 + 109051904.0 + 27262976.0 + 2101346304.0 + 532480.0 + 131072.0 * 128 * 2},
      {"casperhansen__qwq-32b-preview-awq", "awq", 16212295680.0 + 917504.0 + 3114270720.0 + 1320960.0 + 32768.0 * 128 * 2},
      {"obh07__Meta-llama-3-8B-Instruct-GPTQ-4Bit", "gptq",
       3489660928.0 + 109051904.0 + 27262976.0 + 4980736.0 + 2101346304.0 + 532480.0 + 8192.0 * 128 * 2},
      {"AdithyaSK__LLama3-Gaja-Hindi-8B-Instruct-alpha", "bnb_8bit", 0},  // recognized; sized by hand in test_quant_8bit
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(r.dir);
    const auto fit = pftest::run_cli("fit " + pftest::quant_fixture(r.dir) + " --device H100-SXM --max-model-len 4096 --json", {.with_stderr = false});
    ASSERT_EQ(fit.code, 0) << fit.out.substr(0, 300);
    auto j = parse_json(fit.out, "stdout");
    ASSERT_TRUE(j.has_value());
    bool named = false;
    for (const auto& a : (*j)["assumptions"]) named |= a.get<std::string>().rfind("variant " + r.variant + ": ", 0) == 0;
    EXPECT_TRUE(named) << (*j)["assumptions"].dump().substr(0, 400);
    if (r.weights_bytes == 0) continue;
    double gib = -1;
    for (const auto& t : (*j)["memory_per_device"]["terms"])
      if (t["name"] == "weights") gib = t["gib"].get<double>();
    EXPECT_NEAR(gib * 1073741824.0, r.weights_bytes, 1.0);
  }
  // The published GPTQ file sizes bound the layout: 4.97 GB + 764 MB, each rounded by the hub page (+-0.005 GB).
  const auto variant = pftest::run_cli("fit meta-llama/Meta-Llama-3.1-8B --device H100-SXM --max-model-len 4096 --variant gptq --json", {.with_stderr = false});
  auto v = parse_json(variant.out, "stdout");
  ASSERT_TRUE(v.has_value()) << variant.out.substr(0, 300);
  double gptq_gib = -1;
  for (const auto& t : (*v)["memory_per_device"]["terms"])
    if (t["name"] == "weights") gptq_gib = t["gib"].get<double>();
  const double tensors = gptq_gib * 1073741824.0 - 131072.0 * 128 * 2;  // less the rotary cache, which no file holds
  EXPECT_GT(tensors, 4.965e9 + 0.7635e9);
  EXPECT_LT(tensors, 4.975e9 + 0.7645e9);
  // The real GPTQ 8-bit descriptor (exit 2 here before h-quant11) is the gptq_int8 variant, sized by hand in
  // tests/model/test_quant_8bit.cpp with the bitsandbytes 8-bit one.
}

// (b) An AutoRound checkpoint ("quant_method": "auto-round", as auto-round 0.12 writes it with its default
// "packing_format": "auto_round:auto_gptq", https://docs.vllm.ai/en/latest/features/quantization/inc/) was sized as
// BF16 ("quantization method 'auto-round' is not modelled"); it is the autoround variant, GPTQ layout, so `fit` on
// such a checkpoint of Qwen3-8B and `fit Qwen/Qwen3-8B --variant autoround` size the same weights.
TEST(Quant17, Issue16_AutoRoundCheckpointIsTheAutoroundVariant) {
  const std::string dir = pftest::scratch_dir("quant17-autoround") + "/acme__Qwen3-8B-int4-AutoRound";
  std::filesystem::create_directories(dir);
  auto config = parse_json(pftest::read_all(pftest::shared_path("models/Qwen__Qwen3-8B/config.json")), "config.json");
  ASSERT_TRUE(config.has_value());
  (*config)["quantization_config"] = Json::parse(R"({"bits": 4, "data_type": "int", "group_size": 128, "sym": true, "iters": 0,
      "autoround_version": "0.12.3", "quant_method": "auto-round", "packing_format": "auto_round:auto_gptq"})");
  std::ofstream(dir + "/config.json") << config->dump(2);
  auto weights = [](const std::string& args) {
    const auto r = pftest::run_cli("fit " + args + " --device H100-SXM --max-model-len 4096 --json", {.with_stderr = false});
    auto j = parse_json(r.out, "stdout");
    std::pair<double, std::string> out{-1, ""};
    if (!j) return out;
    for (const auto& t : (*j)["memory_per_device"]["terms"])
      if (t["name"] == "weights") out.first = t["gib"].get<double>();
    for (const auto& a : (*j)["assumptions"]) out.second += a.get<std::string>() + "\n";
    return out;
  };
  const auto checkpoint = weights(dir);
  const auto variant = weights("Qwen/Qwen3-8B --variant autoround");
  EXPECT_NE(checkpoint.second.find("variant autoround: "), std::string::npos) << checkpoint.second.substr(0, 400);
  EXPECT_GT(checkpoint.first, 0);
  EXPECT_DOUBLE_EQ(checkpoint.first, variant.first);
  EXPECT_LT(checkpoint.first, 7.0);  // BF16 Qwen3-8B is 15.3 GiB
}
