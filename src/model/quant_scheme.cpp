// Reads the quantization descriptors a checkpoint may carry and normalizes them to a QuantScheme.
// Byte sizes follow the storage layouts of the engines' weight loaders:
//  - fp8 block (DeepSeek/Qwen "weight_block_size": [128,128]): e4m3 weight + fp32 weight_scale_inv
//    of shape ceil(out/128) x ceil(in/128).
//  - compressed-tensors int8 channel: int8 weight + weight_scale [out,1] in the model dtype.
//  - AWQ (GEMM) / GPTQ int4: qweight int32 packing 8 values, scales [in/g, out] fp16,
//    qzeros [in/g, out/8] int32 when asymmetric.
//  - GPTQ int8 (bits 8): the same tensors with pack_factor 32 / 8 = 4: qweight int32 [in/4, out], qzeros int32
//    [in/g, out/4], scales [in/g, out] fp16, g_idx int32 [in] (vLLM gptq.py create_weights).
//  - bitsandbytes 8-bit (LLM.int8): weight int8 [out, in], SCB fp32 [out] and weight_format uint8 [] per linear
//    (bitsandbytes nn/modules.py Linear8bitLt._save_to_state_dict; functional.int8_vectorwise_quant's fp32 row stats).
//  - bitsandbytes 4-bit (Params4bit, QuantState.as_dict(packed=True) as Linear4bit saves it): weight uint8 [n/2, 1],
//    absmax per block of 64 of the flattened weight (fp32 [ceil(n/64)]; with double quant uint8 [ceil(n/64)] plus
//    nested_absmax fp32 [ceil(blocks/256)] and nested_quant_map fp32 [256]), quant_map fp32 [16], and a uint8 tensor
//    holding the JSON of the non-tensor fields (quant_state.bitsandbytes__nf4, about 0.2 KB: not counted)
//    (bitsandbytes functional.py quantize_4bit / quantize_blockwise / QuantState.as_dict).
//  - NVFP4 (ModelOpt): weight packed 2 per uint8, weight_scale fp8 per 16, fp32 weight_scale_2.
//  - MXFP4 (gpt-oss): blocks packed 2 per uint8, e8m0 scales per 32.
//  - MXFP8 (msModelSlim W8A8_MXFP8): fp8 e4m3 weight [out, in] + e8m0 scale as uint8 [out, ceil(in/32)]
//    (vllm-ascend quantization/methods/w8a8_mxfp8.py get_weight / get_pergroup_param, group_size 32).
//  - ModelSlim (vllm-ascend quantization/methods/*.py, see reference note section 5.2).
#include "model/quant_scheme.hpp"
#include "model/quant_layers.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <unordered_map>
#include <unordered_set>

#include "base/checked.hpp"
#include "base/safe_regex.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::model {

