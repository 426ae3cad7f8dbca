// The engine-log reader on the arguments, environment, compilation config, attention and MoE backends and per-term
// memory lines that real logs print (issue 15), and `logs --emit-case` carrying them to validate; split out of
// test_engine_log.cpp (tests of the classifier and the printed lines stay there).
#include "engine_log_support.hpp"
#include "logs/engine_log.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "base/file.hpp"
#include "../test_support.hpp"

namespace pf = preflight;
namespace lg = preflight::logs;
using namespace pftest::enginelog;

TEST(EngineLog, Issue15_DataParallelExpertParallelAndSpeculativeArgs) {
  const std::string cmd =
      "vllm serve DeepSeek-V3.1-w8a8-mtp-QuaRot --data-parallel-size 4 --data-parallel-size-local 2 --tensor-parallel-size 4 --quantization ascend "
      "--enable-expert-parallel --max-num-seqs 16 --speculative-config '{\"num_speculative_tokens\": 3, \"method\": \"mtp\"}' --gpu-memory-utilization 0.92\n";
  const auto a = lg::parse_engine_log(cmd, sigs()).args;
  ASSERT_TRUE(a.data_parallel_size && a.data_parallel_size_local && a.enable_expert_parallel && a.speculative_config && a.gpu_memory_utilization);
  EXPECT_EQ(a.data_parallel_size->value, 4);
  EXPECT_EQ(a.data_parallel_size_local->value, 2);
  EXPECT_TRUE(a.enable_expert_parallel->value);
  EXPECT_EQ(nlohmann::json::parse(a.speculative_config->value), nlohmann::json::parse(R"({"num_speculative_tokens": 3, "method": "mtp"})"));
  EXPECT_DOUBLE_EQ(a.gpu_memory_utilization->value, 0.92);  // the flag after the JSON is still read

  const std::string dict =
      "(APIServer pid=1) INFO [utils.py:253] non-default args: {'model': 'qwen3.6-27b', 'tensor_parallel_size': 2, 'data_parallel_size': 2, "
      "'enable_expert_parallel': True, 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}}\n";
  const auto b = lg::parse_engine_log(dict, sigs()).args;
  ASSERT_TRUE(b.data_parallel_size && b.enable_expert_parallel && b.speculative_config);
  EXPECT_EQ(b.data_parallel_size->value, 2);
  EXPECT_EQ(nlohmann::json::parse(b.speculative_config->value)["num_speculative_tokens"], 3);

  const std::string dump = "INFO Initializing a V1 LLM engine with config: model='x', speculative_config=SpeculativeConfig(method='mtp', "
                           "model='/workspace/models/QuantTrio/Qwen3.6-27B-AWQ', num_spec_tokens=1), tensor_parallel_size=2\n";
  const auto c = lg::parse_engine_log(dump, sigs()).args;
  ASSERT_TRUE(c.speculative_config);
  EXPECT_EQ(nlohmann::json::parse(c.speculative_config->value), nlohmann::json::parse(R"({"method": "mtp", "num_speculative_tokens": 1})"));
  const auto none = lg::parse_engine_log("vllm serve m --no-enable-expert-parallel -tp 2\n", sigs()).args;
  ASSERT_TRUE(none.enable_expert_parallel);
  EXPECT_FALSE(none.enable_expert_parallel->value);
}

// Issue 15: the engine's environment as a launch log shows it (vllm-ascend #5993 exports HCCL_BUFFSIZE=200 before
// `vllm serve`; the nightly CI prints HCCL_BUFFSIZE: 1024 in its YAML, not an assignment, so nothing is read from
// that form). First assignment wins; a longer name that ends in the same letters is not the variable.
TEST(EngineLog, Issue15_EnvironmentAssignmentsAreRead) {
  const std::string text =
      "export MY_HCCL_BUFFSIZE=7\n"
      "export HCCL_BUFFSIZE=200\n"
      "VLLM_ASCEND_ENABLE_FLASHCOMM1=1 HCCL_BUFFSIZE=\"1024\" vllm serve /models/DeepSeek-V3.1 --enable-expert-parallel\n"
      "  HCCL_BUFFSIZE: 512\n"
      "export VLLM_ASCEND_ENABLE_MLAPO=1\n";
  const auto log = lg::parse_engine_log(text, sigs());
  ASSERT_TRUE(log.args.hccl_buffsize.has_value());
  EXPECT_DOUBLE_EQ(log.args.hccl_buffsize->value, 200.0);
  EXPECT_EQ(log.args.hccl_buffsize->line, 2);
  ASSERT_TRUE(log.args.flashcomm1.has_value());
  EXPECT_TRUE(log.args.flashcomm1->value);
  EXPECT_EQ(log.args.flashcomm1->line, 3);
  // Issue 15 (dsv32): the MLAPO switch of the SFA / MLA layers.
  ASSERT_TRUE(log.args.mlapo.has_value());
  EXPECT_TRUE(log.args.mlapo->value);
  EXPECT_EQ(log.args.mlapo->line, 5);
  const auto none = lg::parse_engine_log("HCCL_BUFFSIZE: 512\nexport HCCL_BUFFSIZE=99999999999\n", sigs());
  EXPECT_FALSE(none.args.hccl_buffsize.has_value());
  // Issue 15 (ev): the environment as vllm-ascend's nightly multi-node runner prints it, a Python dict (gDS job log
  // 2026-03-04, "[INFO] Node 0 envs: {...}"); a longer key ending in the same letters and a non-numeric value are not read.
  const auto dict = lg::parse_engine_log(
      "[2026-03-04 18:34:46] [INFO] Node 0 envs: {'MY_HCCL_BUFFSIZE': '7', 'VLLM_ASCEND_ENABLE_MLAPO': 'on', 'HCCL_BUFFSIZE': '1024', "
      "'VLLM_ASCEND_ENABLE_FLASHCOMM1': '1'}\n",
      sigs());
  ASSERT_TRUE(dict.args.hccl_buffsize.has_value());
  EXPECT_DOUBLE_EQ(dict.args.hccl_buffsize->value, 1024.0);
  ASSERT_TRUE(dict.args.flashcomm1.has_value());
  EXPECT_TRUE(dict.args.flashcomm1->value);
  EXPECT_FALSE(dict.args.mlapo.has_value());
  const auto json_form = lg::parse_engine_log("env: {\"HCCL_BUFFSIZE\": 200}\n", sigs());
  ASSERT_TRUE(json_form.args.hccl_buffsize.has_value());
  EXPECT_DOUBLE_EQ(json_form.args.hccl_buffsize->value, 200.0);
}

