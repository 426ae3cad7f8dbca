// logs/engine_log: reads the text of a vLLM / vLLM-Ascend (and, where the strings are shared,
// MindIE) start-up log. parse_engine_log pulls out the versions, the engine arguments (from the
// "non-default args" dict, the "with config:" line, or a `vllm serve` command line), the memory
// lines the engine printed, and classifies a failure by the signatures in
// data/doctor/error_signatures.json: the root cause is the highest-priority error signature
// (earliest line on ties), never the generic "Engine core initialization failed" symptom. Pure
// functions of the text; every value keeps the 1-based line number it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace preflight::logs {

enum class Severity { error, warning, symptom };

struct SignatureClass {
  std::string id;        // weights_oom, unsupported_quantization, ...
  std::string title;
  std::string fix;
  bool memory = false;   // memory-related: the CLI runs fit for the logged deployment
  std::string source;
};

struct SignatureRule {
  std::string id;
  std::string class_id;  // a SignatureClass id, or "oom" (phase decided from the log) or "symptom"
  Severity severity = Severity::error;
  int64_t priority = 0;
  std::vector<std::string> patterns;  // literal substrings of one line
  std::string source;
};

struct SignatureSet {
  std::vector<SignatureClass> classes;
  std::vector<SignatureRule> rules;
  std::vector<std::string> oom_weights_markers, oom_kv_markers;
  std::string oom_phase_source;
  std::string origin;
  const SignatureClass* find_class(const std::string& id) const;
};

// Parses the signature file; corrupt errors name the file and the rule id (unknown keys, missing
// source, duplicate ids, unknown class, empty patterns).
Expected<SignatureSet> parse_signatures(const std::string& text, const std::string& origin);
// The embedded data/doctor/error_signatures.json.
Expected<SignatureSet> load_signatures();

template <typename T>
struct Logged {
  T value{};
  int64_t line = 0;  // 1-based line in the log
};

// The engine arguments a log states. Unset when the log does not say.
struct EngineArgs {
  std::optional<Logged<std::string>> model;
  std::optional<Logged<int64_t>> tensor_parallel_size, pipeline_parallel_size, max_model_len, max_num_seqs, max_num_batched_tokens;
  std::optional<Logged<double>> gpu_memory_utilization;
  std::optional<Logged<std::string>> quantization, kv_cache_dtype, dtype;
  std::optional<Logged<bool>> enforce_eager;
  // --skip-mm-profiling, or the line "Skipping memory profiling for multimodal encoder" (vLLM >= 0.10).
  std::optional<Logged<bool>> skip_mm_profiling;
  // --data-parallel-size, --data-parallel-size-local, --enable-expert-parallel.
  std::optional<Logged<int64_t>> data_parallel_size, data_parallel_size_local;
  // Issue 15 (multinode32): the multi-node data-parallel flags, from the command line (long and short names: -dpl, -dpr,
  // -dpa, -dpp, -dpb, -asc), the non-default args dict, or a headless node's own line "Launching N data parallel
  // engine(s) in headless mode, with head node address tcp://HOST:PORT." (vllm/entrypoints/cli/serve.py run_headless;
  // a headless node prints no non-default args: it starts no API server): headless, the local ranks and the address.
  std::optional<Logged<bool>> headless, data_parallel_hybrid_lb, data_parallel_external_lb;
  std::optional<Logged<int64_t>> data_parallel_start_rank, data_parallel_rpc_port, api_server_count;
  std::optional<Logged<std::string>> data_parallel_address, data_parallel_backend;
  // Issue 15 (dpep33): --data-parallel-rank / -dpn, --nnodes / -n, --node-rank / -r, --master-addr, --master-port, from the
  // command line, the non-default args dict or Namespace(...) (nnodes 1 there is the default and is not kept).
  std::optional<Logged<int64_t>> data_parallel_rank, nnodes, node_rank, master_port;
  std::optional<Logged<std::string>> master_addr;
  // Issue 15 (dcp): --decode-context-parallel-size / -dcp, 'decode_context_parallel_size' in the non-default args.
  std::optional<Logged<int64_t>> decode_context_parallel_size;
  std::optional<Logged<bool>> enable_expert_parallel;
  // --enable-prefix-caching / --no-enable-prefix-caching (a hybrid model's Mamba cache mode).
  std::optional<Logged<bool>> enable_prefix_caching;
  // --enable-chunked-prefill / --no-enable-chunked-prefill, the args dict's enable_chunked_prefill, V0's config line
  // 'chunked_prefill_enabled=False' (issue 15: off, the profile run forwards the whole context).
  std::optional<Logged<bool>> enable_chunked_prefill;
  // Issue 16 (quant33's leftover): --allow-deprecated-quantization (vLLM >= 0.14 refuses a deprecated method without it).
  std::optional<Logged<bool>> allow_deprecated_quantization;
  // --mamba-ssm-cache-dtype (issue 15: a hybrid model's SSM state dtype, which sets its state page).
  std::optional<Logged<std::string>> mamba_ssm_cache_dtype;
  // --limit-mm-per-prompt as JSON ('{"image": 0, "video": 0}'), from the flag's JSON, its key=value form
  // (image=0,video=0) or the non-default args dict ({'image': 0, 'video': 0}). Issue 15: a zero count keeps
  // that modality out of the profile run (and, for every modality at 0, the tower out of the weights).
  std::optional<Logged<std::string>> limit_mm_per_prompt;
  // Issue 15: --language-model-only ('language_model_only': True in the non-default args), or vLLM's line "All limits of
  // multimodal modalities supported by the model are set to 0, running in text-only mode." (every limit at 0).
  std::optional<Logged<bool>> language_model_only;
  // --speculative-config as JSON, from the flag, the non-default args dict ({'method': 'mtp', ...}) or the
  // config dump (SpeculativeConfig(method='mtp', ..., num_spec_tokens=1)).
  std::optional<Logged<std::string>> speculative_config;
  // The engine's environment as the log shows it ("export HCCL_BUFFSIZE=1024", "HCCL_BUFFSIZE=1024 vllm serve ..."),
  // issue 15: HCCL_BUFFSIZE (MB), VLLM_ASCEND_ENABLE_FLASHCOMM1 and (dsv32) VLLM_ASCEND_ENABLE_MLAPO.
  std::optional<Logged<double>> hccl_buffsize;
  std::optional<Logged<bool>> flashcomm1;
  std::optional<Logged<bool>> mlapo;
  // Issue 15: the sampling path vLLM's TopKTopPSampler printed ("Using FlashInfer for top-p & top-k sampling." true;
  // "FlashInfer is not available. Falling back to the PyTorch-native implementation ..." false) or the environment's
  // VLLM_USE_FLASHINFER_SAMPLER=0/1.
  std::optional<Logged<bool>> flashinfer_sampler;
  // Issue 15: --compilation-config's capture settings as JSON ({"cudagraph_capture_sizes": [..], "max_cudagraph_capture_size":
  // n, "cudagraph_mode": "..."}), from the flag's JSON, its dotted forms (-cc.key=value, --compilation-config.key value,
  // -O.key=value) or the non-default args dict, whose Python repr prints the whole CompilationConfig (unset fields None,
  // enums as <CUDAGraphMode.PIECEWISE: 1>). Only the set capture keys are kept.
  std::optional<Logged<std::string>> compilation_config;
  // Issue 15: -O<n> / -O <n> / --optimization-level n ('optimization_level': 3 in the non-default args).
  std::optional<Logged<int64_t>> optimization_level;
  // Issue 15: the attention backend, upper case: the printed selection ("Using AttentionBackendEnum.FLASHINFER backend.",
  // "Using FLASH_ATTN attention backend out of potential backends: [...]", "Using FlashInfer backend."), else
  // --attention-backend or VLLM_ATTENTION_BACKEND.
  std::optional<Logged<std::string>> attention_backend;
  // Issue 15 (evid24): --moe-backend / 'moe_backend' in the non-default args, normalized as vLLM does (lower case, '_').
  std::optional<Logged<std::string>> moe_backend;
};