namespace {
constexpr std::array<const char*, static_cast<size_t>(WeightFormat::count_)> k_format_names{
    "native", "fp8_block", "fp8_channel", "fp8_tensor", "int8_channel", "int4_group",
    "nvfp4",  "mxfp4",     "modelslim_w8a8", "modelslim_w8a8_dynamic", "modelslim_w4a8_dynamic", "packed_bits",
    "int8_group", "bnb_int8", "bnb_nf4", "mxfp8"};
static_assert(k_format_names.size() == static_cast<size_t>(WeightFormat::count_), "one name per WeightFormat");

Expected<std::vector<std::string>> string_list(const Json& block, const std::string& key, const std::string& origin) {
  std::vector<std::string> out;
  auto it = block.find(key);
  if (it == block.end() || it->is_null()) return out;
  if (!it->is_array()) return make_error(ErrorKind::corrupt, format("%s: quantization_config.%s: expected an array", origin.c_str(), key.c_str()), origin);
  for (const auto& item : *it) {
    if (!item.is_string()) return make_error(ErrorKind::corrupt, format("%s: quantization_config.%s: expected strings", origin.c_str(), key.c_str()), origin);
    out.push_back(item.get<std::string>());
  }
  return out;
}

// compressed-tensors "weights" block -> format.
Expected<WeightFormat> compressed_tensors_weights(const JsonObject& weights, QuantScheme& scheme) {
  PF_TRY(bits, weights.opt_int("num_bits"));
  PF_TRY(type, weights.opt_string("type"));
  PF_TRY(strategy, weights.opt_string("strategy"));
  PF_TRY(group, weights.opt_int("group_size"));
  PF_TRY(symmetric, weights.opt_bool("symmetric"));
  // Issue 19 (hard35b): 0 or below -1 was sized as the default group (16 / 128), as GPTQ's was before hard35. vLLM's
  // compressed-tensors schemes divide the input rows by it (CompressedTensorsWNA16 / W4A4Fp4 create_weights:
  // input_size_per_partition // group_size), so 0 stops the engine and a negative size makes no groups; -1 is the
  // channel strategy, one group per row.
  if (group && (*group == 0 || *group < -1))
    return make_error(ErrorKind::corrupt,
                      format("%s: %s %lld: expected a positive size or -1 (one group per row)", weights.origin().c_str(), weights.key_path("group_size").c_str(),
                             static_cast<long long>(*group)),
                      weights.origin());
  const int64_t nbits = bits.value_or(8);
  const std::string kind = type.value_or("int");
  if (kind == "float" && nbits == 8) {
    // compressed-tensors QuantizationArgs: strategy defaults to "tensor".
    if (strategy && *strategy == "block") return WeightFormat::fp8_block;
    if (strategy && *strategy == "channel") return WeightFormat::fp8_channel;
    return WeightFormat::fp8_tensor;
  }
  if (kind == "float" && nbits == 4) {
    scheme.group_size = group.value_or(16);
    return WeightFormat::nvfp4;
  }
  if (kind == "int" && nbits == 8) return WeightFormat::int8_channel;
  if (kind == "int" && nbits == 4) {
    scheme.group_size = group.value_or(128);
    scheme.group_zero_point = !symmetric.value_or(true);
    return WeightFormat::int4_group;
  }
  return make_error(ErrorKind::unsupported,
                    format("%s: compressed-tensors weights of %lld-bit %s are not modelled", weights.origin().c_str(),
                           static_cast<long long>(nbits), kind.c_str()),
                    weights.origin());
}

// Issue 16: quantization_config.dynamic of a GPTQ checkpoint (GptqDynamicRule), null or absent: no rules. vLLM iterates
// the dict in the file's order and the first match wins; preflight::Json is a sorted map, so the rules come out in key
// order here and order_gptq_dynamic restores the file's (the two differ where two rules match one module).
Status read_gptq_dynamic(const JsonObject& q, QuantScheme& scheme) {
  const Json* dynamic = q.find("dynamic");
  if (!dynamic || dynamic->is_null()) return Ok{};
  const std::string& origin = q.origin();
  if (!dynamic->is_object())
    return make_error(ErrorKind::corrupt, format("%s: quantization_config.dynamic: expected an object of regex -> overrides, found %s", origin.c_str(),
                                                 json_type_name(*dynamic)), origin);
  for (auto it = dynamic->begin(); it != dynamic->end(); ++it) {
    GptqDynamicRule rule;
    rule.key = it.key();
    rule.skip = starts_with(it.key(), "-:");
    rule.pattern = rule.skip || starts_with(it.key(), "+:") ? it.key().substr(2) : it.key();
    // Issue 19: a pattern from a file is matched without backtracking (base/safe_regex); what that cannot match, or
    // what is not a regular expression, is refused here with the reason.
    if (auto check = SafeRegex::compile(rule.pattern); !check)
      return make_error(check.error().kind, format("%s: quantization_config.dynamic: '%s' is not a regular expression preflight matches: %s", origin.c_str(),
                                                   it.key().c_str(), check.error().message.c_str()),
                        origin);
    if (!it->is_object())
      return make_error(ErrorKind::corrupt, format("%s: quantization_config.dynamic.%s: expected an object, found %s", origin.c_str(), it.key().c_str(),
                                                   json_type_name(*it)), origin);
    JsonObject entry(*it, origin, "quantization_config.dynamic." + it.key());
    PF_TRY(bits, entry.opt_int("bits"));
    PF_TRY(group, entry.opt_int("group_size"));
    // vLLM override_config: GPTQConfig takes 2/3/4/8 bits ("Currently, only 2/3/4/8-bit weight quantization is supported
    // for GPTQ"); a group is positive or -1.
    if (bits && *bits != 2 && *bits != 3 && *bits != 4 && *bits != 8)
      return make_error(ErrorKind::unsupported, format("%s: quantization_config.dynamic.%s.bits %lld: GPTQ takes 2, 3, 4 or 8 bits", origin.c_str(),
                                                       it.key().c_str(), static_cast<long long>(*bits)), origin);
    if (group && *group != -1 && *group <= 0)
      return make_error(ErrorKind::corrupt, format("%s: quantization_config.dynamic.%s.group_size %lld: expected a positive size or -1", origin.c_str(),
                                                   it.key().c_str(), static_cast<long long>(*group)), origin);
    rule.bits = bits.value_or(0);
    rule.group_size = group.value_or(0);
    scheme.gptq_dynamic.push_back(std::move(rule));
  }
  return Ok{};
}

// A layer or block name as preflight's modules spell it: "language_model" parts removed (normalize_module's rule; layer
// indices kept).
std::string without_language_model(const std::string& name) {
  std::string out;
  for (const auto& part : split(name, '.')) {
    if (part == "language_model") continue;
    if (!out.empty()) out += '.';
    out += part;
  }
  return out;
}

struct LayerBits {
  int64_t bits = 0;
  int64_t group_size = 0;
  bool operator==(const LayerBits&) const = default;
};

// vLLM AutoRoundConfig.get_layer_config's get_config(name, quantized): the entry's values, else the checkpoint's bits
// and group for a quantized layer, 16 bits and group -1 for another.
LayerBits autoround_config(const QuantScheme& scheme, const std::string& name, bool quantized, int64_t base_bits) {
  LayerBits out{quantized ? base_bits : 16, quantized ? scheme.group_size : -1};
  const auto it = scheme.autoround_layers.find(name);
  if (it != scheme.autoround_layers.end()) {
    if (it->second.bits != 0) out.bits = it->second.bits;
    if (it->second.group_size != 0) out.group_size = it->second.group_size;
  }
  return out;
}

bool in_autoround_blocks(const QuantScheme& scheme, const std::string& name) {
  if (scheme.autoround_blocks.empty()) return true;
  for (const auto& b : scheme.autoround_blocks)
    if (starts_with(name, b)) return true;
  return false;
}

// The shards vLLM's packed_modules_mapping fuses into `leaf` (Llama / Qwen: qkv_proj, gate_up_proj); empty otherwise.
std::vector<std::string> fused_shards(const std::string& leaf) {
  if (leaf == "qkv_proj") return {"q_proj", "k_proj", "v_proj"};
  if (leaf == "gate_up_proj") return {"gate_proj", "up_proj"};
  return {};
}

// get_layer_config for vLLM's module `prefix` (fused names, "...mlp.experts" for a FusedMoE): 1. an entry of exactly
// that name; 2. quantized unless blocks are listed and none begins the name; 3. a FusedMoE takes the entries under its
// name (they must agree: vLLM raises otherwise; the first is taken); 4. a fused module takes its shards' settings
// (read_autoround_layers refused shards that differ); 5. the name's own.
LayerBits autoround_layer_bits(const QuantScheme& scheme, const std::string& prefix, int64_t base_bits) {
  if (scheme.autoround_layers.count(prefix)) return autoround_config(scheme, prefix, true, base_bits);
  const bool quantized = in_autoround_blocks(scheme, prefix);
  if (ends_with(prefix, ".experts")) {
    const auto it = scheme.autoround_layers.lower_bound(prefix);
    if (it != scheme.autoround_layers.end() && starts_with(it->first, prefix)) return autoround_config(scheme, it->first, quantized, base_bits);
  }
  const size_t dot = prefix.rfind('.');
  const std::vector<std::string> shards = fused_shards(dot == std::string::npos ? prefix : prefix.substr(dot + 1));
  if (!shards.empty() && !scheme.autoround_layers.empty())
    return autoround_config(scheme, prefix.substr(0, dot + 1) + shards.front(), quantized, base_bits);
  return autoround_config(scheme, prefix, quantized, base_bits);
}

// Issue 16 (h-quant25): AutoRound's "block_name_to_quantize" / "to_quant_block_names" and "extra_config"
// (QuantScheme::autoround_blocks / autoround_layers), as vLLM's AutoRoundConfig.from_config reads them.
Status read_autoround_blocks(const JsonObject& q, QuantScheme& scheme) {
  const std::string& origin = q.origin();
  for (const char* key : {"block_name_to_quantize", "to_quant_block_names"}) {
    const Json* blocks = q.find(key);
    if (!blocks) continue;  // get_from_keys_or: the first key present
    auto add = [&](const Json& item) -> Status {
      if (!item.is_string())
        return make_error(ErrorKind::corrupt, format("%s: quantization_config.%s: expected block names (strings), found %s", origin.c_str(), key,
                                                     json_type_name(item)), origin);
      for (const auto& part : split(item.get<std::string>(), ','))
        if (!trim(part).empty()) scheme.autoround_blocks.push_back(without_language_model(trim(part)));
      return Ok{};
    };
    if (blocks->is_string()) return add(*blocks);
    if (!blocks->is_array())
      return make_error(ErrorKind::corrupt, format("%s: quantization_config.%s: expected a string or a list of block names, found %s", origin.c_str(), key,
                                                   json_type_name(*blocks)), origin);
    for (const auto& item : *blocks) {
      // AutoRound's AWQ / GPTQ exports write a list of lists (one per block group): read flat.
      if (item.is_array()) {
        for (const auto& inner : item) {
          PF_TRY(ok, add(inner));
          (void)ok;
        }
        continue;
      }
      PF_TRY(ok, add(item));
      (void)ok;
    }
    return Ok{};
  }
  return Ok{};
}

Status read_autoround_layers(const JsonObject& q, QuantScheme& scheme, int64_t base_bits) {
  const std::string& origin = q.origin();
  PF_TRY(blocks_ok, read_autoround_blocks(q, scheme));
  (void)blocks_ok;
  const Json* extra = q.find("extra_config");
  if (!extra) return Ok{};
  if (!extra->is_object())
    return make_error(ErrorKind::corrupt, format("%s: quantization_config.extra_config: expected an object of layer name -> settings, found %s", origin.c_str(),
                                                 json_type_name(*extra)), origin);
  for (auto it = extra->begin(); it != extra->end(); ++it) {
    if (!it->is_object())
      return make_error(ErrorKind::corrupt, format("%s: quantization_config.extra_config.%s: expected an object, found %s", origin.c_str(), it.key().c_str(),
                                                   json_type_name(*it)), origin);
    JsonObject entry(*it, origin, "quantization_config.extra_config." + it.key());
    PF_TRY(bits, entry.opt_int("bits"));
    PF_TRY(group, entry.opt_int("group_size"));
    // GPTQ / AWQ kernels take 2, 3, 4 or 8 bits (AutoRoundConfig.SUPPORTED_BITS); 16 and more is unquantized.
    if (bits && *bits != 2 && *bits != 3 && *bits != 4 && *bits != 8 && *bits < 16)
      return make_error(ErrorKind::unsupported, format("%s: quantization_config.extra_config.%s.bits %lld: AutoRound layers take 2, 3, 4 or 8 bits, or 16 "
                                                       "and more for an unquantized layer", origin.c_str(), it.key().c_str(), static_cast<long long>(*bits)), origin);
    if (group && *group != -1 && *group <= 0)
      return make_error(ErrorKind::corrupt, format("%s: quantization_config.extra_config.%s.group_size %lld: expected a positive size or -1", origin.c_str(),
                                                   it.key().c_str(), static_cast<long long>(*group)), origin);
    scheme.autoround_layers[without_language_model(it.key())] = AutoRoundLayer{bits.value_or(0), group.value_or(0)};
  }
  // vLLM loads q/k/v and gate/up as one fused layer and refuses shards that differ (get_layer_config step 4).
  for (const auto& [name, layer] : scheme.autoround_layers) {
    (void)layer;
    const size_t dot = name.rfind('.');
    if (dot == std::string::npos) continue;
    const std::string leaf = name.substr(dot + 1), head = name.substr(0, dot + 1);
    for (const char* fused : {"qkv_proj", "gate_up_proj"}) {
      const auto shards = fused_shards(fused);
      if (std::find(shards.begin(), shards.end(), leaf) == shards.end()) continue;
      const bool quantized = in_autoround_blocks(scheme, head + fused);
      const LayerBits first = autoround_config(scheme, head + shards.front(), quantized, base_bits);
      for (const auto& shard : shards) {
        const LayerBits other = autoround_config(scheme, head + shard, quantized, base_bits);
        if (other == first) continue;
        return make_error(ErrorKind::unsupported,
                          format("%s: quantization_config.extra_config: %s%s (%lld bits, group %lld) and %s%s (%lld bits, group %lld) load as one layer; vLLM "
                                 "raises \"Fused module '%s%s' requires consistent quant config\"", origin.c_str(), head.c_str(), shards.front().c_str(),
                                 static_cast<long long>(first.bits), static_cast<long long>(first.group_size), head.c_str(), shard.c_str(),
                                 static_cast<long long>(other.bits), static_cast<long long>(other.group_size), head.c_str(), fused), origin);
      }
    }
  }
  if (!scheme.autoround_layers.empty()) scheme.detail += format(", %zu extra_config layers", scheme.autoround_layers.size());
  for (size_t i = 0; i < scheme.autoround_blocks.size(); ++i) scheme.detail += (i == 0 ? ", quantized blocks " : ",") + scheme.autoround_blocks[i];
  return Ok{};
}

}  // namespace