// Issue 15: the sampling path vLLM's TopKTopPSampler printed (dennislee22/vLLM-benchmarking logs, vLLM 0.10.1.1: the
// same version printed either line, as flashinfer-python is an optional extra there), read back as "sampler"; the
// printed line wins over the environment.
TEST(EngineLog, Issue15_SamplerPathIsRead) {
  const auto fi = lg::parse_engine_log(
      "(EngineCore_0 pid=1812) INFO 09-04 01:02:57 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k sampling.\n", sigs());
  ASSERT_TRUE(fi.args.flashinfer_sampler.has_value());
  EXPECT_TRUE(fi.args.flashinfer_sampler->value);
  EXPECT_EQ(fi.args.flashinfer_sampler->line, 1);
  const auto native = lg::parse_engine_log(
      "export VLLM_USE_FLASHINFER_SAMPLER=1\n"
      "(RayWorkerWrapper pid=1384) WARNING 09-03 04:38:28 [topk_topp_sampler.py:61] FlashInfer is not available. Falling back to the "
      "PyTorch-native implementation of top-p & top-k sampling. For the best performance, please install FlashInfer.\n",
      sigs());
  ASSERT_TRUE(native.args.flashinfer_sampler.has_value());
  EXPECT_FALSE(native.args.flashinfer_sampler->value);
  EXPECT_EQ(native.args.flashinfer_sampler->line, 2);
  const auto env = lg::parse_engine_log("VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve m\n", sigs());
  ASSERT_TRUE(env.args.flashinfer_sampler.has_value());
  EXPECT_FALSE(env.args.flashinfer_sampler->value);
  EXPECT_FALSE(lg::parse_engine_log("vllm serve m\n", sigs()).args.flashinfer_sampler.has_value());
}

// Issue 15: --emit-case writes the path as the case field validate reads ("sampler").
TEST(LogsCli, Issue15_EmitCaseWritesTheSampler) {
  const std::string log = ::testing::TempDir() + "/sampler.log";
  std::ofstream(log) << "INFO 09-04 01:02:21 [api_server.py:1805] vLLM API server version 0.10.1.1\n"
                     << "vllm serve Qwen/Qwen2.5-7B --max-model-len 16384 --gpu-memory-utilization 0.25\n"
                     << "(EngineCore_0 pid=1812) INFO 09-04 01:02:57 [topk_topp_sampler.py:50] Using FlashInfer for top-p & top-k sampling.\n"
                     << "(EngineCore_0 pid=1812) INFO 09-04 01:04:29 [gpu_worker.py:276] Available KV cache memory: 5.01 GiB\n";
  const auto r = run("logs " + log + " --device A100-80G-SXM --models " + pftest::shared_path("models") + " --emit-case");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["sampler"], "flashinfer");
}

// Issue 15: the capture settings a log states. vLLM 0.23's non-default args print the whole CompilationConfig as a
// Python dict (the p2p-bench 4 x 5060 Ti line, shortened: unset fields None, the mode an enum repr); only the set
// capture key is kept. The attention backend is the one the platform printed it selected (not the ViT's).
TEST(EngineLog, Issue15_ReadsCompilationConfigAndAttentionBackend) {
  const std::string text =
      "(APIServer pid=1) INFO 06-23 23:02:36 [api_utils.py:273] non-default args: {'model': '/data/models/Qwen/Qwen3.6-27B-FP8', 'max_num_seqs': 4, "
      "'speculative_config': {'method': 'qwen3_next_mtp', 'num_speculative_tokens': 3}, 'compilation_config': {'mode': <CompilationMode.VLLM_COMPILE: 3>, "
      "'debug_dump_path': None, 'cudagraph_mode': None, 'cudagraph_num_of_warmups': 0, 'cudagraph_capture_sizes': None, 'pass_config': {}, "
      "'max_cudagraph_capture_size': 16, 'local_cache_dir': None}, 'attention_backend': 'flashinfer'}\n"
      "(Worker_TP0 pid=2) INFO 06-23 23:03:08 [cuda.py:433] Using backend AttentionBackendEnum.FLASH_ATTN for vit attention\n"
      "(Worker_TP0 pid=2) INFO 06-23 23:03:08 [cuda.py:318] Using AttentionBackendEnum.FLASHINFER backend.\n";
  const auto log = lg::parse_engine_log(text, sigs());
  ASSERT_TRUE(log.args.compilation_config.has_value());
  EXPECT_EQ(log.args.compilation_config->value, R"({"max_cudagraph_capture_size": 16})");
  EXPECT_EQ(log.args.compilation_config->line, 1);
  ASSERT_TRUE(log.args.attention_backend.has_value());
  EXPECT_EQ(log.args.attention_backend->value, "FLASHINFER");
  EXPECT_EQ(log.args.attention_backend->line, 3);  // the printed selection

  // A command line: -O3, the dotted forms merged, --attention-backend; an explicit list and mode.
  const std::string cmd =
      "$ vllm serve Qwen/Qwen3-8B -O3 -cc.cudagraph_mode=FULL_DECODE_ONLY --compilation-config.cudagraph_capture_sizes [1,2,4,8] "
      "--attention-backend flash_attn\n";
  const auto c = lg::parse_engine_log(cmd, sigs());
  ASSERT_TRUE(c.args.optimization_level.has_value());
  EXPECT_EQ(c.args.optimization_level->value, 3);
  ASSERT_TRUE(c.args.compilation_config.has_value());
  EXPECT_EQ(c.args.compilation_config->value, R"({"cudagraph_capture_sizes": [1, 2, 4, 8], "cudagraph_mode": "FULL_DECODE_ONLY"})");
  ASSERT_TRUE(c.args.attention_backend.has_value());
  EXPECT_EQ(c.args.attention_backend->value, "FLASH_ATTN");
  // The flag's JSON with an enum repr, as the engine config dump writes a set mode.
  const auto e = lg::parse_engine_log("non-default args: {'compilation_config': {'cudagraph_mode': <CUDAGraphMode.PIECEWISE: 1>}}\n", sigs());
  ASSERT_TRUE(e.args.compilation_config.has_value());
  EXPECT_EQ(e.args.compilation_config->value, R"({"cudagraph_mode": "PIECEWISE"})");
}

