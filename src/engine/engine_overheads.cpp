// engines.json "overheads": one record per platform of fitted factors, each with its source (docs/memory-model.md);
// every key checked. Split out of engine_catalog.cpp.
#include <algorithm>
#include <array>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/allreduce_workspace.hpp"
#include "engine/capture_rules.hpp"
#include "engine/moe_backend_workspace.hpp"
#include "engine/moe_row_padding.hpp"
#include "engine/engine_profile.hpp"
#include "engine/engine_overheads.hpp"

namespace preflight::engine {

namespace {

// overheads[].text_activation_live_tensors.<key>: three per-token widths under `names`, each 0-16, the last more than
// 0 (`last_why` says why it is live at the peak).
Expected<std::array<double, 3>> parse_widths(const JsonObject& parent, const std::string& key, const std::string& platform, const std::array<const char*, 3>& names,
                                             const char* last_why) {
  const Json* item = parent.find(key);
  const std::string& origin = parent.origin();
  if (!item || !item->is_object())
    return make_error(ErrorKind::corrupt, format("%s: overheads[%s].text_activation_live_tensors.%s: expected an object of widths", origin.c_str(), platform.c_str(), key.c_str()), origin);
  JsonObject r(*item, origin, "overheads[].text_activation_live_tensors." + key);
  PF_TRY(keys_ok, r.only_keys({names[0], names[1], names[2]}));
  (void)keys_ok;
  std::array<double, 3> w{};
  for (size_t i = 0; i < names.size(); ++i) {
    PF_TRY(v, r.number(names[i]));
    w[i] = v;
  }
  for (const double v : w)
    if (!(v >= 0 && v <= 16))
      return make_error(ErrorKind::corrupt, format("%s: overheads[%s].text_activation_live_tensors.%s: width %.3g is outside 0-16", origin.c_str(), platform.c_str(), key.c_str(), v), origin);
  if (w[2] <= 0)
    return make_error(ErrorKind::corrupt, format("%s: overheads[%s].text_activation_live_tensors.%s.%s: expected more than 0 (%s)", origin.c_str(), platform.c_str(), key.c_str(),
                                                 names[2], last_why), origin);
  return w;
}

// .graph / .eager: a dense decoder layer's widths of the hidden size, the attention output and the MLP.
Expected<TextActivationWidths> parse_live_widths(const JsonObject& parent, const std::string& key, const std::string& platform) {
  PF_TRY(w, parse_widths(parent, key, platform, {"hidden", "attention_output", "mlp"}, "the MLP's own tensors are live at the peak"));
  TextActivationWidths out;
  out.hidden = w[0];
  out.attention_output = w[1];
  out.mlp = w[2];
  return out;
}

// Issue 15 (npumoe): .moe_graph / .moe_eager: a MoE layer's live tensors besides its routed rows; the router logits are
// live at the peak.
Expected<MoeActivationWidths> parse_moe_live_widths(const JsonObject& parent, const std::string& key, const std::string& platform) {
  PF_TRY(w, parse_widths(parent, key, platform, {"hidden", "attention_output", "router_logits"}, "the expert op holds its router logits"));
  MoeActivationWidths out;
  out.hidden = w[0];
  out.attention_output = w[1];
  out.router_logits = w[2];
  return out;
}

}  // namespace

// One overheads[] record: a platform's fitted memory overheads with their evidence.
Expected<Overheads> parse_overheads(const Json& item, const std::string& origin) {
  JsonObject pre(item, origin, "overheads[]");
  Overheads o;
  PF_TRY(platform, pre.string("platform"));
  o.platform = platform;
  // Issue 15 (v0eng29): a misspelt key of a fitted record was dropped and its default taken in silence.
  JsonObject r(item, origin, "overheads[" + platform + "]");
  std::vector<std::string> allowed = {"platform", "non_torch_bytes", "graph_bytes", "activation_bytes_per_batched_token_factor", "vision_activation_factor",
                            "vision_activation_factor_source", "text_activation_live_tensors", "rope_cache_bytes_per_element", "rope_cache_source", "rope_cache_deepseek_scaling_copies", "rope_cache_deepseek_scaling_source",
                            "graph_memory_in_budget", "evidence", "band_fraction", "non_torch_band_bytes", "non_torch_band_source",
                            "non_torch_multi_rank_fraction", "non_torch_multi_rank_source", "non_torch_snapshot_bytes", "non_torch_snapshot_source",
                            "graph_first_capture_bytes", "graph_per_capture_bytes", "graph_capture_source", "nccl_buffers", "allreduce_fusion_workspace",
                            "moe_backend_workspaces", "moe_row_padding"};
  allowed.insert(allowed.end(), captured_graph_cost_keys().begin(), captured_graph_cost_keys().end());  // issue 15 (warmup33)
  PF_TRY(keys, r.only_keys(allowed));
  (void)keys;
  PF_TRY(captured, parse_captured_graph_cost(r, origin, platform));
  if (captured.modelled()) o.captured_graph_cost.cost = std::make_shared<const CapturedGraphCost>(std::move(captured));
  PF_TRY(nt, r.number("non_torch_bytes"));
  o.non_torch_bytes = nt;
  PF_TRY(gb, r.number("graph_bytes"));
  o.graph_bytes = gb;
  PF_TRY(af, r.number("activation_bytes_per_batched_token_factor"));
  o.activation_bytes_per_batched_token_factor = af;
  PF_TRY(vf, r.number("vision_activation_factor"));
  o.vision_activation_factor = vf;
  // Issue 15 (acc28): a vision factor taken from the code and a printed peak, which tools/fit_overheads.py then holds
  // instead of refitting; read by that tool only, so here it must be a non-empty text.
  PF_TRY(vf_src, r.opt_string("vision_activation_factor_source"));
  if (vf_src && trim(*vf_src).empty())
    return make_error(ErrorKind::corrupt, format("%s: overheads[%s].vision_activation_factor_source is empty: name the code read and the printed figure", origin.c_str(),
                                                 o.platform.c_str()),
                      origin);
  PF_TRY(rope, r.number("rope_cache_bytes_per_element"));
  if (rope < 0 || rope > 64) return make_error(ErrorKind::corrupt, format("%s: overheads[%s].rope_cache_bytes_per_element %.3g is outside 0-64", origin.c_str(), o.platform.c_str(), rope), origin);
  o.rope_cache_bytes_per_element = rope;
  PF_TRY(rope_src, r.string("rope_cache_source"));
  o.rope_cache_source = rope_src;
  // Issue 15 (acc31): the copies of a DeepseekScalingRotaryEmbedding cache the engine keeps, each in the model dtype;
  // absent: the class takes rope_cache_bytes_per_element like any other.
  PF_TRY(ds_copies, r.opt_number("rope_cache_deepseek_scaling_copies"));
  PF_TRY(ds_src, r.opt_string("rope_cache_deepseek_scaling_source"));
  if (ds_copies && (*ds_copies < 1 || *ds_copies > 16 || !ds_src || trim(*ds_src).empty()))
    return make_error(ErrorKind::corrupt,
                      format("%s: overheads[%s].rope_cache_deepseek_scaling_copies must be 1-16 with a rope_cache_deepseek_scaling_source", origin.c_str(), o.platform.c_str()),
                      origin);
  o.rope_cache_deepseek_scaling_copies = ds_copies;
  if (ds_src) o.rope_cache_deepseek_scaling_source = *ds_src;
  PF_TRY(gib, r.opt_bool("graph_memory_in_budget"));
  o.graph_memory_in_budget = gib;
  PF_TRY(ev, r.string("evidence"));
  o.evidence = ev;
  PF_TRY(band, r.number("band_fraction"));
  o.band_fraction = band;
  PF_TRY(nt_band, r.opt_number("non_torch_band_bytes"));
  if (nt_band && (*nt_band < 0 || *nt_band > 64.0 * 1024 * 1024 * 1024))
    return make_error(ErrorKind::corrupt, format("%s: overheads[%s].non_torch_band_bytes is outside 0-64 GiB", origin.c_str(), o.platform.c_str()), origin);
  o.non_torch_band_bytes = nt_band.value_or(0.0);
  PF_TRY(multi, r.number("non_torch_multi_rank_fraction"));
  if (!(multi >= 0 && multi <= 4))
    return make_error(ErrorKind::corrupt, format("%s: overheads[%s].non_torch_multi_rank_fraction %.3g is outside 0-4", origin.c_str(), o.platform.c_str(), multi), origin);
  o.non_torch_multi_rank_fraction = multi;
  PF_TRY(multi_src, r.string("non_torch_multi_rank_source"));
  o.non_torch_multi_rank_source = multi_src;
  PF_TRY(nt_snapshot, r.opt_number("non_torch_snapshot_bytes"));
  if (nt_snapshot) {
    if (!(*nt_snapshot >= 0 && *nt_snapshot <= o.non_torch_bytes))
      return make_error(ErrorKind::corrupt, format("%s: overheads[%s].non_torch_snapshot_bytes is outside 0 - non_torch_bytes", origin.c_str(), o.platform.c_str()), origin);
    PF_TRY(snapshot_src, r.opt_string("non_torch_snapshot_source"));
    if (!snapshot_src || snapshot_src->empty())
      return make_error(ErrorKind::corrupt, format("%s: overheads[%s].non_torch_snapshot_bytes has no non_torch_snapshot_source", origin.c_str(), o.platform.c_str()), origin);
    o.non_torch_snapshot_bytes = nt_snapshot;
    o.non_torch_snapshot_source = *snapshot_src;
  }
  PF_TRY(first_capture, r.opt_number("graph_first_capture_bytes"));
  PF_TRY(per_capture, r.opt_number("graph_per_capture_bytes"));
  PF_TRY(capture_src, r.opt_string("graph_capture_source"));
  if (first_capture.value_or(0) < 0 || per_capture.value_or(0) < 0 || per_capture.value_or(0) > 1024.0 * 1024 * 1024)
    return make_error(ErrorKind::corrupt, format("%s: overheads[%s].graph_first_capture_bytes / graph_per_capture_bytes: expected 0 or more (per graph at most 1 GiB)", origin.c_str(), o.platform.c_str()), origin);
  if (per_capture.value_or(0) > 0 && capture_src.value_or("").empty())
    return make_error(ErrorKind::corrupt, format("%s: overheads[%s].graph_per_capture_bytes has no graph_capture_source", origin.c_str(), o.platform.c_str()), origin);
  o.graph_first_capture_bytes = first_capture.value_or(0);
  o.graph_per_capture_bytes = per_capture.value_or(0);
  o.graph_capture_source = capture_src.value_or("");
  if (const Json* live = r.find("text_activation_live_tensors")) {
    if (!live->is_object())
      return make_error(ErrorKind::corrupt, format("%s: overheads[%s].text_activation_live_tensors: expected an object", origin.c_str(), o.platform.c_str()), origin);
    JsonObject l(*live, origin, "overheads[].text_activation_live_tensors");
    PF_TRY(keys_ok, l.only_keys({"graph", "eager", "source", "moe_graph", "moe_eager", "moe_source"}));
    (void)keys_ok;
    TextActivationLiveTensors t;
    PF_TRY(graph, parse_live_widths(l, "graph", o.platform));
    PF_TRY(eager, parse_live_widths(l, "eager", o.platform));
    PF_TRY(source, l.string("source"));
    if (source.empty())
      return make_error(ErrorKind::corrupt, format("%s: overheads[%s].text_activation_live_tensors has an empty source", origin.c_str(), o.platform.c_str()), origin);
    t.graph = graph;
    t.eager = eager;
    t.source = source;
    if (l.has("moe_graph") || l.has("moe_eager") || l.has("moe_source")) {
      PF_TRY(moe_graph, parse_moe_live_widths(l, "moe_graph", o.platform));
      PF_TRY(moe_eager, parse_moe_live_widths(l, "moe_eager", o.platform));
      PF_TRY(moe_source, l.string("moe_source"));
      if (moe_source.empty())
        return make_error(ErrorKind::corrupt, format("%s: overheads[%s].text_activation_live_tensors has an empty moe_source", origin.c_str(), o.platform.c_str()), origin);
      t.moe_graph = moe_graph;
      t.moe_eager = moe_eager;
      t.moe_source = moe_source;
    }
    o.text_activation_live_tensors = t;
  }
  if (const Json* nccl = r.find("nccl_buffers"); nccl && !nccl->is_null()) {
    if (!nccl->is_object()) return make_error(ErrorKind::corrupt, format("%s: overheads[%s].nccl_buffers: expected an object", origin.c_str(), o.platform.c_str()), origin);
    PF_TRY(buffers, parse_nccl_buffers(JsonObject(*nccl, origin, "overheads[" + o.platform + "].nccl_buffers"), origin));
    o.nccl_buffers = std::make_shared<const NcclBuffers>(std::move(buffers));
  }
  if (const Json* ws = r.find("allreduce_fusion_workspace"); ws && !ws->is_null()) {
    if (!ws->is_object())
      return make_error(ErrorKind::corrupt, format("%s: overheads[%s].allreduce_fusion_workspace: expected an object", origin.c_str(), o.platform.c_str()), origin);
    PF_TRY(workspace, parse_allreduce_fusion_workspace(JsonObject(*ws, origin, "overheads[" + o.platform + "].allreduce_fusion_workspace"), origin));
    o.allreduce_fusion_workspace = std::make_shared<const AllreduceFusionWorkspace>(std::move(workspace));
  }
  if (const Json* mb = r.find("moe_backend_workspaces"); mb && !mb->is_null()) {
    PF_TRY(backends, parse_moe_backend_workspaces(*mb, origin, "overheads[" + o.platform + "].moe_backend_workspaces"));
    o.moe_backend_workspaces = std::make_shared<const std::vector<MoeBackendWorkspace>>(std::move(backends));
  }
  if (const Json* pad = r.find("moe_row_padding"); pad && !pad->is_null()) {
    if (!pad->is_object()) return make_error(ErrorKind::corrupt, format("%s: overheads[%s].moe_row_padding: expected an object", origin.c_str(), o.platform.c_str()), origin);
    PF_TRY(padding, parse_moe_row_padding(JsonObject(*pad, origin, "overheads[" + o.platform + "].moe_row_padding"), origin));
    o.moe_row_padding = std::make_shared<const MoeRowPadding>(std::move(padding));
  }
  return o;
}

}  // namespace preflight::engine