void order_gptq_dynamic(QuantScheme& scheme, const std::vector<std::string>& file_keys) {
  // Each key's place, looked up once per rule (a linear find per comparison took 3.5 s of fit for 20,000 rules). A key
  // the text does not list sorts last; a repeated key takes its first place.
  std::unordered_map<std::string_view, size_t> place;
  place.reserve(file_keys.size());
  for (size_t i = 0; i < file_keys.size(); ++i) place.emplace(file_keys[i], i);
  std::vector<std::pair<size_t, GptqDynamicRule>> ranked;
  ranked.reserve(scheme.gptq_dynamic.size());
  for (auto& r : scheme.gptq_dynamic) {
    const auto it = place.find(r.key);
    ranked.emplace_back(it == place.end() ? file_keys.size() : it->second, std::move(r));
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < ranked.size(); ++i) scheme.gptq_dynamic[i] = std::move(ranked[i].second);
}

namespace {
// A GPTQ / AWQ quantization_config's group_size, 128 when absent. Issue 19 (hard35): 0 or below -1 was sized as group
// 128; vLLM divides the input rows by it (awq.py / gptq.py create_weights: `input_size_per_partition % group_size`), so
// 0 stops it with ZeroDivisionError and a negative size makes no groups: bad input naming the field, as a dynamic
// rule's group_size is. -1 is one group per row.
Expected<int64_t> gptq_awq_group_size(const std::optional<int64_t>& group, const std::string& origin) {
  const int64_t g = group.value_or(128);
  if (g == 0 || g < -1)
    return make_error(ErrorKind::corrupt,
                      format("%s: quantization_config.group_size %lld: expected a positive size or -1 (one group per row)", origin.c_str(), static_cast<long long>(g)),
                      origin);
  return g;
}

// Issue 19 (hard35b): a ModelOpt group_size, 0 when absent (modelopt_algo's default for the algorithm). 0 or below was
// sized as the default group; vLLM's ModelOpt NVFP4 / W4A8 methods divide the input rows by it (modelopt.py
// create_weights: input_size_per_partition // group_size), and ModelOpt has no per-row group: bad input naming the field.
Expected<int64_t> modelopt_group_size(const JsonObject& block, const std::string& origin, const std::string& key) {
  PF_TRY(group, block.opt_int("group_size"));
  if (group && *group <= 0)
    return make_error(ErrorKind::corrupt, format("%s: %s %lld: expected a positive size", origin.c_str(), one_line(key, 200).c_str(), static_cast<long long>(*group)), origin);
  return group.value_or(0);
}

// The ModelOpt algorithms modelopt_algo reads (by substring), for the message naming an unknown one.
constexpr const char* k_modelopt_algos = "expected a ModelOpt algorithm with FP8, NVFP4, INT4 / W4A16 / W4A8_AWQ or INT8 / W8A8 in its name, or MIXED_PRECISION";

WeightFormat modelopt_algo(const std::string& algo, QuantScheme& scheme, int64_t group) {
  const std::string a = to_lower(algo);
  if (a.find("nvfp4") != std::string::npos) {
    scheme.group_size = group > 0 ? group : 16;
    return WeightFormat::nvfp4;
  }
  if (a.find("fp8") != std::string::npos) return WeightFormat::fp8_tensor;
  if (a.find("w4a16") != std::string::npos || a.find("int4") != std::string::npos || a.find("w4a8_awq") != std::string::npos) {
    scheme.group_size = group > 0 ? group : 128;
    return WeightFormat::int4_group;
  }
  if (a.find("int8") != std::string::npos || a.find("w8a8") != std::string::npos) return WeightFormat::int8_channel;
  return WeightFormat::native;
}
}  // namespace

