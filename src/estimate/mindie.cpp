#include "estimate/mindie.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/embedded.hpp"
#include "base/units.hpp"

namespace preflight::estimate {

namespace {

const char* k_origin = "data/engines/mindie.json";

Expected<std::map<std::string, double>> number_map(const Json& root, const std::string& key, const std::string& origin) {
  auto it = root.find(key);
  if (it == root.end() || !it->is_object()) return make_error(ErrorKind::corrupt, origin + ": " + key + ": expected an object", origin);
  std::map<std::string, double> out;
  for (const auto& [k, v] : it->items()) {
    if (!v.is_number()) return make_error(ErrorKind::corrupt, origin + ": " + key + "." + k + ": expected a number, found " + v.type_name(), origin);
    out[k] = v.get<double>();
  }
  return out;
}

// One decoder layer's KV bytes per token on one card. MindIE splits attention heads across worldSize
// cards (doc: "heads x head size / cards"); a KV head count below worldSize is replicated (one head per card).
Expected<int64_t> layer_kv_bytes_per_card(const model::LayerSpec& l, int64_t world, int bytes) {
  switch (l.kind) {
    case model::LayerKind::full_attention:
    case model::LayerKind::sliding_attention: {
      int64_t heads = l.num_key_value_heads;
      if (heads >= world) {
        if (heads % world != 0)
          return make_error(ErrorKind::unsupported, fmt::format("num_key_value_heads ({}) is not a multiple of worldSize ({})", heads, world));
        heads /= world;
      } else {
        heads = 1;
      }
      return heads * (l.head_dim_k + l.head_dim_v) * bytes;
    }
    case model::LayerKind::mla_attention: return (l.mla_cache_dim + l.indexer_head_dim) * bytes;  // latent cache, not split
    case model::LayerKind::mlp_only: return int64_t{0};
    default: break;
  }
  return make_error(ErrorKind::unsupported, std::string("mindie: no KV block rule for ") + model::layer_kind_name(l.kind) +
                                                " layers (MindIE's documented block formula covers attention caches only)");
}

Status check_weight_format(const model::ModelSpec& spec, const MindieCatalog& catalog) {
  const auto& ok = catalog.accepted_weight_formats;
  for (auto f : {spec.quant.linear_format, spec.quant.expert_format}) {
    const std::string name = model::weight_format_name(f);
    if (std::find(ok.begin(), ok.end(), name) == ok.end())
      return make_error(ErrorKind::unsupported,
                        fmt::format("{}: mindie loads bf16/fp16 safetensors or msModelSlim-quantized weights (W8A8, W8A16, W8A8SC); found {} ({}); "
                                    "convert the checkpoint to bf16 and quantize it with msModelSlim",
                                    spec.id, name, spec.quant.detail.empty() ? spec.quant.method : spec.quant.detail),
                        spec.id);
  }
  return Ok{};
}

// Issue 15 (evid33): MindIE's multimodal rules, numbers from data/engines/mindie.json (sources.multimodal).
struct MindieMmRules {
  bool on = false;                  // the model has a vision tower
  double kv_bytes = 0;              // KV_HALF_BYTE: K and V x 2 B per element of the KV width
  double min_total_bytes = 0;       // the warm-up check runs on cards whose runtime total is at least this
  double free_bytes = 0;            // free memory the check asks for
  double free_long_input_bytes = 0; // ... when maxInputTokenLen is above long_input_tokens
  int64_t long_input_tokens = 0;
};

Expected<MindieMmRules> mindie_mm_rules(const MindieCatalog& c, bool multimodal) {
  MindieMmRules r;
  if (!multimodal) return r;
  const auto need = [&](const char* key) -> Expected<double> {
    auto it = c.defaults.find(key);
    if (it == c.defaults.end() || it->second <= 0)
      return make_error(ErrorKind::corrupt, fmt::format("{}: defaults.{}: a positive number is needed for multimodal models", c.origin, key), c.origin);
    return it->second;
  };
  r.on = true;
  PF_TRY(kv, need("multimodal_auto_kv_bytes"));
  PF_TRY(total, need("multimodal_check_min_total_gib"));
  PF_TRY(free_gib, need("multimodal_free_gib"));
  PF_TRY(free_long, need("multimodal_free_gib_long_input"));
  PF_TRY(long_tokens, need("multimodal_long_input_tokens"));
  r.kv_bytes = kv;
  r.min_total_bytes = total * k_gib;
  r.free_bytes = free_gib * k_gib;
  r.free_long_input_bytes = free_long * k_gib;
  r.long_input_tokens = static_cast<int64_t>(long_tokens);
  return r;
}

// npuMemSize -1 on a multimodal model: ceil(4 x layers x (KV heads x hidden / heads) x (maxPrefillTokens +
// maxBatchSize x maxIterTimes) / worldSize / 2^30) GiB (MindIE's warm_up, as its code has it).
Expected<int64_t> mindie_mm_fixed_pool_gib(const model::ModelSpec& spec, const MindieOptions& o, const MindieMmRules& mm, MindieEstimate& e) {
  if (spec.num_attention_heads <= 0 || spec.num_hidden_layers <= 0)
    return make_error(ErrorKind::unsupported, spec.id + ": no attention heads or layers to size MindIE's multimodal KV pool from", spec.id);
  const int64_t kv_width = spec.num_key_value_heads * spec.hidden_size / spec.num_attention_heads;
  const double tokens = static_cast<double>(o.max_prefill_tokens) + static_cast<double>(o.max_batch_size) * static_cast<double>(o.max_iter_times);
  const double bytes = mm.kv_bytes * static_cast<double>(spec.num_hidden_layers) * static_cast<double>(kv_width) * tokens / static_cast<double>(o.world_size);
  const auto gib = static_cast<int64_t>(std::ceil(bytes / k_gib));
  e.formulas.push_back(fmt::format("multimodal npuMemSize -1 = ceil({} x layers {} x KV width {} x (maxPrefillTokens {} + maxBatchSize {} x maxIterTimes {}) / worldSize {}) "
                                   "= ceil({:.3f}) = {} GiB",
                                   mm.kv_bytes, spec.num_hidden_layers, kv_width, o.max_prefill_tokens, o.max_batch_size, o.max_iter_times, o.world_size,
                                   bytes / k_gib, gib));
  e.warnings.push_back("npuMemSize -1 on a multimodal model: MindIE warns it 'may exhibit poor performance or may be out of memory during inference' and "
                       "sizes a fixed pool from the config instead of the free memory; set npuMemSize (--npu-mem-size) yourself");
  return gib;
}

double mindie_mm_free_needed_bytes(const MindieOptions& o, const MindieMmRules& mm) {
  return o.max_input_token_len > mm.long_input_tokens ? mm.free_long_input_bytes : mm.free_bytes;
}

// Bytes short of the free memory MindIE's post-warm-up check asks of a multimodal model (0: none, or no check).
double mindie_mm_shortfall_bytes(const MindieEstimate& e, const MindieOptions& o, const MindieMmRules& mm, double runtime_bytes) {
  if (!mm.on || e.runtime_total_bytes < mm.min_total_bytes) return 0;
  const double free_after = e.runtime_total_bytes - e.weight_bytes - runtime_bytes - e.kv_pool_bytes_high;
  return std::max(0.0, mindie_mm_free_needed_bytes(o, mm) - free_after);
}

struct Range {
  const char* key;
  int64_t value;
  int64_t lo;
  int64_t hi;
};

// The optional "mtp" object: {"architectures": [names], "shared_with_model": [MTP tensor names]}.
Status parse_mtp_rules(const Json& root, const std::string& origin, MindieCatalog& c) {
  auto it = root.find("mtp");
  if (it == root.end()) return Ok{};
  if (!it->is_object()) return make_error(ErrorKind::corrupt, origin + ": mtp: expected an object", origin);
  for (const auto& [k, v] : it->items()) {
    std::vector<std::string>* into = k == "architectures" ? &c.mtp_architectures : k == "shared_with_model" ? &c.mtp_shared_with_model : nullptr;
    if (into == nullptr) return make_error(ErrorKind::corrupt, origin + ": mtp: unknown key '" + k + "'", origin);
    if (!v.is_array()) return make_error(ErrorKind::corrupt, origin + ": mtp." + k + ": expected an array of strings", origin);
    for (const auto& s : v) {
      if (!s.is_string() || s.get<std::string>().empty())
        return make_error(ErrorKind::corrupt, origin + ": mtp." + k + ": expected an array of non-empty strings", origin);
      into->push_back(s.get<std::string>());
    }
  }
  return Ok{};
}

std::string joined(const std::vector<std::string>& names, const char* sep) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : sep) + n;
  return out;
}

