// estimate/fit: what vLLM / vLLM-Ascend will do with a model on a device: weights per rank, the
// profiled activation peak, non-torch and graph memory, the KV budget, KV-cache groups and pages,
// and the exact lines the engine prints ("Available KV cache memory", "GPU KV cache size",
// "Maximum concurrency"), with the verdict and the engine's own failure message. Pure functions:
// every term names its rule, and calibrated terms carry an uncertainty band.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "model/model_spec.hpp"

namespace preflight::estimate {

enum class ExecutionMode { graph, eager };

// vLLM's flags, with their meanings. Unset optionals take the engine version's defaults.
struct Deployment {
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;
  std::optional<double> gpu_memory_utilization;
  std::optional<int64_t> max_model_len;
  std::optional<int64_t> max_num_seqs;
  std::optional<int64_t> max_num_batched_tokens;
  std::string kv_cache_dtype = "auto";  // auto | fp8 | fp8_e4m3 | fp8_e5m2 | int8
  std::string quantization;             // --quantization; empty = what the checkpoint says
  ExecutionMode mode = ExecutionMode::graph;
  bool skip_mm_profiling = false;       // --skip-mm-profiling: the profile run leaves the vision encoder out
  bool no_video = false;                // --limit-mm-per-prompt '{"video": 0}': the profile run never takes the video item
  bool no_images = false;               // --limit-mm-per-prompt '{"image": 0}': nor the image (with no video: text only)
  std::optional<double> device_total_bytes;  // measured total (overrides the catalogue)
  std::optional<double> kv_cache_memory_bytes;  // --kv-cache-memory-bytes: skips profiling (vLLM >= 0.11)
  // How weights are stored when neither the checkpoint nor --quantization says (a GGUF preset applied
  // to a config.json model); replaces scheme_for_flag's assumption.
  std::optional<model::QuantScheme> quant_scheme;
};

enum class Failure { none, invalid_layout, unsupported_quantization, weights_oom, kv_negative, max_model_len_too_large };
const char* failure_name(Failure failure);

struct MemoryTerm {
  std::string name;       // "weights", "activation peak", ...
  double bytes = 0;
  double band_bytes = 0;  // +/- uncertainty (0 = exact by mechanism)
  std::string rule;       // formula and inputs
};

struct KvGroup {
  std::string kind;                 // full_attention | sliding_attention | mla_attention | state
  int64_t layers = 0;
  int64_t page_bytes = 0;           // per layer, per block, per rank
  int64_t blocks_per_request = 0;   // at max_model_len
};

struct FitEstimate {
  std::string engine_id;
  std::string device_id;
  int64_t tensor_parallel_size = 1, pipeline_parallel_size = 1;
  double gpu_memory_utilization = 0;
  int64_t max_model_len = 0;
  int64_t max_num_seqs = 0, max_num_batched_tokens = 0;
  int64_t block_size = 0;
  std::string kv_cache_dtype;
  std::string quantization;         // method the engine will run
  std::string weight_scheme;        // how weights are stored

  double total_bytes = 0, requested_bytes = 0;
  double weights_bytes = 0, activation_bytes = 0, non_torch_bytes = 0, graph_bytes = 0;
  double available_kv_bytes = 0;
  double available_kv_band_bytes = 0;
  double available_kv_band_high_bytes = 0; // the high side: wider where the engine may take a cheaper path
  double available_kv_low_bytes() const { return available_kv_bytes - available_kv_band_bytes; }
  double available_kv_high_bytes() const { return available_kv_bytes + available_kv_band_high_bytes; }
  bool graph_in_budget = false;     // graph memory estimated before KV sizing and subtracted
  // What the fitted activation constants multiply (tools/fit_overheads.py refits them from these):
  // max_num_batched_tokens x (hidden + 2 x mlp / TP) x dtype bytes, and seqs x vocab x fp32; the
  // sampler run (engine's multiple of that unit + held hidden states) and the vision encoder peak.
  double activation_text_unit_bytes = 0, activation_sampler_unit_bytes = 0;
  double activation_sampler_bytes = 0, activation_vision_bytes = 0, activation_vision_unit_bytes = 0;
  bool encoder_profiles_video = false;  // the profiled item is a dummy video (larger than the largest image)
  int64_t encoder_budget_tokens = 0, encoder_items = 0;  // vLLM's "budget of N tokens, profiled with K ... items" (0: no pass)
  double activation_encoder_held_bytes = 0;  // encoder outputs held through the text and sampler runs
  double activation_text_bytes = 0;          // the text forward's peak: the fitted factor x its unit
  std::vector<MemoryTerm> terms;

  std::vector<KvGroup> groups;
  int64_t group_size = 0;
  int64_t page_bytes = 0;
  int64_t num_blocks = 0;
  int64_t kv_tokens = 0;
  int64_t kv_tokens_low = 0, kv_tokens_high = 0;
  double max_concurrency = 0;
  int64_t kv_bytes_per_token_rank = 0;
  int64_t state_bytes_per_sequence_rank = 0;

  bool fits = false;
  Failure failure = Failure::none;
  std::string failure_message;      // as the engine words it
  std::vector<std::string> lines;   // what the engine prints at start-up
  std::vector<std::string> assumptions;
  std::vector<std::string> provenance;
};

FitEstimate estimate_fit(const model::ModelSpec& model, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                         const engine::Overheads& overheads, const Deployment& deployment);

// Tokens the KV budget of `estimate` holds for one request, ignoring max_model_len (for the
// largest-context search).
// A deployment the engine refuses only because of the vision encoder's profiling pass (max_model_len above
// the KV capacity with it): its estimate with --skip-mm-profiling when that fits, else nullopt.
std::optional<FitEstimate> fit_without_encoder_pass(const model::ModelSpec& model, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                                    const engine::Overheads& overheads, const Deployment& dep, const FitEstimate& base);

int64_t kv_capacity_tokens(const FitEstimate& estimate);

// Bytes per cached element for a --kv-cache-dtype value (auto = the model dtype).
int cache_dtype_bytes(const std::string& kv_cache_dtype, const model::ModelSpec& model);
// Share of a weight group one tensor-parallel rank holds (KV projections replicate when TP > heads).
double weight_rank_share(const model::WeightGroup& group, int64_t tensor_parallel_size);
// Whether a weight group repeats per decoder layer (and so splits across pipeline stages).
bool is_layer_weight(const model::WeightGroup& group);
// The model with the storage scheme the deployment implies (checkpoint, --quantization or override).
model::ModelSpec sized_model(const model::ModelSpec& model, const Deployment& deployment);

// Applies the scheme a --quantization value implies when the checkpoint does not carry it.
model::QuantScheme scheme_for_flag(const std::string& quantization, const model::QuantScheme& checkpoint);

}  // namespace preflight::estimate
