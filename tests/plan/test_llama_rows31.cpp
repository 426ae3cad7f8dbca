// Issue 16 (llamacpp31): llama.cpp plan rows against public llama.cpp start-up logs
// (data/evidence/llamacpp-startup-public.jsonl). Expected values are the numbers those logs print; the models are the
// real configs of ../shared/models.
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"
#include "base/json_util.hpp"

using namespace preflight;

namespace {

const std::string k_models = std::string(PREFLIGHT_SOURCE_DIR) + "/../shared/models/";
constexpr double k_mib = 1048576.0, k_gib = 1073741824.0;

Json plan_json(const std::string& args, int expected_code) {
  const auto run = pftest::run_cli("plan " + args + " --json", {.with_stderr = false});
  EXPECT_EQ(run.code, expected_code) << args << "\n" << run.out;
  return run.code == expected_code ? Json::parse(run.out) : Json::object();
}

const Json* row_of_variant(const Json& plan, const std::string& variant_id) {
  for (const auto& r : plan["recommended"])
    if (r.contains("variant_id") && r["variant_id"] == variant_id) return &r;
  return nullptr;
}

bool any_note_has(const Json& row, const std::string& text) {
  for (const auto& n : row["launch"]["notes"])
    if (n.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(LlamaRows31, Issue16_GptOssMxfp4GgufIsPlannedFromThePublishedFile) {
  // Before: every llama.cpp row of gpt-oss was refused ('llama.cpp loads GGUF files only; convert with
  // convert_hf_to_gguf.py'), while ggml-org publishes the MXFP4 GGUF that llama.cpp loads directly.
  const Json j = plan_json("openai/gpt-oss-20b --models " + k_models + " --engine llama.cpp --device RTX4090 --max-devices 1 --context 131072", 0);
  ASSERT_TRUE(j.contains("recommended")) << j.dump();
  const Json* row = row_of_variant(j, "gguf_mxfp4");
  ASSERT_NE(row, nullptr) << j.dump();
  const Json& b = (*row)["llama_cpp"];
  // b6115 (8 x 910B4) and b6699 (RTX 3070) logs of gpt-oss-20b-mxfp4.gguf: 'file size = 11.27 GiB (4.63 BPW)'. The
  // model buffers hold every tensor of the file; the file's metadata and f32 norms/biases are the rest (within 0.5%).
  EXPECT_NEAR(b["model_buffer_bytes"].get<double>() / k_gib, 11.27, 11.27 * 0.005);
  // 'llama_kv_cache: CUDA0 KV buffer size = 3072.00 MiB' (131,072 cells, 12 layers) + '18.00 MiB' (SWA, 768 cells).
  EXPECT_DOUBLE_EQ(b["kv_buffer_bytes"].get<double>(), (3072.0 + 18.0) * k_mib);
  // 'llama_context: CUDA_Host output buffer size = 0.77 MiB' (201,088 x 4 B).
  EXPECT_NEAR(b["output_buffer_bytes"].get<double>() / k_mib, 0.77, 0.005);
  // The token embedding stays in host memory: 'CPU_Mapped model buffer size = 586.82 MiB' (LM Studio's gpt-oss-120b
  // log: the same 201,088 x 2,880 Q8_0 tensor).
  bool embd = false;
  for (const auto& f : b["formulas"]) embd = embd || f.get<std::string>().find("token_embd 586.82 MiB") != std::string::npos;
  EXPECT_TRUE(embd) << b["formulas"];
  // Served as published, no conversion of the safetensors original.
  const std::string serve = (*row)["launch"]["serve"].get<std::string>();
  EXPECT_NE(serve.find("llama-server -hf ggml-org/gpt-oss-20b-GGUF "), std::string::npos) << serve;
  EXPECT_TRUE((*row)["launch"]["prepare"].empty()) << (*row)["launch"]["prepare"];
}

TEST(LlamaRows31, Issue16_GptOss120bMxfp4GgufHasThePrintedFileSize) {
  // LM Studio's Metal log on an M4 Max: 'file size = 59.02 GiB (4.34 BPW)'.
  const Json j = plan_json("openai/gpt-oss-120b --models " + k_models + " --engine llama.cpp --device M4-Max --max-devices 1 --context 4096 --variant gguf_mxfp4", 0);
  ASSERT_TRUE(j.contains("recommended")) << j.dump();
  ASSERT_FALSE(j["recommended"].empty()) << j.dump();
  const Json& b = j["recommended"][0]["llama_cpp"];
  EXPECT_NEAR(b["model_buffer_bytes"].get<double>() / k_gib, 59.02, 59.02 * 0.005);
  EXPECT_NEAR(b["output_buffer_bytes"].get<double>() / k_mib, 0.77, 0.005);
}

TEST(LlamaRows31, Issue16_LlamaCppContextPastTrainingLengthWarnsInsteadOfRefusing) {
  // The b7342 A100 log serves Qwen3-30B-A3B-shaped weights at -c 65536 (n_ctx_train 40960 for Qwen3-30B-A3B's
  // config). Before: plan refused --context 65536 with vLLM's max_model_len ValueError (exit 2) for llama.cpp too.
  const std::string model = k_models + "Qwen__Qwen3-30B-A3B";
  const Json j = plan_json(model + " --engine llama.cpp --device A100-40G-PCIe --max-devices 1 --context 65536 --variant gguf_q8_0", 0);
  ASSERT_TRUE(j.contains("recommended")) << j.dump();
  ASSERT_FALSE(j["recommended"].empty()) << j.dump();
  const Json& row = j["recommended"][0];
  EXPECT_EQ(row["kv_cache_tokens"], 65536);
  // 'llama_kv_cache: size = 6144.00 MiB ( 65536 cells, 48 layers, ...), K (f16): 3072.00 MiB, V (f16): 3072.00 MiB'.
  EXPECT_DOUBLE_EQ(row["llama_cpp"]["kv_buffer_bytes"].get<double>(), 6144.0 * k_mib);
  // What llama-context.cpp prints (LLAMA_LOG_WARN) and goes on.
  EXPECT_TRUE(any_note_has(row, "n_ctx_seq (65536) > n_ctx_train (40960) -- possible training context overflow")) << row["launch"]["notes"];
  // vLLM still refuses it (its own rule, unchanged).
  const auto vllm = pftest::run_cli("plan " + model + " --engine vllm --device A100-40G-PCIe --max-devices 1 --context 65536 --json", {.with_stderr = true});
  EXPECT_EQ(vllm.code, 2) << vllm.out;
  EXPECT_NE(vllm.out.find("derived max_model_len"), std::string::npos) << vllm.out;
  // Within the training length no warning is added.
  const Json within = plan_json(model + " --engine llama.cpp --device A100-40G-PCIe --max-devices 1 --context 32768 --variant gguf_q8_0", 0);
  ASSERT_FALSE(within["recommended"].empty());
  EXPECT_FALSE(any_note_has(within["recommended"][0], "n_ctx_train")) << within["recommended"][0]["launch"]["notes"];
}

TEST(LlamaRows31, Issue16_HybridRowTextPrintsTheRecurrentStateBuffer) {
  // The GB10 log of a Qwen3.5-27B-shaped model at 32,768 cells, one sequence: 'llama_memory_recurrent: CUDA0 RS buffer
  // size = 149.62 MiB' beside 'CUDA0 KV buffer size = 2048.00 MiB'. Before: the plan's text named model, KV, compute
  // and output buffers only (the JSON had rs_buffer_bytes).
  const auto run = pftest::run_cli("plan " + k_models + "Qwen__Qwen3.5-27B --engine llama.cpp --device GB10 --max-devices 1 --context 32768 --variant gguf_q4_k_m",
                                   {.with_stderr = false});
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_NE(run.out.find("KV buffer 2048.00 MiB, RS buffer 149.62 MiB,"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("llama_kv_cache / llama_memory_recurrent /"), std::string::npos) << run.out;
  // A model without recurrent layers prints no RS buffer.
  const auto dense = pftest::run_cli("plan " + k_models + "Qwen__Qwen3-30B-A3B --engine llama.cpp --device A100-40G-PCIe --max-devices 1 --context 32768 --variant gguf_q8_0",
                                     {.with_stderr = false});
  ASSERT_EQ(dense.code, 0) << dense.out;
  EXPECT_EQ(dense.out.find("RS buffer"), std::string::npos) << dense.out;
}

TEST(LlamaRows31, Issue16_CannRowSaysWhereTheExpertsLoad) {
  // b6115 on 8 x Ascend 910B4, gpt-oss-20b-mxfp4.gguf, '-ngl 60' (25/25 layers 'offloaded'): 'CPU_Mapped model buffer
  // size = 10949.33 MiB' and 1242.03 MiB over the eight NPUs: the CANN backend's MUL_MAT_ID takes no MXFP4, so the
  // experts stay in host memory. Before: the row's start command said nothing of it.
  const Json j = plan_json("openai/gpt-oss-20b --models " + k_models + " --engine llama.cpp --device 910B4 --max-devices 1 --context 32768 --variant gguf_mxfp4", 0);
  ASSERT_TRUE(j.contains("recommended")) << j.dump();
  ASSERT_FALSE(j["recommended"].empty()) << j.dump();
  const Json& row = j["recommended"][0];
  EXPECT_TRUE(any_note_has(row, "CANN: the routed experts")) << row["launch"]["notes"];
  EXPECT_TRUE(any_note_has(row, "does not take")) << row["launch"]["notes"];
  EXPECT_TRUE(any_note_has(row, "CPU_Mapped 10949.33 MiB")) << row["launch"]["notes"];
  // Sized so: the NPU holds the file less the token embedding and the experts. The log's eight NPUs hold 1242.03 MiB
  // together (109.20 + 6 x 81.90 + 641.43); its CPU_Mapped figure is the mapped range of the file, not a sum of tensors.
  const std::string formula = row["llama_cpp"]["formulas"][0].get<std::string>();
  const std::string on_npu = "layers on CANN0 ";
  const auto at = formula.find(on_npu);
  ASSERT_NE(at, std::string::npos) << formula;
  EXPECT_NEAR(std::stod(formula.substr(at + on_npu.size())), 1242.03, 1242.03 * 0.01) << formula;
  EXPECT_NE(formula.find("+ routed experts "), std::string::npos) << formula;
  // Q8_0 experts are a type it takes (PR #13705): said as such, with the builds and cards where they still stay on the host.
  const Json q8 = plan_json(k_models + "Qwen__Qwen3-30B-A3B --engine llama.cpp --device 910B4 --max-devices 2 --context 8192 --variant gguf_q8_0", 0);
  ASSERT_FALSE(q8["recommended"].empty()) << q8.dump();
  EXPECT_TRUE(any_note_has(q8["recommended"][0], "which the CANN backend's MUL_MAT_ID takes from llama.cpp PR #13705")) << q8["recommended"][0]["launch"]["notes"];
  EXPECT_EQ(q8["recommended"][0]["llama_cpp"]["formulas"][0].get<std::string>().find("routed experts"), std::string::npos);
  // Not on a CUDA row, and not for a dense model.
  const Json cuda = plan_json(k_models + "Qwen__Qwen3-30B-A3B --engine llama.cpp --device A100-40G-PCIe --max-devices 1 --context 8192 --variant gguf_q8_0", 0);
  ASSERT_FALSE(cuda["recommended"].empty());
  EXPECT_FALSE(any_note_has(cuda["recommended"][0], "CANN:"));
  const Json dense = plan_json(k_models + "Qwen__Qwen3-0.6B --engine llama.cpp --device 910B4 --max-devices 1 --context 8192", 0);
  ASSERT_FALSE(dense["recommended"].empty()) << dense.dump();
  EXPECT_FALSE(any_note_has(dense["recommended"][0], "CANN:"));
}