// MTP on (issue 16): every block holds one more layer of the model's KV shape, whatever num_speculative_tokens is
// (mindie34: kvcache_settings.py calc_block_mem, num_layers = num_layers + (num_speculative_tokens >= 1)), and the MTP
// module loads. Its weights (mindie35) are the config's MTP layers less the tensors MindIE's ATB backend takes from the
// main model (catalogue "mtp.shared_with_model": get_weights_mtp registers the main embed_tokens and lm_head, so the
// checkpoint's own embed_tokens and shared_head.head stay on disk). Returns the MTP bytes loaded (all cards).
Expected<double> add_mindie_mtp(const model::ModelSpec& spec, const MindieOptions& o, const MindieCatalog& catalog, double mtp_bytes, MindieEstimate& e) {
  if (o.num_speculative_tokens < 1) return 0.0;
  for (const auto& l : spec.layers) {
    if (l.kv_shared) continue;
    PF_TRY(bytes, layer_kv_bytes_per_card(l, o.world_size, o.kv_cache_dtype_bytes));
    if (bytes <= 0) continue;
    e.kv_bytes_per_token += bytes;
    e.formulas.push_back(fmt::format("MTP on (num_speculative_tokens {}): one more KV layer of {} B per token per card in every block (MindIE kvcache_settings.py calc_block_mem)",
                                     o.num_speculative_tokens, bytes));
    break;
  }
  const auto& listed = catalog.mtp_architectures;
  if (!listed.empty() && std::find(listed.begin(), listed.end(), spec.architecture) == listed.end())
    e.warnings.push_back(fmt::format("{}: MindIE's MTP page lists MTP for {} only (DeepSeek-R1 / V3, W8A8, W4A8 or KV cache int8), not {}: the start may refuse plugin_params or run without MTP",
                                     spec.id, joined(listed, ", "), spec.architecture.empty() ? std::string("this model") : spec.architecture));
  if (spec.mtp_layers <= 0) {
    e.warnings.push_back(spec.id + ": MTP is on but the config names no MTP layer (num_nextn_predict_layers / mtp_num_hidden_layers): no MTP weights are counted; the block still has the extra layer");
    return 0.0;
  }
  double shared = 0;
  for (const auto& g : spec.weights) {
    if (g.part != model::Part::mtp) continue;
    for (const auto& name : catalog.mtp_shared_with_model)
      if (g.module == "model.mtp." + name) shared += model::weight_group_bytes(spec, g);
  }
  if (shared > 0)
    e.formulas.push_back(fmt::format("MTP module = {:.3f} GiB as the checkpoint stores it less {} ({:.3f} GiB), which MindIE's ATB backend takes from the main model (get_weights_mtp) = {:.3f} GiB",
                                     bytes_to_gib(mtp_bytes), joined(catalog.mtp_shared_with_model, " and "), bytes_to_gib(shared), bytes_to_gib(mtp_bytes - shared)));
  return std::max(0.0, mtp_bytes - shared);
}

}  // namespace