// The backend an environment variable names: VLLM_ATTENTION_BACKEND=NAME where the variable's name starts a word (an
// export, an env prefix of the command), the value quoted or not; a longer variable ending in the same name is not it.
TEST(EngineLog, Issue15_AttentionBackendFromTheEnvironment) {
  auto backend = [](const std::string& text) {
    const auto log = lg::parse_engine_log(text, sigs());
    return log.args.attention_backend ? log.args.attention_backend->value : std::string("-");
  };
  EXPECT_EQ(backend("export VLLM_ATTENTION_BACKEND=TRITON_ATTN\n"), "TRITON_ATTN");
  EXPECT_EQ(backend("VLLM_ATTENTION_BACKEND='flashinfer' vllm serve Qwen/Qwen3-8B\n"), "FLASHINFER");
  EXPECT_EQ(backend("export MY_VLLM_ATTENTION_BACKEND=TRITON_ATTN\n"), "-");
  EXPECT_EQ(backend("export VLLM_ATTENTION_BACKEND=\n"), "-");
  EXPECT_EQ(backend("MY_VLLM_ATTENTION_BACKEND=X VLLM_ATTENTION_BACKEND=FLASH_ATTN vllm serve m\n"), "FLASH_ATTN");
}

// Issue 15 (evid24): --moe-backend as a command line gives it (vLLM #49476's flags, '=' form, any case) and as the
// non-default args print it, normalized as vLLM's KernelConfig does (lower case, '-' read as '_').
TEST(EngineLog, Issue15_Evid24_ReadsMoeBackend) {
  const auto c = lg::parse_engine_log(
      "$ vllm serve nvidia/Qwen3.6-35B-A3B-NVFP4 --trust-remote-code --moe-backend=FlashInfer-B12X --kv-cache-dtype=fp8 --max-model-len=180224\n", sigs());
  ASSERT_TRUE(c.args.moe_backend.has_value());
  EXPECT_EQ(c.args.moe_backend->value, "flashinfer_b12x");
  const auto a = lg::parse_engine_log("(APIServer pid=1) INFO 08-26 10:00:00 [api_utils.py:273] non-default args: {'model': 'nvidia/Qwen3.6-35B-A3B-NVFP4', "
                                      "'moe_backend': 'marlin', 'max_num_seqs': 8}\n",
                                      sigs());
  ASSERT_TRUE(a.args.moe_backend.has_value());
  EXPECT_EQ(a.args.moe_backend->value, "marlin");
  EXPECT_EQ(a.args.moe_backend->line, 1);
  EXPECT_FALSE(lg::parse_engine_log("$ vllm serve Qwen/Qwen3-8B --max-model-len 4096\n", sigs()).args.moe_backend.has_value());
}

// Issue 15: the engine's own per-term memory lines, read from real printed lines kept under tests/logs/excerpts (each
// file names its source URL on its first lines). Every expected figure is read by hand off the excerpt's text; -1
// marks a term the excerpt does not print. The line numbers count the two or three "# source" lines at the top.
TEST(EngineLog, Issue15_PerTermMemoryLinesFromRealExcerpts) {
  const std::string dir = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/excerpts/";
  const struct {
    const char* file;
    double weights, activation, non_torch, graph, kv_reserve, requested;
    int64_t summary_line, requested_line, graph_line;
  } cases[] = {
      // vLLM-Ascend (PR #8289's own test): "Desired ... (0.9, 55.14 GiB). Actual usage: 1.14 GiB for weights, 0.22 GiB for
      // peak activation, 0.13 GiB for non-torch memory, 0.04 GiB for NPU graph memory." (the quote ends before the KV figure)
      {"vllm_ascend_pr8289.log", 1.14, 0.22, 0.13, 0.04, -1, 55.14, 3, 3, 3},
      // vLLM-Ascend 310P (issue #10122): "(0.8, 34.59 GiB). Actual usage: 18.8 ..., 1.71 ..., 1.05 ..., 0.0 GiB for NPU graph
      // memory. ... Current KV cache memory: 5.77 GiB."
      {"vllm_ascend_issue10122.log", 18.8, 1.71, 1.05, 0.0, 5.77, 34.59, 3, 3, 3},
      // vLLM V0: "= 63.35GiB" (line 3), "model weights take 1.12GiB; non_torch_memory takes 0.16GiB; PyTorch activation peak
      // memory takes 0.23GiB; the rest of the memory reserved for KV Cache is 61.84GiB." (line 4), graph 0.13 GiB (line 7)
      {"vllm_v0_mellea_pr416.log", 1.12, 0.23, 0.16, 0.13, 61.84, 63.35, 4, 3, 7},
      {"vllm_v0_pr14447.log", 21.21, 0.37, 0.20, -1, 1.57, 23.35, 4, 3, 0},
      {"vllm_v0_pr12126.log", 19.86, 36.63, 0.16, -1, 14.65, 71.29, 4, 3, 0},
  };
  auto expect = [](const char* file, const char* what, const std::optional<lg::Logged<double>>& got, double value, int64_t line) {
    if (value < 0) {
      EXPECT_FALSE(got) << file << ": " << what;
      return;
    }
    ASSERT_TRUE(got) << file << ": " << what;
    EXPECT_DOUBLE_EQ(got->value, value) << file << ": " << what;
    EXPECT_EQ(got->line, line) << file << ": " << what;
  };
  for (const auto& c : cases) {
    const auto text = read(dir + c.file);
    ASSERT_FALSE(text.empty()) << c.file;
    const auto parsed = lg::parse_engine_log(text, sigs());
    // A healthy start: the "Free memory on device (...) on startup. Desired ..." that opens the Ascend line is not the
    // free < requested error ("... on startup is less than desired GPU memory utilization ...").
    EXPECT_EQ(parsed.diagnosis.class_id, "") << c.file;
    const auto& p = parsed.printed;
    expect(c.file, "weights", p.weights_gib, c.weights, c.summary_line);
    expect(c.file, "peak activation", p.activation_peak_gib, c.activation, c.summary_line);
    expect(c.file, "non-torch", p.non_torch_gib, c.non_torch, c.summary_line);
    expect(c.file, "graph", p.graph_gib, c.graph, c.graph_line);
    expect(c.file, "KV reserve", p.kv_reserve_gib, c.kv_reserve, c.summary_line);
    expect(c.file, "requested", p.requested_gib, c.requested, c.requested_line);
  }
  // The V0 summary is one identity (vllm/worker/worker.py: available = total x util - weights - non-torch - torch peak),
  // so the four terms read back must close on the requested figure within the four 0.005 GiB roundings of %.2f.
  for (const char* file : {"vllm_v0_mellea_pr416.log", "vllm_v0_pr14447.log", "vllm_v0_pr12126.log"}) {
    const auto p = lg::parse_engine_log(read(dir + file), sigs()).printed;
    ASSERT_TRUE(p.requested_gib && p.weights_gib && p.non_torch_gib && p.activation_peak_gib && p.kv_reserve_gib) << file;
    EXPECT_NEAR(p.requested_gib->value - p.weights_gib->value - p.non_torch_gib->value - p.activation_peak_gib->value, p.kv_reserve_gib->value, 0.02) << file;
  }
  // An earlier "Model loading took" line keeps the weights figure (set once, the first printed wins).
  const auto both = lg::parse_engine_log("INFO [model_runner.py:1115] Model loading took 0.5151 GiB and 3.479114 seconds\n" + read(dir + "vllm_v0_pr14447.log"), sigs());
  ASSERT_TRUE(both.printed.weights_gib);
  EXPECT_DOUBLE_EQ(both.printed.weights_gib->value, 0.5151);
  EXPECT_EQ(both.printed.weights_gib->line, 1);
}

