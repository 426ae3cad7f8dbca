// model/model_spec: the normalized description of a model that every estimate consumes. It is built
// from files alone (config.json, safetensors headers, GGUF tensor infos, quantization descriptors),
// never from the model's name: what every layer is, what it caches per token or per sequence, and
// every weight matrix with its shape, how tensor parallelism splits it, and how it is stored.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/dtype.hpp"
#include "model/quant_scheme.hpp"

namespace preflight::model {

// Upper bounds that no real model reaches, shared by the config and GGUF readers: larger values are
// hostile or corrupt input. Keeping every dimension below 2^22 (and layers below 10^4) keeps the
// per-layer products of a few dimensions far from 2^63; longer products are checked where formed.
inline constexpr int64_t k_max_layers = 10000;
inline constexpr int64_t k_max_dim = 1 << 22;
inline constexpr int64_t k_max_vocab = 1 << 24;
inline constexpr int64_t k_max_experts = 1 << 14;

// Which rotary-embedding class the engine's model code builds (ModelSpec::rope_class).
enum class RopeClass { plain, deepseek_scaling };

// What a decoder layer does for token mixing, and so what it caches.
enum class LayerKind { full_attention, sliding_attention, mla_attention, linear_attention, mamba, mlp_only, count_ };
const char* layer_kind_name(LayerKind kind);

struct LayerSpec {
  LayerKind kind = LayerKind::full_attention;
  bool moe = false;
  // Attention cache geometry (config: num_key_value_heads, head_dim; GGUF: {arch}.attention.head_count_kv).
  int64_t num_key_value_heads = 0;
  int64_t head_dim_k = 0;
  int64_t head_dim_v = 0;
  int64_t sliding_window = 0;      // tokens; 0 = none (config: sliding_window)
  // MLA latent cache (config: kv_lora_rank + qk_rope_head_dim); not split by tensor parallelism.
  int64_t mla_cache_dim = 0;
  int64_t indexer_head_dim = 0;    // DeepSeek V3.2 DSA indexer key cache (config: index_head_dim)
  // Recurrent state per sequence (linear attention / Mamba). conv: conv_channels x conv_len,
  // ssm: ssm_heads x ssm_head_dim x ssm_state_dim. Channels and heads split by tensor parallelism.
  int64_t conv_channels = 0;
  int64_t conv_len = 0;
  int64_t ssm_heads = 0;
  int64_t ssm_head_dim = 0;
  int64_t ssm_state_dim = 0;
  Dtype ssm_dtype = Dtype::bf16;   // config: mamba_ssm_dtype / mamba_ssm_cache_dtype
  // Gated DeltaNet key heads (config: linear_num_key_heads; no GGUF reader builds these layers); 0 for other kinds.
  // Its q and k heads, split by tensor parallelism like the value heads (ssm_heads).
  int64_t linear_num_key_heads = 0;
  bool kv_shared = false;          // reuses another layer's cache (no cache of its own)
};

// How tensor parallelism splits a weight.
enum class Shard { column, row, replicated, vocab, expert, kv_heads };
// Which part of the checkpoint a weight belongs to.
enum class Part { text, vision, mtp };

struct WeightGroup {
  std::string module;        // HF-style module path with '*' for indices, e.g. "model.layers.*.mlp.down_proj"
  int64_t rows = 0;          // out_features (1-D tensors: elements)
  int64_t cols = 1;          // in_features (1-D tensors: 1)
  int64_t count = 1;         // number of such tensors (layers x experts)
  Shard shard = Shard::replicated;
  Part part = Part::text;
  bool linear = false;       // a Linear weight that quantization may convert
  bool expert = false;       // routed MoE expert weight
  double active_fraction = 1.0;  // share read per decoded token (routed experts: k / E)
  int64_t kv_heads = 0;      // Shard::kv_heads: heads in this projection (replicated when fewer than TP)
  double stored_bytes = 0;   // > 0: exact bytes of one such tensor as stored (GGUF tensor info), used instead of params x dtype
  std::string stored_format; // its storage type when stored_bytes is set (GGUF ggml type name: "Q8_0", "F32")

  int64_t params() const { return rows * cols * count; }
};

// Where a number came from: the file (or catalogue entry) and the rule applied.
struct Provenance {
  std::string quantity;
  std::string source;
  std::string rule;
};

struct ModelSpec {
  std::string id;               // hub id or path as the user gave it
  std::string source;           // file or catalogue entry read
  std::string architecture;     // config: architectures[0]
  std::string model_type;       // config: model_type (text_config.model_type for VL models)
  std::vector<std::string> auto_map;  // config: auto_map as "AutoClass=module.Class" (top level or text_config); non-empty: --trust-remote-code
  Dtype dtype = Dtype::bf16;    // config: torch_dtype / dtype