Expected<MindieCatalog> parse_mindie_catalog(const Json& root, const std::string& origin) {
  if (!root.is_object()) return make_error(ErrorKind::corrupt, origin + ": expected an object", origin);
  static const std::vector<std::string> known{"schema_version", "engine", "version", "retrieved", "defaults", "limits", "accepted_weight_formats", "mtp", "sources"};
  for (const auto& [k, v] : root.items())
    if (std::find(known.begin(), known.end(), k) == known.end()) return make_error(ErrorKind::corrupt, origin + ": unknown key '" + k + "'", origin);
  MindieCatalog c;
  c.origin = origin;
  c.version = root.value("version", std::string());
  PF_TRY(defaults, number_map(root, "defaults", origin));
  c.defaults = defaults;
  auto limits = root.find("limits");
  if (limits == root.end() || !limits->is_object()) return make_error(ErrorKind::corrupt, origin + ": limits: expected an object", origin);
  for (const auto& [k, v] : limits->items()) {
    if (!v.is_array() || v.size() != 2 || !v[0].is_number_integer() || !v[1].is_number_integer() || v[0].get<int64_t>() > v[1].get<int64_t>())
      return make_error(ErrorKind::corrupt, origin + ": limits." + k + ": expected [low, high] integers with low <= high", origin);
    c.limits[k] = {v[0].get<int64_t>(), v[1].get<int64_t>()};
  }
  auto formats = root.find("accepted_weight_formats");
  if (formats == root.end() || !formats->is_array() || formats->empty())
    return make_error(ErrorKind::corrupt, origin + ": accepted_weight_formats: expected a non-empty array", origin);
  for (const auto& f : *formats) {
    if (!f.is_string()) return make_error(ErrorKind::corrupt, origin + ": accepted_weight_formats: expected strings", origin);
    c.accepted_weight_formats.push_back(f.get<std::string>());
  }
  PF_TRY(mtp, parse_mtp_rules(root, origin, c));
  (void)mtp;
  auto sources = root.find("sources");
  if (sources == root.end() || !sources->is_object() || sources->empty())
    return make_error(ErrorKind::corrupt, origin + ": sources: every MindIE rule needs a source", origin);
  for (const auto& [k, v] : sources->items()) {
    if (!v.is_string() || v.get<std::string>().find("http") == std::string::npos)
      return make_error(ErrorKind::corrupt, origin + ": sources." + k + ": expected a text with a URL", origin);
    c.sources[k] = v.get<std::string>();
  }
  const auto fraction = c.defaults.find("npu_memory_fraction");
  if (fraction != c.defaults.end() && (fraction->second <= 0 || fraction->second > 1))
    return make_error(ErrorKind::corrupt, fmt::format("{}: defaults.npu_memory_fraction: expected (0, 1], found {}", origin, fraction->second), origin);
  return c;
}

