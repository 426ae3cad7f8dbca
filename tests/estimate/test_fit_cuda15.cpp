// Issue 15, CUDA held-out misses: mechanisms that decide a CUDA deployment's KV budget and that the evidence
// states (the sampling path a log prints), each checked with bytes derived by hand from the configs in
// ../shared/models and the engine's source.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "deploy/deployment.hpp"
#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

// Qwen2.5-7B (hidden 3584, intermediate 18944, vocab 152064, bf16) on one A100 80GB with vLLM 0.10.1.1, util 0.25,
// max_model_len 16384: the dennislee22 A100 deployment (github.com/dennislee22/vLLM-benchmarking).
estimate::Deployment a100_qwen7b(std::optional<bool> flashinfer) {
  estimate::Deployment d;
  d.gpu_memory_utilization = 0.25;
  d.max_model_len = 16384;
  d.flashinfer_sampler = flashinfer;
  return d;
}

// The sampler run by hand. An A100 is not a "large device" for vLLM's batch defaults (get_batch_defaults excludes
// A100), so max_num_seqs 256 and max_num_batched_tokens 2048; the dummy sampler run covers min(256, 2048) = 256 rows
// of fp32 logits: 256 x 152,064 x 4 = 155,713,536 B per copy. The forward's hidden states stay held:
// 2048 x 3584 x 2 B = 14,680,064 B.
constexpr double k_unit = 256.0 * 152064.0 * 4.0;  // 155,713,536
constexpr double k_held = 2048.0 * 3584.0 * 2.0;   // 14,680,064

}  // namespace

// vLLM 0.9.2-0.11.0 samples with FlashInfer whenever flashinfer imports (topk_topp_sampler.py prints "Using FlashInfer
// for top-p & top-k sampling."), with ~3.5 logits copies, else with the native full sort (~10 copies). The log states
// the path; stated, it replaces the version's default:
//   native:     10 x 155,713,536 + 14,680,064 = 1,571,815,424 B
//   FlashInfer: 3.5 x 155,713,536 + 14,680,064 = 559,677,440 B
// The text forward (1.9 x 2048 x (3584 + 2 x 18944) x 2 B = 322.75 MB) is below both, so the activation peak is the
// sampler run and the KV budget grows by the difference, 6.5 x 155,713,536 = 1,012,137,984 B (0.94 GiB). The public
// logs of this box print 5.01 GiB (util 0.25) and 24.83 GiB (util 0.5) available: a 0.55 GiB overhead at both, which
// the FlashInfer path (0.52 GiB sampler + 64 MiB non-torch) accounts for and the native sort (1.46 GiB) does not.
TEST(FitCuda15, Issue15_StatedFlashInferSamplerTakesItsCopies) {
  auto s = pftest::fit_setup("Qwen/Qwen2.5-7B", "A100-80G-SXM", "vllm", "0.10.1.1");
  const auto native = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, a100_qwen7b(false));
  const auto fi = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, a100_qwen7b(true));
  EXPECT_EQ(native.max_num_seqs, 256);
  EXPECT_NEAR(native.activation_sampler_bytes, 10.0 * k_unit + k_held, 1.0);
  EXPECT_NEAR(fi.activation_sampler_bytes, 3.5 * k_unit + k_held, 1.0);
  EXPECT_NEAR(native.activation_bytes, 1571815424.0, 1.0);
  EXPECT_NEAR(fi.activation_bytes, 559677440.0, 1.0);
  EXPECT_NEAR(fi.available_kv_bytes - native.available_kv_bytes, 6.5 * k_unit, 2.0);
  EXPECT_GT(fi.kv_tokens, native.kv_tokens);
}

// Unstated, the version's default (the native sort) stands and the band's high side reaches the FlashInfer path;
// stated either way, the path is known and the band has no FlashInfer side.
TEST(FitCuda15, Issue15_UnstatedSamplerKeepsDefaultAndWidensBand) {
  auto s = pftest::fit_setup("Qwen/Qwen2.5-7B", "A100-80G-SXM", "vllm", "0.10.1.1");
  const auto unstated = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, a100_qwen7b(std::nullopt));
  const auto native = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, a100_qwen7b(false));
  const auto fi = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, a100_qwen7b(true));
  EXPECT_NEAR(unstated.activation_sampler_bytes, 10.0 * k_unit + k_held, 1.0);
  EXPECT_DOUBLE_EQ(unstated.available_kv_bytes, native.available_kv_bytes);
  EXPECT_NEAR(unstated.available_kv_band_high_bytes - unstated.available_kv_band_bytes, 6.5 * k_unit, 2.0);
  EXPECT_DOUBLE_EQ(native.available_kv_band_high_bytes, native.available_kv_band_bytes);
  EXPECT_DOUBLE_EQ(fi.available_kv_band_high_bytes, fi.available_kv_band_bytes);
}

