// estimate/llama_cpp: what llama.cpp allocates when it loads a GGUF file and creates a context, by
// mechanism, buffer by buffer, as llama.cpp logs them: the model buffers (load_tensors: "... model buffer
// size"), the KV buffer (llama_kv_cache: "... KV buffer size"), the compute buffer (sched_reserve: "...
// compute buffer size") and the output buffer (llama_context: "... output buffer size"). Options take
// llama.cpp's flag names. Sources: ggml-org/llama.cpp src/llama-model.cpp (load_tensors, layer placement),
// src/llama-kv-cache.cpp (one K and one V tensor per layer, n_ctx cells), src/llama-context.cpp
// (output_reserve, graph_reserve), src/llama-graph.cpp (build_attn_mha, build_ffn), ggml/src/ggml-alloc.c
// (in-place reuse), ggml/src/ggml-cpu/amx (AMX weight repacking); checked against the real llama.cpp in
// tests/llama_cpp (node-llama-cpp 3.21.1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "device/cpu_catalog.hpp"
#include "model/gguf_reader.hpp"

namespace preflight::estimate {

// --flash-attn on|off|auto: auto turns it on where the backend supports it (CPU and CUDA do).
enum class LlamaFlashAttn { off, on, auto_select };
// --mmap / --no-mmap: a mapped CPU model buffer spans the file range of its tensors.
enum class LlamaMmap { on, off };
// Extra CPU buffer type llama.cpp moves matmul weights into: AMX on CPUs with amx_int8 / amx_tile.
enum class LlamaCpuExtraBuffer { none, amx };

struct LlamaCppOptions {
  int64_t ctx_size = 4096;      // --ctx-size / -c (llama-server default 4096); padded up to 256 cells
  int64_t ubatch_size = 512;    // --ubatch-size / -ub (default 512)
  int64_t parallel = 1;         // --parallel / -np: n_seq_max, one output row each
  int64_t n_gpu_layers = 0;     // --n-gpu-layers / -ngl: the last N repeating layers on the GPU; > block_count also the output layer
  std::string cache_type_k = "f16";  // --cache-type-k / -ctk
  std::string cache_type_v = "f16";  // --cache-type-v / -ctv
  LlamaFlashAttn flash_attn = LlamaFlashAttn::auto_select;
  LlamaMmap mmap = LlamaMmap::on;
  LlamaCpuExtraBuffer cpu_extra_buffer = LlamaCpuExtraBuffer::none;
  std::string gpu_name = "CUDA0";  // the backend name llama.cpp prints for the offload device
  // Issue 17: --tensor-split A,B,...: one proportion per GPU (named gpu_name's prefix + index: CUDA0,
  // CUDA1, ...); empty: one GPU. llama.cpp's rule (src/llama-model.cpp load_tensors): the cumulative
  // proportions normalised to 1 are split points, and offloaded layer k of act = min(ngl, n_layer + 1)
  // (the output layer last) goes to the first GPU whose split point exceeds float(k) / act.
  std::vector<float> tensor_split;
  // Issue 17: tensors kept in the CPU model buffer although their layer is offloaded (--override-tensor /
  // -ot PATTERN=CPU, --cpu-moe): regexes searched in the tensor name, as llama.cpp does (std::regex_search). They are
  // matched by base/safe_regex in time linear in the name (issue 19: std::regex backtracked on "((.*)*)*x" for good);
  // a construct outside its subset (a backreference, lookaround) is refused with the pattern named.
  std::vector<std::string> cpu_tensor_patterns;
  // --n-cpu-moe N: the expert tensors (llama_cpu_moe_pattern()) of layers 0 .. N-1 are kept on the CPU too. llama.cpp
  // writes one regex a layer (llm_ffn_exps_block_regex); counted here, as N from a flag or a log has no useful bound
  // (issue 19: N = 2^20 compiled a million regexes in 60 s and 3.5 GB).
  int64_t cpu_moe_first_layers = 0;
  // Issue 16 (llamacpp33): llama.cpp's build number (bNNNN, `--engine llama.cpp@b7342`, a log's 'build: 7342 (...)'):
  // it decides how an MLA model's attention is cached (llama_mla_cache). Unset: not stated, the newest layout with a band.
  std::optional<int64_t> build;
};

// Issue 16 (llamacpp33): how llama.cpp caches the attention of an MLA model (GGUF architecture deepseek2: DeepSeek-V2/V3/R1,
// Kimi-K2, GLM-4.7-Flash), per layer and cell:
//   per_head        K n_head x (qk_nope + qk_rope) and V n_head x v_head_dim: the GGUF written by convert_hf_to_gguf.py
//                   before github.com/ggml-org/llama.cpp/pull/12801 (merged 2025-04-15), at any build (the MLA graph needs
//                   the attn_k_b / attn_v_b tensors only a later conversion writes; 'the backward compatibility is only
//                   for old files', jukofyork, 2025-04-07), and any build before #12801;
//   latent_k_and_v  K kv_lora_rank + qk_rope (one head) and V kv_lora_rank: an MLA GGUF from #12801 on;
//   latent_k        K only, V none ('Support V-less KV cache ... MLA models such as DeepSeek and GLM 4.7 Flash', PR #19067,
//                   opened 2026-01-24, merged 2026-01-25 15:48 +02:00 as d9c6ce46f747, parent 70d860824a: the commit
//                   page of a koboldcpp mirror, git.viorsan.com/vrr/koboldcpp), with or without flash attention.
enum class LlamaMlaCache { per_head, latent_k_and_v, latent_k };
const char* llama_mla_cache_name(LlamaMlaCache cache);
// The builds that bracket each merge (their own merge tags were not located: the repository's history is not readable
// here, its snapshot is 1.4 GB; session 34 found Homebrew's llama.cpp.rb pins, one every ten builds, b5120 e8a62631,
// b5140 54a72720, b7820 8af1f5f4, b7830 080b1619, but no record that orders them against the merge commits). b4524: released 2025-01-29 (containers/ramalama#658), before #12801; b5554: 'version: 5554 (3600cc28)' in
// ggml-org/llama.cpp#14071 (2025-06-08), after it. b7599: ggml-org/llama.cpp#18585 (early January 2026), before #19067;
// b7917: 'version: 7917 (91ea44e89)' in ggml-org/llama.cpp#19307 (2026-02-03), after it.
constexpr int64_t k_llama_build_before_mla = 4524, k_llama_build_with_mla = 5554;
constexpr int64_t k_llama_build_before_vless = 7599, k_llama_build_with_vless = 7917;
// Where the model's attention layout comes from: an MLA GGUF (it has {arch}.attention.key_length_mla), a GGUF of the
// per-head layout (an MLA architecture without that key), or a checkpoint that the build's own converter turns into one.
enum class LlamaMlaSource { gguf_mla, gguf_per_head, checkpoint };
struct LlamaMlaChoice {
  LlamaMlaCache cache = LlamaMlaCache::latent_k;
  std::optional<LlamaMlaCache> other;  // the other layout an unstated build (or one inside a bracket) may have
  std::string why;                     // the rule with its source
};
LlamaMlaChoice llama_mla_cache(LlamaMlaSource source, std::optional<int64_t> build);
// An MLA model's attention as a checkpoint states it (config.json); kv_lora_rank 0: not MLA.
struct LlamaMlaGeometry {
  int64_t n_head = 0;        // num_attention_heads
  int64_t head_k = 0;        // qk_nope_head_dim + qk_rope_head_dim
  int64_t head_v = 0;        // v_head_dim
  int64_t kv_lora_rank = 0;  // kv_lora_rank
  int64_t rope_dim = 0;      // qk_rope_head_dim
};

// llama.cpp's limit on --tensor-split entries (LLAMA_MAX_DEVICES in include/llama.h).
constexpr size_t k_llama_max_devices = 16;
// The expert tensors --cpu-moe keeps on the CPU (ffn_{up,down,gate,gate_up}_{,ch}exps of every layer:
// LLM_FFN_EXPS_REGEX in github.com/ggml-org/llama.cpp common/common.h); --n-cpu-moe N keeps the same tensors of
// layers 0 .. N-1 (llm_ffn_exps_block_regex: LlamaCppOptions::cpu_moe_first_layers). Layer split rule:
// get_layer_buft_list in github.com/ggml-org/llama.cpp/blob/master/src/llama-model.cpp.
std::string llama_cpu_moe_pattern();

// One buffer as llama.cpp names it: device/buffer type ("CPU_Mapped", "AMX", "CPU", "CUDA0") and kind.
// rs: the recurrent state of Mamba-style layers (llama-memory-recurrent.cpp, "RS buffer size").
enum class LlamaBufferKind { model, kv, compute, output, rs };
struct LlamaCppBuffer {
  std::string device;
  LlamaBufferKind kind = LlamaBufferKind::model;
  uint64_t bytes = 0;
};

struct LlamaCppEstimate {
  int64_t n_ctx = 0;     // cells, after padding
  int64_t n_ubatch = 0;  // min(ubatch, n_ctx): the tokens of the reserved graph
  bool flash_attn = false;
  int64_t layers_on_gpu = 0;
  std::vector<std::pair<std::string, int64_t>> gpu_layers;  // per GPU: name and layers it holds (the output layer counts as one)
  std::vector<LlamaCppBuffer> buffers;
  uint64_t model_buffer_bytes = 0;
  uint64_t kv_buffer_bytes = 0;
  uint64_t compute_buffer_bytes = 0;
  uint64_t output_buffer_bytes = 0;
  uint64_t rs_buffer_bytes = 0;
  // llama_kv_cache's 'size = ... MiB (N cells, L layers, S seqs), K (f16): ... MiB, V (f16): ... MiB' split.
  uint64_t kv_k_bytes = 0, kv_v_bytes = 0;
  // Issue 16 (llamacpp33): an MLA model whose build is not stated: the KV buffer under the other cache layout (the band's
  // other end; 0 when the build decides it).
  uint64_t kv_other_build_bytes = 0;
  std::vector<std::string> formulas;     // one line per buffer: formula with its inputs
  std::vector<std::string> assumptions;  // what the model does not cover for this file
  uint64_t total_bytes() const { return model_buffer_bytes + kv_buffer_bytes + compute_buffer_bytes + output_buffer_bytes + rs_buffer_bytes; }
};

const char* llama_buffer_kind_name(LlamaBufferKind kind);

// Errors: invalid_argument for a non-positive size or an unknown cache type; corrupt when the GGUF
// lacks {arch}.block_count / embedding_length / attention.head_count or the vocabulary size.
Expected<LlamaCppEstimate> estimate_llama_cpp(const model::GgufFile& file, const LlamaCppOptions& options);

// Issue 16 (llamacpp30): what llama.cpp allocates for a model it has not loaded yet, as a plan row sizes it: the
// checkpoint that convert_hf_to_gguf.py (then llama-quantize, for a GGUF preset) turns into one GGUF file of the same
// text weights, described by its shape and the bytes of those weights. The model buffers follow llama.cpp's placement
// (load_tensors): the input embedding stays on the CPU, the repeating layers' bytes (spread evenly over them) go where
// each layer is placed, the output head with the output layer (a tied head is token_embd, copied to an offloaded output
// layer). KV, compute and output buffers are estimate_llama_cpp's. CPU weight repacking (AMX) is not modelled.
struct LlamaCppModelShape {
  std::string architecture;  // for messages
  int64_t n_layer = 0;       // config: num_hidden_layers
  int64_t n_embd = 0, n_head = 0, n_ff = 0, n_vocab = 0;  // hidden_size, num_attention_heads, intermediate_size, vocab_size
  int64_t kv_layers = 0;     // layers with a KV cache (the rest are recurrent or have none)
  int64_t n_head_kv = 0, head_k = 0, head_v = 0;  // per KV layer: cached heads and their K / V widths
  int64_t n_swa = 0, swa_pattern = 0;  // sliding window and llama.cpp's pattern (every swa_pattern-th layer global); 0: none
  uint64_t recurrent_state_bytes_per_seq = 0;  // f32 conv + ssm state of the recurrent layers, one sequence (RS buffer)
  uint64_t weight_bytes = 0;      // every text tensor of the file
  uint64_t token_embd_bytes = 0;  // the input embedding
  uint64_t output_bytes = 0;      // the output head; tied: the embedding's bytes (the copy an offloaded output layer holds)
  bool tied_output = false;
  // Issue 16 (llamacpp31): routed-expert bytes llama.cpp keeps in host memory although their layers are offloaded: the
  // device's backend takes no GGML_OP_MUL_MAT_ID of their type (CANN: F32 / F16 / Q8_0 / Q4_0 only), so llama-model.cpp's
  // weight_buft_supported falls back to a CPU buffer type for them. 0: every layer's bytes go where the layer is placed.
  uint64_t host_expert_bytes = 0;
  // Issue 16 (llamacpp33): an MLA model's attention (kv_lora_rank > 0): its cache follows llama_mla_cache(checkpoint,
  // options.build) instead of n_head_kv / head_k / head_v.
  LlamaMlaGeometry mla;
};
// Errors: invalid_argument as estimate_llama_cpp for the options, and for a shape without layers, width, heads or
// vocabulary, or with a dimension out of range.
Expected<LlamaCppEstimate> estimate_llama_cpp_model(const LlamaCppModelShape& shape, const LlamaCppOptions& options);

// Decode speed from bytes moved per token. A decoded token reads every tensor of its forward pass once
// (all weights but the token_embd lookup, which reads one row; a tied output head reads token_embd whole)
// plus the K and V cells of its context, so on a CPU or a GPU that is not compute-bound the time per token
// is those bytes over the memory bandwidth the engine's threads reach, plus a fixed cost per token (graph
// build, sampling, thread hand-offs) that matters only for small models. The bandwidth is a read stream:
// `preflight bw --kernel read` with llama.cpp's thread count on a CPU, the card's bandwidth on a GPU.
// Checked against the real llama.cpp in tests/llama_cpp/speed.mjs (tests/estimate/test_llama_cpp.cpp).
// On a CPU the rate at which ggml's matmul kernels stream a weight type differs from the read kernel's:
// per ggml type, a factor on the measured read bandwidth (LlamaCppDecode::cpu_stream_factors says which
// were applied; a type without a measured factor streams at the read bandwidth, named in unmeasured_types).
// measured_cpu_read: a read bandwidth measured on this CPU, scaled per weight type by the CPU stream
// factors; bare_bandwidth: a GPU's or a catalogue CPU's bandwidth taken as is (an upper bound).
enum class LlamaDecodeBackend { measured_cpu_read, bare_bandwidth };
struct LlamaCppDecodeHost {
  double bandwidth_bytes_per_s = 0;  // read bandwidth; <= 0 gives byte counts only
  LlamaDecodeBackend backend = LlamaDecodeBackend::measured_cpu_read;
  // Fixed cost per decoded token. 0.3 ms: llama.cpp (node-llama-cpp 3.21.1, 1 CPU thread, 2-core Xeon)
  // decoded a 1-layer llama with a 1024-token vocabulary (8 MB of weights, cache resident at ~20 GB/s,
  // 0.4 ms) at 1303 tok/s = 0.77 ms per token: 0.35 ms is not bytes. Refit with tests/llama_cpp/speed.mjs.
  double per_token_overhead_s = 0.3e-3;
};
struct LlamaCppDecode {
  double weight_bytes_per_token = 0;
  std::vector<std::pair<std::string, double>> weight_bytes_by_type;  // ggml type name -> bytes read per token, by name
  double kv_bytes_per_token_full = 0;  // KV read per token with all n_ctx cells filled
  double per_token_overhead_s = 0;
  std::vector<std::pair<std::string, double>> cpu_stream_factors;  // ggml type -> factor on the read bandwidth (cpu only)
  std::vector<std::string> unmeasured_types;                       // weight types read at the bare read bandwidth (cpu only)
  double seconds_per_token_empty = 0;  // context nearly empty: weights + overhead
  double seconds_per_token_full = 0;   // n_ctx filled
  double tokens_per_s_empty = 0;
  double tokens_per_s_full = 0;
};
LlamaCppDecode estimate_llama_cpp_decode(const model::GgufFile& file, const LlamaCppEstimate& estimate, const LlamaCppDecodeHost& host);

// Issue 20: the read bandwidth llama.cpp's CPU decode reaches on a host it was not measured on, from the
// socket's peak and the thread count. Each ggml-cpu thread streams quantized weights at about 12 GB/s and
// all threads together reach about 0.67 of the socket's DDR peak, whichever is lower. Both constants come
// from one thread sweep (github.com/ggml-org/llama.cpp/issues/34, slaren 2023-08-12): i9-13900K, DDR5-6400
// dual channel = 102.4 GB/s, LLaMA 7B (Q4_0 assumed, the quant is not stated: ~3.75 GB read per token);
// 4 threads 12.65 t/s = 47.4 GB/s = 11.9 GB/s per thread; 8 threads 18.27 t/s = 68.5 GB/s = 0.67 of the
// peak; 16-32 threads 15.7-16.7 t/s. An x86 core's figure: Apple's P-cores stream ~3x faster (llama.cpp
// PR #11390, 1-thread row: 47.84 t/s x 727.75 MiB = 36.5 GB/s), so for them pass per_thread_bytes_per_s.
struct LlamaCpuBandwidth {
  double bytes_per_s = 0;
  std::string limit;    // threads | socket
  std::string formula;  // the two candidates with their inputs
};
constexpr double k_llama_cpu_bytes_per_s_per_thread = 11.9e9;
constexpr double k_llama_cpu_socket_fraction = 0.67;
LlamaCpuBandwidth llama_cpp_cpu_decode_bandwidth(double socket_peak_bytes_per_s, int threads, double per_thread_bytes_per_s = k_llama_cpu_bytes_per_s_per_thread);

// Issue 20: the same bound for a recorded llama.cpp-on-CPU run (a validation case, a user's host): the
// thread count llama.cpp ran with (--threads, "n_threads = N" in its log, the llama-bench "threads"
// column), and the socket peak from what the record states: the installed memory's peak when given (DDR5-6400
// dual channel = 102.4 GB/s on a CPU rated for 5600), else the catalogue CPU's rated peak
// (data/devices/cpus.json), else none (the thread bound alone, said so in the formula).
struct LlamaCpuRun {
  int64_t threads = 0;
  std::string cpu;                                      // a cpus.json id, name or alias; empty: not stated
  std::optional<double> memory_peak_bytes_per_s;        // the installed memory, when the record states it
};
// Errors: invalid_argument when threads is not positive or the stated peak is not positive; not_found naming
// the CPU when `cpu` is not in the catalogue.
Expected<LlamaCpuBandwidth> llama_cpp_cpu_run_bandwidth(const device::CpuCatalog& cpus, const LlamaCpuRun& run);

}  // namespace preflight::estimate