const char* weight_format_name(WeightFormat format) { return k_format_names[static_cast<size_t>(format)]; }


namespace {
// ModelOpt (QuantScheme::lm_head_quantized): the head takes the format its own entry, the checkpoint's algorithm or an
// exclusion gives it, as any linear layer of the checkpoint.
bool modelopt_quantizes_lm_head(const QuantScheme& scheme) {
  QuantScheme as_linear = scheme;
  as_linear.lm_head_quantized = true;
  return module_format(as_linear, std::string(k_lm_head), false) != WeightFormat::native;
}
}  // namespace

Expected<QuantScheme> parse_quantization_config(const Json& block, const std::string& origin) {
  QuantScheme scheme;
  scheme.source = origin;
  if (!block.is_object()) {
    return make_error(ErrorKind::corrupt, format("%s: quantization_config: expected an object, found %s", origin.c_str(), json_type_name(block)), origin);
  }
  JsonObject q(block, origin, "quantization_config");
  PF_TRY(method_opt, q.opt_string("quant_method"));
  const std::string method = to_lower(strip_terminal_controls(method_opt.value_or("")));  // it is printed (issue 19 item 12)
  scheme.method = method;
  PF_TRY(ignore_a, string_list(block, "modules_to_not_convert", origin));
  PF_TRY(ignore_b, string_list(block, "ignore", origin));
  PF_TRY(ignore_c, string_list(block, "ignored_layers", origin));
  scheme.ignore = ignore_a;
  scheme.ignore.insert(scheme.ignore.end(), ignore_b.begin(), ignore_b.end());
  scheme.ignore.insert(scheme.ignore.end(), ignore_c.begin(), ignore_c.end());

  if (method == "fp8") {
    const Json* blocks = q.find("weight_block_size");
    if (blocks && blocks->is_array() && blocks->size() == 2 && (*blocks)[0].is_number_integer() && (*blocks)[1].is_number_integer()) {
      scheme.block_rows = (*blocks)[0].get<int64_t>();
      scheme.block_cols = (*blocks)[1].get<int64_t>();
      if (scheme.block_rows <= 0 || scheme.block_cols <= 0) {
        return make_error(ErrorKind::corrupt, format("%s: quantization_config.weight_block_size must be positive", origin.c_str()), origin);
      }
      scheme.linear_format = WeightFormat::fp8_block;
      scheme.detail = format("fp8 e4m3 weights, fp32 scale per %lldx%lld block", static_cast<long long>(scheme.block_rows),
                             static_cast<long long>(scheme.block_cols));
    } else if (blocks) {
      return make_error(ErrorKind::corrupt, format("%s: quantization_config.weight_block_size: expected two integers", origin.c_str()), origin);
    } else {
      scheme.linear_format = WeightFormat::fp8_channel;
      scheme.detail = "fp8 e4m3 weights, per-channel scales";
    }
  } else if (method == "awq" || method == "gptq" || method == "awq_marlin" || method == "gptq_marlin" || method == "auto-round" || method == "intel/auto-round") {
    PF_TRY(bits, q.opt_int("bits"));
    PF_TRY(group, q.opt_int("group_size"));
    PF_TRY(zero, q.opt_bool("zero_point"));
    PF_TRY(sym, q.opt_bool("sym"));
    // Issue 16: AutoRound exports the AutoGPTQ layout ("packing_format": "auto_round:auto_gptq", and its own
    // "auto_round" format) or AutoAWQ's ("auto_round:auto_awq"); vLLM's auto_round.py picks the kernel the same way.
    PF_TRY(packing, q.opt_string("packing_format"));
    const bool autoround = method.find("auto-round") != std::string::npos;
    const bool awq_layout = method.rfind("awq", 0) == 0 || (autoround && packing && packing->find("awq") != std::string::npos);
    // Issue 16: 8 bits is the GPTQ layout's other common width (vLLM gptq.py / gptq_marlin.py take 4 and 8; AWQ packs
    // 4 only); 2 and 3 bits are not modelled.
    const int64_t nbits = bits.value_or(4);
    if (nbits != 4 && !(nbits == 8 && !awq_layout)) {
      return make_error(ErrorKind::unsupported, format("%s: %s with %lld bits is not modelled", origin.c_str(), method.c_str(), static_cast<long long>(nbits)), origin);
    }
    scheme.linear_format = nbits == 8 ? WeightFormat::int8_group : WeightFormat::int4_group;
    // Issue 16 (h-quant24): GPTQ's "group_size": -1 is one group over the whole input row (vLLM gptq.py create_weights:
    // group_size -1 -> input_size, so scales / qzeros are [1, out]); it was sized as group 128.
    PF_TRY(g, gptq_awq_group_size(group, origin));
    scheme.group_size = g > 0 || (g == -1 && !awq_layout) ? g : 128;
    scheme.group_zero_point = awq_layout ? zero.value_or(true) : !sym.value_or(true);
    scheme.group_index = !awq_layout;  // the GPTQ layout: qzeros even when symmetric, and g_idx
    scheme.detail = format("int%lld packed, %s%s", static_cast<long long>(nbits),
                           scheme.group_size < 0 ? "one group per row" : format("group %lld", static_cast<long long>(scheme.group_size)).c_str(),
                           scheme.group_zero_point ? ", with zero points" : "");
    // Issue 16: "lm_head": true (GPTQModel's and AutoRound's quant_lm_head exports) stores the untied head packed like
    // the other linear layers, and vLLM loads it so: GPTQConfig, GPTQMarlinConfig and AWQMarlinConfig.from_config read
    // get_from_keys_or(config, ["lm_head"], default=False) into lm_head_quantized and give ParallelLMHead the
    // checkpoint's linear method (vllm/model_executor/layers/quantization/gptq.py, gptq_marlin.py, awq_marlin.py;
    // tests/quantization/test_quant_lm_head_true.py loads ModelCloud/Qwen1.5-1.8B-Chat-GPTQ-4bits-dynamic-cfg-with-lm_head
    // that way); AutoRound's GPTQ path reads "lm_head" or "lm_head_quantized". Plain AWQConfig (no Marlin) has no such key.
    if (method == "gptq" || method == "gptq_marlin") {
      PF_TRY(read, read_gptq_dynamic(q, scheme));
      (void)read;
      if (!scheme.gptq_dynamic.empty()) scheme.detail += format(", %zu dynamic rules", scheme.gptq_dynamic.size());
    }
    if (autoround) {
      PF_TRY(read, read_autoround_layers(q, scheme, nbits));
      (void)read;
    }
    PF_TRY(lm_head, q.opt_bool("lm_head"));
    PF_TRY(lm_head_alt, q.opt_bool(autoround ? "lm_head_quantized" : "lm_head"));
    scheme.lm_head_quantized = lm_head.value_or(false) || lm_head_alt.value_or(false);
    if (scheme.lm_head_quantized) scheme.detail += ", lm_head quantized";
  } else if (method == "mxfp4") {
    scheme.linear_format = WeightFormat::native;  // gpt-oss: only MoE experts are mxfp4
    scheme.expert_format = WeightFormat::mxfp4;
    scheme.group_size = 32;
    scheme.detail = "mxfp4 experts (fp4 e2m1 + e8m0 scale per 32); other weights in model dtype";
  } else if (method == "compressed-tensors") {
    const Json* groups = q.find("config_groups");
    if (!groups || !groups->is_object() || groups->empty()) {
      return make_error(ErrorKind::corrupt, format("%s: quantization_config.config_groups: expected a non-empty object", origin.c_str()), origin);
    }
    bool first = true;
    for (auto it = groups->begin(); it != groups->end(); ++it) {
      JsonObject group(*it, origin, "quantization_config.config_groups." + it.key());
      const Json* weights = group.find("weights");
      if (!weights || !weights->is_object()) continue;
      PF_TRY(fmt_value, compressed_tensors_weights(JsonObject(*weights, origin, group.key_path("weights")), scheme));
      std::vector<std::string> targets;
      if (const Json* t = group.find("targets"); t && t->is_array()) {
        for (const auto& item : *t) if (item.is_string()) targets.push_back(item.get<std::string>());
      }
      const bool generic = targets.empty() || (targets.size() == 1 && targets[0] == "Linear");
      if (generic && first) {
        scheme.linear_format = fmt_value;
        scheme.expert_format = fmt_value;
      } else {
        for (const auto& t : targets) if (t != "Linear") scheme.module_formats.emplace_back(t, fmt_value);
        if (generic) { scheme.linear_format = fmt_value; scheme.expert_format = fmt_value; }
      }
      first = false;
    }
    scheme.detail = format("compressed-tensors, %s weights", weight_format_name(scheme.linear_format));
  } else if (method == "modelopt") {
    // Newer ModelOpt exports carry the hf_quant_config content inside config.json.
    PF_TRY(algo, q.opt_string("quant_algo"));
    if (algo && to_lower(*algo) != "mixed_precision") {
      PF_TRY(g, modelopt_group_size(q, origin, "quantization_config.group_size"));
      scheme.linear_format = modelopt_algo(*algo, scheme, g);
      scheme.expert_format = scheme.linear_format;
    }
    if (const Json* groups = q.find("config_groups"); groups && groups->is_object()) {
      for (auto it = groups->begin(); it != groups->end(); ++it) {
        JsonObject group(*it, origin, "quantization_config.config_groups." + it.key());
        const Json* weights = group.find("weights");
        if (!weights || !weights->is_object()) continue;
        PF_TRY(fmt_value, compressed_tensors_weights(JsonObject(*weights, origin, group.key_path("weights")), scheme));
        if (const Json* t = group.find("targets"); t && t->is_array()) {
          for (const auto& item : *t) if (item.is_string()) scheme.module_formats.emplace_back(item.get<std::string>(), fmt_value);
        }
      }
    }
    scheme.detail = "ModelOpt";
    scheme.lm_head_quantized = modelopt_quantizes_lm_head(scheme);
  } else if (method == "bitsandbytes") {
    PF_TRY(four, q.opt_bool("load_in_4bit"));
    // transformers BitsAndBytesConfig: modules listed in llm_int8_skip_modules stay in the model dtype (both widths).
    PF_TRY(skip, string_list(block, "llm_int8_skip_modules", origin));
    scheme.ignore.insert(scheme.ignore.end(), skip.begin(), skip.end());
    PF_TRY(double_quant, q.opt_bool("bnb_4bit_use_double_quant"));
    scheme.linear_format = four.value_or(false) ? WeightFormat::bnb_nf4 : WeightFormat::bnb_int8;
    scheme.group_size = four.value_or(false) ? 64 : 0;  // Params4bit blocksize (transformers passes no other)
    scheme.bnb_double_quant = four.value_or(false) && double_quant.value_or(false);
    scheme.detail = four.value_or(false) ? "bitsandbytes 4-bit" : "bitsandbytes 8-bit";
  } else if (method.empty()) {
    return make_error(ErrorKind::corrupt, format("%s: quantization_config has no quant_method", origin.c_str()), origin);
  } else {
    scheme.detail = "quantization method '" + method + "' is not modelled; weights assumed in model dtype";
  }
  // Routed experts are stored like the other linear layers unless the method says otherwise (mxfp4).
  if (method != "mxfp4" && method != "compressed-tensors" && scheme.expert_format == WeightFormat::native) scheme.expert_format = scheme.linear_format;
  return scheme;
}

}  // namespace preflight::model

