// Issue 16 (llamacpp32): a GGUF preset's plan row sized tensor by tensor as llama-quantize types it (src/llama-quant.cpp
// llama_tensor_get_type): the Q4_K_M mix (output Q6_K, attn_v / ffn_down Q6_K on the use_more_bits layers) and the
// fallback of a K-quant whose 256-value block does not divide a tensor's row width (Q4_K -> Q5_0, Q6_K -> Q8_0). Checked
// against model buffers that llama.cpp printed for the real files (data/evidence/llamacpp-startup-public.jsonl and a
// public CPU log), at the logs' flags.
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"
#include "base/json_util.hpp"
#include "estimate/llama_cpp_quant.hpp"

using namespace preflight;

namespace {

constexpr double k_mib = 1048576.0;

Json plan_row(const std::string& model, const std::string& args) {
  const auto run = pftest::run_cli("plan " + pftest::shared_path("models/" + model) + " --engine llama.cpp " + args + " --json", {.with_stderr = false});
  EXPECT_EQ(run.code, 0) << run.out;
  const Json j = Json::parse(run.out);
  return j["recommended"][0];
}

}  // namespace

// By hand, one layer of 4 experts (not 8: no 8-expert rule), Q4_K_M: up_proj [1856 x 2688] has rows 2688 wide, 2688 %
// 256 = 128, so Q4_K falls back to Q5_0 (22 B / 32 values); down_proj [2688 x 1856], 1856 % 256 = 64, is in a
// use_more_bits layer (layer 0 of 1: 0 >= 7 * 1 / 8), so Q6_K, which falls back to Q8_0 (34 B / 32); lm_head [1000 x 2688]
// takes the output rule: 2688 % 256 != 0, so Q8_0. A width of 4096 keeps Q4_K (144 B / 256).
TEST(LlamaCppQuant, Issue16_KQuantFallsBackWhereQkKDoesNotDivideTheRowWidth) {
  model::ModelSpec m;
  m.num_hidden_layers = 1;
  m.num_experts = 4;
  m.layers.resize(1);
  m.layers[0].moe = true;
  auto group = [](const std::string& module, int64_t rows, int64_t cols, int64_t count, bool expert) {
    model::WeightGroup g;
    g.module = module;
    g.rows = rows;
    g.cols = cols;
    g.count = count;
    g.linear = true;
    g.expert = expert;
    return g;
  };
  m.weights = {group("model.layers.*.mlp.experts.*.up_proj", 1856, 2688, 4, true), group("model.layers.*.mlp.experts.*.down_proj", 2688, 1856, 4, true),
               group("lm_head", 1000, 2688, 1, false), group("model.layers.*.mixer.out_proj", 2688, 4096, 1, false)};
  const auto q = estimate::gguf_preset_bytes(m, estimate::GgufPreset::q4_k_m);
  ASSERT_EQ(q.groups.size(), 4u);
  EXPECT_EQ(q.groups[0].type, "Q5_0");
  EXPECT_DOUBLE_EQ(q.group_bytes[0], 1856.0 * 2688 * 4 / 32 * 22);
  EXPECT_EQ(q.groups[1].type, "Q8_0");
  EXPECT_DOUBLE_EQ(q.group_bytes[1], 2688.0 * 1856 * 4 / 32 * 34);
  EXPECT_EQ(q.groups[2].type, "Q8_0");
  EXPECT_EQ(q.groups[3].type, "Q4_K");
  EXPECT_DOUBLE_EQ(q.group_bytes[3], 2688.0 * 4096 / 256 * 144);
  EXPECT_EQ(q.fallback_tensors, 2);  // the output's Q8_0 is its own rule, not the fallback
  EXPECT_FALSE(estimate::gguf_preset_of_variant("awq"));
  EXPECT_EQ(estimate::gguf_preset_of_variant("gguf_q4_k_m"), estimate::GgufPreset::q4_k_m);
}

