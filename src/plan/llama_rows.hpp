// plan/llama_rows: a llama.cpp row sized as llama-server allocates it at start (issue 16, llamacpp30). llama.cpp has no
// KV budget to fill: it allocates the KV cache of -c cells when the context is created (llama-context.cpp), shared by
// -np slots of -c / -np cells each (tools/server/server.cpp: n_ctx_seq = n_ctx / n_seq_max without --kv-unified), beside
// the model buffers (the GGUF file mapped), the compute buffer and the output buffer. A row's KV tokens are therefore
// the -c its start command passes, its concurrency the -np slots, and it fits when those buffers fit the device
// (estimate::estimate_llama_cpp_model, the same formulas `fit FILE.gguf --engine llama.cpp` uses).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "device/device_spec.hpp"
#include "estimate/fit.hpp"
#include "model/model_spec.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

// The -np and -c of a row serving `concurrency` requests of `context_tokens` each: one slot a request, every slot's
// context rounded up to llama.cpp's 256-cell padding, so that -c / -np is a whole number of padded cells and the cells
// llama.cpp allocates are exactly -c.
struct LlamaServerContext {
  int64_t slots = 1;     // -np
  int64_t ctx_size = 0;  // -c
};
LlamaServerContext llama_server_context(int64_t context_tokens, int64_t concurrency);

// Issue 16 (llamacpp31): llama.cpp starts with a slot context above the model's training length (n_ctx_train, the GGUF's
// context_length = config max_position_embeddings) and only warns: the warning it prints and what it means, or "" when
// -c / -np is within the training length or the config states none.
std::string llama_ctx_train_warning(const model::ModelSpec& m, const LlamaServerContext& server);

// Issue 16 (llamacpp31): on CANN (an Ascend NPU row), where a MoE model's routed experts are placed: the CANN backend's
// GGML_OP_MUL_MAT_ID takes F32 / F16 / Q8_0 / Q4_0 experts only, and llama.cpp keeps any other in host memory although
// every layer counts as offloaded. The warning with its sources, or "" for a model without experts. fit_llama_cpp_row
// sizes such experts in the host's model buffer (LlamaCppModelShape::host_expert_bytes), not the NPU's.
inline constexpr const char* k_llama_cann_note_prefix = "CANN: ";  // how that warning begins (the start command's notes repeat it)
std::string llama_cann_expert_warning(const model::ModelSpec& m, const estimate::Deployment& d, const std::string& variant_id);

// Replaces the KV figures and the verdict of `c.fit` (a fit of the row's deployment `d` on `dev`) with llama.cpp's: KV
// tokens = -c, concurrency = -np, the KV buffer as the KV bytes, and the row fits when each device's llama.cpp buffers fit
// its memory (a CPU row: the host's). A fit that failed for another reason than memory (a layout, a quantization) is
// left as it is. c.fit.llama holds the buffers for the start command and the JSON. `build`: the llama.cpp build the engine
// names (llama.cpp@bNNNN), which decides an MLA model's cache (estimate::llama_mla_cache); unset: the newest, with a band.
void fit_llama_cpp_row(Candidate& c, const model::ModelSpec& model, const device::DeviceSpec& dev, const estimate::Deployment& d, int64_t concurrency,
                       std::optional<int64_t> build = std::nullopt);

}  // namespace preflight::plan