namespace preflight::model {

Expected<QuantScheme> parse_hf_quant_config(const Json& root, const std::string& origin) {
  QuantScheme scheme;
  scheme.source = origin;
  scheme.method = "modelopt";
  if (!root.is_object()) return make_error(ErrorKind::corrupt, format("%s: expected a JSON object", origin.c_str()), origin);
  const auto it = root.find("quantization");
  if (it == root.end() || !it->is_object()) {
    return make_error(ErrorKind::corrupt, format("%s: missing required field quantization", origin.c_str()), origin);
  }
  JsonObject q(*it, origin, "quantization");
  PF_TRY(algo, q.opt_string("quant_algo"));
  PF_TRY(kv, q.opt_string("kv_cache_quant_algo"));
  if (kv) scheme.kv_cache_quant = to_lower(*kv);
  PF_TRY(exclude, string_list(*it, "exclude_modules", origin));
  scheme.ignore = exclude;
  const std::string a = to_lower(algo.value_or(""));
  if (a == "mixed_precision") {
    const Json* layers = q.find("quantized_layers");
    if (!layers || !layers->is_object()) {
      return make_error(ErrorKind::corrupt, format("%s: quantization.quantized_layers: expected an object for MIXED_PRECISION", origin.c_str()), origin);
    }
    // Issue 19 (hard34): the names already listed in a set; a scan of the list per entry took 24 s on 50,000 entries.
    std::unordered_set<std::string> listed;
    for (auto layer = layers->begin(); layer != layers->end(); ++layer) {
      JsonObject entry(*layer, origin, "quantization.quantized_layers." + layer.key());
      PF_TRY(layer_algo, entry.string("quant_algo"));
      std::string normalized = normalize_module(layer.key());
      PF_TRY(lg, modelopt_group_size(entry, origin, "quantization.quantized_layers." + layer.key() + ".group_size"));
      const WeightFormat layer_format = modelopt_algo(layer_algo, scheme, lg);
      if (layer_format == WeightFormat::native)
        return make_error(ErrorKind::corrupt, format("%s: quantization.quantized_layers.%s.quant_algo '%s': %s", origin.c_str(), one_line(layer.key(), 200).c_str(),
                                                     one_line(layer_algo, 60).c_str(), k_modelopt_algos), origin);
      if (listed.insert(normalized).second) scheme.module_formats.emplace_back(std::move(normalized), layer_format);
    }
    scheme.linear_format = WeightFormat::native;  // layers not listed stay unquantized
    scheme.expert_format = WeightFormat::native;
    scheme.detail = format("ModelOpt mixed precision, %zu module patterns", scheme.module_formats.size());
  } else {
    PF_TRY(g, modelopt_group_size(q, origin, "quantization.group_size"));
    scheme.linear_format = modelopt_algo(a, scheme, g);
    // Issue 16: an algorithm no reader knows is sized as nothing, never silently as the model dtype (vLLM raises
    // "ModelOpt currently only supports: {QUANT_ALGOS} quantizations in vLLM"); a null quant_algo (KV cache only) stays unquantized.
    if (!a.empty() && scheme.linear_format == WeightFormat::native)
      return make_error(ErrorKind::corrupt, format("%s: quantization.quant_algo '%s': %s", origin.c_str(), one_line(*algo, 60).c_str(), k_modelopt_algos), origin);
    scheme.expert_format = scheme.linear_format;
    scheme.detail = "ModelOpt " + algo.value_or("?");
  }
  scheme.lm_head_quantized = modelopt_quantizes_lm_head(scheme);
  return scheme;
}

Expected<QuantScheme> parse_modelslim_description(const Json& root, const std::string& origin) {
  QuantScheme scheme;
  scheme.source = origin;
  scheme.method = "ascend";
  if (!root.is_object()) return make_error(ErrorKind::corrupt, format("%s: expected a JSON object", origin.c_str()), origin);
  auto to_format = [](const std::string& type) -> std::optional<WeightFormat> {
    if (type == "W8A8") return WeightFormat::modelslim_w8a8;
    if (type == "W8A8_DYNAMIC" || type == "W8A8_MIX" || type == "W8A16" || type == "INT8_DYNAMIC") return WeightFormat::modelslim_w8a8_dynamic;
    if (type == "W4A8_DYNAMIC" || type == "W4A16" || type == "W4A4_DYNAMIC") return WeightFormat::modelslim_w4a8_dynamic;
    // Issue 16: W8A8_MXFP8 is fp8 + an e8m0 scale per 32 (w8a8_mxfp8.py), not one fp32 scale per channel;
    // W8A8FP8_DYNAMIC is fp8 + fp32 scale per channel (w8a8fp8_dynamic.py; its model-dtype offset is not counted).
    if (type == "W8A8_MXFP8") return WeightFormat::mxfp8;
    if (type == "W8A8FP8_DYNAMIC") return WeightFormat::fp8_channel;
    if (type == "W4A4_MXFP4" || type == "W4A16_MXFP4" || type == "W4A8_MXFP") return WeightFormat::mxfp4;
    if (type == "FLOAT") return WeightFormat::native;
    return std::nullopt;
  };
  size_t tensors = 0;
  bool dense_set = false, expert_set = false;
  // Issue 19 (attack36): each module once, looked up in a hash set; a scan of the lists kept so far made 80,000 modules
  // (a 3.4 MB description) take 47 s.
  std::unordered_set<std::string> ignored, formatted;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& key = it.key();
    if (key == "kv_cache_type") {
      if (it->is_string() && it->get<std::string>() == "C8") scheme.kv_cache_quant = "int8";
      continue;
    }
    if (key == "model_quant_type") {
      if (it->is_string()) scheme.modelslim_quant_type = it->get<std::string>();
      continue;
    }
    if (!it->is_string()) continue;  // version / metadata fields
    if (!ends_with(key, ".weight")) continue;
    const std::string type = it->get<std::string>();
    const auto fmt_value = to_format(type);
    if (!fmt_value) {
      return make_error(ErrorKind::unsupported, format("%s: %s: quant type %s is not known", origin.c_str(), key.c_str(), type.c_str()), origin);
    }
    ++tensors;
    const std::string module = normalize_module(key.substr(0, key.size() - 7));
    const bool expert = module.find(".experts.") != std::string::npos;
    if (*fmt_value == WeightFormat::native) {
      if (ignored.insert(module).second) scheme.ignore.push_back(module);
      continue;
    }
    if (*fmt_value == WeightFormat::mxfp4 || *fmt_value == WeightFormat::mxfp8) scheme.group_size = 32;  // MX: one e8m0 scale per 32
    if (expert && !expert_set) { scheme.expert_format = *fmt_value; expert_set = true; }
    if (!expert && !dense_set) { scheme.linear_format = *fmt_value; dense_set = true; }
    if (formatted.insert(module).second) scheme.module_formats.emplace_back(module, *fmt_value);
  }
  if (tensors == 0) {
    return make_error(ErrorKind::corrupt, format("%s: no per-tensor quant types (\"<name>.weight\": \"W8A8...\") found", origin.c_str()), origin);
  }
  if (!expert_set) scheme.expert_format = scheme.linear_format;
  // ux32: a dense checkpoint (no ".experts." tensor) read "experts modelslim_w8a8" in inspect and fit's "weights stored".
  scheme.detail = expert_set ? format("ModelSlim: linear %s, experts %s", weight_format_name(scheme.linear_format), weight_format_name(scheme.expert_format))
                             : format("ModelSlim: linear %s (no expert tensors)", weight_format_name(scheme.linear_format));
  return scheme;
}

