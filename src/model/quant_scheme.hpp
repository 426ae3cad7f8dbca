// model/quant_scheme: the quantization of a checkpoint, normalized from whichever descriptor the
// checkpoint carries: config.json quantization_config (fp8, compressed-tensors, awq, gptq, mxfp4,
// bitsandbytes), ModelOpt hf_quant_config.json, ModelSlim quant_model_description.json (Ascend).
// A scheme says how each linear weight is stored, so bytes can be computed per weight group.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::model {

// How one linear weight is stored. Scale and zero-point tensors are part of the format.
enum class WeightFormat {
  native,          // model dtype (bf16/fp16), no scales
  fp8_block,       // fp8 e4m3 + fp32 scale per block_rows x block_cols block (DeepSeek/Qwen FP8)
  fp8_channel,     // fp8 + one scale per output channel
  fp8_tensor,      // fp8 + one scale per tensor (ModelOpt FP8, compressed-tensors static)
  int8_channel,    // int8 + one scale per output channel (compressed-tensors W8A8)
  int4_group,      // 4-bit packed + scale (and zero if asymmetric) per group of input channels
  nvfp4,           // fp4 e2m1 + fp8 scale per 16 + fp32 global scale
  mxfp4,           // fp4 e2m1 + e8m0 scale per 32
  modelslim_w8a8,  // ModelSlim W8A8 static: int8 + scale, offset, quant_bias, deq_scale per out channel
  modelslim_w8a8_dynamic,  // int8 + scale + offset per out channel
  modelslim_w4a8_dynamic,  // int4 packed two per int8 + fp32 scale, offset, scale_bias per out channel
  packed_bits,     // every 2-D weight at QuantScheme::bits_per_weight (a GGUF preset's file average, scales included)
  int8_group,      // GPTQ 8-bit: int8 packed four per int32 + scale per group of input channels (qzeros, g_idx as int4_group)
  bnb_int8,        // bitsandbytes LLM.int8: int8 weight + fp32 SCB per output row + a uint8 weight_format scalar
  bnb_nf4,         // bitsandbytes 4-bit (NF4/FP4): codes two per uint8 + absmax per group_size (64) of the flattened weight,
                   // fp32, or with bnb_double_quant uint8 + fp32 nested absmax per 256 blocks; fp32 quant maps
  mxfp8,           // fp8 e4m3 + e8m0 (uint8) scale per 32 input channels (OCP MX; msModelSlim W8A8_MXFP8, Ascend 950)
  count_
};

const char* weight_format_name(WeightFormat format);

// Issue 16: one entry of GPTQModel's "dynamic" map (config.json quantization_config / quantize_config.json). vLLM
// (vllm/model_executor/layers/quantization/utils/gptq_utils.py get_dynamic_override, override_config; vllm-project/vllm
// commits 93e5a576 and 02239f5e): `for pattern, pattern_dict in config.dynamic.items()` over the dict json.load built,
// i.e. in the file's order (Python dicts keep insertion order); the first entry whose regex matches the module's prefix from its start (Python re.match) decides; "-:" leaves
// the module unquantized (UnquantizedLinearMethod / UnquantizedFusedMoEMethod), any other entry ("+:" or no prefix)
// overrides bits, group_size, desc_act, sym of the checkpoint's own values. parse_quantization_config keeps the rules
// in preflight::Json's (sorted) key order; order_gptq_dynamic puts them in the file's (load_hf_config does, from the
// text of config.json).
struct GptqDynamicRule {
  std::string key;         // the entry's key as written ("-:model\\.layers\\.1\\..*")
  std::string pattern;     // the regex, "+:" / "-:" removed
  bool skip = false;       // "-:"
  int64_t bits = 0;        // 0: the checkpoint's bits
  int64_t group_size = 0;  // 0: the checkpoint's group_size; -1: one group per input row (per channel)
  bool operator==(const GptqDynamicRule&) const = default;
};

// Issue 16 (h-quant25): one entry of AutoRound's "extra_config" (quantization_config, auto-round exports: layer name ->
// bits / group_size / sym / data_type). vLLM (vllm/model_executor/layers/quantization/auto_round.py AutoRoundConfig
// get_layer_config, vllm-project/vllm commit 04aa528e): an entry applies to the layer of exactly that
// name; its "bits" and "group_size" default to the checkpoint's; 16 bits or more leave the layer unquantized
// (check_quantized: weight_bits < 16).
struct AutoRoundLayer {
  int64_t bits = 0;        // 0: the checkpoint's bits
  int64_t group_size = 0;  // 0: the checkpoint's group_size; -1: one group per input row
  bool operator==(const AutoRoundLayer&) const = default;
};

