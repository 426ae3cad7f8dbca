// logs/llama_cpp_log: reads the text of a llama.cpp start-up log (llama-server, llama-cli, or any program
// on libllama such as node-llama-cpp at debug level): the model file it loaded, the context parameters
// llama_context printed (n_ctx, n_batch, n_ubatch, n_seq_max, flash_attn), the KV cache types, the layers
// it offloaded, the buffer lines ("<device> model|KV|RS|compute|output buffer size = X MiB", and the older
// "llm_load_tensors: CPU buffer size = X MiB"), and the llama.cpp flags of a command line in the log.
// Sources: ggml-org/llama.cpp src/llama-context.cpp (llama_context: n_ctx ...), src/llama-kv-cache.cpp
// ("%s KV buffer size", "K (%s): ..."), src/llama-model.cpp (load_tensors: "offloaded %d/%d layers to
// GPU", "%s model buffer size"). Pure functions of the text; every value keeps its 1-based line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "logs/engine_log.hpp"

namespace preflight::logs {

// One buffer line: device or buffer type as printed ("CPU_Mapped", "AMX", "CUDA0"), kind, bytes.
struct LlamaLogBuffer {
  std::string device;
  std::string kind;  // model | KV | RS (recurrent state) | compute | output
  double bytes = 0;  // the printed MiB x 2^20 (llama.cpp prints two decimals)
  int64_t line = 0;
};

struct LlamaCppLog {
  std::optional<Logged<std::string>> model_path;  // "loaded meta data ... from PATH", else -m on a command line
  std::optional<Logged<int64_t>> n_ctx, n_batch, n_ubatch, n_seq_max;
  std::optional<Logged<std::string>> flash_attn;  // enabled | disabled | auto
  std::optional<Logged<std::string>> cache_type_k, cache_type_v;
  std::optional<Logged<int64_t>> layers_offloaded, layer_count;  // "offloaded N/M layers to GPU"
  std::optional<Logged<std::string>> load_mode;  // mmap | no_mmap (load_tensors ... load_mode = X)
  // Issue 16 (llamacpp33): llama.cpp's build number, from 'build: 7342 (2fbe3b7bb) with ...' (llama-server, llama-cli) or
  // 'version: 7342 (2fbe3b7bb)' (--version): it decides an MLA model's KV cache (estimate::llama_mla_cache).
  std::optional<Logged<int64_t>> build;
  std::vector<LlamaLogBuffer> buffers;
  // Flags from a llama-server / llama-cli command line in the log, llama.cpp's names without dashes
  // normalised to the long form ("ctx-size", "ubatch-size", "parallel", "n-gpu-layers", "cache-type-k",
  // "cache-type-v", "flash-attn", "no-mmap", "model", "hf-repo"), each with its value ("" for a switch).
  std::vector<std::pair<std::string, Logged<std::string>>> flags;
  int64_t line_count = 0;
  double total(const std::string& kind) const;
};

// True when the text has llama.cpp's own lines (llama_model_loader:, load_tensors:, llama_context:,
// llama_kv_cache:, sched_reserve:, or their older names llm_load_tensors:, llama_new_context_with_model:).
bool is_llama_cpp_log(const std::string& text);

LlamaCppLog parse_llama_cpp_log(const std::string& text);

}  // namespace preflight::logs