double bnb_4bit_bytes(int64_t rows, int64_t cols, int64_t block, Bnb4bitStorage storage) {
  const double n = static_cast<double>(rows) * static_cast<double>(cols);
  const double blocks = std::ceil(n / static_cast<double>(block > 0 ? block : 64));  // Params4bit's default blocksize
  // absmax uint8 per block + nested_absmax fp32 per 256 blocks + nested_quant_map fp32 [256]; plain: absmax fp32 per block
  const double absmax = storage.double_quant ? blocks + 4.0 * std::ceil(blocks / 256.0) + 4.0 * 256.0 : 4.0 * blocks;
  return std::ceil(n / 2.0) + absmax + 4.0 * 16.0;  // codes two per uint8, absmax, quant_map fp32 [16]
}

namespace {
// The GPTQ / AWQ packed layout of an [r, c] linear layer at `bits` in `groups` groups per row: qweight bits / 8 bytes a
// weight; fp16 scales [groups, out]; qzeros packed at `bits` [groups, out] (kept by the GPTQ layout even when symmetric,
// group_index); g_idx int32 [in].
double group_packed_bytes(double r, double c, double bits, double groups, const QuantScheme& scheme) {
  const bool zeros = scheme.group_zero_point || scheme.group_index;
  return r * c * bits / 8.0 + groups * r * 2.0 + (zeros ? groups * r * bits / 8.0 : 0.0) + (scheme.group_index ? 4.0 * c : 0.0);
}

// The compiled rule lists of GPTQ `dynamic` maps, kept per thread (every fit of a plan sizes every layer of every
// group) and found by value, as table_for does: an entry is looked up once per weight group
// (gptq_dynamic_linear_bytes_sum), not once per layer, since comparing a list of 20,000 rules per module prefix was a
// third of `fit` on such a config.
struct DynamicEntry {
  std::vector<GptqDynamicRule> rules;
  std::vector<std::optional<SafeRegex>> compiled;
  std::unordered_map<std::string, int> by_prefix;
};

DynamicEntry& dynamic_entry(const std::vector<GptqDynamicRule>& rules) {
  constexpr size_t k_entries = 8;
  thread_local std::vector<std::unique_ptr<DynamicEntry>> cache;
  thread_local size_t next_slot = 0;
  for (const auto& e : cache)
    if (e->rules == rules) return *e;
  auto fresh = std::make_unique<DynamicEntry>();
  fresh->rules = rules;
  for (const auto& r : rules) {
    std::optional<SafeRegex> re;
    if (auto c = SafeRegex::compile(r.pattern)) re.emplace(std::move(*c));  // read_gptq_dynamic refused the others
    fresh->compiled.push_back(std::move(re));
  }
  DynamicEntry& entry = *fresh;
  if (cache.size() < k_entries) {
    cache.push_back(std::move(fresh));
  } else {
    cache[next_slot] = std::move(fresh);
    next_slot = (next_slot + 1) % k_entries;
  }
  return entry;
}

// The index of the entry's first rule matching `prefix` (-1: none), Python's re.match, looked up once per prefix.
int dynamic_rule(DynamicEntry& entry, const std::string& prefix) {
  auto it = entry.by_prefix.find(prefix);
  if (it != entry.by_prefix.end()) return it->second;
  int found = -1;
  for (size_t i = 0; i < entry.compiled.size() && found < 0; ++i)
    if (entry.compiled[i] && entry.compiled[i]->match(prefix)) found = static_cast<int>(i);
  entry.by_prefix.emplace(prefix, found);
  return found;
}

// gptq_dynamic_linear_bytes with the rule list's entry found by the caller (null: looked up here when needed).
double dynamic_linear_bytes(const QuantScheme& scheme, WeightFormat base, const std::string& prefix, int64_t rows, int64_t cols,
                            int model_dtype_bytes, DynamicEntry* entry) {
  const double r = static_cast<double>(rows), c = static_cast<double>(cols);
  const bool gptq = base == WeightFormat::int4_group || base == WeightFormat::int8_group;
  if (!gptq) return linear_weight_bytes(base, rows, cols, scheme, model_dtype_bytes);
  if (!scheme.autoround_layers.empty() || !scheme.autoround_blocks.empty()) {
    const LayerBits layer = autoround_layer_bits(scheme, prefix, base == WeightFormat::int8_group ? 8 : 4);
    if (layer.bits >= 16) return r * c * model_dtype_bytes;
    const double groups = layer.group_size > 0 ? std::ceil(c / static_cast<double>(layer.group_size)) : 1.0;
    return group_packed_bytes(r, c, static_cast<double>(layer.bits), groups, scheme);
  }
  const int rule = dynamic_rule(entry ? *entry : dynamic_entry(scheme.gptq_dynamic), prefix);
  const GptqDynamicRule* match = rule >= 0 ? &scheme.gptq_dynamic[static_cast<size_t>(rule)] : nullptr;
  if (match && match->skip) return r * c * model_dtype_bytes;
  const double bits = static_cast<double>(match && match->bits > 0 ? match->bits : (base == WeightFormat::int8_group ? 8 : 4));
  const int64_t group = match && match->group_size != 0 ? match->group_size : (scheme.group_size != 0 ? scheme.group_size : 128);
  const double groups = group > 0 ? std::ceil(c / static_cast<double>(group)) : 1.0;  // -1: the whole input row is one group
  return group_packed_bytes(r, c, bits, groups, scheme);
}
}  // namespace