// Malformed figures in the summary lines (no digits, two points, an exponent, a digit run past a double) are skipped,
// never half read; the same text is in the engine-log fuzz corpus.
TEST(EngineLog, Issue15_MalformedMemorySummaryFiguresAreSkipped) {
  const auto text = read(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fuzz/corpus/engine_log/memory_summary_malformed.log");
  ASSERT_FALSE(text.empty());
  const auto p = lg::parse_engine_log(text, sigs()).printed;
  EXPECT_FALSE(p.weights_gib);
  EXPECT_FALSE(p.activation_peak_gib);
  EXPECT_FALSE(p.non_torch_gib);
  EXPECT_FALSE(p.graph_gib);  // "1e999 GiB": not the 999 after the 'e'
  EXPECT_FALSE(p.kv_reserve_gib);
  EXPECT_FALSE(p.requested_gib);
}

// End to end: PR #8289's "Actual usage" line under a deployment header this test writes (the PR does not name its model;
// Qwen3-0.6B on a 910B3 at util 0.9 is this test's choice), through `logs --json`. Printed figures are the line's; the
// predicted ones are checked by the relation the fit must hold on vLLM-Ascend 0.23: the KV budget is requested - weights
// - peak activation - non-torch, the NPU graph captured after KV sizing and not subtracted (docs/logs.md; vllm_ascend/
// worker/worker.py at v0.23.0: available_kv_cache_memory_bytes = requested_memory - non_kv_cache_memory, with
// non_kv_cache_memory = non_torch_increase + torch_peak_increase + weights_memory).
TEST(LogsCli, Issue15_PerTermRowsPrintedVersusPredicted) {
  const std::string log = (std::filesystem::temp_directory_path() / "preflight_issue15_actual_usage.log").string();
  {
    std::ofstream out(log);
    out << "INFO 04-15 06:29:00 [__init__.py:39] Platform plugin ascend is activated\n"
           "INFO 04-15 06:29:01 [api_server.py:1805] vLLM API server version 0.23.0\n"
           "INFO 04-15 06:29:01 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-0.6B', 'gpu_memory_utilization': 0.9}\n"
        << read(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/excerpts/vllm_ascend_pr8289.log");
  }
  const auto r = run("logs " + log + " --device 910B3 --models " + pftest::shared_path("models") + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("fit")) << r.out;
  std::map<std::string, nlohmann::json> rows;
  for (const auto& row : j["printed_vs_predicted"]) rows[row["what"].get<std::string>()] = row;
  // The excerpt's two "# source" lines follow the three header lines: the usage line is line 6.
  const struct {
    const char* what;
    double printed;
  } printed[] = {{"weights per device (GiB)", 1.14}, {"requested memory (GiB)", 55.14}, {"peak activation (GiB)", 0.22},
                 {"non-torch memory (GiB)", 0.13}, {"graph memory (GiB)", 0.04}};
  for (const auto& p : printed) {
    ASSERT_TRUE(rows.count(p.what)) << p.what << "\n" << r.out;
    EXPECT_DOUBLE_EQ(rows[p.what]["printed"].get<double>(), p.printed) << p.what;
    EXPECT_EQ(rows[p.what]["line"].get<int64_t>(), 6) << p.what;
    ASSERT_TRUE(rows[p.what]["predicted"].is_number()) << p.what;
    EXPECT_TRUE(rows[p.what]["note"].is_null()) << p.what;  // a dense model on one card: no term is summed
  }
  auto predicted = [&](const char* what) { return rows[what]["predicted"].get<double>(); };
  ASSERT_TRUE(rows.count("available KV cache (GiB)"));
  const double budget = predicted("requested memory (GiB)") - predicted("weights per device (GiB)") - predicted("peak activation (GiB)") -
                        predicted("non-torch memory (GiB)");
  EXPECT_NEAR(predicted("available KV cache (GiB)"), budget, 2e-9);  // the fit floors to whole bytes
  EXPECT_GT(predicted("graph memory (GiB)"), 0.0);                    // graph mode: a graph is captured, outside the budget
  EXPECT_GT(predicted("peak activation (GiB)"), 0.0);
  EXPECT_GT(predicted("non-torch memory (GiB)"), 0.0);
  const auto text = run("logs " + log + " --device 910B3 --models " + pftest::shared_path("models"));
  EXPECT_NE(text.out.find("peak activation (GiB)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("non-torch memory (GiB)"), std::string::npos) << text.out;
  std::filesystem::remove(log);
}

// Issue 15 (misc21): `logs` resolves the engine as `validate` resolves the case `logs --emit-case` writes (one step,
// deploy::recorded_engine_input): for every log fixture that gets a prediction, the same profile. Before, logs took the
// printed version alone while validate also dated an undated case by its notes and source: the version lines of
// synthetic/none.1.log removed and the file named qwen3-vllm-v0.9.1-run.log, logs assumed the newest vLLM profile
// (vllm@0.28-0.30) and validate of its case took vllm@0.8-0.9.1, dated by the case notes (the file name they carry).
TEST(LogsCli, Misc21_LogsAndValidateOfItsCaseSelectOneProfile) {
  const std::string dir = pftest::scratch_dir("misc21-logs");
  const std::string models = " --models " + pftest::shared_path("models");
  // Per log: the profile `logs --json` resolved, and the case `logs --emit-case` writes (its id names the log file).
  struct Read {
    std::string log, logs_profile, case_id;
  };
  std::vector<Read> reads;
  std::set<std::string> ids;
  std::string cases;
  auto read_log = [&](const std::string& log, const std::string& device) {
    const auto j = nlohmann::json::parse(pftest::run_cli("logs " + log + " --device " + device + models + " --json", {.with_stderr = false}).out, nullptr, false);
    const std::string emitted = pftest::run_cli("logs " + log + " --device " + device + models + " --emit-case", {.with_stderr = false}).out;
    const auto c = nlohmann::json::parse(emitted, nullptr, false);
    reads.push_back({log, j.contains("engine_resolution") ? j["engine_resolution"]["profile"].get<std::string>() : "",
                     c.is_object() && c.contains("id") && c["id"].is_string() ? c["id"].get<std::string>() : ""});
    EXPECT_TRUE(reads.back().case_id.empty() || ids.insert(reads.back().case_id).second) << "two logs emit case " << reads.back().case_id;
    cases += emitted;
  };
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs")) {
    if (entry.path().extension() != ".log") continue;
    const std::string text = pftest::read_all(entry.path().string());
    read_log(entry.path().string(), text.find("ascend") != std::string::npos || text.find("Ascend") != std::string::npos ? "910B3" : "H100");
  }
  // A log that prints no version, in a file whose name states one.
  std::string undated;
  std::istringstream lines(pftest::read_all(k_synthetic + "/none.1.log"));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("API server version") != std::string::npos) continue;
    if (const auto at = line.find("(v0.10.1.1) "); at != std::string::npos) line.erase(at, 12);
    undated += line + "\n";
  }
  ASSERT_EQ(undated.find("0.10.1"), std::string::npos);
  const std::string named = dir + "/qwen3-vllm-v0.9.1-run.log";
  std::ofstream(named) << undated;
  read_log(named, "H100");
  // Every emitted case validated in one run of the binary (ci35: one run per case before); each case is validated alone,
  // its row found by its id. A case validate skips (no model here) has no row: its profile is "".
  const std::string file = dir + "/cases.jsonl";
  std::ofstream(file) << cases;
  const auto v = nlohmann::json::parse(run("validate " + file + models + " --json").out, nullptr, false);
  ASSERT_TRUE(v.contains("rows")) << "validate of the emitted cases";
  std::map<std::string, std::string> case_profile;
  for (const auto& row : v["rows"]) case_profile[row["id"].get<std::string>()] = row["engine"].get<std::string>();
  int compared = 0;
  for (const Read& r : reads) {
    if (r.log == named) {
      EXPECT_EQ(r.logs_profile, "vllm@0.8-0.9.1");
      EXPECT_EQ(case_profile[r.case_id], "vllm@0.8-0.9.1");
      continue;
    }
    if (r.logs_profile.empty()) continue;  // no prediction for this log (no model or no memory line)
    EXPECT_EQ(r.logs_profile, case_profile[r.case_id]) << r.log;
    ++compared;
  }
  EXPECT_GE(compared, 5);
}

// Issue 15 (ux28): a log excerpt without its engine-args line (vllm-ascend #10122's quoted worker line) gives a case
// whose model is null. --emit-case said nothing about it, and validate skipped the case as "model not resolvable
// (tried )". The note goes to stderr (stdout stays one JSON line) and validate's skip says what is missing.
TEST(LogsCli, Issue15_EmitCaseWithoutAModelSaysSoAndValidateNamesWhy) {
  const std::string log = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/excerpts/vllm_ascend_issue10122.log";
  const auto out = pftest::run_cli("logs " + log + " --emit-case", {.with_stderr = false});
  ASSERT_EQ(out.code, 0) << out.out;
  const auto j = nlohmann::json::parse(out.out);
  EXPECT_TRUE(j["model"].is_null());
  EXPECT_EQ(j["available_kv_gib"], 5.77);  // the line's own "Current KV cache memory: 5.77 GiB"
  const auto both = run("logs " + log + " --emit-case");
  EXPECT_NE(both.out.find("names no model (no engine-args or config line): the case's \"model\" is null"), std::string::npos) << both.out;

  const std::string file = ::testing::TempDir() + "/ux28_no_model.jsonl";
  std::ofstream(file) << out.out;
  const auto v = pftest::run_cli("validate " + file + " --json", {.with_stderr = false});
  ASSERT_EQ(v.code, 0) << v.out;
  const auto report = nlohmann::json::parse(v.out);
  EXPECT_NE(report.dump().find("no model named: the case's model and config_hint are null or empty"), std::string::npos) << report.dump().substr(0, 1500);
  EXPECT_EQ(report.dump().find("(tried )"), std::string::npos);
}

// Issue 16 (ux28): the fixes `logs` prints are pasted as they are. missing_fused_op told the user to disable the
// qkv_rmsnorm_rope fusion with --additional-config '{"ascend_fusion_config": {"fuse_qknorm_rope": false}}', the seed's
// spelling, which vllm-ascend 0.23-0.25 ignores (AscendFusionConfig takes unknown keys into **kwargs; the pass manager
// reads additional_config['ascend_compilation_config']['fuse_qknorm_rope'], data/engines/launch.json qknorm-rope-fusion-a2,
// which plan's start commands already used). graph_stream_exhaustion named "cudagraph_capture_sizes" and
// "FULL_DECODE_ONLY" without the flag that sets them. Every JSON argument of a fix must parse, and the graph keys must be
// vLLM CompilationConfig's own (cudagraph_capture_sizes, cudagraph_mode).
TEST(LogsCli, Issue16_FixesCarryFlagsInTheSpellingTheEngineReads) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/data/doctor/error_signatures.json");
  const auto catalog = nlohmann::json::parse(in);
  int json_args = 0;
  for (const auto& c : catalog["classes"]) {
    const std::string fix = c.value("fix", "");
    for (const std::string flag : {"--additional-config '", "--compilation-config '"}) {
      for (size_t at = fix.find(flag); at != std::string::npos; at = fix.find(flag, at + 1)) {
        const size_t open = at + flag.size(), close = fix.find('\'', open);
        ASSERT_NE(close, std::string::npos) << c["id"];
        const auto arg = nlohmann::json::parse(fix.substr(open, close - open), nullptr, false);
        ASSERT_FALSE(arg.is_discarded()) << c["id"] << ": " << fix.substr(open, close - open);
        ++json_args;
        if (flag == "--additional-config '") EXPECT_FALSE(arg.contains("ascend_fusion_config") && arg["ascend_fusion_config"].contains("fuse_qknorm_rope")) << c["id"];
        if (flag == "--compilation-config '")
          for (const auto& [key, value] : arg.items()) EXPECT_TRUE(key == "cudagraph_capture_sizes" || key == "cudagraph_mode") << c["id"] << ": " << key;
      }
    }
  }
  EXPECT_GE(json_args, 4);
  const auto fused = run("logs " + k_synthetic + "/missing_fused_op.1.log");
  EXPECT_NE(fused.out.find(R"(--additional-config '{"ascend_compilation_config": {"fuse_qknorm_rope": false}}')"), std::string::npos) << fused.out;
  const auto streams = run("logs " + k_synthetic + "/graph_stream_exhaustion.1.log");
  EXPECT_NE(streams.out.find(R"(--compilation-config '{"cudagraph_mode": "FULL_DECODE_ONLY"}')"), std::string::npos) << streams.out;
}