Expected<MindieCatalog> load_mindie_catalog() {
  PF_TRY(json, parse_json(std::string(embedded_data("engines/mindie.json")), k_origin));
  return parse_mindie_catalog(json, k_origin);
}

MindieOptions mindie_default_options(const MindieCatalog& catalog) {
  MindieOptions o;
  const auto set = [&](const char* key, int64_t& field) {
    auto it = catalog.defaults.find(key);
    if (it != catalog.defaults.end()) field = static_cast<int64_t>(it->second);
  };
  set("npuMemSize", o.npu_mem_size);
  set("cacheBlockSize", o.cache_block_size);
  set("maxSeqLen", o.max_seq_len);
  set("maxInputTokenLen", o.max_input_token_len);
  set("maxPrefillTokens", o.max_prefill_tokens);
  set("maxPrefillBatchSize", o.max_prefill_batch_size);
  set("maxBatchSize", o.max_batch_size);
  set("maxIterTimes", o.max_iter_times);
  auto fraction = catalog.defaults.find("npu_memory_fraction");
  if (fraction != catalog.defaults.end()) o.npu_memory_fraction = fraction->second;
  return o;
}

const char* mindie_verdict_name(MindieVerdict v) {
  switch (v) {
    case MindieVerdict::fits: return "fits";
    case MindieVerdict::marginal: return "marginal";
    case MindieVerdict::does_not_fit: return "does not fit";
  }
  return "?";
}