double gptq_dynamic_linear_bytes(const QuantScheme& scheme, WeightFormat base, const std::string& prefix, int64_t rows, int64_t cols,
                                 int model_dtype_bytes) {
  return dynamic_linear_bytes(scheme, base, prefix, rows, cols, model_dtype_bytes, nullptr);
}

double gptq_dynamic_linear_bytes_sum(const QuantScheme& scheme, WeightFormat base, const std::vector<std::string>& prefixes, int64_t rows,
                                     int64_t cols, int model_dtype_bytes) {
  DynamicEntry* entry = scheme.gptq_dynamic.empty() ? nullptr : &dynamic_entry(scheme.gptq_dynamic);
  double sum = 0;
  for (const auto& prefix : prefixes) sum += dynamic_linear_bytes(scheme, base, prefix, rows, cols, model_dtype_bytes, entry);
  return sum;
}

double linear_weight_bytes(WeightFormat format, int64_t rows, int64_t cols, const QuantScheme& scheme, int model_dtype_bytes) {
  const double r = static_cast<double>(rows), c = static_cast<double>(cols), n = r * c;
  // group_size -1 (GPTQ per channel): the whole input row is one group; 0: the default 128.
  const double g = scheme.group_size < 0 ? std::max(c, 1.0) : static_cast<double>(scheme.group_size > 0 ? scheme.group_size : 128);
  switch (format) {
    case WeightFormat::native: return n * model_dtype_bytes;
    case WeightFormat::fp8_block:
      return n + 4.0 * static_cast<double>(ceil_div(static_cast<uint64_t>(rows), static_cast<uint64_t>(scheme.block_rows)) *
                                           ceil_div(static_cast<uint64_t>(cols), static_cast<uint64_t>(scheme.block_cols)));
    case WeightFormat::fp8_channel: return n + 4.0 * r;
    case WeightFormat::fp8_tensor: return n + 8.0;  // weight_scale + input_scale, fp32 scalars
    case WeightFormat::int8_channel: return n + r * model_dtype_bytes;
    case WeightFormat::int4_group: return group_packed_bytes(r, c, 4.0, std::ceil(c / g), scheme);
    case WeightFormat::nvfp4: return n / 2.0 + std::ceil(c / 16.0) * r + 8.0;
    case WeightFormat::mxfp4: return n / 2.0 + std::ceil(c / 32.0) * r;
    case WeightFormat::mxfp8: return n + std::ceil(c / 32.0) * r;  // fp8 weight + uint8 e8m0 scale per 32 input channels
    case WeightFormat::modelslim_w8a8:
      // int8 weight; scale+offset (model dtype), quant_bias int32, deq_scale fp32 (bf16) / int64 (fp16) per out channel.
      return n + r * (2.0 * model_dtype_bytes + 4.0 + (model_dtype_bytes == 2 ? 4.0 : 8.0)) + 2.0 * model_dtype_bytes;
    case WeightFormat::modelslim_w8a8_dynamic: return n + r * 2.0 * model_dtype_bytes;
    case WeightFormat::modelslim_w4a8_dynamic: return n / 2.0 + r * 3.0 * 4.0;
    case WeightFormat::packed_bits: return n * scheme.bits_per_weight / 8.0;
    case WeightFormat::int8_group: return group_packed_bytes(r, c, 8.0, std::ceil(c / g), scheme);
    case WeightFormat::bnb_int8: return n + 4.0 * r + 1.0;  // weight int8, SCB fp32 per output row, weight_format uint8
    case WeightFormat::bnb_nf4: return bnb_4bit_bytes(rows, cols, scheme.group_size, {.double_quant = scheme.bnb_double_quant});
    case WeightFormat::count_: break;
  }
  return n * model_dtype_bytes;
}

}  // namespace preflight::model
