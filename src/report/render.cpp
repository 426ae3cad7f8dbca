#include "base/build_info.hpp"
#include "report/render.hpp"

#include <algorithm>
#include <map>

#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "model/context_length.hpp"

namespace preflight::report {

namespace {
std::string bold(const std::string& s, const Style& st) { return st.color ? "\033[1m" + s + "\033[0m" : s; }
std::string green(const std::string& s, const Style& st) { return st.color ? "\033[32m" + s + "\033[0m" : s; }
std::string red(const std::string& s, const Style& st) { return st.color ? "\033[31m" + s + "\033[0m" : s; }

std::string layer_pattern(const model::ModelSpec& spec) {
  std::map<std::string, int64_t> counts;
  std::vector<std::string> order;
  for (const auto& l : spec.layers) {
    const std::string k = model::layer_kind_name(l.kind);
    if (!counts.count(k)) order.push_back(k);
    ++counts[k];
  }
  std::string out;
  for (const auto& k : order) out += (out.empty() ? "" : " + ") + std::to_string(counts[k]) + " " + k;
  return out;
}

// Issue 16: the largest context is capped at vLLM's derived max_model_len (plan::largest_context_held), above which vLLM
// refuses --max-model-len; a reader of "40,960 tokens" beside an 828,160-token cache is told that the model, not the
// memory, sets it.
bool largest_context_is_model_max(const model::ModelSpec& spec, const estimate::FitEstimate& f, int64_t largest_context) {
  const int64_t model_max = model::max_model_len_of(spec, 0);
  return model_max > 0 && largest_context == model_max && estimate::kv_capacity_tokens(f) > model_max;
}
}  // namespace

Json envelope(const std::string& command) {
  return Json{{"schema_version", 1}, {"command", command}, {"preflight_version", PREFLIGHT_VERSION}, {"build_commit", build_commit()}};
}

Json inspect_to_json(const model::ModelSpec& spec) {
  const auto params = model::count_params(spec);
  const auto bytes = model::compute_weight_bytes(spec);
  Json out = envelope("inspect");
  out["model"] = spec.id;
  out["source"] = spec.source;
  out["architecture"] = spec.architecture;
  out["model_type"] = spec.model_type;
  out["dtype"] = model::dtype_name(spec.dtype);
  out["layers"] = {{"total", spec.num_hidden_layers}, {"pattern", layer_pattern(spec)}};
  Json kinds = Json::object();
  for (const auto& l : spec.layers) kinds[model::layer_kind_name(l.kind)] = kinds.value(model::layer_kind_name(l.kind), 0) + 1;
  out["layers"]["by_kind"] = kinds;
  out["layers"]["kv_cache_layers"] = model::count_layers(spec, model::LayerKind::full_attention) + model::count_layers(spec, model::LayerKind::sliding_attention) +
                                     model::count_layers(spec, model::LayerKind::mla_attention);
  out["params"] = {{"total", params.total}, {"text", params.text}, {"vision", params.vision}, {"mtp", params.mtp}, {"active_per_token", params.active},
                   {"active_per_token_matmul", params.active_matmul},
                   {"embedding", params.embedding}};
  Json by_format = Json::object();
  for (const auto& [k, v] : bytes.by_format) by_format[k] = v;
  out["weights"] = {{"bytes", bytes.total}, {"gib", bytes_to_gib(bytes.total)}, {"by_format", by_format}, {"mtp_bytes_not_loaded", bytes.mtp},
                    {"quantization", spec.quant.quantized() ? spec.quant.detail : "none"}};
  if (spec.exact_weight_bytes) {
    Json by_dtype = Json::object();
    for (const auto& [k, v] : spec.exact_bytes_by_dtype) by_dtype[k] = v;
    out["weights"]["exact_bytes"] = *spec.exact_weight_bytes;
    out["weights"]["exact_by_dtype"] = by_dtype;
    out["weights"]["exact_tensors"] = spec.exact_tensor_count;
    out["weights"]["header_bytes_read"] = spec.header_bytes_read;
  }
  out["kv_cache"] = {{"bytes_per_token", {{"auto", model::kv_bytes_per_token(spec, model::dtype_bits(spec.dtype) / 8)},
                                          {"fp8", model::kv_bytes_per_token(spec, 1)}, {"int8", model::kv_bytes_per_token(spec, 1)}}},
                     {"state_bytes_per_sequence", model::state_bytes_per_sequence(spec, model::dtype_bits(spec.dtype) / 8)}};
  out["moe"] = {{"experts", spec.num_experts}, {"experts_per_token", spec.num_experts_per_tok}, {"shared_experts", spec.num_shared_experts},
                {"moe_intermediate_size", spec.moe_intermediate_size}};
  out["mtp_layers"] = spec.mtp_layers;
  Json prov = Json::array();
  for (const auto& p : spec.provenance) prov.push_back({{"quantity", p.quantity}, {"source", p.source}, {"rule", p.rule}});
  out["provenance"] = prov;
  out["assumptions"] = spec.assumptions;
  return out;
}

std::string render_inspect(const model::ModelSpec& spec, const Style& st) {
  const auto params = model::count_params(spec);
  const auto bytes = model::compute_weight_bytes(spec);
  std::string o;
  o += bold(spec.id, st) + "  (" + spec.architecture + ", " + model::dtype_name(spec.dtype) + ")\n";
  o += "  source           " + spec.source + "\n";
  o += "  layers           " + std::to_string(spec.num_hidden_layers) + ": " + layer_pattern(spec) + "\n";
  o += "  parameters       " + with_thousands(params.total) + " total (text " + with_thousands(params.text) + ", vision " + with_thousands(params.vision) + ")\n";
  o += "  active per token " + with_thousands(params.active) + " (embedding and head counted; " + with_thousands(params.active_matmul) +
       " in matmuls, the input-embedding lookup left out)\n";
  if (params.mtp > 0) o += "  MTP layers       " + std::to_string(spec.mtp_layers) + " (" + with_thousands(params.mtp) + " params, loaded only with speculative decoding)\n";
  if (spec.num_experts > 0) {
    o += format("  MoE              %lld experts, %lld per token, %lld shared, expert MLP %lld\n", static_cast<long long>(spec.num_experts),
                static_cast<long long>(spec.num_experts_per_tok), static_cast<long long>(spec.num_shared_experts), static_cast<long long>(spec.moe_intermediate_size));
  }
  // Every tensor's stored bytes are known when they were read from a GGUF file (not for a GGUF variant sized from a config).
  const bool gguf = spec.quant.method == "gguf" && spec.exact_weight_bytes.has_value();
  o += "  weights          " + fixed(bytes_to_gib(bytes.total), 2) + (gguf ? " GiB exact (GGUF tensor bytes)" : " GiB computed");
  if (spec.quant.quantized() && !spec.quant.detail.empty()) o += " (" + spec.quant.detail + ")";
  o += "\n";
  size_t width = 14;  // the formats' names in one column (a variant's scheme names run to 22 characters)
  for (const auto& entry : bytes.by_format) width = std::max(width, entry.first.size() + 1);
  for (const auto& [k, v] : bytes.by_format) o += "    " + k + std::string(width - k.size(), ' ') + fixed(bytes_to_gib(v), 2) + " GiB\n";
  if (spec.exact_weight_bytes) {
    o += "  weights (exact)  " + fixed(bytes_to_gib(static_cast<double>(*spec.exact_weight_bytes)), 2) + " GiB from " + std::to_string(spec.exact_tensor_count) +
         " tensors (" + with_thousands(static_cast<int64_t>(spec.header_bytes_read)) + " header bytes read)\n";
  }
  const int b = model::dtype_bits(spec.dtype) / 8;
  o += "  KV per token     " + with_thousands(model::kv_bytes_per_token(spec, b)) + " B (auto/" + model::dtype_name(spec.dtype) + "), " +
       with_thousands(model::kv_bytes_per_token(spec, 1)) + " B (fp8/int8)\n";
  const int64_t state = model::state_bytes_per_sequence(spec, b);
  if (state > 0) o += "  state per seq    " + with_thousands(state) + " B (" + fixed(state / k_mib, 1) + " MiB; conv + recurrent, fixed per sequence)\n";
  o += "  provenance\n";
  for (const auto& p : spec.provenance) o += "    " + p.quantity + ": " + p.rule + "\n";
  if (!spec.assumptions.empty()) {
    o += "  assumptions\n";
    for (const auto& a : spec.assumptions) o += "    - " + a + "\n";
  }
  return o;
}

namespace {
Json term_to_json(const estimate::Term& t) {
  Json inputs = Json::object();
  for (const auto& [name, value] : t.inputs) inputs[name] = value;
  return {{"name", t.name}, {"bytes", t.bytes}, {"band_bytes", t.band_bytes}, {"rule", t.rule}, {"inputs", inputs}};
}

Json rank_to_json(const estimate::RankFootprint& r) {
  const auto& a = r.activation;
  Json activation = {{"text_forward", term_to_json(a.text_forward)}, {"vision_encoder", term_to_json(a.vision_encoder)},
                     {"sampler_run", term_to_json(a.sampler_run)}, {"encoder_held_bytes", a.encoder_held_bytes}, {"peak", term_to_json(a.peak)}};
  Json groups = Json::array();
  for (const auto& g : r.kv.groups)
    groups.push_back({{"kind", g.kind}, {"layers", g.layers}, {"page_bytes", g.page_bytes}, {"blocks_per_request", g.blocks_per_request}});
  Json kv = {{"block_size", r.kv.block_size}, {"page_bytes", r.kv.page_bytes}, {"group_size", r.kv.group_size},
             {"group_padding_ratio", r.kv.group_padding_ratio}, {"groups", groups}, {"demand_blocks_per_request", r.kv.demand_blocks},
             {"num_blocks", r.kv.num_blocks}, {"tokens", r.kv.kv_tokens}, {"max_concurrency", r.kv.max_concurrency},
             {"bytes_per_token", r.kv.kv_bytes_per_token}, {"state_bytes_per_sequence", r.kv.state_bytes_per_sequence}};
  return {{"rank", r.rank}, {"stage", r.stage}, {"weights", term_to_json(r.weights)}, {"activation", activation}, {"non_torch", term_to_json(r.non_torch)},
          {"graph", term_to_json(r.graph)}, {"available_kv", term_to_json(r.available_kv)}, {"kv", kv}};
}
}  // namespace

std::string render_version_band(const deploy::VersionBand& band, const Style& st) {
  return render_version_band(band, st, "no version given and nothing dates one");
}

std::string render_version_band(const deploy::VersionBand& band, const Style& st, const std::string& reason) {
  if (band.points.empty()) return {};
  std::string o = bold("across engine versions", st) + " (" + reason + ": each profile it could be, not only the newest; max_model_len " +
                  with_thousands(band.max_model_len) + ")\n";
  o += "  KV cache         " + with_thousands(band.kv_tokens_min) + " - " + with_thousands(band.kv_tokens_max) + " tokens; fits on " +
       std::to_string(band.fitting) + " of " + std::to_string(band.points.size()) + " versions\n";
  for (const auto& p : band.points)
    o += "    " + p.engine_id + std::string(p.engine_id.size() < 24 ? 24 - p.engine_id.size() : 1, ' ') + with_thousands(p.kv_tokens) + " tokens, " +
         fixed(bytes_to_gib(p.available_kv_bytes), 2) + " GiB available, " + (p.fits ? std::string("fits") : std::string(estimate::failure_name(p.failure))) + "\n";
  return o;
}

Json version_band_to_json(const deploy::VersionBand& band) {
  if (band.points.empty()) return nullptr;
  Json points = Json::array();
  for (const auto& p : band.points)
    points.push_back({{"engine", p.engine_id}, {"fits", p.fits}, {"failure", estimate::failure_name(p.failure)}, {"kv_tokens", p.kv_tokens},
                      {"available_kv_gib", bytes_to_gib(p.available_kv_bytes)}, {"max_concurrency", p.max_concurrency}});
  return {{"kv_tokens_min", band.kv_tokens_min}, {"kv_tokens_max", band.kv_tokens_max}, {"fitting", band.fitting}, {"max_model_len", band.max_model_len},
          {"versions", points}};
}

std::string render_interconnect_band(const deploy::InterconnectBand& band, const Style& st) {
  if (band.points.empty()) return {};
  // Issue 15 (tpws): the FlashInfer all-reduce workspace depends on the interconnect too (NVSwitch multicast).
  const bool workspace = std::any_of(band.points.begin(), band.points.end(), [](const auto& p) { return p.allreduce_workspace_bytes > 0; });
  std::string o = bold("across interconnects", st) + " (none given: the NCCL buffers" + (workspace ? " and the all-reduce workspace" : "") +
                  " under each plausible one, the assumed one first; max_model_len " + with_thousands(band.max_model_len) + ")\n";
  o += "  KV cache         " + with_thousands(band.kv_tokens_min) + " - " + with_thousands(band.kv_tokens_max) + " tokens; " +
       fixed(bytes_to_gib(band.available_kv_min_bytes), 2) + " - " + fixed(bytes_to_gib(band.available_kv_max_bytes), 2) + " GiB available; fits on " +
       std::to_string(band.fitting) + " of " + std::to_string(band.points.size()) + "\n";
  for (const auto& p : band.points) {
    const std::string name = p.interconnect + (p.assumed ? " (assumed)" : "");
    o += "    " + name + std::string(name.size() < 24 ? 24 - name.size() : 1, ' ') + fixed(bytes_to_gib(p.nccl_buffer_bytes), 2) + " GiB NCCL, " +
         (workspace ? fixed(bytes_to_gib(p.allreduce_workspace_bytes), 2) + " GiB all-reduce workspace, " : std::string()) + with_thousands(p.kv_tokens) + " tokens, " + fixed(bytes_to_gib(p.available_kv_bytes), 2) + " GiB available, " +
         (p.fits ? std::string("fits") : std::string(estimate::failure_name(p.failure))) + "\n";
  }
  return o;
}

Json interconnect_band_to_json(const deploy::InterconnectBand& band) {
  if (band.points.empty()) return nullptr;
  Json points = Json::array();
  for (const auto& p : band.points)
    points.push_back({{"interconnect", p.interconnect}, {"assumed", p.assumed}, {"fits", p.fits}, {"failure", estimate::failure_name(p.failure)},
                      {"kv_tokens", p.kv_tokens}, {"available_kv_gib", bytes_to_gib(p.available_kv_bytes)}, {"nccl_buffer_gib", bytes_to_gib(p.nccl_buffer_bytes)},
                      {"allreduce_workspace_gib", bytes_to_gib(p.allreduce_workspace_bytes)}, {"max_concurrency", p.max_concurrency}});
  return {{"kv_tokens_min", band.kv_tokens_min}, {"kv_tokens_max", band.kv_tokens_max}, {"available_kv_min_gib", bytes_to_gib(band.available_kv_min_bytes)},
          {"available_kv_max_gib", bytes_to_gib(band.available_kv_max_bytes)}, {"fitting", band.fitting}, {"max_model_len", band.max_model_len},
          {"interconnects", points}};
}

Json fit_to_json(const model::ModelSpec& spec, const estimate::FitEstimate& f, int64_t largest_context) {
  Json out = envelope("fit");
  out["model"] = spec.id;
  out["device"] = f.device_id;
  out["engine"] = f.engine_id;
  out["layout"] = {{"tensor_parallel_size", f.tensor_parallel_size}, {"pipeline_parallel_size", f.pipeline_parallel_size}};
  if (f.decode_context_parallel_size > 1) out["layout"]["decode_context_parallel_size"] = f.decode_context_parallel_size;  // issue 15 (dcp), only where set
  if (f.data_parallel_size > 1 || f.expert_parallel_size > 1) {  // issue 15: only where set, so other outputs keep their shape
    out["layout"]["data_parallel_size"] = f.data_parallel_size;
    out["layout"]["expert_parallel_size"] = f.expert_parallel_size;
  }
  if (f.drafter_layers > 0 || f.drafter_weights_bytes > 0)
    out["layout"]["drafter"] = {{"attention_layers", f.drafter_layers}, {"weights_bytes", f.drafter_weights_bytes}};
  out["settings"] = {{"gpu_memory_utilization", f.gpu_memory_utilization}, {"max_model_len", f.max_model_len}, {"max_num_seqs", f.max_num_seqs},
                     {"max_num_batched_tokens", f.max_num_batched_tokens}, {"block_size", f.block_size}, {"kv_cache_dtype", f.kv_cache_dtype},
                     {"quantization", f.quantization}, {"weight_scheme", f.weight_scheme}};
  Json terms = Json::array();
  for (const auto& t : f.terms) terms.push_back({{"name", t.name}, {"gib", bytes_to_gib(t.bytes)}, {"band_gib", bytes_to_gib(t.band_bytes)}, {"rule", t.rule}});
  out["memory_per_device"] = {{"total_gib", bytes_to_gib(f.total_bytes)}, {"requested_gib", bytes_to_gib(f.requested_bytes)}, {"terms", terms},
                               {"available_kv_gib", bytes_to_gib(f.available_kv_bytes)},
                               {"available_kv_gib_low", bytes_to_gib(f.available_kv_low_bytes())},
                               {"available_kv_gib_high", bytes_to_gib(f.available_kv_high_bytes())},
                               // issue 15: what the warm-up after KV sizing needs outside the budget, and the 1 - util headroom it must fit in
                               {"after_kv_sizing", {{"needed_gib_low", bytes_to_gib(f.after_kv_needed_low_bytes)},
                                                    {"needed_gib_high", bytes_to_gib(f.after_kv_needed_high_bytes)},
                                                    {"headroom_gib", bytes_to_gib(f.after_kv_headroom_bytes)}}}};
  if (f.after_kv_mask_high_bytes > 0) {  // issue 15 (acc30): of it, the square attention mask (vLLM-Ascend 310P)
    out["memory_per_device"]["after_kv_sizing"]["attention_mask_gib_low"] = bytes_to_gib(f.after_kv_mask_low_bytes);
    out["memory_per_device"]["after_kv_sizing"]["attention_mask_gib_high"] = bytes_to_gib(f.after_kv_mask_high_bytes);
  }
  out["kv_cache"] = {{"tokens", f.kv_tokens}, {"tokens_low", f.kv_tokens_low}, {"tokens_high", f.kv_tokens_high}, {"num_blocks", f.num_blocks},
                     {"page_bytes", f.page_bytes}, {"group_size", f.group_size}, {"max_concurrency", f.max_concurrency},
                     {"bytes_per_token_per_device", f.kv_bytes_per_token_rank}, {"state_bytes_per_sequence_per_device", f.state_bytes_per_sequence_rank},
                     {"largest_context", largest_context},
                     {"largest_context_bound", largest_context_is_model_max(spec, f, largest_context) ? "model_max_len" : "kv_cache"}};
  Json ranks = Json::array();
  for (const auto& r : f.ranks) ranks.push_back(rank_to_json(r));
  out["ranks"] = ranks;
  if (!f.stages.empty()) {  // issue 15: every pipeline stage on its own card, its layers and budget; the tightest sets the blocks
    Json stages = Json::array();
    for (const auto& st : f.stages)
      stages.push_back({{"stage", st.stage}, {"device", st.device_id}, {"first_layer", st.first_layer}, {"layers", st.layers},
                        {"total_gib", bytes_to_gib(st.total_bytes)}, {"requested_gib", bytes_to_gib(st.requested_bytes)},
                        {"weights_gib", bytes_to_gib(st.weights_bytes)}, {"activation_gib", bytes_to_gib(st.activation_bytes)},
                        {"available_kv_gib", bytes_to_gib(st.available_kv_bytes)}, {"num_blocks", st.num_blocks}, {"tightest", st.tightest}});
    out["stages"] = stages;
  }
  out["engine_lines"] = f.lines;
  out["fits"] = f.fits;
  out["failure"] = estimate::failure_name(f.failure);
  out["failure_message"] = f.failure_message;
  if (!f.verdict_depends_on.empty()) out["verdict_depends_on"] = f.verdict_depends_on;  // issue 15 (mc2): the verdict is undecided
  out["assumptions"] = f.assumptions;
  out["provenance"] = f.provenance;
  return out;
}

std::string render_fit(const model::ModelSpec& spec, const estimate::FitEstimate& f, int64_t largest_context, const std::vector<std::string>& fixes,
                       const Style& st) {
  std::string o;
  std::string where = std::to_string(f.tensor_parallel_size * f.pipeline_parallel_size * f.data_parallel_size) + " x " + f.device_id;
  if (!f.stages.empty() && std::any_of(f.stages.begin(), f.stages.end(), [&](const estimate::PipelineStageFit& s) { return s.device_id != f.device_id; })) {
    where.clear();  // issue 15, heterogeneous PP: "2 x A100-80G-SXM + 2 x L40S", one term per stage
    for (const auto& s : f.stages)
      where += (where.empty() ? "" : " + ") + std::to_string(f.tensor_parallel_size * f.data_parallel_size) + " x " + s.device_id;
  }
  o += bold(spec.id, st) + " on " + where + " with " +
       f.engine_id + (f.data_parallel_size > 1 ? format(" (DP %lld, each rank below)", static_cast<long long>(f.data_parallel_size)) : std::string()) + "\n";
  // ux28: a deployment the engine refuses before it sizes anything (a quantization it does not serve on the card) has no
  // memory terms, no context and no block size: those are left out rather than printed as 0 ("max_model_len 0; block 0",
  // "requested 0.00"), and the refusal below is the answer.
  const bool sized = !f.terms.empty();
  if (sized) {
    o += format("  layout           TP %lld, PP %lld%s; util %.2f; max_model_len %s; block %lld; kv %s\n", static_cast<long long>(f.tensor_parallel_size),
                static_cast<long long>(f.pipeline_parallel_size),
                f.decode_context_parallel_size > 1 ? format(", DCP %lld", static_cast<long long>(f.decode_context_parallel_size)).c_str() : "", f.gpu_memory_utilization, with_thousands(f.max_model_len).c_str(),
                static_cast<long long>(f.block_size), f.kv_cache_dtype.c_str());
  } else {
    o += format("  layout           TP %lld, PP %lld; util %.2f; not sized: the engine refuses this deployment before it loads the weights (verdict below)\n",
                static_cast<long long>(f.tensor_parallel_size), static_cast<long long>(f.pipeline_parallel_size), f.gpu_memory_utilization);
  }
  if (!f.weight_scheme.str().empty()) o += "  weights stored   " + f.weight_scheme.str() + "\n";
  o += "  memory per device (GiB)\n";
  // One label column for the block: 17 wide, wider when a term's name is longer ("all-reduce workspace").
  size_t width = 17;
  for (const auto& t : f.terms) width = std::max(width, t.name.size() + 1);
  const auto label = [&](std::string_view name) { return "    " + std::string(name) + std::string(width - name.size(), ' '); };
  o += label("total") + fixed(bytes_to_gib(f.total_bytes), 2) + "\n";
  if (sized) o += label("requested") + fixed(bytes_to_gib(f.requested_bytes), 2) + "  (total x util)\n";
  for (const auto& t : f.terms) {
    o += label(t.name) + fixed(bytes_to_gib(t.bytes), 2);
    if (t.band_bytes > 0) o += " +/- " + fixed(bytes_to_gib(t.band_bytes), 2);
    o += "\n";
  }
  if (f.after_kv_needed_high_bytes > 0)  // issue 15: graph capture and hybrid KV copies after KV sizing, outside the budget (EP buffers are inside it)
    o += label("after KV sizing") + fixed(bytes_to_gib(f.after_kv_needed_low_bytes), 2) + " - " + fixed(bytes_to_gib(f.after_kv_needed_high_bytes), 2) +
         (f.after_kv_mask_high_bytes > 0  // issue 15 (acc30): the 310P square attention mask, beside the unallocated budget share too
              ? "  (graph capture, hybrid KV copies, the square attention mask " + fixed(bytes_to_gib(f.after_kv_mask_low_bytes), 2) + " - " +
                    fixed(bytes_to_gib(f.after_kv_mask_high_bytes), 2) + ": after the KV pool; must fit in the " + fixed(bytes_to_gib(f.after_kv_headroom_bytes), 2) +
                    " GiB left beside it)\n"
              : "  (graph capture, hybrid KV copies: outside the budget; must fit in the " + fixed(bytes_to_gib(f.after_kv_headroom_bytes), 2) + " GiB above util)\n");
  if (!f.lines.empty()) {
    o += "  the engine will print\n";
    for (const auto& l : f.lines) o += "    " + l + "\n";
  }
  if (f.num_blocks > 0) {
    o += "  KV cache         " + with_thousands(f.kv_tokens) + " tokens (band " + with_thousands(f.kv_tokens_low) + " - " + with_thousands(f.kv_tokens_high) +
         "), " + fixed(f.max_concurrency, 2) + "x at " + with_thousands(f.max_model_len) + " tokens\n";
    o += "  largest context  " + with_thousands(largest_context) + " tokens for one request" +
         (largest_context_is_model_max(spec, f, largest_context) ? " (the model's maximum, vLLM's derived max_model_len; the KV cache holds more)" : "") + "\n";
  }
  o += "  verdict          " + (f.fits ? green("fits", st) : red("does not fit (" + std::string(estimate::failure_name(f.failure)) + ")", st));
  // Issue 15 (mc2): a memory verdict whose start depends on something the inputs do not state says so beside it.
  o += (f.verdict_depends_on.empty() ? std::string() : std::string(" on memory; undecided, depends on ") + f.verdict_depends_on.str()) + "\n";
  if (!f.fits) {  // every line of the engine's message under the verdict (pydantic's "1 validation error ..." spans two)
    const std::string message = f.failure_message.str();
    o += "    ";
    for (const char ch : message) o += ch == '\n' ? std::string("\n    ") : std::string(1, ch);
    o += "\n";
  }
  if (!fixes.empty()) {
    o += "  cheapest fixes\n";
    for (const auto& x : fixes) o += "    - " + x + "\n";
  }
  if (!f.assumptions.empty()) {
    o += "  assumptions\n";
    for (const auto& a : f.assumptions) o += "    - " + a + "\n";
  }
  return o;
}

std::string render_validation(const validate::ValidationReport& r, const Style& st) {
  // A case's id, engine, recorded failure and the skip reasons that quote its fields are the case file's text: no
  // escape sequence of theirs reaches the terminal, and at most 2,000 bytes of each (issue 19 item 12).
  const auto safe = [](const std::string& text) { return clip_text(strip_terminal_controls(text), 2000); };
  // Issue 19 (hard34): an id or engine is one line of the table: a newline in it is shown as \n (it split the row).
  const auto line = [](const std::string& text) { return one_line(strip_terminal_controls(text), 2000); };
  std::string o;
  for (const auto& row : r.rows) {
    if (row.skipped) continue;
    o += bold(line(row.id), st) + "  [" + line(row.engine) + "]\n";
    for (const auto& f : row.fields) {
      o += format("    %-18s observed %12.4g  predicted %12.4g  %6.2f%%", f.field.c_str(), f.observed, f.predicted, f.abs_pct);
      if (f.low && f.high)
        o += format("  band %.4g - %.4g%s", *f.low, *f.high, f.in_band() ? "" : " (outside)");
      o += "\n";
    }
    if (row.observed_fits) {
      o += format("    %-18s observed %12s  predicted %12s\n", "verdict", *row.observed_fits ? "fits" : row.observed_failure.empty() ? "no" : safe(row.observed_failure).c_str(),
                  row.predicted_fits && *row.predicted_fits ? (row.verdict_depends_on.empty() ? "fits" : "fits?") : row.predicted_failure.c_str());
      // Issue 15 (dpep33): an undecided verdict (counted neither right nor wrong) said under it; it read as a plain "fits".
      if (!row.verdict_depends_on.empty()) o += "    fits on memory; undecided, depends on " + safe(row.verdict_depends_on) + "\n";
      if (!row.predicted_failure_message.empty()) {  // issue 16: the engine's words, every line under the verdict (pydantic's span two)
        o += "    ";
        for (const char ch : row.predicted_failure_message) o += ch == '\n' ? std::string("\n    ") : std::string(1, ch);
        o += "\n";
      }
    }
  }
  if (r.skipped > 0) o += "\nskipped\n";  // ux31: no empty heading when every case was evaluated
  for (const auto& row : r.rows) if (row.skipped) o += "  " + line(row.id) + ": " + safe(row.skip_reason) + "\n";
  o += format("\nsummary: %d cases, %d evaluated, %d skipped", r.cases, r.evaluated, r.skipped);
  // Issue 16 (quant26): cases whose quantization names no variant are bad input (exit 2), the others still evaluated.
  o += r.unreadable > 0 ? format(" (%d unreadable: bad input, exit 2)\n", r.unreadable) : std::string("\n");
  o += "  field               n   median|%|   p90|%|   max|%|   in band\n";
  for (const auto& [name, s] : r.fields) {
    o += format("  %-18s %2d %10.2f %9.2f %9.2f", name.c_str(), s.n, s.median_abs_pct, s.p90_abs_pct, s.max_abs_pct);
    if (s.banded > 0) o += format("   %d/%d", s.in_band, s.banded);
    o += "\n";
  }
  o += format("  verdicts           %d/%d correct\n", r.verdicts_correct, r.verdicts_n);
  return o;
}

}  // namespace preflight::report