Status check_mindie_options(const MindieOptions& o, const MindieCatalog& catalog) {
  const auto limit = [&](const char* key, int64_t lo, int64_t hi) {
    auto it = catalog.limits.find(key);
    return it == catalog.limits.end() ? std::pair<int64_t, int64_t>{lo, hi} : it->second;
  };
  const auto block = limit("cacheBlockSize", 1, 128);
  const auto input = limit("maxInputTokenLen", 1, 4194304);
  const auto prefill = limit("maxPrefillTokens", 1, 4194304);
  const auto batch = limit("maxBatchSize", 1, 5000);
  const std::vector<Range> ranges{{"cacheBlockSize", o.cache_block_size, block.first, block.second},
                                  {"maxSeqLen", o.max_seq_len, 1, int64_t{1} << 31},
                                  {"maxInputTokenLen", o.max_input_token_len, input.first, input.second},
                                  {"maxPrefillTokens", o.max_prefill_tokens, std::max(prefill.first, o.max_input_token_len), prefill.second},
                                  {"maxBatchSize", o.max_batch_size, batch.first, batch.second},
                                  {"maxPrefillBatchSize", o.max_prefill_batch_size, 0, o.max_batch_size},
                                  {"maxIterTimes", o.max_iter_times, 1, o.max_seq_len},
                                  {"worldSize", o.world_size, 1, 4096}};
  for (const auto& r : ranges)
    if (r.value < r.lo || r.value > r.hi)
      return make_error(ErrorKind::invalid_argument, fmt::format("config.json: {} = {} is outside the documented range [{}, {}]", r.key, r.value, r.lo, r.hi), r.key);
  if (o.npu_mem_size == 0 || o.npu_mem_size < -1)
    return make_error(ErrorKind::invalid_argument, fmt::format("config.json: npuMemSize = {}: expected -1 (auto) or a size in GB above 0", o.npu_mem_size), "npuMemSize");
  if (o.num_speculative_tokens < 0 || o.num_speculative_tokens > 2)
    return make_error(ErrorKind::invalid_argument,
                      fmt::format("config.json: plugin_params num_speculative_tokens = {}: MindIE's MTP takes 1 or 2 (0 or no plugin_params: MTP off)", o.num_speculative_tokens),
                      "plugin_params");
  if (o.npu_memory_fraction <= 0 || o.npu_memory_fraction > 1)
    return make_error(ErrorKind::invalid_argument, fmt::format("NPU_MEMORY_FRACTION = {}: expected a fraction in (0, 1]", o.npu_memory_fraction), "NPU_MEMORY_FRACTION");
  return Ok{};
}