// Versions whose default already is the cheaper path keep it: vLLM 0.21+ samples with FlashInfer by default (3.5
// copies), and a stated FlashInfer path changes nothing there.
TEST(FitCuda15, Issue15_FlashInferStatedOnDefaultFlashInferVersionChangesNothing) {
  auto s = pftest::fit_setup("Qwen/Qwen2.5-7B", "A100-80G-SXM", "vllm", "0.24.0");
  const auto unstated = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, a100_qwen7b(std::nullopt));
  const auto fi = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, a100_qwen7b(true));
  EXPECT_NEAR(fi.activation_sampler_bytes, 3.5 * k_unit + k_held, 1.0);
  EXPECT_DOUBLE_EQ(fi.available_kv_bytes, unstated.available_kv_bytes);
}

// The flags and the validation record carry the path: --flashinfer-sampler / --no-flashinfer-sampler, a case's
// "sampler" ("flashinfer" / "native") or env.VLLM_USE_FLASHINFER_SAMPLER.
TEST(FitCuda15, Issue15_SamplerFlagReachesDeployment) {
  deploy::Flags f;
  f.flashinfer_sampler = deploy::Given<bool>{true, "--flashinfer-sampler"};
  auto d = deploy::deployment_from_flags(f);
  ASSERT_TRUE(d.has_value());
  ASSERT_TRUE(d->flashinfer_sampler.has_value());
  EXPECT_TRUE(*d->flashinfer_sampler);
  deploy::Flags none;
  auto d2 = deploy::deployment_from_flags(none);
  ASSERT_TRUE(d2.has_value());
  EXPECT_FALSE(d2->flashinfer_sampler.has_value());
}