// Issue 16 (ux28): `logs --help` said "exit: 0 started or classified, 1 failed with a known cause", but a classified
// failure exits 1 and a failure no signature matches ("unknown") exits 1 too. The help now says what the codes are,
// and the codes are checked against it: a log that started 0, a known and an unknown failure 1.
TEST(LogsCli, Issue16_ExitCodesAreWhatHelpSays) {
  const auto help = run("logs --help");
  EXPECT_NE(help.out.find("exit: 0 no failure in the log"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("1 the log shows a failure (its root cause\n      named, or \"unknown\" when no signature matches)"), std::string::npos) << help.out;
  EXPECT_EQ(run("logs " + k_synthetic + "/none.1.log").code, 0);
  EXPECT_EQ(run("logs " + k_synthetic + "/graph_stream_exhaustion.1.log").code, 1);
  const auto unknown = run("logs " + k_synthetic + "/unknown.1.log");
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.out.find("(unknown)"), std::string::npos) << unknown.out;
}

// fuzz_engine_log (session 28): a count past what an int64 holds ("Maximum concurrency for" a 26-digit length, a 30-digit KV
// size) was cast to int64_t out of range (UBSan float-cast-overflow); a fractional or negative count was truncated. Such
// a count is not read; the well-formed lines beside it are.
TEST(EngineLog, Issue19_CountsOutOfRangeAreNotRead) {
  const std::string text =
      "INFO [kv_cache_utils.py:1087] GPU KV cache size: 123456789012345678901234567890 tokens\n"
      "INFO [kv_cache_utils.py:1091] Maximum concurrency for 99999999999999999999999999 tokens per request: 3.00x\n"
      "INFO [gpu_model_runner.py:2904] Encoder cache will be initialized with a budget of -16384 tokens, and profiled with 1.5 image items of the maximum feature size.\n"
      "INFO [gpu_worker.py:298] Available KV cache memory: 12.50 GiB\n";
  const auto log = lg::parse_engine_log(text, sigs());
  EXPECT_FALSE(log.printed.kv_cache_tokens.has_value());
  EXPECT_FALSE(log.printed.concurrency_len.has_value());
  EXPECT_FALSE(log.printed.max_concurrency.has_value());
  EXPECT_FALSE(log.printed.encoder_budget_tokens.has_value());
  EXPECT_FALSE(log.printed.encoder_items.has_value());
  ASSERT_TRUE(log.printed.available_kv_gib.has_value());
  EXPECT_DOUBLE_EQ(log.printed.available_kv_gib->value, 12.5);
  const auto ok = lg::parse_engine_log("INFO GPU KV cache size: 1,234,567 tokens\nINFO Maximum concurrency for 32,768 tokens per request: 37.68x\n", sigs());
  ASSERT_TRUE(ok.printed.kv_cache_tokens && ok.printed.concurrency_len && ok.printed.max_concurrency);
  EXPECT_EQ(ok.printed.kv_cache_tokens->value, 1234567);
  EXPECT_EQ(ok.printed.concurrency_len->value, 32768);
  EXPECT_DOUBLE_EQ(ok.printed.max_concurrency->value, 37.68);
}