struct QuantScheme {
  std::string method;  // as the checkpoint names it: "fp8", "awq", "compressed-tensors", "modelopt", "ascend", "" = none
  WeightFormat linear_format = WeightFormat::native;
  WeightFormat expert_format = WeightFormat::native;  // MoE experts (ModelSlim W4A8 MoE, ModelOpt mixed)
  int64_t group_size = 0;          // int4_group / int8_group / nvfp4 / mxfp4 group along the input dim
  double bits_per_weight = 0;      // packed_bits: average stored bits per weight, scales included
  bool group_zero_point = false;   // asymmetric int4 / int8 groups store zeros
  // Issue 16: GPTQ's layout (vLLM gptq.py create_weights, AutoGPTQ QuantLinear): qzeros int32 [in/g, out/8] stored even
  // when symmetric, and g_idx int32 [in] per linear.
  bool group_index = false;
  int64_t block_rows = 128, block_cols = 128;  // fp8_block
  // bnb_nf4: config.json quantization_config bnb_4bit_use_double_quant (transformers' default false): the absmax of
  // each block is itself quantized to uint8 in blocks of 256 (bitsandbytes functional.quantize_4bit compress_statistics).
  bool bnb_double_quant = false;
  std::vector<std::string> ignore;  // module patterns left unquantized
  // Per-module formats (ModelOpt MIXED_PRECISION maps, compressed-tensors target lists): the first
  // pattern that matches a module decides its format; modules matching none use linear_format.
  std::vector<std::pair<std::string, WeightFormat>> module_formats;
  // Issue 16: whether the engine loads an untied "lm_head" quantized (vLLM gives ParallelLMHead the checkpoint's linear
  // method only when the config says so and the model file passes quant_config to it; Llama, Qwen2/3 do).
  // - ModelOpt (misc21): ModelOptQuantConfigBase / ModelOptMixedPrecisionConfig.get_quant_method give the head the linear
  //   method of its quantized_layers entry (mixed precision) or of the checkpoint's algorithm, unless exclude_modules /
  //   ignore names it (vllm/model_executor/layers/quantization/modelopt.py, PR #42124, which also passes quant_config to
  //   Qwen3.5/3.6's and Nemotron-H's ParallelLMHead; before it such a checkpoint failed to load with "There is no module
  //   or parameter named 'lm_head.input_scale'", issue #45102).
  // - GPTQ / AWQ (Marlin) / AutoRound: "lm_head": true in quantization_config (GPTQConfig, GPTQMarlinConfig and
  //   AWQMarlinConfig.from_config read it into lm_head_quantized; parse_quantization_config).
  // The other methods leave the head in the model dtype, whatever their patterns match: module_format answers native
  // for "lm_head" unless this is set.
  bool lm_head_quantized = false;
  // GPTQ / GPTQ-Marlin "dynamic" rules (GptqDynamicRule); empty when the checkpoint has none (or "dynamic": null).
  std::vector<GptqDynamicRule> gptq_dynamic;
  // AutoRound "extra_config" entries by layer name (AutoRoundLayer), "language_model." parts removed as
  // normalize_module removes them (a VL checkpoint's "model.language_model.layers.0..." is "model.layers.0...").
  std::map<std::string, AutoRoundLayer> autoround_layers;
  // AutoRound "block_name_to_quantize" (or "to_quant_block_names"; a comma-separated string or a list), the same
  // normalization: a layer outside every block stays unquantized unless extra_config names it (vLLM
  // get_layer_config: quantized = any(layer_name.startswith(name) for name in block_name_to_quantize)). Empty: all.
  std::vector<std::string> autoround_blocks;
  bool quantize_attention = true;   // false when the scheme leaves attention projections in model dtype
  std::string kv_cache_quant;       // "fp8", "int8" (ModelSlim C8) or "" when the checkpoint says nothing
  // ModelSlim checkpoints (method "ascend", from quant_model_description.json): the quant_method of config.json's
  // own quantization_config, "" when config.json has none (msModelSlim's saver removes it). Without
  // --quantization the engine reads that, not the descriptor (engines.json quantization_auto_detect; issues 15/16).
  std::string config_quant_method;
  // ModelSlim checkpoints: quant_model_description.json "model_quant_type", the scheme msModelSlim's saver names the
  // whole export by (its most aggressive per-tensor type: "W4A4_MXFP4" for MXFP8 attention + MXFP4 experts; msModelSlim
  // save/ascendv1.py QUANT_TYPE_PRIORITY); "" when absent or not a ModelSlim checkpoint. Issue 16: tells variants of one
  // storage apart (W4A4_MXFP4 and W4A16_MXFP4 experts are both fp4 + e8m0 per 32).
  std::string modelslim_quant_type;
  std::string source;               // file the scheme came from
  std::string detail;               // human-readable summary, e.g. "fp8 e4m3, 128x128 blocks"