  int64_t hidden_size = 0;              // config: hidden_size; GGUF {arch}.embedding_length
  int64_t num_hidden_layers = 0;        // config: num_hidden_layers; GGUF {arch}.block_count
  int64_t num_attention_heads = 0;      // config: num_attention_heads; GGUF {arch}.attention.head_count
  int64_t num_key_value_heads = 0;      // config: num_key_value_heads; GGUF {arch}.attention.head_count_kv
  int64_t head_dim = 0;                 // config: head_dim (else hidden_size / num_attention_heads)
  int64_t intermediate_size = 0;        // config: intermediate_size; GGUF {arch}.feed_forward_length
  int64_t vocab_size = 0;               // config: vocab_size
  int64_t max_position_embeddings = 0;  // config: max_position_embeddings; GGUF {arch}.context_length
  int64_t rotary_dim = 0;               // head_dim x partial_rotary_factor (or qk_rope_head_dim for MLA)
  // The rotary class vLLM builds for the attention (issue 15, acc31): deepseek_scaling for an MLA model whose rope_scaling
  // names a type other than default (vLLM model_executor/models/deepseek_v2.py sets rope_type "deepseek_yarn", so
  // get_rope builds DeepseekScalingRotaryEmbedding, whose cache is original_max_position_embeddings x factor long); plain
  // otherwise. The engine's catalogue says what each class keeps on the device (engines.json overheads[].rope_cache_*).
  RopeClass rope_class = RopeClass::plain;
  // vLLM's derived max_model_len (vllm/config/model.py, _get_and_verify_max_len): the smallest of the config's length
  // keys (max_position_embeddings, n_positions, max_seq_len, seq_length, model_max_length, max_target_positions,
  // max_sequence_length, max_seq_length, seq_len; model_max_length, when set, replaces it), times rope_scaling's factor
  // where its type scales the context (yarn: original_max_position_embeddings x factor; not su, longrope, llama3,
  // default, mrope, nor a gemma3 model); GGUF {arch}.context_length. 0: the config states no length.
  // `derived_max_model_len_text` is how vLLM's error names it: "max_position_embeddings=131072.0 or model_max_length=None".
  int64_t derived_max_model_len = 0;
  std::string derived_max_model_len_text;
  bool tie_word_embeddings = false;

  // MoE (config: num_experts / n_routed_experts / num_local_experts, num_experts_per_tok,
  // n_shared_experts, moe_intermediate_size, first_k_dense_replace).
  int64_t num_experts = 0;
  int64_t num_experts_per_tok = 0;
  int64_t num_shared_experts = 0;
  int64_t moe_intermediate_size = 0;

  int64_t mtp_layers = 0;  // config: num_nextn_predict_layers / mtp_num_hidden_layers (not loaded without speculative decoding)

  // Vision tower (config: vision_config), 0 when text-only.
  int64_t vision_params = 0;
  int64_t vision_hidden_size = 0;
  int64_t vision_depth = 0;
  int64_t vision_intermediate_size = 0;
  int64_t vision_max_tokens_per_image = 0;  // 0: not known for this tower
  int64_t vision_patches_per_token = 1;
  int64_t vision_resize_factor_px = 0;  // the processor's side multiple (patch x merge; 0: not known)
  int64_t vision_min_pixels = 0;        // the processor's smallest image area after resizing (preprocessor_config.json)
  int64_t vision_video_max_groups = 0;  // the profiled dummy video, in max_tokens_per_image groups (0: never larger than the image)
  int64_t vision_deepstack_levels = 0;  // vision_config.deepstack_visual_indexes entries (Qwen3-VL)

  std::vector<LayerSpec> layers;
  std::vector<WeightGroup> weights;
  QuantScheme quant;

  // Exact bytes read from safetensors headers or GGUF tensor infos, when files were present.
  std::optional<uint64_t> exact_weight_bytes;
  std::map<std::string, uint64_t> exact_bytes_by_dtype;
  uint64_t exact_tensor_count = 0;
  uint64_t header_bytes_read = 0;

  std::vector<Provenance> provenance;
  std::vector<std::string> assumptions;
};

// Parameter counts. Part filters: the loaded model is text + vision (MTP only with speculative decoding).
struct ParamCounts {
  int64_t total = 0;        // text + vision (what the engine loads by default)
  int64_t text = 0;
  int64_t vision = 0;
  int64_t mtp = 0;
  int64_t embedding = 0;    // input embedding (+ untied lm_head)
  int64_t active = 0;       // per token: routed experts counted at k / E; vision excluded; embedding and head included
  int64_t active_matmul = 0;  // active minus the input-embedding lookup (a tied head still multiplies by it)
};
ParamCounts count_params(const ModelSpec& spec);

// Bytes of one weight group under the model's quantization, before sharding.
double weight_group_bytes(const ModelSpec& spec, const WeightGroup& group);
// Issue 16: bytes of the linear `group` under `scheme`'s GPTQ dynamic rules (QuantScheme::gptq_dynamic), `base` its format
// by module_format: the mean over the model's layer indices (MTP layers for an MTP group) of gptq_dynamic_linear_bytes at
// vLLM's name of that layer's module, times group.count. Exact for a module every layer has; for a module of some layers
// only (a hybrid model's attention kinds) the mean over all indices stands in for those layers' own.
double gptq_dynamic_group_bytes(const ModelSpec& spec, const QuantScheme& scheme, WeightFormat base, const WeightGroup& group);

// Bytes by storage format name ("bf16", "fp8_block", ...), parts as loaded (no MTP unless asked).
struct WeightBytes {
  double total = 0;
  std::map<std::string, double> by_format;
  double mtp = 0;
};
WeightBytes compute_weight_bytes(const ModelSpec& spec);

// KV cache bytes per token, summed over layers that keep one, at `cache_dtype_bytes` per element,
// for the full model (no tensor parallelism). Recurrent state is per sequence, not per token.
int64_t kv_bytes_per_token(const ModelSpec& spec, int cache_dtype_bytes);
// Fixed recurrent state bytes per sequence (linear attention, Mamba), whole model.
int64_t state_bytes_per_sequence(const ModelSpec& spec, int conv_dtype_bytes);
int64_t count_layers(const ModelSpec& spec, LayerKind kind);

}  // namespace preflight::model