// Issue 15 (evid29): an error the log shows only after "Application startup complete" is a runtime failure, not a
// start-up one; the case --emit-case writes for it started (fits true, no failure), while `logs` still reports the error.
// The lines are github.com/NnamdiOdozi/mlops-assignment logs/vllm.log (commit 0d2e919, lines 9-115 and 7178-7276):
// vLLM 0.22.1 came up on an H100 and, about an hour later, refused a request longer than max_model_len.
TEST(LogsCli, Issue15_EmitCaseFailureAfterStartUpIsNotAStartUpFailure) {
  const std::string dir = ::testing::TempDir();
  const std::string started = "(APIServer pid=1) INFO:     Application startup complete.\n";
  const std::string head =
      "(APIServer pid=1) INFO 06-18 09:16:00 [utils.py:278] non-default args: {'model_tag': 'Qwen/Qwen3-30B-A3B-Instruct-2507', 'host': "
      "'0.0.0.0', 'model': 'Qwen/Qwen3-30B-A3B-Instruct-2507', 'dtype': 'bfloat16', 'max_model_len': 8192, 'quantization': 'fp8', "
      "'served_model_name': ['Qwen/Qwen3-30B-A3B-Instruct-2507'], 'enable_prefix_caching': True, 'max_num_batched_tokens': 8192, 'max_num_seqs': 64}\n"
      "(EngineCore pid=203) INFO 06-18 09:26:25 [gpu_model_runner.py:5132] Model loading took 29.08 GiB memory and 596.567233 seconds\n"
      "(EngineCore pid=203) INFO 06-18 09:27:30 [gpu_worker.py:466] Available KV cache memory: 42.54 GiB\n"
      "(EngineCore pid=203) INFO 06-18 09:27:30 [kv_cache_utils.py:1733] GPU KV cache size: 464,656 tokens\n"
      "(EngineCore pid=203) INFO 06-18 09:27:30 [kv_cache_utils.py:1734] Maximum concurrency for 8,192 tokens per request: 56.72x\n";
  const std::string request_error =
      "(APIServer pid=1) ERROR:    Exception in ASGI application\n"
      "(APIServer pid=1) Traceback (most recent call last):\n"
      "(APIServer pid=1)   File \"/usr/local/lib/python3.12/dist-packages/vllm/renderers/params.py\", line 428, in _token_len_check\n"
      "(APIServer pid=1)     raise VLLMValidationError(\n"
      "(APIServer pid=1) vllm.exceptions.VLLMValidationError: This model's maximum context length is 8192 tokens. However, you requested "
      "512 output tokens and your prompt contains at least 7681 input tokens, for a total of at least 8193 tokens. Please reduce the "
      "length of the input prompt or the number of requested output tokens. (parameter=input_tokens, value=7681)\n";
  const std::string after = dir + "/error_after_start.log";
  std::ofstream(after) << head << started << request_error;
  const auto r = run("logs " + after + " --emit-case");
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["fits"], true) << r.out;
  EXPECT_TRUE(j["failure"].is_null()) << r.out;
  EXPECT_EQ(j["available_kv_gib"], 42.54);
  EXPECT_NE(j["notes"].get<std::string>().find("started (line 6); a later failure (line 10)"), std::string::npos) << j["notes"];
  // (line 10: the first line of the traceback the classifier reads as the exception, "raise VLLMValidationError(".)
  // `logs` itself still names the error (exit 1): only the emitted case's start-up verdict changes.
  EXPECT_EQ(run("logs " + after).code, 1);
  // The same error with no start-up line before it is the start-up failure it was.
  const std::string before = dir + "/error_without_start.log";
  std::ofstream(before) << head << request_error;
  const auto b = nlohmann::json::parse(run("logs " + before + " --emit-case").out);
  EXPECT_EQ(b["fits"], false);
  EXPECT_EQ(b["failure"], "unknown");
}