  bool quantized() const { return !method.empty(); }
  // Whether linear layers are sized one layer at a time (gptq_dynamic_linear_bytes): GPTQ dynamic rules or AutoRound's
  // per-layer settings.
  bool per_layer_rules() const { return !gptq_dynamic.empty() || !autoround_layers.empty() || !autoround_blocks.empty(); }
  bool operator==(const QuantScheme&) const = default;
};

// Parses config.json's quantization_config object.
Expected<QuantScheme> parse_quantization_config(const Json& block, const std::string& origin);
// ModelOpt hf_quant_config.json.
Expected<QuantScheme> parse_hf_quant_config(const Json& root, const std::string& origin);
// Issue 16: puts scheme.gptq_dynamic in the order of `file_keys` (the dynamic object's keys as the file writes them,
// object_keys_in_order); a rule whose key is not listed keeps its place after the listed ones.
void order_gptq_dynamic(QuantScheme& scheme, const std::vector<std::string>& file_keys);
// ModelSlim quant_model_description.json: per-tensor types, summarized to linear/expert formats.
Expected<QuantScheme> parse_modelslim_description(const Json& root, const std::string& origin);

// Bytes of one out x in linear weight (with its scales) in `format`; `model_dtype_bytes` sizes
// scales that the format keeps in the model dtype.
double linear_weight_bytes(WeightFormat format, int64_t rows, int64_t cols, const QuantScheme& scheme,
                           int model_dtype_bytes);

// Bytes of one out x in bitsandbytes 4-bit linear (WeightFormat::bnb_nf4) as Linear4bit saves it: codes, absmax per
// `block` weights of the flattened tensor (fp32, or with double_quant uint8 + fp32 per 256 blocks + a 256-entry fp32
// map) and the 16-entry fp32 quant map; `block` <= 0 is bitsandbytes' default 64. vLLM holds the double-quantized
// form as the plain one (fit_terms).
struct Bnb4bitStorage {
  bool double_quant = false;
};
double bnb_4bit_bytes(int64_t rows, int64_t cols, int64_t block, Bnb4bitStorage storage);

// Issue 16: bytes of one rows x cols GPTQ-layout linear weight of the concrete module `prefix` (vLLM's module name: layer
// index, fused qkv_proj / gate_up_proj, a FusedMoE's "...mlp.experts") under scheme.gptq_dynamic, whose base format
// (module_format) is `base`: a "-:" match or a native base gives the model dtype; otherwise the bits and group of the
// first matching rule (or the checkpoint's) in the GPTQ layout: qweight bits/8 per weight, fp16 scales and qzeros
// (bits/8 per entry) per group and output, int32 g_idx per input (vLLM gptq.py create_weights). An AutoRound scheme
// with per-layer settings (autoround_layers, autoround_blocks) takes the bits and group get_layer_config gives the
// module instead: 16 or more bits are the model dtype.
double gptq_dynamic_linear_bytes(const QuantScheme& scheme, WeightFormat base, const std::string& prefix, int64_t rows, int64_t cols,
                                 int model_dtype_bytes);

// Format of the linear weight `module`, from module_formats, ignore and the default formats.
WeightFormat module_format(const QuantScheme& scheme, const std::string& module, bool expert);

// module_format for many modules of one scheme (every weight group of a model): the scheme's pattern
// lists are looked up once, at construction. The scheme must outlive the object and stay unchanged
// while it is used.
class SchemeFormats {
 public:
  explicit SchemeFormats(const QuantScheme& scheme);
  WeightFormat operator()(const std::string& module, bool expert) const;
  struct Table;

 private:
  const QuantScheme* scheme_;
  std::shared_ptr<Table> table_;
};

// Module path with layer indices and the "language_model." prefix of VL checkpoints normalized:
// "model.language_model.layers.11.mlp.gate" -> "model.layers.*.mlp.gate".
std::string normalize_module(const std::string& module);

// Whether `module` (e.g. "model.layers.*.self_attn.q_proj") is matched by an ignore pattern.
bool module_ignored(const QuantScheme& scheme, const std::string& module);

}  // namespace preflight::model