Expected<MindieEstimate> estimate_mindie(const model::ModelSpec& spec, const device::DeviceSpec& device, const MindieOptions& o,
                                         const MindieCatalog& catalog) {
  PF_TRY(checked, check_mindie_options(o, catalog));
  (void)checked;
  PF_TRY(format_ok, check_weight_format(spec, catalog));
  (void)format_ok;
  const bool multimodal = spec.vision_params > 0 || spec.vision_hidden_size > 0;
  MindieEstimate e;
  e.npu_mem_auto = o.npu_mem_size == -1;
  int64_t npu_mem_gib = o.npu_mem_size;
  PF_TRY(mm, mindie_mm_rules(catalog, multimodal));
  if (multimodal && e.npu_mem_auto) {
    // Issue 15 (evid33): MindIE's code gives a multimodal model with npuMemSize -1 a fixed pool from its config
    // (generator.py warm_up), not the free-memory pool and not an error; docs/mindie.md.
    PF_TRY(fixed, mindie_mm_fixed_pool_gib(spec, o, mm, e));
    npu_mem_gib = fixed;
    e.npu_mem_auto = false;
  }
  const int64_t w = o.world_size;
  for (const auto& l : spec.layers) {
    if (l.kv_shared) continue;
    PF_TRY(bytes, layer_kv_bytes_per_card(l, w, o.kv_cache_dtype_bytes));
    e.kv_bytes_per_token += bytes;
  }
  if (e.kv_bytes_per_token <= 0) return make_error(ErrorKind::unsupported, spec.id + ": no attention KV cache to size (no attention layers)");
  const auto weights = model::compute_weight_bytes(spec);
  PF_TRY(mtp_loaded, add_mindie_mtp(spec, o, catalog, weights.mtp, e));
  e.block_bytes = o.cache_block_size * e.kv_bytes_per_token;
  e.formulas.push_back(fmt::format("block = cacheBlockSize {} x {} B per token per card (layers x KV heads / worldSize x (K + V head dims) x {} B) = {} B",
                                   o.cache_block_size, e.kv_bytes_per_token, o.kv_cache_dtype_bytes, e.block_bytes));

  // Sequence lengths, as MindIE clamps them (ModelDeployConfig.maxInputTokenLen, ScheduleConfig.maxIterTimes).
  e.input_tokens = std::min(o.max_input_token_len, o.max_seq_len - 1);
  e.output_tokens = std::min(o.max_iter_times, o.max_seq_len - e.input_tokens);
  const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  e.blocks_per_request = ceil_div(e.input_tokens, o.cache_block_size) + ceil_div(e.output_tokens, o.cache_block_size);
  e.formulas.push_back(fmt::format("blocks per request = Ceil(input {} / {}) + Ceil(output min(maxIterTimes, maxSeqLen - input) = {} / {}) = {}", e.input_tokens,
                                   o.cache_block_size, e.output_tokens, o.cache_block_size, e.blocks_per_request));

  // The card (issue 15, evid33): MindIE's warm_up takes NPU_MEMORY_FRACTION of the total the runtime reports
  // (acl.rt.get_mem_info: 'total_mem: 43.24G' on a 48 GB 300I Duo chip in gpustack #2849) and subtracts what is in use
  // after the warm-up (weights, runtime variables). The system's share (npu-smi total less the runtime total) lies
  // outside that total, so it is not subtracted again (MindIE-LLM generator.py, 2025-12 to 2026-05; docs/mindie.md).
  e.card_bytes = device.memory_bytes;
  e.runtime_total_bytes = device.usable_total_bytes();
  e.fraction_bytes = e.runtime_total_bytes * o.npu_memory_fraction;
  e.system_bytes = std::max(0.0, device.memory_bytes - e.runtime_total_bytes);
  const double loaded = weights.total + mtp_loaded;  // MTP on: its module loads too
  e.weight_bytes = loaded / static_cast<double>(w);
  e.formulas.push_back(fmt::format("weights per card = {:.3f} GiB{} / worldSize {} = {:.3f} GiB", bytes_to_gib(loaded),
                                   mtp_loaded > 0 ? fmt::format(" (MTP module {:.3f} GiB included)", bytes_to_gib(mtp_loaded)) : std::string(), w,
                                   bytes_to_gib(e.weight_bytes)));

  // Runtime variables (inputs, outputs, intermediates): no published formula. Band: the prefill of
  // maxPrefillTokens tokens (hidden and FFN activations, bf16) plus fp32 logits for one prefill batch, to twice that.
  const int64_t ffn = std::max(spec.intermediate_size, spec.moe_intermediate_size * std::max<int64_t>(spec.num_experts_per_tok, 1));
  const int64_t prefill_batch = o.max_prefill_batch_size == 0 ? o.max_batch_size : o.max_prefill_batch_size;
  const double activations = static_cast<double>(o.max_prefill_tokens) * static_cast<double>(2 * spec.hidden_size + 2 * ffn / w) * 2.0;
  const double logits = static_cast<double>(prefill_batch) * static_cast<double>(spec.vocab_size) * 4.0;
  e.runtime_bytes_low = activations + logits;
  e.runtime_bytes_high = 2.0 * e.runtime_bytes_low;
  e.formulas.push_back(fmt::format("runtime band = maxPrefillTokens {} x (2 x hidden {} + 2 x FFN {} / {}) x 2 B + maxPrefillBatchSize {} x vocab {} x 4 B = {:.3f} GiB, to 2x = {:.3f} GiB",
                                   o.max_prefill_tokens, spec.hidden_size, ffn, w, prefill_batch, spec.vocab_size, bytes_to_gib(e.runtime_bytes_low),
                                   bytes_to_gib(e.runtime_bytes_high)));
  e.assumptions.push_back("runtime-variable memory has no published formula in MindIE's docs; it is a band (docs/mindie.md)");

  const double free_low = e.fraction_bytes - e.weight_bytes - e.runtime_bytes_high;
  const double free_high = e.fraction_bytes - e.weight_bytes - e.runtime_bytes_low;
  e.formulas.push_back(fmt::format("auto KV = runtime total {:.3f} GiB x {} - weights {:.3f} - runtime = {:.3f} to {:.3f} GiB (card {:.3f} GiB, {:.3f} outside the runtime total)",
                                   bytes_to_gib(e.runtime_total_bytes), o.npu_memory_fraction, bytes_to_gib(e.weight_bytes), bytes_to_gib(free_low),
                                   bytes_to_gib(free_high), bytes_to_gib(e.card_bytes), bytes_to_gib(e.system_bytes)));
  if (e.npu_mem_auto) {
    e.kv_pool_bytes_low = std::max(0.0, free_low);
    e.kv_pool_bytes_high = std::max(0.0, free_high);
  } else {
    e.kv_pool_bytes_low = e.kv_pool_bytes_high = static_cast<double>(npu_mem_gib) * k_gib;
    e.assumptions.push_back("npuMemSize is read as GiB (the documented quick formula divides by 1024^3)");
  }
  e.total_blocks_low = static_cast<int64_t>(std::floor(e.kv_pool_bytes_low / static_cast<double>(e.block_bytes)));
  e.total_blocks_high = static_cast<int64_t>(std::floor(e.kv_pool_bytes_high / static_cast<double>(e.block_bytes)));
  e.batch_low = e.total_blocks_low / e.blocks_per_request;
  e.batch_high = e.total_blocks_high / e.blocks_per_request;
  e.formulas.push_back(fmt::format("Total Block Num = Floor(KV pool / block) = {} to {}; full-length requests = {} to {}", e.total_blocks_low, e.total_blocks_high,
                                   e.batch_low, e.batch_high));

  // Verdict, worst first.
  if (e.weight_bytes > e.runtime_total_bytes) {
    // ux28: NPU_MEMORY_FRACTION is at most 1, so past the whole runtime total no fraction holds the weights.
    e.verdict = MindieVerdict::does_not_fit;
    e.reason = fmt::format("weights need {:.2f} GiB per card, above the card's whole runtime total ({:.2f} GiB): weight loading runs out of memory at any "
                           "NPU_MEMORY_FRACTION; add cards (worldSize)",
                           bytes_to_gib(e.weight_bytes), bytes_to_gib(e.runtime_total_bytes));
  } else if (e.weight_bytes > e.fraction_bytes) {
    e.verdict = MindieVerdict::does_not_fit;
    e.reason = fmt::format("weights need {:.2f} GiB per card, above runtime total x NPU_MEMORY_FRACTION ({:.2f} GiB): the KV pool would be negative; "
                           "raise NPU_MEMORY_FRACTION to at least {:.2f} (weights alone) or add cards (worldSize)",
                           bytes_to_gib(e.weight_bytes), bytes_to_gib(e.fraction_bytes), std::ceil(100.0 * e.weight_bytes / e.runtime_total_bytes) / 100.0);
  } else if (mindie_mm_shortfall_bytes(e, o, mm, e.runtime_bytes_low) > 0 && e.kv_pool_bytes_high <= e.runtime_total_bytes - e.weight_bytes - e.runtime_bytes_low) {
    // The pool is allocated, then MindIE's post-warm-up check of a multimodal model fails (its own message).
    e.verdict = MindieVerdict::does_not_fit;
    e.reason = fmt::format("Warmup failed, because of multimodal model inference out of memory when `maxInputTokenLen` set to {}: {:.2f} GiB free after the "
                           "warm-up, {:.0f} GiB needed on a card of 60 GiB or more; lower maxPrefillTokens, maxBatchSize x maxIterTimes or npuMemSize, or add cards",
                           o.max_input_token_len, bytes_to_gib(e.runtime_total_bytes - e.weight_bytes - e.runtime_bytes_low - e.kv_pool_bytes_high),
                           bytes_to_gib(mindie_mm_free_needed_bytes(o, mm)));
  } else if (!e.npu_mem_auto && e.kv_pool_bytes_low > free_high) {
    e.verdict = MindieVerdict::does_not_fit;
    e.reason = fmt::format("npuMemSize {} GiB is above what the card can give the KV cache ({:.2f} GiB at most): MindIE fails or hangs at start-up; lower npuMemSize{}",
                           npu_mem_gib, bytes_to_gib(std::max(0.0, free_high)),
                           multimodal ? " (give one: with -1 a multimodal model's pool is sized from maxPrefillTokens + maxBatchSize x maxIterTimes)" : " or use -1");
  } else if (e.batch_high < 1) {
    e.verdict = MindieVerdict::does_not_fit;
    e.reason = fmt::format("the KV pool holds {} blocks, fewer than the {} one request of maxSeqLen needs; lower maxSeqLen or add cards", e.total_blocks_high,
                           e.blocks_per_request);
  } else if (e.batch_low < 1 || (!e.npu_mem_auto && e.kv_pool_bytes_low > free_low) || mindie_mm_shortfall_bytes(e, o, mm, e.runtime_bytes_high) > 0) {
    e.verdict = MindieVerdict::marginal;
    e.reason = "fits only at the low end of the runtime-variable band";
  } else {
    e.verdict = MindieVerdict::fits;
    e.reason = fmt::format("{} to {} requests of full length fit in the KV pool", e.batch_low, e.batch_high);
  }
  if (e.verdict != MindieVerdict::does_not_fit && e.batch_low < o.max_batch_size)
    e.warnings.push_back(fmt::format("maxBatchSize {} is above the {} full-length requests the KV blocks hold; MindIE's doc sets maxBatchSize = Total Block Num / "
                                     "blocks per request: use maxBatchSize {}",
                                     o.max_batch_size, e.batch_low, std::max<int64_t>(e.batch_low, 1)));
  return e;
}

Expected<int64_t> mindie_multimodal_npu_mem_gib(const MindieEstimate& e, const MindieOptions& o, const MindieCatalog& catalog) {
  PF_TRY(mm, mindie_mm_rules(catalog, true));
  double room = e.fraction_bytes - e.weight_bytes - e.runtime_bytes_high;
  if (e.runtime_total_bytes >= mm.min_total_bytes)
    room = std::min(room, e.runtime_total_bytes - e.weight_bytes - e.runtime_bytes_high - mindie_mm_free_needed_bytes(o, mm));
  return room <= 0 ? int64_t{0} : static_cast<int64_t>(std::floor(room / k_gib));
}

}  // namespace preflight::estimate