// Issue 15 (evid29): a vLLM 0.10.0 start at TP 8 printed each worker's own "Available KV cache memory" and the engine
// core one "GPU KV cache size" / "Maximum concurrency" pair per worker KV config (github.com/DaisukeTakai/eval_dataset
// vllm_judge.log, commit 0577085: 35.74 / 35.65 / 36.12 GiB; 1,594,928 / 1,590,736 / 1,611,664 tokens; 48.67x / 48.55x /
// 49.18x); the engine sizes its pool by the smallest worker (unify_kv_cache_configs), so the smallest of each is the
// start's figure, where logs kept the first printed. A later start in the same file (another "Initializing a V1 LLM
// engine" line) never replaces the first start's figures, even with smaller ones.
TEST(EngineLog, Issue15_WorkersPrintedFiguresKeepTheSmallestOfOneStart) {
  const std::string start =
      "INFO 08-16 10:00:00 [core.py:74] Initializing a V1 LLM engine (v0.10.0) with config: model='Qwen3-235B-A22B-FP8'\n";
  const std::string workers =
      "(VllmWorker rank=0 pid=11) INFO 08-16 10:05:01 [gpu_worker.py:276] Available KV cache memory: 35.74 GiB\n"
      "(VllmWorker rank=3 pid=14) INFO 08-16 10:05:01 [gpu_worker.py:276] Available KV cache memory: 35.65 GiB\n"
      "(VllmWorker rank=5 pid=16) INFO 08-16 10:05:01 [gpu_worker.py:276] Available KV cache memory: 36.12 GiB\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:833] GPU KV cache size: 1,594,928 tokens\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:837] Maximum concurrency for 32,768 tokens per request: 48.67x\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:833] GPU KV cache size: 1,590,736 tokens\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:837] Maximum concurrency for 32,768 tokens per request: 48.55x\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:833] GPU KV cache size: 1,611,664 tokens\n"
      "INFO 08-16 10:05:02 [kv_cache_utils.py:837] Maximum concurrency for 32,768 tokens per request: 49.18x\n";
  const auto log = lg::parse_engine_log(start + workers, sigs());
  ASSERT_TRUE(log.printed.available_kv_gib && log.printed.kv_cache_tokens && log.printed.max_concurrency);
  EXPECT_DOUBLE_EQ(log.printed.available_kv_gib->value, 35.65);
  EXPECT_EQ(log.printed.available_kv_gib->line, 3);
  EXPECT_EQ(log.printed.kv_cache_tokens->value, 1590736);
  EXPECT_EQ(log.printed.kv_cache_tokens->line, 7);
  EXPECT_DOUBLE_EQ(log.printed.max_concurrency->value, 48.55);
  // A second start (say at a lower utilization) with smaller figures: the first start's stand.
  const std::string again = start + "(VllmWorker rank=0 pid=21) INFO 08-16 11:00:00 [gpu_worker.py:276] Available KV cache memory: 20.00 GiB\n"
                                    "INFO 08-16 11:00:01 [kv_cache_utils.py:833] GPU KV cache size: 900,000 tokens\n";
  const auto twice = lg::parse_engine_log(start + workers + again, sigs());
  ASSERT_TRUE(twice.printed.available_kv_gib && twice.printed.kv_cache_tokens);
  EXPECT_DOUBLE_EQ(twice.printed.available_kv_gib->value, 35.65);
  EXPECT_EQ(twice.printed.kv_cache_tokens->value, 1590736);
}

// Issue 19 (hard32): the 0/1 switches of the engine's environment in a log were on only for the text "1"; vLLM and
// vLLM-Ascend read bool(int(value)), so "2" and "01" are on and "00" is off.
TEST(EngineLog, Issue19_EnvironmentSwitchesReadAsBoolOfInt) {
  const auto on = lg::parse_engine_log("VLLM_ASCEND_ENABLE_FLASHCOMM1=2 VLLM_ASCEND_ENABLE_MLAPO=01 VLLM_USE_FLASHINFER_SAMPLER=10 vllm serve /m\n", sigs());
  ASSERT_TRUE(on.args.flashcomm1.has_value());
  EXPECT_TRUE(on.args.flashcomm1->value);
  ASSERT_TRUE(on.args.mlapo.has_value());
  EXPECT_TRUE(on.args.mlapo->value);
  ASSERT_TRUE(on.args.flashinfer_sampler.has_value());
  EXPECT_TRUE(on.args.flashinfer_sampler->value);
  const auto off = lg::parse_engine_log("VLLM_ASCEND_ENABLE_FLASHCOMM1=00 vllm serve /m\n", sigs());
  ASSERT_TRUE(off.args.flashcomm1.has_value());
  EXPECT_FALSE(off.args.flashcomm1->value);
}