// Printed model buffers of real files against the plan row at the log's flags:
// - unsloth Nemotron-3-Nano-30B-A3B Q4_K_M on an MI300X VF (b10453): 'ROCm0 model buffer 23197.47 MiB', token_embd on
//   the CPU. Before this change the row took the preset's 4.899-bit file average: 18,442 MiB for the whole file (-20.5%).
//   Hidden 2688 and expert width 1856 are not multiples of 256: the experts are Q5_0 / Q8_0, not Q4_K / Q6_K.
// - unsloth Qwen3-Coder-30B-A3B Q8_0 on an A100-PCIE-40GB (b7342, -c 65536, 4 slots): CPU_Mapped 315.30 + CUDA0
//   30658.12 MiB, KV 6144.00 MiB, output 2.32 MiB (a Qwen3-30B-A3B shape).
// - unsloth Qwen3-30B-A3B Q4_K_M (b5622): 'file size = 17.28 GiB' = 17,694.7 MiB with its metadata.
// - Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf on a CPU: 'CPU_Mapped model buffer size = 4685.30 MiB' (ikawrakow/ik_llama.cpp
//   discussion of AMX, comment of kirnat 2025-05-20, mainline llama-cli).
TEST(LlamaCppQuant, Issue16_PlanRowsMatchThePrintedModelBuffers) {
  const Json nemotron = plan_row("nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "--variant gguf_q4_k_m --device MI300X --context 4096");
  const double nemotron_device = nemotron["llama_cpp"]["model_buffer_bytes"].get<double>() - 131072.0 * 2688 / 32 * 22;  // token_embd Q5_0 on the CPU
  EXPECT_NEAR(nemotron_device / k_mib, 23197.47, 0.01 * 23197.47);

  const Json coder = plan_row("Qwen__Qwen3-30B-A3B", "--variant gguf_q8_0 --device A100-40G-PCIe --context 16384 --concurrency 4");
  EXPECT_NE(coder["launch"]["serve"].get<std::string>().find(" -c 65536 -np 4 "), std::string::npos) << coder["launch"]["serve"];
  EXPECT_NEAR(coder["llama_cpp"]["model_buffer_bytes"].get<double>() / k_mib, 315.30 + 30658.12, 0.1);
  EXPECT_EQ(coder["llama_cpp"]["kv_buffer_bytes"].get<double>(), 6144.0 * k_mib);
  EXPECT_NEAR(coder["llama_cpp"]["output_buffer_bytes"].get<double>() / k_mib, 2.32, 0.005);

  const Json q4 = plan_row("Qwen__Qwen3-30B-A3B", "--variant gguf_q4_k_m --device H100 --context 4096");
  EXPECT_NEAR(q4["llama_cpp"]["model_buffer_bytes"].get<double>() / k_mib, 17.28 * 1024, 0.005 * 17.28 * 1024);

  const Json llama = plan_row("meta-llama__Meta-Llama-3.1-8B", "--variant gguf_q4_k_m --device cpu --device-memory 64GiB --context 4096");
  EXPECT_NEAR(llama["llama_cpp"]["model_buffer_bytes"].get<double>() / k_mib, 4685.30, 0.01);
}

// Issue 16 (llamacpp32): the GPU rows of data/evidence/llamacpp-startup-public.jsonl at their logs' flags, against the
// printed buffers (MiB, two decimals). Compared: what the plan row sizes for the card (the A100's KV line and the GB10
// log's KV / RS lines are LlamaRows31's tests in tests/plan). The GPU's compute buffer is the output head: logits
// [n_vocab, T] f32 plus one [n_embd, T] f32 hidden state with flash attention; the input embeddings sit in the CPU's
// compute buffer. Before this change the row counted two hidden states: 304.75 and 505.00 MiB against the printed
// 300.75 and 495.00. The row's CPU compute part (its graph inputs: embeddings n_embd x 512 x 4 B, token ids and positions
// 512 x 8 B, the f16 KQ mask n_kv x 512 x 2 B) is taken off the row's compute total by hand below. Not compared (a known
// gap, data/evidence/README.md): the host ("CUDA_Host") compute buffer, which b7342 prints as 132.01 MiB for a unified
// 4-slot cache (2048 x 512 x 4 B + an f32 mask of 65536 x 512 x 4 B; the row's -np 4 makes four streams of 16,384 cells).
TEST(LlamaCppGpuRows, Issue16_PrintedBuffersOfThePublicGpuLogs) {
  // (1) A100-PCIE-40GB, b7342, -c 65536, 4 slots, Q8_0: CUDA0 holds 30658.12 (model) + 6144.00 (KV) + 300.75 (compute).
  const Json a100 = plan_row("Qwen__Qwen3-30B-A3B", "--variant gguf_q8_0 --device A100-40G-PCIe --context 16384 --concurrency 4");
  EXPECT_EQ(a100["llama_cpp"]["device"], "CUDA0");
  EXPECT_NEAR(a100["llama_cpp"]["device_bytes"].get<double>() / k_mib, 30658.12 + 6144.0 + 300.75, 0.1);
  EXPECT_NEAR((a100["llama_cpp"]["compute_buffer_bytes"].get<double>() - (2048.0 * 512 * 4 + 512 * 8 + 16384.0 * 512 * 2)) / k_mib, 300.75, 0.005);
  // (5) GB10, Qwen3.6-27B Q4_K_M (the Qwen3.5-27B shape), -c 32768, one slot: 'CUDA0 compute buffer size = 495.00 MiB'.
  const Json gb10 = plan_row("Qwen__Qwen3.5-27B", "--variant gguf_q4_k_m --device GB10 --context 32768");
  EXPECT_NEAR((gb10["llama_cpp"]["compute_buffer_bytes"].get<double>() - (5120.0 * 512 * 4 + 512 * 8 + 32768.0 * 512 * 2)) / k_mib, 495.00, 0.005);
  // (7) RTX 5060 Ti 16GB, Qwen3.5-35B-A3B, --ctx-size 65536 with the server's 4 slots: KV 1280.00 MiB.
  const Json rtx = plan_row("Qwen__Qwen3.5-35B-A3B", "--variant gguf_q4_k_m --device RTX5060Ti-16G --context 16384 --concurrency 4");
  EXPECT_EQ(rtx["llama_cpp"]["kv_buffer_bytes"].get<double>(), 1280.0 * k_mib);
}