namespace {

// Qwen3.5-27B (the layout of Qwen3.6-27B: hidden 5120, 24 heads x 256 with the output gate, 4 KV heads, MLP 17408,
// one MTP layer, bf16) with MTP n=1 on two RTX 3090 at TP 2, quantized as the flag says.
estimate::FitEstimate qwen27b_mtp(const std::string& quantization) {
  auto s = pftest::fit_setup("Qwen/Qwen3.5-27B", "RTX3090", "vllm", "0.19.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.max_model_len = 32768;
  d.quantization = quantization;
  d.speculative.method = "mtp";
  d.speculative.num_speculative_tokens = 1;
  return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
}

// The MTP layer per rank at TP 2 in bf16, by hand from the config:
//   q_proj 5120 x (24 x 256 x 2 gate) = 62,914,560; k_proj, v_proj 5120 x (4 x 256) = 2 x 5,242,880;
//   o_proj 6144 x 5120 = 31,457,280; MLP 3 x 5120 x 17408 = 267,386,880: 372,244,480 split by TP 2 = 186,122,240;
//   eh_proj (fc) 5120 x 10240 = 52,428,800 and the norms (q/k 2 x 256, layer 2 x 5120, MTP 3 x 5120 = 26,112)
//   whole on every rank = 52,454,912; 238,577,152 params x 2 B = 477,154,304 B (0.444 GiB).
constexpr double k_mtp_rank_bf16 = 477154304.0;

}  // namespace

// AWQ (and every calibration tool's) checkpoints keep the MTP layers in bf16: the tools quantize the Transformers
// model class, which has no MTP modules (nvidia/Qwen3.6-27B-NVFP4 excludes "mtp*"; vLLM qwen3_5_mtp.py forces mtp.fc
// unquantized for NVFP4 for the same reason). The public 2x3090 Qwen3.6-27B-AWQ runs print 10.65 GiB available
// without MTP and 10.2 with MTP n=1 on the same host: 0.45 GiB, the bf16 layer above (int4 would be ~0.12).
TEST(FitCuda15, Issue15_CalibratedCheckpointKeepsMtpLayersInModelDtype) {
  const auto bf16 = qwen27b_mtp("");
  const auto awq = qwen27b_mtp("awq");
  EXPECT_EQ(awq.drafter_layers, 1);
  EXPECT_NEAR(bf16.drafter_weights_bytes, k_mtp_rank_bf16, 0.001 * k_mtp_rank_bf16);
  EXPECT_NEAR(awq.drafter_weights_bytes, k_mtp_rank_bf16, 0.001 * k_mtp_rank_bf16);
}

// A vendor FP8 release (the fp8 flag's block-FP8 variant) states no such exclusion: its MTP layer is sized in FP8,
// 1 B per weight plus fp32 128 x 128 block scales, about half the bf16 bytes.
TEST(FitCuda15, Issue15_Fp8BlockMtpLayerStaysQuantized) {
  const auto fp8 = qwen27b_mtp("fp8");
  EXPECT_LT(fp8.drafter_weights_bytes, 0.6 * k_mtp_rank_bf16);
  EXPECT_GT(fp8.drafter_weights_bytes, 0.45 * k_mtp_rank_bf16);
}

// Block-FP8 weights on a card without FP8 tensor cores (below SM 8.9) run on vLLM's Marlin weight-only kernel, which
// turns the fp32 [ceil(N/128), ceil(K/128)] block scales into group scales [K/128, N] in the model dtype
// (marlin_utils_fp8.py prepare_fp8_layer_for_marlin). Qwen3-32B-FP8 (hidden 5120, 64 x 128 q heads, 8 x 128 KV,
// MLP 25600, 64 layers), per layer, N x K: q 8192 x 5120, k and v 1024 x 5120, o 5120 x 8192, gate and up
// 25600 x 5120, down 5120 x 25600.
//   Marlin scales ceil(K/128) x N x 2 B: 655,360 + 2 x 81,920 + 655,360 + 2 x 2,048,000 + 2,048,000 = 7,618,560
//   block scales ceil(N/128) x ceil(K/128) x 4 B: 10,240 + 2 x 1,280 + 10,240 + 3 x 32,000 = 119,040
// so an A100 loads 64 x 7,499,520 = 479,969,280 B (0.447 GiB) more than an H100 (native FP8) at TP 1, half per rank
// at TP 2. The fp8 weights themselves keep 1 B per element.
TEST(FitCuda15, Issue15_Fp8BlockOnAmpereLoadsMarlinGroupScales) {
  auto a100 = pftest::fit_setup("Qwen/Qwen3-32B-FP8", "A100-80G-SXM", "vllm", "0.10.1.1");
  auto h100 = pftest::fit_setup("Qwen/Qwen3-32B-FP8", "H100-SXM", "vllm", "0.10.1.1");
  estimate::Deployment d;
  d.max_model_len = 8192;
  const auto on_a100 = estimate::estimate_fit(a100.model, a100.device, a100.engine, a100.overheads, d);
  const auto on_h100 = estimate::estimate_fit(h100.model, h100.device, h100.engine, h100.overheads, d);
  EXPECT_NEAR(on_a100.weights_bytes - on_h100.weights_bytes, 479969280.0, 1.0);
  d.tensor_parallel_size = 2;
  const auto a100_tp2 = estimate::estimate_fit(a100.model, a100.device, a100.engine, a100.overheads, d);
  const auto h100_tp2 = estimate::estimate_fit(h100.model, h100.device, h100.engine, h100.overheads, d);
  EXPECT_NEAR(a100_tp2.weights_bytes - h100_tp2.weights_bytes, 479969280.0 / 2.0, 1.0);
}

// The RTX 5060 Ti 16GB's budget is a fraction of what torch reports as its total, 15.48 GiB (public torch OOM text on
// the card: "GPU 0 has a total capacity of 15.48 GiB"), not of the nominal 16 GiB. By hand, vLLM 0.23 (requested rounded
// up since 0.14) at the p2p-bench 4 x 5060 Ti utilization 0.88:
//   total     = round(15.48 x 2^30)                = 16,621,523,436 B
//   requested = ceil(0.88 x 16,621,523,436)        = ceil(14,626,940,623.68) = 14,626,940,624 B
// against 0.88 x 16 GiB = 15,118,284,882 B before: 491,344,258 B (0.458 GiB) less per rank, the 0.4-0.5 GiB that the
// three p2p-bench runs had left unexplained.
TEST(FitCuda15, Issue15_Rtx5060TiBudgetIsAFractionOfTheTorchTotal) {
  auto s = pftest::fit_setup("Qwen/Qwen3.5-27B", "RTX5060Ti-16G", "vllm", "0.23.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 4;
  d.gpu_memory_utilization = 0.88;
  d.max_model_len = 150000;
  d.max_num_seqs = 4;
  d.max_num_batched_tokens = 8192;
  d.language_model_only = true;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(e.total_bytes, 16621523436.0);
  EXPECT_DOUBLE_EQ(e.requested_bytes, 14626940624.0);
  for (const auto& a : e.assumptions) EXPECT_EQ(a.find("runtime total"), std::string::npos) << a;
}

// The same total from vLLM's own lines on these cards (github.com/joorklee/p2p-bench, de2a7e7): with the graph estimate
// subtracted, vLLM 0.23 prints "Estimated CUDA graph memory: E GiB" and "The current --gpu-memory-utilization=U is
// equivalent to --gpu-memory-utilization=U2", where U - U2 = estimate / total. E is printed to 0.01 GiB and U2 to
// 0.0001, so each pair bounds the total between (E - 0.005) / (U - U2 + 0.00005) and (E + 0.005) / (U - U2 - 0.00005):
//   E 0.26, 0.86 -> 0.8430: 14.96 - 15.63      E 0.18, 0.86 -> 0.8483: 14.89 - 15.88
//   E 0.16, 0.86 -> 0.8498: 15.12 - 16.26      E 0.12, 0.86 -> 0.8521: 14.47 - 15.92
//   E 0.10, 0.86 -> 0.8534: 14.29 - 16.03      E 0.11, 0.88 -> 0.8728: 14.48 - 16.08
//   E 0.06, 0.86 -> 0.8558: 12.94 - 15.66 (custom all-reduce on)
// together 15.12 - 15.63 GiB, which the catalogue's total must lie in (and 16 GiB does not).
TEST(FitCuda15, Issue15_Rtx5060TiTotalAgreesWithTheGraphSuggestionLines) {
  auto s = pftest::fit_setup("Qwen/Qwen3.5-27B", "RTX5060Ti-16G", "vllm", "0.23.0");
  struct Pair { double estimate_gib, util, equivalent; };
  const Pair pairs[] = {{0.26, 0.86, 0.8430}, {0.18, 0.86, 0.8483}, {0.16, 0.86, 0.8498},
                        {0.12, 0.86, 0.8521}, {0.10, 0.86, 0.8534}, {0.11, 0.88, 0.8728}, {0.06, 0.86, 0.8558}};
  double lo = 0.0, hi = 1e9;
  for (const auto& p : pairs) {
    lo = std::max(lo, (p.estimate_gib - 0.005) / (p.util - p.equivalent + 0.00005));
    hi = std::min(hi, (p.estimate_gib + 0.005) / (p.util - p.equivalent - 0.00005));
  }
  EXPECT_NEAR(lo, 15.12, 0.01);
  EXPECT_NEAR(hi, 15.63, 0.01);
  const double total_gib = s.device.usable_total_bytes() / 1073741824.0;
  EXPECT_GE(total_gib, lo);
  EXPECT_LE(total_gib, hi);
  EXPECT_GT(s.device.memory_bytes / 1073741824.0, hi);
}

// The RTX PRO 6000 Blackwell's budget is a fraction of vLLM's own total for the card, 94.97 GiB ("Free memory on
// device (94.43/94.97 GiB)", vLLM 0.29.0 on a Server Edition), not of the memory class's estimate (96 GiB x the
// median nvidia gddr ratio). By hand, the two-GPU Qwen3-32B post's runs (vLLM 0.27.1, util 0.426; requested rounded
// up since vLLM 0.14):
//   total     = round(94.97 x 2^30)                 = 101,973,261,025 B
//   requested = ceil(0.426 x 101,973,261,025)       = ceil(43,440,609,196.65) = 43,440,609,197 B (40.457 GiB)
// The post's own script printed 95.01 GiB on another Server Edition: 0.04 GiB apart, within two printed roundings
// and the driver difference, so both measurements bound the stored total.
TEST(FitCuda15, Issue15_RtxPro6000BudgetIsAFractionOfVllmsTotal) {
  auto s = pftest::fit_setup("Qwen/Qwen3-32B", "RTXPRO6000", "vllm", "0.27.1");
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.gpu_memory_utilization = 0.426;
  d.max_model_len = 32768;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(e.total_bytes, 101973261025.0);
  EXPECT_DOUBLE_EQ(e.requested_bytes, 43440609197.0);
  EXPECT_NEAR(e.total_bytes / 1073741824.0, 95.01, 0.05);
  for (const auto& a : e.assumptions) EXPECT_EQ(a.find("runtime total"), std::string::npos) << a;
}

// Consumer Blackwell (SM 12.0 / 12.1) has neither vLLM's SM100 FlashInfer MXFP4 path nor its triton_kernels path
// (capability 9.0 up to 11.0 only), so gpt-oss's experts go through Marlin with Marlin's paddings, as on an A100
// (intermediate 2880 -> 2944, hidden 2880 -> 3072: 24 x (461,815,808 - 423,567,360) = 917,962,752 B over the
// checkpoint, see Fit.Mxfp4ExpertsAsTheKernelLaysThemOut). The GB10 log (github.com/TW-10519/VLLM-ROUTER, NVIDIA
// vLLM 0.13.0) prints "leveraging the Marlin kernel" and "Model loading took 13.7193 GiB" for a gpt-oss-20b fine-tune.
TEST(FitCuda15, Issue15_Mxfp4OnSm12xLaysOutForMarlin) {
  auto weights = [](const std::string& device, const std::string& version) {
    auto s = pftest::fit_setup("openai/gpt-oss-20b", device, "vllm", version);
    estimate::Deployment d;
    d.max_model_len = 8192;
    return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).weights_bytes;
  };
  const double stored = weights("H100-SXM", "0.8.5");  // no gpt-oss layout yet: the checkpoint's bytes
  for (const char* dev : {"GB10", "RTX5090", "RTXPRO6000", "RTX5060Ti-16G"}) {
    EXPECT_NEAR(weights(dev, "0.13.0") - stored, 917962752.0, 2.0) << dev;
    EXPECT_NEAR(weights(dev, "0.13.0"), weights("A100-80G-SXM", "0.13.0"), 2.0) << dev;
  }
  EXPECT_NEAR(weights("RTXPRO6000", "0.17.0"), weights("A100-80G-SXM", "0.17.0"), 2.0);
  EXPECT_NEAR(weights("GB10", "0.13.0") / 1073741824.0, 13.7193, 13.7193 * 0.01);
  EXPECT_GT(std::abs(weights("B200", "0.13.0") - weights("GB10", "0.13.0")), 1e6);  // SM100 keeps FlashInfer's layout
}

// vLLM's get_batch_defaults reads the device memory through NVML (NvmlCudaPlatform.get_device_total_memory:
// nvmlDeviceGetMemoryInfo), which a unified-memory GB10 cannot answer; the error is caught and the memory taken as 0,
// so the small defaults stand (max_num_batched_tokens 2048 and max_num_seqs 256 for the API server) although torch
// sees 121.63 GiB. The GB10 log prints "Chunked prefill is enabled with max_num_batched_tokens=2048" with no
// --max-num-batched-tokens. An H100 (79 GiB, not an A100) takes the large defaults.
TEST(FitCuda15, Issue15_UnifiedMemoryGb10KeepsTheSmallBatchDefaults) {
  estimate::Deployment d;
  d.max_model_len = 8192;
  d.gpu_memory_utilization = 0.25;
  auto gb10 = pftest::fit_setup("openai/gpt-oss-20b", "GB10", "vllm", "0.13.0");
  const auto e = estimate::estimate_fit(gb10.model, gb10.device, gb10.engine, gb10.overheads, d);
  EXPECT_EQ(e.max_num_batched_tokens, gb10.engine.max_num_batched_tokens);
  EXPECT_EQ(e.max_num_seqs, gb10.engine.max_num_seqs);
  EXPECT_EQ(e.max_num_batched_tokens, 2048);
  auto h100 = pftest::fit_setup("openai/gpt-oss-20b", "H100-SXM", "vllm", "0.13.0");
  const auto h = estimate::estimate_fit(h100.model, h100.device, h100.engine, h100.overheads, d);
  EXPECT_EQ(h.max_num_batched_tokens, h100.engine.max_num_batched_tokens_large_device);
  EXPECT_EQ(h.max_num_seqs, h100.engine.max_num_seqs_large_device);
  EXPECT_GT(h.max_num_seqs, e.max_num_seqs);
}

// Issue 15 (gb1037): the GB10 total is the host's MemTotal as torch.cuda.mem_get_info reports it on the integrated GPU,
// 121.63 GiB in vLLM's start-up check on GB10 boxes. Each pair below is (gpu_memory_utilization, the requested GiB)
// from a printed 'Free memory on device cuda:0 (F/121.63 GiB) on startup is less than desired GPU memory utilization
// (u, R GiB)' or the 0.2x breakdown 'Desired GPU memory utilization is (u, R GiB)': 0.8 -> 97.3 (github.com/guardkit/
// guardkit docs/reviews/agentic-factory/qwen-run-1.md, the run before evidence line pub-guardkit-qwen35-35b-a3b-fp8-gb10-
// v0181-u0.8-len262144, same box), 0.9 -> 109.46 (code-search id 70104645611), 0.87 -> 105.82 (61491310219, 66380900772),
// 0.92 -> 111.9 (57784008357), 0.86 -> 104.6 (66017201057), 0.7 -> 85.14 (52778198961, 58438889952), 0.88 -> 107.03
// (54833452676), 0.83 -> 100.95 (60302613727). The catalogue's former 119.7 GiB estimate gives 95.76 at 0.8.
TEST(FitCuda15, Issue15_Gb10TotalIsThePrintedMemTotal) {
  auto gb10 = pftest::fit_setup("Qwen/Qwen3-30B-A3B-FP8", "GB10", "vllm", "0.13.0");
  const std::pair<double, double> printed[] = {{0.8, 97.3},   {0.9, 109.46}, {0.87, 105.82}, {0.92, 111.9}, {0.86, 104.6},
                                               {0.7, 85.14},  {0.88, 107.03}, {0.83, 100.95}};
  for (const auto& [util, requested_gib] : printed) {
    estimate::Deployment d;
    d.max_model_len = 32768;
    d.gpu_memory_utilization = util;
    const auto e = estimate::estimate_fit(gb10.model, gb10.device, gb10.engine, gb10.overheads, d);
    EXPECT_NEAR(e.total_bytes / 1073741824.0, 121.63, 0.005);
    EXPECT_NEAR(e.requested_bytes / 1073741824.0, requested_gib, 0.005) << util;
  }
}

// Chunked prefill stated off with no --max-num-batched-tokens: vLLM's SchedulerConfig takes max(max_model_len, 2048)
// tokens, so the profile run forwards the whole context. V0 on ROCm never turns chunked prefill on by itself
// (arg_utils _set_default_args_v0 does so only on CUDA above 32K), and its engine line prints
// 'chunked_prefill_enabled=False'. Llama-3.1-8B (hidden 4096, MLP 14336) at 131,072 tokens on one MI300X: the text
// forward is 1.9 x 131,072 x (4096 + 2 x 14336) x 2 B = 16,320,875,724.8 B (15.20 GiB), above the sampler run; the
// log (github.com/cmontemuino/amd-mi300x-ml-benchmarks, vLLM V0 0.9.2.dev364 on ROCm, u 0.8) prints an activation
// peak of 14.63 GiB and 122.99 GiB for the KV cache.
TEST(FitCuda15, Issue15_StatedChunkedPrefillOffProfilesTheWholeContext) {
  auto s = pftest::fit_setup("meta-llama/Meta-Llama-3.1-8B", "MI300X", "vllm", "0.9.1");
  estimate::Deployment d;
  d.max_model_len = 131072;
  d.gpu_memory_utilization = 0.8;
  const auto chunked = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  d.enable_chunked_prefill = false;
  const auto whole = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_LT(chunked.max_num_batched_tokens, 131072);
  EXPECT_EQ(whole.max_num_batched_tokens, 131072);
  EXPECT_NEAR(whole.activation_bytes, 1.9 * 131072.0 * (4096.0 + 2.0 * 14336.0) * 2.0, 1e6);
  EXPECT_NEAR(whole.available_kv_bytes / 1073741824.0, 122.99, 122.99 * 0.01);
  d.max_model_len = 1024;  // a context below 2048 still profiles 2048 tokens
  EXPECT_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).max_num_batched_tokens, 2048);
  d.max_num_batched_tokens = 4096;  // stated, it stands
  EXPECT_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).max_num_batched_tokens, 4096);
}