// Issue 15 (pp35): under pipeline parallelism each stage's workers print their own "Available KV cache memory"; the
// kept (smallest) line carries the PP rank of its worker's process name ("(Worker_PP1 pid=...)", vLLM's multiprocessing
// executor: "Worker" + "_PP<r>" for PP > 1, then "_TP<r>" / "_EP<r>"), so logs compares it with that stage. A line from a
// worker whose name has no PP part (TP only, DP + EP, Ray) keeps none. Figures: the llm-d-planner PP 2 sweep's stage 0
// printed 66.54 GiB; the stage-1 figure here (65.10) is made up to be the smaller.
TEST(EngineLog, Issue15_AvailableKvLineKeepsItsWorkersStage) {
  const std::string start = "INFO 04-22 10:00:00 [core.py:74] Initializing a V1 LLM engine (v0.19.0) with config: model='meta-llama/Llama-3.1-8B-Instruct'\n";
  const auto log = lg::parse_engine_log(start +
                                            "(Worker_PP0 pid=11) INFO 04-22 10:05:01 [gpu_worker.py:436] Available KV cache memory: 66.54 GiB\n"
                                            "(Worker_PP1 pid=12) INFO 04-22 10:05:01 [gpu_worker.py:436] Available KV cache memory: 65.10 GiB\n",
                                        sigs());
  ASSERT_TRUE(log.printed.available_kv_gib && log.printed.available_kv_stage);
  EXPECT_DOUBLE_EQ(log.printed.available_kv_gib->value, 65.10);
  EXPECT_EQ(log.printed.available_kv_stage->value, 1);
  EXPECT_EQ(log.printed.available_kv_stage->line, 3);
  const std::pair<const char*, std::optional<int64_t>> rows[] = {
      {"(Worker_PP0_TP1 pid=11) INFO 04-22 10:05:01 [gpu_worker.py:436] Available KV cache memory: 51.98 GiB\n", 0},
      {"(Worker_DP0_PP3_TP0 pid=11) INFO 04-22 10:05:01 [gpu_worker.py:436] Available KV cache memory: 51.98 GiB\n", 3},
      {"(Worker_DP1_TP0_EP8 pid=11) INFO 04-22 10:05:01 [worker.py:365] Available KV cache memory: 17.52 GiB\n", std::nullopt},
      {"(RayWorkerWrapper pid=206149, ip=10.242.21.180) INFO 10-08 10:05:01 [gpu_worker.py:276] Available KV cache memory: 70.58 GiB\n", std::nullopt},
      {"(Worker_PPx pid=11) INFO 04-22 10:05:01 [gpu_worker.py:436] Available KV cache memory: 1.00 GiB\n", std::nullopt},
  };
  for (const auto& [line, stage] : rows) {
    const auto one = lg::parse_engine_log(start + line, sigs());
    ASSERT_TRUE(one.printed.available_kv_gib) << line;
    EXPECT_EQ(one.printed.available_kv_stage.has_value(), stage.has_value()) << line;
    if (stage && one.printed.available_kv_stage) EXPECT_EQ(one.printed.available_kv_stage->value, *stage) << line;
  }
  // A larger line after the kept one changes neither the figure nor its stage.
  const auto later = lg::parse_engine_log(start +
                                              "(Worker_PP1 pid=12) INFO 04-22 10:05:01 [gpu_worker.py:436] Available KV cache memory: 65.10 GiB\n"
                                              "(Worker_PP0 pid=11) INFO 04-22 10:05:01 [gpu_worker.py:436] Available KV cache memory: 66.54 GiB\n",
                                          sigs());
  ASSERT_TRUE(later.printed.available_kv_stage);
  EXPECT_EQ(later.printed.available_kv_stage->value, 1);
  EXPECT_EQ(later.printed.available_kv_stage->line, 2);
}

// Issue 15 (pp36): vLLM prints the total torch reports in "Free memory on device (F/T GiB)", after warm-up (0.11+) and in
// its refusal at start. People write "H20" for the 96 GB card and for the 141 GB H20-3e; the total the log prints picks
// the card the --device name leaves open, and is the budget's total, as --device-memory with that total is: the same
// prediction, and the requested memory the log's own "Desired GPU memory utilization is (0.92, 128.63 GiB)" states
// (0.92 x 139.81 GiB = 128.625 GiB). The KV figure on line 3 is made up; only the device and the budget are compared.
TEST(LogsCli, Issue15_PrintedTotalPicksTheH20PartAndSizesTheBudget) {
  const auto refusal = lg::parse_engine_log(
      "ValueError: Free memory on device (6.92/8.0 GiB) on startup is less than desired GPU memory utilization (0.9, 7.2 GiB).\n", sigs());
  ASSERT_TRUE(refusal.printed.device_total_gib);
  EXPECT_DOUBLE_EQ(refusal.printed.device_total_gib->value, 8.0);
  EXPECT_FALSE(lg::parse_engine_log("Free memory on device (6.92/x GiB) on startup\n", sigs()).printed.device_total_gib);

  const std::string log = ::testing::TempDir() + "/pp36_h20.log";
  std::ofstream(log) << "(APIServer pid=1) INFO 09-01 10:00:00 [api_server.py:1805] vLLM API server version 0.27.1\n"
                     << "vllm serve Qwen/Qwen2.5-7B --max-model-len 16384\n"
                     << "(EngineCore pid=2) INFO 09-01 10:02:00 [gpu_worker.py:564] Available KV cache memory: 118.5 GiB\n"
                     << "(EngineCore pid=2) INFO 09-01 10:02:30 [gpu_worker.py:855] Free memory on device (138.92/139.81 GiB) on startup. "
                        "Desired GPU memory utilization is (0.92, 128.63 GiB). Actual usage is 14.3 GiB for consumed memory (weights + non-torch), "
                        "1.2 GiB for peak activation, and 0.5 GiB for CUDAGraph memory.\n";
  const std::string models = " --models " + pftest::shared_path("models");
  const auto out = pftest::run_cli("logs " + log + " --device H20" + models + " --json", {.with_stderr = false});
  ASSERT_EQ(out.code, 0) << out.out;
  const auto j = nlohmann::json::parse(out.out);
  EXPECT_EQ(j["fit"]["device"], "H20-141G");
  EXPECT_NE(j["notes"].dump().find("the 139.81 GiB total the log prints (line 4) picks H20-141G"), std::string::npos) << j["notes"].dump();
  double logged_kv = 0;
  for (const auto& row : j["printed_vs_predicted"])
    if (row["what"] == "available KV cache (GiB)") logged_kv = row["predicted"].get<double>();
  const auto fit = nlohmann::json::parse(
      pftest::run_cli("fit Qwen/Qwen2.5-7B --device H20 --device-memory 139.81GiB --engine vllm@0.27.1 --max-model-len 16384" + models + " --json",
                      {.with_stderr = false}).out);
  EXPECT_EQ(fit["device"], "H20-141G");
  EXPECT_NEAR(fit["memory_per_device"]["requested_gib"].get<double>(), 128.63, 0.005);
  EXPECT_NEAR(logged_kv, fit["memory_per_device"]["available_kv_gib"].get<double>(), 1e-6);
  // Without the line the bare name keeps the assumed 96 GB card.
  std::ofstream(log) << "vllm serve Qwen/Qwen2.5-7B --max-model-len 16384\n"
                     << "INFO 09-01 10:02:00 [gpu_worker.py:564] Available KV cache memory: 118.5 GiB\n";
  const auto bare = nlohmann::json::parse(pftest::run_cli("logs " + log + " --device H20" + models + " --json", {.with_stderr = false}).out);
  EXPECT_EQ(bare["fit"]["device"], "H20");
}