struct Versions {
  std::optional<Logged<std::string>> vllm, vllm_ascend, torch, torch_npu, cann, mindie;
};

// Numbers the engine printed, each line as found.
struct PrintedLines {
  std::optional<Logged<double>> weights_gib;        // "Model loading took X GiB" / "Loading model weights took X GB"
  std::optional<Logged<double>> available_kv_gib;   // "Available KV cache memory: X GiB" or "Available memory: N" (bytes / 2^30)
  // Issue 15 (pp35): the PP rank of the worker whose line available_kv_gib is, from the line's process prefix
  // ("(Worker_PP1 pid=...)", "(Worker_PP0_TP1 ...)"; vLLM's multiprocessing worker names); unset where it has none.
  std::optional<Logged<int64_t>> available_kv_stage;
  std::optional<Logged<int64_t>> kv_cache_tokens;   // "GPU KV cache size: N tokens"
  std::optional<Logged<int64_t>> num_gpu_blocks;    // "# npu blocks: N" / "# GPU blocks: N" / "# rocm blocks: N" / "num_gpu_blocks is: N"
  std::optional<Logged<double>> max_concurrency;    // "Maximum concurrency for L tokens per request: Xx"
  std::optional<Logged<int64_t>> concurrency_len;
  std::optional<Logged<double>> graph_gib;          // "Graph capturing finished in N secs, took X GiB"
  std::optional<Logged<double>> graph_estimate_gib; // "Estimated CUDA graph memory: X GiB total" (vLLM 0.21+, before KV sizing; issue 15)
  // The engine's own per-term accounting (issue 15), from either of two summaries (docs/logs.md):
  //  vLLM-Ascend >= 0.19.1 (PR #8289, vllm_ascend/worker/worker.py compile_or_warm_up_model), after graph capture:
  //   "Actual usage: W GiB for weights, A GiB for peak activation, N GiB for non-torch memory, G GiB for NPU graph
  //   memory. ... Current KV cache memory: K GiB."
  //  vLLM's V0 worker (vllm/worker/worker.py determine_num_available_blocks, PR #12126 wording, v0.7 - v0.10), at INFO:
  //   "model weights take WGiB; non_torch_memory takes NGiB; PyTorch activation peak memory takes AGiB; the rest of
  //   the memory reserved for KV Cache is KGiB."
  // W also fills weights_gib and G graph_gib when the log printed no earlier line for them.
  std::optional<Logged<double>> activation_peak_gib;  // A: the profile run's torch peak above the weights
  std::optional<Logged<double>> non_torch_gib;        // N: non-torch memory the profile run added
  std::optional<Logged<double>> kv_reserve_gib;       // K: the KV budget the summary states
  std::optional<Logged<double>> requested_gib;        // "Desired GPU memory utilization is (u, R GiB)" / "x gpu_memory_utilization (u) = RGiB"
  // Issue 15 (pp36): the device total torch reports, T of "Free memory on device (F/T GiB)" (vLLM 0.11+ after warm-up
  // and in its refusal "... on startup is less than desired GPU memory utilization"; vLLM-Ascend >= 0.19.1).
  std::optional<Logged<double>> device_total_gib;
  // "Encoder cache will be initialized with a budget of N tokens, and profiled with K image items of the
  // maximum feature size": the profile run's encoder pass (vLLM V1, vLLM-Ascend >= 0.13).
  std::optional<Logged<int64_t>> encoder_budget_tokens, encoder_items;
  std::optional<Logged<std::string>> encoder_modality;  // image | video | audio
};

// Figures from an out-of-memory message ("Tried to allocate 172.00 MiB (NPU 0; 29.49 GiB total
// capacity; 28.79 GiB already allocated; ... 118.31 MiB free").
struct OomDetail {
  double requested_bytes = 0;
  std::optional<double> total_bytes, allocated_bytes, free_bytes;
  int64_t line = 0;
};

struct EvidenceLine {
  int64_t line = 0;
  std::string text;     // trimmed, capped at 400 characters
  std::string rule_id;  // the signature that matched, or "traceback" / "phase"
};

struct Diagnosis {
  std::string class_id;  // a SignatureClass id; "unknown" when an error has no signature; empty when none
  std::string title, fix, source;
  bool memory = false;
  std::vector<EvidenceLine> evidence;   // root-cause lines first
  std::vector<EvidenceLine> symptoms;   // generic failure lines the root cause explains
  std::vector<EvidenceLine> warnings;   // warning-level signatures seen
  std::vector<std::string> secondary;   // other error classes seen further on
  std::string reasoning;                // how the class was chosen (OOM phase, fallback)
  std::optional<OomDetail> oom;
};

// Issue 15 (v0eng29): the engine core a vLLM log shows, V0 (vllm/engine/llm_engine.py) or V1 (vllm/v1/engine/core.py),
// from its strongest evidence (the earliest line among equals): the engine's own line ("Initializing a V0 LLM engine
// (v0.9.1)", "Initializing a V1 LLM engine", and before 0.8 V0's "Initializing an LLM engine (v0.6.4)"), then the V1
// oracle's "... Falling back to V0.", then VLLM_USE_V1=0 / 1 in the environment the log shows, then the V0 executor's
// "# GPU blocks: N, # CPU blocks: M" (V1 keeps no CPU blocks).
enum class EngineCoreShown { v0, v1 };
struct EngineCoreLine {
  EngineCoreShown core = EngineCoreShown::v1;
  int64_t line = 0;
  std::string text;  // the evidence as the log prints it, from the matched words (an engine line up to " with config"), at most 120 characters
};
// The engine core `line` (1-based `n`) shows, with the strength of its evidence (3 the engine line ... 0 the blocks
// line); nullopt when it shows none.
struct EngineCoreClue {
  EngineCoreLine seen;
  int strength = 0;
};
std::optional<EngineCoreClue> engine_core_clue(const std::string& line, int64_t n);

struct EngineLog {
  std::string engine;  // vllm-ascend | vllm | mindie | unknown (from what the log shows)
  std::optional<EngineCoreLine> engine_core;  // issue 15 (v0eng29)
  Versions versions;
  EngineArgs args;
  PrintedLines printed;
  Diagnosis diagnosis;
  int64_t line_count = 0;
  bool started = false;  // the log shows the server came up (API routes / "Application startup complete")
  int64_t started_line = 0;  // the first line that shows it (1-based; 0: none)
};

// Parses a log; never fails on content (unknown text is skipped). Lines longer than 64 KiB are
// truncated for matching.
EngineLog parse_engine_log(const std::string& text, const SignatureSet& signatures);

// Issue 19 (hard33): the lines parse_engine_log and parse_llama_cpp_log split `text` into ('\n' ends a line, or '\r'
// in a text with no '\n'), counted without holding them. Each line is held as a string while a log is read (32 bytes
// and up): 60 MB of empty lines took 2.1 GB and 8 minutes, so a reader refuses a log of more than k_max_log_lines (a
// vLLM start-up log has a few thousand; 64 MiB, the text-file limit, of 150-byte lines is 450,000).
inline constexpr size_t k_max_log_lines = 1'000'000;
size_t count_log_lines(const std::string& text);

}  // namespace preflight::logs
