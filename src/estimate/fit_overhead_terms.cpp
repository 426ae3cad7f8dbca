// The non-torch, communication and graph terms of vLLM / vllm-ascend start-up (shared/reference/
// engine-memory-accounting.md sec 1.2, 4.2): NCCL/HCCL buffers, DSA context parallel, MoE all-gather / all-to-all,
// EP communicators and MC2, EPLB warm-up, cudagraph / ACL graph capture sizes and memory.
// Split out of fit_terms.cpp (weights, drafter); the profile run is in fit_profile.cpp.

#include "estimate/fit_terms.hpp"
#include "estimate/fit_term_predicates.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "base/checked.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "estimate/graph_captured.hpp"
#include "estimate/vision_pass.hpp"
#include "model/vision_tower.hpp"
#include "engine/version_label.hpp"


namespace preflight::estimate::terms {

using model::ModelSpec;

engine::NonTorchCounted non_torch_counted(const engine::EngineProfile& engine, const engine::Overheads& oh, const std::string& device_family) {
  const auto& absolute = engine.non_torch_absolute_families;
  if (engine.non_torch_counted != engine::NonTorchCounted::increase || !oh.non_torch_snapshot_bytes) return engine::NonTorchCounted::absolute;
  // Issue 15 (build): a named build older than the first one counting the increase still counts the absolute amount.
  if (engine.build_named && engine.non_torch_increase_from_build && engine::compare_engine_builds(*engine.build_named, *engine.non_torch_increase_from_build) < 0)
    return engine::NonTorchCounted::absolute;
  return std::find(absolute.begin(), absolute.end(), device_family) != absolute.end() ? engine::NonTorchCounted::absolute : engine::NonTorchCounted::increase;
}

Term estimate_nccl_buffers(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_family, const StageLayout& lay,
                           const Deployment& dep) {
  const Term none{"NCCL buffers", 0, 0, {}, {}};
  const engine::NcclBuffers* nb = oh.nccl_buffers.get();
  if (!nb || !nb->counted_by(engine, lay.tp)) return none;
  const engine::NcclDomain* domain = nb->domain(dep.interconnect, device_family);
  if (!domain) return none;
  // A rank of a group of two reaches its one peer once per channel (ring and tree share the connection); a middle rank
  // of a larger group connects the ring and the tree chain: two peers (engines.json connection_source).
  const double connections = lay.tp > 2 ? 2.0 : 1.0;
  const double nvls = domain->nvls_bytes > 0 && lay.tp >= domain->nvls_min_ranks ? domain->nvls_bytes : 0.0;
  // Issue 15/16 (tp): where NCCL connects at init (vLLM's NCCL_CUMEM_ENABLE=0) each communicator also allocates its
  // proxy's shared point-to-point buffer (engines.json proxy_source).
  const double proxy = nb->proxy_shared_steps > 0 && engine.applies(nb->proxy_counted)
                           ? static_cast<double>(domain->p2p_channels) * static_cast<double>(nb->proxy_shared_steps) * domain->p2p_chunk_bytes
                           : 0.0;
  const double per_communicator = static_cast<double>(domain->channels) * connections * nb->connection_bytes + nvls + proxy;
  const double bytes = static_cast<double>(nb->communicators) * per_communicator;
  if (!dep.explain) return {"NCCL buffers", bytes, 0, {}, {}};
  const double mib = 1024.0 * 1024.0;
  const std::string proxy_text =
      proxy > 0 ? format(" + %lld p2p channels x %lld steps x %.0f KiB proxy buffer = %.0f MiB", static_cast<long long>(domain->p2p_channels),
                         static_cast<long long>(nb->proxy_shared_steps), domain->p2p_chunk_bytes / 1024.0, proxy / mib)
                : std::string();
  return {"NCCL buffers", bytes, 0,
          format("%lld communicators x (%lld channels x %.0f connection(s) x %.0f MiB%s%s) on %s, TP %lld, %s %s: inside the budget before vLLM "
                 "PR #25359 (%s; communicators: %s; per connection: %s; channels: %s%s)",
                 static_cast<long long>(nb->communicators), static_cast<long long>(domain->channels), connections, nb->connection_bytes / mib,
                 nvls > 0 ? format(" + %.0f MiB NVLS", nvls / mib).c_str() : "", proxy_text.c_str(), engine::interconnect_name(dep.interconnect),
                 static_cast<long long>(lay.tp), engine.engine.c_str(), engine::version_label(engine).c_str(), nb->counted.source.c_str(),
                 nb->communicators_source.c_str(), nb->connection_source.c_str(), domain->source.c_str(),
                 proxy > 0 ? ("; proxy buffer: " + nb->proxy_source).c_str() : ""),
          {{"communicators", static_cast<double>(nb->communicators)}, {"channels", static_cast<double>(domain->channels)}, {"connections_per_channel", connections},
           {"connection_bytes", nb->connection_bytes}, {"nvls_bytes", nvls}, {"proxy_shared_bytes", proxy}}};
}

Term estimate_non_torch(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_family, const StageLayout& lay, bool explain,
                        double nccl_buffer_bytes) {
  // Issue 15/16 (nccl): where the NCCL buffer term applies it stands for the communicators the fixed share stood for.
  const bool multi_rank = lay.tp * lay.pp * lay.dp > 1 && nccl_buffer_bytes <= 0;
  // Issue 15 (nt018): a worker that counts only the non-torch increase since its init snapshot leaves out what the
  // device held at the snapshot (the runtime context, printed); the communicators come after it, so the multi-rank
  // share (a fraction of the absolute constant) is counted by both.
  const bool increase = non_torch_counted(engine, oh, device_family) == engine::NonTorchCounted::increase;
  const double single = increase ? oh.non_torch_bytes - *oh.non_torch_snapshot_bytes : oh.non_torch_bytes;
  const double bytes = single + (multi_rank ? oh.non_torch_bytes * oh.non_torch_multi_rank_fraction : 0.0);
  // The band of the non-torch term is at least the spread the printed breakdowns show for the platform.
  const double band = std::max(bytes * oh.band_fraction, oh.non_torch_band_bytes);
  if (!explain) return {"non-torch", bytes, band, {}, {}};
  if (increase)
    return {"non-torch", bytes, band,
            "non-torch increase since the worker's init snapshot: the fitted non-torch less the runtime context already there at the snapshot (" +
                engine.non_torch_counted_source + "; " + oh.non_torch_snapshot_source + ")",
            {{"non_torch_bytes", oh.non_torch_bytes}, {"snapshot_bytes", *oh.non_torch_snapshot_bytes}, {"multi_rank_bytes", bytes - single}}};
  const bool build_before = engine.build_named && engine.non_torch_increase_from_build && engine.non_torch_counted == engine::NonTorchCounted::increase &&
                            engine::compare_engine_builds(*engine.build_named, *engine.non_torch_increase_from_build) < 0;
  return {"non-torch", bytes, band,
          "runtime context, communicator buffers and workspaces (fitted; " + oh.evidence + ")" +
              (build_before ? "; the whole amount: build " + engine.build_named->text + " predates the increase count (" + engine.non_torch_increase_from_build_source + ")"
                            : std::string()),
          {{"non_torch_bytes", oh.non_torch_bytes}, {"multi_rank_fraction", multi_rank ? oh.non_torch_multi_rank_fraction : 0.0}}};
}

bool dsa_cp_on(const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep, const StageLayout& lay) {
  const bool on = (engine.dsa_cp_switch == "flashcomm1" && dep.flashcomm1) || (engine.dsa_cp_switch == "additional_config" && dep.enable_dsa_cp);
  return on && lay.tp > 1 && has_sparse_indexer(m);
}

double estimate_dsa_cp_extra(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const Deployment& dep,
                             const StageLayout& lay, std::string& rule) {
  if (!dsa_cp_on(m, engine, dep, lay)) return 0;
  const model::SchemeFormats formats(scheme);
  const double tp = static_cast<double>(lay.tp);
  const double split = 1.0 - 1.0 / tp;
  // Issue 15 (dsvtp16): on a prefill (kv producer) instance vLLM-Ascend takes another path
  // (utils.py enable_dsa_cp_with_layer_shard): every o_proj is a ShardedCPRowParallelOp (whole, no TP) and there is no
  // o_proj_full_pool; a layer named in additional_config layer_sharding ("q_b_proj", "o_proj") of a hidden layer
  // (not the MTP drafter's) is kept only on rank layer_idx % G of the shard_weight group (all world / PP ranks, DP
  // included: create_shard_weight_group(None)), plus prefetch_step + 1 = 2 whole-layer windows
  // (ops/layer_shard_linear.py post_process_after_loading). Rank 0 (the one that prints) keeps ceil(n / G) layers.
  const bool layer_shard = !engine.dsa_cp_layer_shard_source.empty() && dep.kv_producer && lay.pp == 1;
  auto sharded = [&](const char* name) {
    return layer_shard && std::find(dep.layer_sharding.begin(), dep.layer_sharding.end(), name) != dep.layer_sharding.end();
  };
  double whole_q_b = 0, whole_kv_b = 0, o_proj_layer = 0, o_proj_whole = 0;
  // Hidden layers of a sharded series: their count, bytes and weight-tensor bytes. Only `layer.weight` is sharded;
  // the per-channel scales of a quantized layer stay on every rank.
  struct Series {
    double bytes = 0, weight = 0;
    int64_t n = 0;
  } q_b_hidden, o_hidden;
  auto add = [&](Series& series, const model::WeightGroup& g, double bytes) {
    const int b = model::dtype_bits(m.dtype) / 8;
    const model::WeightFormat f = g.linear ? formats(g.module, g.expert) : model::WeightFormat::native;
    const double side = g.linear ? model::linear_weight_bytes(f, g.rows, 0, scheme, b) * static_cast<double>(g.count) : 0.0;
    series.bytes += bytes;
    series.weight += bytes - side;
    series.n += g.count;
  };
  for (const auto& g : m.weights) {
    if (g.part != model::Part::text && !(g.part == model::Part::mtp && dep.speculative.mtp())) continue;  // MTP layers load only as the drafter
    const bool hidden = g.part == model::Part::text;
    if (ends_with(g.module, "self_attn.q_b_proj")) {
      const double bytes = group_bytes(m, scheme, formats, g);
      if (hidden && sharded("q_b_proj")) {
        add(q_b_hidden, g, bytes);
      } else {
        whole_q_b += bytes * split;
      }
    }
    // kv_b_proj is dequantized into W_UK / W_UV in the model dtype and then disposed (sfa_v1.py process_weights_after_loading).
    else if (ends_with(g.module, "self_attn.kv_b_proj"))
      whole_kv_b += static_cast<double>(g.rows) * static_cast<double>(g.cols) * static_cast<double>(g.count) * (model::dtype_bits(m.dtype) / 8) * split;
    else if (ends_with(g.module, "self_attn.o_proj")) {
      const double bytes = group_bytes(m, scheme, formats, g);
      if (layer_shard && hidden && sharded("o_proj")) {
        add(o_hidden, g, bytes);
      } else if (layer_shard) {
        o_proj_whole += bytes * split;
      } else if (hidden && g.count > 0) {
        o_proj_layer = bytes / static_cast<double>(g.count);
      }
    }
  }
  const int64_t group = lay.tp * lay.dp;
  auto on_rank = [&](const Series& series) {  // held minus the 1/TP the weights term already counts
    if (series.n <= 0) return 0.0;
    const int64_t kept = (series.n + group - 1) / group + std::min<int64_t>(2, series.n);
    return series.bytes - series.weight + series.weight / static_cast<double>(series.n) * static_cast<double>(kept) - series.bytes / tp;
  };
  const double q_b_shard = on_rank(q_b_hidden), o_shard = on_rank(o_hidden);
  const double extra = whole_q_b + whole_kv_b + o_proj_layer + o_proj_whole + q_b_shard + o_shard;
  if (dep.explain) {
    if (layer_shard)
      rule += format(" + DSA context parallel on a prefill instance %.2f GiB (kv_b_proj as W_UK/W_UV %.2f and q_b_proj %.2f GiB whole instead of 1/%lld, "
                     "o_proj whole %.2f GiB; layer-sharded over %lld ranks, ceil(n/%lld) + 2 whole layers kept: q_b_proj %.2f, o_proj %.2f GiB beyond 1/%lld: %s; %s)",
                     bytes_to_gib(extra), bytes_to_gib(whole_kv_b), bytes_to_gib(whole_q_b), static_cast<long long>(lay.tp), bytes_to_gib(o_proj_whole),
                     static_cast<long long>(group), static_cast<long long>(group), bytes_to_gib(q_b_shard), bytes_to_gib(o_shard), static_cast<long long>(lay.tp),
                     engine.dsa_cp_layer_shard_source.c_str(), engine.dsa_cp_source.c_str());
    else
      rule += format(" + DSA context parallel %.2f GiB (q_b_proj %.2f and kv_b_proj as W_UK/W_UV %.2f GiB whole on every rank instead of 1/%lld, one full o_proj %.2f GiB: %s)",
                     bytes_to_gib(extra), bytes_to_gib(whole_q_b), bytes_to_gib(whole_kv_b), static_cast<long long>(lay.tp), bytes_to_gib(o_proj_layer),
                     engine.dsa_cp_source.c_str());
  }
  return extra;
}

double estimate_sfa_mlapo_copies(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const Deployment& dep,
                                 const StageLayout& lay, std::string& rule) {
  const auto* mlapo = engine.sfa_mlapo_rule();
  if (!mlapo || !dep.mlapo.value_or(mlapo->default_on) || !has_sparse_indexer(m) || dsa_cp_on(m, engine, dep, lay)) return 0;
  const model::SchemeFormats formats(scheme);
  // sfa_v1.py process_weights_after_loading: "mlapo only supports W8A8 quantization in SFA scenario" (the fused
  // q_a / kv_a projection's method must be AscendW8A8LinearMethod, ModelSlim's static W8A8).
  for (const auto& g : m.weights)
    if (g.part == model::Part::text && ends_with(g.module, "self_attn.q_a_proj") && formats(g.module, g.expert) != model::WeightFormat::modelslim_w8a8) return 0;
  // _process_weights_for_fused_mlapo: wd_qkv = cat(kv_a, q_a) in int8 with deq_scale_qkv (float32 for a bf16 model)
  // and quant_bias_qkv (int32) per row; wu_q = the rank's q_b_proj (q_proj) weight, int8, with qb_deq_scl and qb_qt_bias
  // per row (trans_rope_weight makes each a new contiguous tensor).
  constexpr double k_row_vectors_bytes = 4.0 + 4.0;
  double bytes = 0;
  for (const auto& g : m.weights) {
    const bool drafter = g.part == model::Part::mtp && dep.speculative.mtp() && lay.pp == 1;  // the MTP layers sit on the last stage
    if (g.part != model::Part::text && !drafter) continue;
    const double stage = g.part == model::Part::text ? static_cast<double>(lay.first_layers) / static_cast<double>(lay.n_layers) : 1.0;
    const double rows = static_cast<double>(g.rows) * static_cast<double>(g.count);
    if (ends_with(g.module, "self_attn.q_a_proj") || ends_with(g.module, "self_attn.kv_a_proj_with_mqa"))
      bytes += rows * (static_cast<double>(g.cols) + k_row_vectors_bytes) * stage;
    else if (ends_with(g.module, "self_attn.q_b_proj"))
      bytes += rows / static_cast<double>(lay.tp) * (static_cast<double>(g.cols) + k_row_vectors_bytes) * stage;
  }
  if (dep.explain && bytes > 0)
    rule += format(" + MLAPO weights %.3f GiB (fused q_a / kv_a and this rank's q_b_proj in int8, kept beside the originals: %s)", bytes_to_gib(bytes),
                   mlapo->rule.source.c_str());
  return bytes;
}

double estimate_expert_scale_copies(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const std::string& device_family,
                                    const Deployment& dep, const StageLayout& lay, std::string& rule) {
  double total = 0;
  std::optional<model::SchemeFormats> formats;  // built only where a rule applies (every fit of a plan passes here)
  for (const auto& copy : engine.moe_dynamic_scale_copies) {
    if (!engine.rule_applies(copy.rule) || std::find(copy.families.begin(), copy.families.end(), device_family) == copy.families.end()) continue;
    if (!formats) formats.emplace(scheme);
    double bytes = 0;
    for (const auto& g : m.weights) {
      const bool drafter = g.part == model::Part::mtp && dep.speculative.mtp() && lay.pp == 1;  // the MTP layers sit on the last stage
      if (!g.expert || !g.linear || (g.part != model::Part::text && !drafter)) continue;
      if ((*formats)(g.module, g.expert) != model::WeightFormat::modelslim_w8a8_dynamic) continue;
      // vLLM stacks gate and up into w13 (2 x moe_intermediate output channels, split by TP when the experts are) and
      // keeps down as w2, whose hidden output channels a TP-sharded expert keeps whole ([experts, hidden, 1] scales):
      // with expert parallel this rank holds experts / (DP x TP) whole experts, without it every expert.
      const bool w2 = ends_with(g.module, "down_proj");
      const double per_channel = w2 ? copy.w2_bytes_per_channel : copy.w13_bytes_per_channel;
      const double share = w2 && !dep.enable_expert_parallel ? 1.0 : weight_rank_share(g, lay.tp) * lay.expert_share();
      const double stage = g.part == model::Part::text ? static_cast<double>(lay.first_layers) / static_cast<double>(lay.n_layers) : 1.0;
      const double channels = static_cast<double>(g.rows) * static_cast<double>(g.count);
      bytes += channels * per_channel * share * stage;
    }
    total += bytes;
    if (dep.explain && bytes > 0)
      rule += format(" + expert scale copies %s %.3f GiB (%.0f B per w13 and %.0f B per w2 channel: %s)", copy.tensors.c_str(), bytes_to_gib(bytes),
                     copy.w13_bytes_per_channel, copy.w2_bytes_per_channel, copy.rule.source.c_str());
  }
  return total;
}

double estimate_gate_fp32_extra(const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep, const StageLayout& lay, std::string& rule) {
  const auto& fp32 = engine.moe_gate_fp32;
  if (!engine.applies(fp32)) return 0;
  // vLLM's is_deepseek_mla: the models whose attention is MLA (kv_lora_rank set).
  const bool mla = std::any_of(m.layers.begin(), m.layers.end(), [](const model::LayerSpec& l) { return l.kind == model::LayerKind::mla_attention; });
  const double widen = 4.0 - static_cast<double>(model::dtype_bits(m.dtype) / 8);
  if (!mla || m.num_experts == 0 || widen <= 0) return 0;
  double bytes = 0;
  for (const auto& g : m.weights) {
    const bool drafter = g.part == model::Part::mtp && dep.speculative.mtp() && lay.pp == 1;  // the MTP layers sit on the last stage
    if (g.part != model::Part::text && !drafter) continue;
    if (g.stored_bytes > 0 || !(ends_with(g.module, "mlp.gate") || ends_with(g.module, "mlp.gate.e_score_correction_bias"))) continue;
    const double stage = g.part == model::Part::text ? static_cast<double>(lay.first_layers) / static_cast<double>(lay.n_layers) : 1.0;
    bytes += static_cast<double>(g.params()) * widen * stage;
  }
  if (dep.explain && bytes > 0) rule += format(" + the MoE router in fp32 %.3f GiB (%s)", bytes_to_gib(bytes), fp32->source.c_str());
  return bytes;
}

// CANN HCCL_BUFFSIZE: "Each communicator occupies 2 x HCCL_BUFFSIZE memory, which is used for receiving and
// sending memory"; default 200 (MB, i.e. MiB: vllm-ascend sizes it in units of 1024 x 1024)
// (https://www.hiascend.com/document/detail/en/canncommercial/800/apiref/envvar/envref_07_0080.html). A
// communicator created with an hccl_buffer_size option takes that size instead (HcclCommConfig has priority).
constexpr double k_hccl_buffsize_default_bytes = 200.0 * 1024 * 1024;

Term estimate_ep_communicators(const ModelSpec& m, const engine::EngineProfile& engine, const StageLayout& lay, int64_t expert_parallel_size, const Deployment& dep) {
  // Issue 15: versions that build every MoE token dispatcher with expert parallel off open the same communicators on
  // the MoE group (DP x TP ranks; one rank: not counted, no evidence that a one-rank group takes buffers).
  const auto& without_ep = engine.moe_hccl_communicators_without_ep;
  const bool ep_off_opens = engine.applies(without_ep) && m.num_experts > 0 && lay.tp * lay.dp > 1;
  if ((expert_parallel_size <= 1 && !ep_off_opens) || engine.ep_hccl_communicators.empty()) return {"EP communicators", 0, 0, {}, {}};
  const double buffsize = dep.hccl_buffsize_bytes.value_or(k_hccl_buffsize_default_bytes);
  // Issue 15 (evid23): before vLLM-Ascend PR #3073 no group had its own hccl_buffer_size, so each takes HCCL_BUFFSIZE,
  // the TP group too; the fitted multi-rank non-torch share holds the TP group at the default, so only its excess
  // 2 x (HCCL_BUFFSIZE - 200 MiB) is added here.
  const bool every_group = engine.applies(engine.hccl_every_group_at_buffsize);
  double bytes = 0;
  std::string groups;
  for (const auto& c : engine.ep_hccl_communicators) {
    if (c.needs_dp && lay.dp <= 1) continue;
    const double buffer = c.buffer_mib > 0 && !every_group ? c.buffer_mib * 1024 * 1024 : buffsize;
    bytes += 2.0 * buffer;
    if (dep.explain) groups += format("%s%s %.0f MiB", groups.empty() ? "" : ", ", c.group.c_str(), buffer / (1024 * 1024));
  }
  if (every_group && lay.tp > 1) {
    const double tp_excess = 2.0 * (buffsize - k_hccl_buffsize_default_bytes);
    bytes += tp_excess;
    if (dep.explain) groups += format(", tp %.0f MiB (2 x %.0f MiB beyond the default the non-torch share holds)", buffsize / (1024 * 1024), tp_excess / 2 / (1024 * 1024));
  }
  if (!dep.explain) return {"EP communicators", bytes, 0, {}, {}};
  return {"EP communicators", bytes, 0,
          format("2 x the HCCL buffer of each communicator the MoE dispatchers open at model construction (%s; HCCL_BUFFSIZE %.0f MiB%s): %s%s%s", groups.c_str(),
                 buffsize / (1024 * 1024), dep.hccl_buffsize_bytes ? "" : ", the CANN default", engine.ep_hccl_source.c_str(),
                 expert_parallel_size > 1 ? "" : ("; expert parallel off, opened all the same: " + without_ep->source).c_str(),
                 every_group ? ("; this build gives every group HCCL_BUFFSIZE: " + engine.hccl_every_group_at_buffsize->source).c_str() : ""),
          {{"hccl_buffsize_bytes", buffsize}, {"expert_parallel_size", static_cast<double>(expert_parallel_size)}}};
}

// Issue 15 (evid26): vLLM-Ascend's dynamic EPLB, read at f8315f5 (vLLM 0.16) and c69291e (0.17); the warm-up is the same
// in every tag from v0.11.0rc1 to main. NPUModelRunner.profile_run calls eplb_warmup() first (worker/model_runner_v1.py),
// which builds VllmEplbAdaptor and runs EplbUpdator.warm_up_eplb (eplb/eplb_updator.py): a one-element dist.P2POp isend /
// irecv to every other rank through dist.batch_isend_irecv on the default process group, whose HCCL communicator nothing
// opened before, so it takes 2 x HCCL_BUFFSIZE (the group is created by init_process_group without an hccl_buffer_size
// option). VllmEplbAdaptor.init_buffer_tensor (eplb/adaptor/vllm_adaptor.py) allocates num_local_experts buffers, each a
// torch.empty_like of every expert tensor of the first MoE layer's first local expert (W8A8: w13, w2, the fp32 w13 scale
// and the w2 scale). Both happen after the weights are measured and before determine_available_memory's peak, so they
// come off the KV budget.
Term estimate_eplb_warmup(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, int64_t expert_parallel_size,
                          const Deployment& dep) {
  if (!dep.dynamic_eplb || expert_parallel_size <= 1 || m.num_experts <= 0 || engine.ep_hccl_communicators.empty()) return {"EPLB warm-up", 0, 0, {}, {}};
  const double buffsize = dep.hccl_buffsize_bytes.value_or(k_hccl_buffsize_default_bytes);
  const model::SchemeFormats formats(scheme);
  double expert_bytes = 0;  // one expert of one MoE layer, as stored
  for (const auto& g : m.weights)
    if (g.expert && g.part == model::Part::text && g.count > 0) expert_bytes += group_bytes(m, scheme, formats, g) / static_cast<double>(g.count);
  const double local_experts = static_cast<double>(m.num_experts + dep.num_redundant_experts) / static_cast<double>(expert_parallel_size);
  const double bytes = 2.0 * buffsize + local_experts * expert_bytes;
  if (!dep.explain) return {"EPLB warm-up", bytes, 0, {}, {}};
  return {"EPLB warm-up", bytes, 0,
          format("dynamic EPLB warm-up in the profile run (vLLM-Ascend eplb_updator.py warm_up_eplb, eplb/adaptor/vllm_adaptor.py at f8315f5): "
                 "2 x HCCL_BUFFSIZE %.0f MiB for the default group's communicator + %.0f local expert slots x %.1f MiB (one expert of one layer)",
                 buffsize / (1024 * 1024), local_experts, expert_bytes / (1024 * 1024)),
          {{"hccl_buffsize_bytes", buffsize}, {"local_experts", local_experts}, {"expert_bytes", expert_bytes}}};
}

// The largest MC2 token capacity vLLM-Ascend's defaults give (ascend_forward_context.py set_mc2_tokens_capacity: the
// largest graph capture size, at most 512 by default, or min(max_num_reqs x decode query length, 512) without graphs).
constexpr int64_t k_mc2_capacity_default_max_tokens = 512;

Term estimate_moe_allgather(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const std::string& device_family,
                            const Deployment& dep, const StageLayout& lay, int64_t expert_parallel_size, int64_t batched_tokens) {
  const auto& fams = engine.moe_allgather_families;
  // Issue 15 (a2ag): select_moe_comm_method takes ALLGATHER whenever expert parallel is off (EP group of 1), at any
  // token count; with EP on, only above the MC2 capacity.
  const bool ep = expert_parallel_size > 1;
  if (m.num_experts <= 0 || (ep && batched_tokens <= k_mc2_capacity_default_max_tokens) || std::find(fams.begin(), fams.end(), device_family) == fams.end())
    return {"MoE all-gather rows", 0, 0, {}, {}};
  const double b = static_cast<double>(model::dtype_bits(m.dtype) / 8);
  const bool int8_rows = int8_dispatched_experts(scheme);
  const double inter_bytes = int8_rows ? 1.0 : b;
  const double n = static_cast<double>(lay.dp) * static_cast<double>(batched_tokens);
  const double rows = n * static_cast<double>(m.num_experts_per_tok);
  const double h = static_cast<double>(m.hidden_size);
  // With EP every rank holds whole experts; without it vLLM's FusedMoEParallelConfig shards every expert's
  // intermediate over TP x DP (the MoE layer's flattened TP group), so each permuted row is moe_intermediate / (TP x DP) wide.
  const int64_t inter_ranks = ep ? 1 : std::max<int64_t>(1, lay.expert_ranks());
  const double inter = static_cast<double>(ceil_div(static_cast<uint64_t>(m.moe_intermediate_size), static_cast<uint64_t>(inter_ranks)));
  const double bytes = n * h * b + rows * (inter * inter_bytes + h * b);
  if (!dep.explain) return {"MoE all-gather rows", bytes, 0, {}, {}};
  return {"MoE all-gather rows", bytes, 0,
          format("profile run on the %s MoE path: N = DP %lld x %lld batched tokens gathered (N x hidden %lld x %.0f B) + R = N x top_k %lld rows "
                 "at the down projection (R x moe_intermediate %lld%s x %.0f B in + R x hidden x %.0f B out) (%s)",
                 ep ? "DP all-gather" : "all-gather (expert parallel off)", static_cast<long long>(lay.dp), static_cast<long long>(batched_tokens),
                 static_cast<long long>(m.hidden_size), b, static_cast<long long>(m.num_experts_per_tok), static_cast<long long>(m.moe_intermediate_size),
                 ep ? "" : format(" / %lld TP x DP ranks", static_cast<long long>(inter_ranks)).c_str(), inter_bytes, b, engine.moe_allgather_source.c_str()),
          {{"gathered_tokens", n}, {"rows", rows}, {"hidden_size", h}, {"moe_intermediate_size", static_cast<double>(m.moe_intermediate_size)}, {"moe_intermediate_per_rank", inter}}};
}

Term estimate_moe_all2all_rows(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const std::string& device_family,
                               const Deployment& dep, const StageLayout& lay, int64_t expert_parallel_size, int64_t batched_tokens) {
  const Term none{"MoE all-to-all rows", 0, 0, {}, {}};
  if (m.num_experts <= 0 || expert_parallel_size <= 1 || batched_tokens <= 0 || engine.moe_all2all_rows.empty()) return none;
  const bool int8_experts = int8_dispatched_experts(scheme);
  const char* mode = dep.mode == ExecutionMode::eager ? "eager" : "graph";
  for (const auto& r : engine.moe_all2all_rows) {
    if (!r.rule.covers(engine.rule_version()) || std::find(r.families.begin(), r.families.end(), device_family) == r.families.end()) continue;
    if ((r.int8_experts_only && !int8_experts) || batched_tokens <= r.above_tokens) continue;
    const bool split = std::find(r.tokens_split_by_tp_in.begin(), r.tokens_split_by_tp_in.end(), mode) != r.tokens_split_by_tp_in.end();
    const int64_t tokens = split ? static_cast<int64_t>(ceil_div(static_cast<uint64_t>(batched_tokens), static_cast<uint64_t>(std::max<int64_t>(1, lay.tp)))) : batched_tokens;
    const double rows = static_cast<double>(tokens) * static_cast<double>(m.num_experts_per_tok);
    const double b = static_cast<double>(model::dtype_bits(m.dtype) / 8);
    const double int8_rows = int8_experts ? r.int8_rows : 0.0;
    const double model_rows = r.model_dtype_rows + (int8_experts ? 0.0 : r.unquantized_input_rows);
    const double bytes = rows * static_cast<double>(m.hidden_size) * (model_rows * b + int8_rows);
    if (!dep.explain) return {"MoE all-to-all rows", bytes, 0, {}, {}};
    return {"MoE all-to-all rows", bytes, 0,
            format("R = %lld tokens%s x top_k %lld rows, %.0f x R x hidden %lld x %.0f B + %.0f x R x hidden x 1 B (int8) at the expert combine (%s)",
                   static_cast<long long>(tokens), split ? format(" (%lld / TP %lld)", static_cast<long long>(batched_tokens), static_cast<long long>(lay.tp)).c_str() : "",
                   static_cast<long long>(m.num_experts_per_tok), model_rows, static_cast<long long>(m.hidden_size), b, int8_rows, r.rule.source.c_str()),
            {{"rows", rows}, {"hidden_size", static_cast<double>(m.hidden_size)}, {"model_dtype_rows", model_rows}, {"int8_rows", int8_rows}}};
  }
  return none;
}

namespace {

// The undecided text for a driver not stated, made once per (engine's two versions, EP ranks) and thread, and shared
// by every row that asks (issue 19: a plan asks on each of its 16+ rank A2 EP rows, none with a driver stated). The
// key is the versions' text, not the profile's address, so a profile at a freed one's address never reads its text.
SharedText mc2_driver_not_stated(const engine::EngineProfile& engine, long long ranks) {
  const std::string& failing = engine.mc2_transport_driver_failing.text;
  const std::string& fixed = engine.mc2_transport_driver_fixed.text;
  struct Made {
    std::string failing, fixed;
    long long ranks;
    SharedText text;
  };
  thread_local std::vector<Made> made;  // a few entries: the EP sizes of 2 - 16 nodes on one or two profiles
  for (const Made& k : made)
    if (k.ranks == ranks && k.failing == failing && k.fixed == fixed) return k.text;
  if (made.size() >= 64) made.clear();
  made.push_back({failing, fixed, ranks,
                  format("the NPU driver version, not stated: expert parallel over %lld A2 ranks dispatches the profile run's first pass through MC2 "
                         "(aclnnMoeDistributeDispatch), which opens RDMA queue pairs to the other node's ranks; on NPU driver %s it failed with 'Failed to "
                         "allocate resource[qp] ... Reason: Memory resources are exhausted' with memory free, on %s it started "
                         "(vllm-ascend #9005; engines.json mc2_transport_source); give --npu-driver-version (npu-smi info) to decide",
                         ranks, failing.c_str(), fixed.c_str())});
  return made.back().text;
}

}  // namespace

// select_moe_comm_method takes MC2 on A2 at world_size_across_dp / PP >= 16 and tokens within the capacity, from 0.18
// only with at most 24 experts per device (0.13 - 0.17 had no expert bound; the bound is applied to all: a miss above it).
// The engine's two driver versions are parsed by the catalogue loader; only a stated driver is parsed here.
Mc2TransportVerdict mc2_transport(const ModelSpec& m, const engine::EngineProfile& engine, const std::string& device_family, int64_t expert_parallel_size,
                                  const Deployment& dep) {
  const auto& fams = engine.moe_allgather_families;
  if (engine.mc2_transport_source.empty() || expert_parallel_size < 16 || m.num_experts / expert_parallel_size > 24 ||
      std::find(fams.begin(), fams.end(), device_family) == fams.end())
    return {};
  const std::string& npu_driver_version = dep.npu_driver_version;
  const engine::NpuDriverVersion& lo = engine.mc2_transport_driver_failing;
  const engine::NpuDriverVersion& hi = engine.mc2_transport_driver_fixed;
  const auto ranks = static_cast<long long>(expert_parallel_size);
  if (npu_driver_version.empty()) return {Mc2Transport::undecided, mc2_driver_not_stated(engine, ranks)};
  const auto given = engine::parse_npu_driver_version(npu_driver_version, "npu_driver_version");
  if (!given) return {Mc2Transport::undecided, mc2_driver_not_stated(engine, ranks)};
  if (compare_npu_driver_versions(*given, hi) >= 0) {
    if (!dep.explain) return {Mc2Transport::starts, {}};
    return {Mc2Transport::starts, format("NPU driver %s, at or above %s: the MC2 dispatch over %lld A2 ranks is taken to allocate its RDMA queue pairs (%s)",
                                         npu_driver_version.c_str(), hi.text.c_str(), ranks, engine.mc2_transport_source.c_str())};
  }
  if (compare_npu_driver_versions(*given, lo) <= 0)
    return {Mc2Transport::fails,
            format("NPU function error: call aclnnMoeDistributeDispatch failed, error code is 561000 ... EI0007: Failed to allocate resource[qp] ... "
                   "Reason: Memory resources are exhausted. (the profile run's MC2 dispatch over %lld A2 ranks on NPU driver %s, at or below %s where it was "
                   "reported failing; fix: upgrade the NPU driver and firmware to %s or later, vllm-ascend #9005)",
                   ranks, npu_driver_version.c_str(), lo.text.c_str(), hi.text.c_str())};
  return {Mc2Transport::undecided,
          format("the NPU driver version: %s lies between %s, on which the MC2 dispatch over %lld A2 ranks failed with 'Failed to allocate resource[qp] ... "
                 "Reason: Memory resources are exhausted', and %s, on which it started (vllm-ascend #9005; engines.json mc2_transport_source); no source "
                 "reports a version between them",
                 npu_driver_version.c_str(), lo.text.c_str(), ranks, hi.text.c_str())};
}

int64_t whole_prompt_batched_tokens(const ModelSpec& m, const engine::EngineProfile& engine, int64_t batched_tokens, int64_t max_model_len) {
  if (!engine.applies(engine.whole_prompt_prefill)) return batched_tokens;
  // platform.py skips MLA models (model_config.use_mla) and multimodal ones (is_multimodal_model).
  if (has_mla_cache(m) || has_vision_tower(m)) return batched_tokens;
  return std::max(batched_tokens, max_model_len);
}

namespace {

std::string sizes_text(const std::vector<int64_t>& sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

bool has_full_decode(CudagraphMode mode) {
  return mode == CudagraphMode::full || mode == CudagraphMode::full_decode_only || mode == CudagraphMode::full_and_piecewise;
}

// Issue 19 (hard34): the most capture sizes preflight lists. vLLM's _set_cudagraph_sizes lists 1, 2, 4, 8 - 248 by 8 and
// 256 - ceiling by 16, one CUDA graph each; --max-num-batched-tokens 2^40 with max_cudagraph_capture_size 2^40 asked for
// 2^36 sizes (a 512 GiB reserve: std::bad_alloc, exit 134). 2^20 sizes is a ceiling of 16.7 M tokens.
constexpr int64_t k_max_capture_grid_sizes = int64_t{1} << 20;

// How many sizes that grid holds for `ceiling` (>= 1).
int64_t capture_grid_size_count(int64_t ceiling) {
  int64_t n = (ceiling >= 1) + (ceiling >= 2) + (ceiling >= 4);
  if (ceiling >= 8) n += std::min<int64_t>(ceiling, 255) / 8;
  if (ceiling >= 256) n += (ceiling - 256) / 16 + 1;
  return n;
}

// a x b x c, or INT64_MAX where the product passes it (the operands are positive): vLLM's Python integers do not wrap, so
// min(max_num_seqs x decode query length x 2, 512) is 512 for any huge max_num_seqs (hard34: 2^62 sequences wrapped to
// a ceiling of -2^63 and was refused as "max_cudagraph_capture_size -9223372036854775808").
int64_t saturating_product(int64_t a, int64_t b, int64_t c) {
  int64_t ab = 0, abc = 0;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) return INT64_MAX;
  return abc;
}

}  // namespace

int64_t capture_ceiling_from_seqs(int64_t max_num_seqs, int64_t decode_query_len, int64_t default_ceiling) {
  return std::min(saturating_product(std::max<int64_t>(1, max_num_seqs), std::max<int64_t>(1, decode_query_len), 2), default_ceiling);
}

Status check_capture_size_values(const std::vector<int64_t>& sizes) {
  for (const int64_t s : sizes)
    if (s < 1)
      return make_error(ErrorKind::invalid_argument,
                        format("cudagraph_capture_sizes: %lld is not a positive token count (vLLM's _set_cudagraph_sizes does not check it; no graph of "
                               "%lld tokens can be captured)", static_cast<long long>(s), static_cast<long long>(s)));
  return Ok{};
}

Status check_max_capture_size(int64_t max_capture_size, std::optional<int64_t> largest_size) {
  if (max_capture_size < 1)
    return make_error(ErrorKind::invalid_argument,
                      format("max_cudagraph_capture_size %lld: AssertionError: Maximum cudagraph size should be greater than or equal to 1 when using cuda graph. "
                             "(vLLM _set_cudagraph_sizes)", static_cast<long long>(max_capture_size)));
  if (largest_size && *largest_size != max_capture_size)
    return make_error(ErrorKind::invalid_argument,
                      format("ValueError: customized max_cudagraph_capture_size(=%lld) should be consistent with the max value of cudagraph_capture_sizes(=%lld)",
                             static_cast<long long>(max_capture_size), static_cast<long long>(*largest_size)));
  return Ok{};
}

Expected<CaptureSizes> cudagraph_capture_sizes(const CaptureInputs& in) {
  CaptureSizes c;
  if (in.mode == CudagraphMode::none) return c;
  const int64_t q = std::max<int64_t>(1, in.decode_query_len);
  const int64_t seqs = std::max<int64_t>(1, in.max_num_seqs), tokens = std::max<int64_t>(1, in.max_num_batched_tokens);
  // vllm/config/vllm.py _set_cudagraph_sizes: the ceiling, then at most max_num_batched_tokens.
  int64_t ceiling = in.max_capture_size ? *in.max_capture_size : capture_ceiling_from_seqs(seqs, q, in.default_ceiling);
  ceiling = std::min(tokens, ceiling);
  PF_TRY(ceiling_ok, check_max_capture_size(ceiling, std::nullopt));
  (void)ceiling_ok;
  if (in.capture_sizes.empty() && capture_grid_size_count(ceiling) > k_max_capture_grid_sizes)
    return make_error(ErrorKind::invalid_argument,
                      format("max_cudagraph_capture_size %lld (the smaller of the maximum and max_num_batched_tokens %lld): vLLM's _set_cudagraph_sizes lists "
                             "%lld capture sizes (1, 2, 4, 8 - 248 by 8, 256 - %lld by 16) and captures a CUDA graph of each; preflight sizes at most %lld",
                             static_cast<long long>(ceiling), static_cast<long long>(tokens), static_cast<long long>(capture_grid_size_count(ceiling)),
                             static_cast<long long>(ceiling), static_cast<long long>(k_max_capture_grid_sizes)));
  std::vector<int64_t> sizes;
  if (!in.capture_sizes.empty()) {
    PF_TRY(sizes_ok, check_capture_size_values(in.capture_sizes));
    (void)sizes_ok;
    std::vector<int64_t> given = in.capture_sizes;
    std::sort(given.begin(), given.end());
    given.erase(std::unique(given.begin(), given.end()), given.end());
    for (const int64_t s : given)
      if (s <= tokens) sizes.push_back(s);
    if (sizes.size() < given.size())
      c.notes.push_back(format("cudagraph_capture_sizes specified in compilation_config %s is overridden by config %s", sizes_text(in.capture_sizes).c_str(),
                               sizes_text(sizes).c_str()));
  } else {
    // Issue 19 (round 11): room for every size at once (a plan computes these lists once per fit, 1.5 million times).
    sizes.reserve(static_cast<size_t>(36 + std::max<int64_t>(0, (ceiling - 256) / 16)));
    for (const int64_t s : {int64_t{1}, int64_t{2}, int64_t{4}})
      if (s <= ceiling) sizes.push_back(s);
    for (int64_t s = 8; s <= ceiling && s < 256; s += 8) sizes.push_back(s);
    for (int64_t s = 256; s <= ceiling; s += 16) sizes.push_back(s);
    // Ascending: ceiling is at most max_num_batched_tokens, so that size, when within it, is the ceiling and comes last.
    if (tokens <= ceiling && (sizes.empty() || sizes.back() != tokens)) sizes.push_back(tokens);
  }
  int64_t largest = sizes.empty() ? 0 : sizes.back();
  if (in.max_capture_size && !in.capture_sizes.empty()) {
    PF_TRY(max_ok, check_max_capture_size(*in.max_capture_size, largest));
    (void)max_ok;
  } else if (in.max_capture_size && *in.max_capture_size != largest) {
    c.notes.push_back(format("Truncating max_cudagraph_capture_size to %lld", static_cast<long long>(largest)));
  }
  // compilation.py adjust_cudagraph_sizes_for_spec_decode, called by the model runner only when decode graphs are FULL:
  // each size rounded up to a multiple of the decode query length, those above the largest dropped.
  if (q > 1 && has_full_decode(in.mode) && !sizes.empty()) {
    std::vector<int64_t> rounded;
    for (const int64_t s : sizes) {
      const int64_t r = (s + q - 1) / q * q;
      if (r <= largest && (rounded.empty() || rounded.back() != r)) rounded.push_back(r);
    }
    if (rounded.empty() && q <= largest) rounded.push_back(q);
    if (rounded.empty())
      return make_error(ErrorKind::invalid_argument,
                        format("ValueError: No valid cudagraph sizes after rounding to multiple of %lld (num_speculative_tokens + 1 or tp if sequence parallelism "
                               "is enabled) please adjust num_speculative_tokens (%lld) or max_cudagraph_capture_size (%lld) or cudagraph_capture_sizes (%s)",
                               static_cast<long long>(q), static_cast<long long>(q - 1), static_cast<long long>(largest), sizes_text(sizes).c_str()));
    sizes = std::move(rounded);
  }
  const bool piecewise = in.mode == CudagraphMode::piecewise || in.mode == CudagraphMode::full_and_piecewise;
  if (in.mode == CudagraphMode::full) c.full = sizes;
  if (in.mode == CudagraphMode::full_and_piecewise || in.mode == CudagraphMode::full_decode_only) {
    c.full.reserve(sizes.size());
    for (const int64_t s : sizes)
      if (s <= seqs * q) c.full.push_back(s);
  }
  if (piecewise) c.piecewise = std::move(sizes);  // last: the full list above reads `sizes`
  return c;
}

CaptureSizes cudagraph_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int64_t decode_query_len) {
  auto c = cudagraph_capture_sizes(CaptureInputs{.max_num_seqs = max_num_seqs, .max_num_batched_tokens = max_num_batched_tokens, .decode_query_len = decode_query_len});
  return c ? std::move(*c) : CaptureSizes{};
}

CudagraphMode resolve_cudagraph_mode(const engine::EngineProfile& engine, const Deployment& dep, const std::string& device_id, std::string* note) {
  if (dep.mode == ExecutionMode::eager) return CudagraphMode::none;
  const auto& g = dep.graph_capture;
  const bool levels = engine.applies(engine.optimization_levels);
  CudagraphMode mode = CudagraphMode::full_and_piecewise;
  if (g.mode) mode = *g.mode;
  else if (levels && g.optimization_level)  // vllm/config/vllm.py OPTIMIZATION_LEVEL_00 .. 03
    mode = *g.optimization_level == 0 ? CudagraphMode::none : *g.optimization_level == 1 ? CudagraphMode::piecewise : CudagraphMode::full_and_piecewise;
  const bool speculative = !dep.speculative.method.empty() && dep.speculative.num_speculative_tokens > 0;
  const auto& fi = engine.flashinfer_spec_decode_piecewise;
  const auto& trtllm = engine.flashinfer_uniform_batch_devices;
  if (mode == CudagraphMode::full_and_piecewise && speculative && g.attention_backend == "FLASHINFER" && engine.applies(fi) &&
      std::find(trtllm.begin(), trtllm.end(), device_id) == trtllm.end()) {
    mode = CudagraphMode::piecewise;
    if (note)
      *note = "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend FlashInferBackend (support: "
              "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE";
  }
  return mode;
}

Expected<Term> estimate_graph(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_id, const Deployment& dep,
                              bool graph_in_budget, int64_t max_num_seqs, int64_t max_num_batched_tokens, std::string* fallback_note) {
  std::string fallback;
  const CudagraphMode mode = resolve_cudagraph_mode(engine, dep, device_id, &fallback);
  if (fallback_note) *fallback_note = fallback;
  const bool eager = mode == CudagraphMode::none;
  const bool mechanism = !eager && graph_in_budget && oh.graph_per_capture_bytes > 0 && max_num_seqs > 0 && max_num_batched_tokens > 0;
  if (!mechanism) {
    const double bytes = eager ? 0.0 : oh.graph_bytes;
    if (!dep.explain) return Term{"graph capture", bytes, bytes * oh.band_fraction, {}, {}};
    return Term{"graph capture", bytes, bytes * oh.band_fraction,
                eager ? (dep.mode == ExecutionMode::eager ? "--enforce-eager: no graphs" : "cudagraph_mode NONE: no graphs")
                      : (graph_in_budget ? "estimated before KV sizing and subtracted from the budget (the platform's prior)"
                                         : "captured after KV allocation, outside the budget (needs the 1 - util headroom)"),
                {{"graph_bytes", bytes}, {"in_budget", graph_in_budget ? 1.0 : 0.0}}};
  }
  const int64_t q = dep.speculative.method.empty() ? 1 : 1 + std::max<int64_t>(0, dep.speculative.num_speculative_tokens);
  const auto& g = dep.graph_capture;
  const int64_t ceiling = engine.cudagraph_default_ceiling(device_id);
  const CaptureInputs capture{.max_num_seqs = max_num_seqs,
                               .max_num_batched_tokens = max_num_batched_tokens,
                               .decode_query_len = q,
                               .default_ceiling = ceiling,
                               .capture_sizes = g.capture_sizes,
                               .max_capture_size = g.max_capture_size,
                               .mode = mode};
  // profile_cudagraph_memory: max over modes of the first capture + sum over modes of (graphs - 1) x the second capture.
  const auto term_bytes = [&](int64_t pw, int64_t full) {
    const int64_t further = std::max<int64_t>(0, pw - 1) + std::max<int64_t>(0, full - 1);
    return pw + full == 0 ? 0.0 : oh.graph_first_capture_bytes + static_cast<double>(further) * oh.graph_per_capture_bytes;
  };
  if (!dep.explain) {
    // Issue 19 (round 13): without the text only the two graph counts matter, and a plan's tens of thousands of fits
    // share a handful of capture inputs: the counts are kept per thread by their inputs (a few entries).
    struct Counts {
      CaptureInputs in;
      int64_t piecewise = 0, full = 0;
    };
    thread_local std::vector<Counts> known;
    auto it = std::find_if(known.begin(), known.end(), [&](const Counts& c) { return c.in == capture; });
    if (it == known.end()) {
      PF_TRY(sizes, cudagraph_capture_sizes(capture));
      if (known.size() >= 64) known.clear();  // a bound on the search, never reached by the shipped catalogue's plans
      known.push_back({capture, static_cast<int64_t>(sizes.piecewise.size()), static_cast<int64_t>(sizes.full.size())});
      it = known.end() - 1;
    }
    const double bytes = term_bytes(it->piecewise, it->full);
    return Term{"graph capture", bytes, bytes * oh.band_fraction, {}, {}};
  }
  PF_TRY(sizes, cudagraph_capture_sizes(capture));
  const auto pw = static_cast<int64_t>(sizes.piecewise.size()), full = static_cast<int64_t>(sizes.full.size());
  const double bytes = term_bytes(pw, full);
  std::string settings;
  if (!g.capture_sizes.empty()) settings = "cudagraph_capture_sizes " + sizes_text(g.capture_sizes);
  else if (g.max_capture_size) settings = format("max_cudagraph_capture_size %lld", static_cast<long long>(*g.max_capture_size));
  else
    settings = format("capture sizes up to min(max_num_seqs %lld x decode query length %lld x 2, %lld)", static_cast<long long>(max_num_seqs), static_cast<long long>(q),
                      static_cast<long long>(ceiling));
  std::string notes = fallback;
  for (const auto& n : sizes.notes) notes += (notes.empty() ? "" : "; ") + n;
  return Term{"graph capture", bytes, bytes * oh.band_fraction,
              format("estimated before KV sizing and subtracted from the budget: first capture %.0f MiB + (PIECEWISE %lld - 1 + FULL %lld - 1) graphs x "
                     "%.2f MiB (cudagraph_mode %s; %s, at most max_num_batched_tokens %lld%s%s; %s)",
                     oh.graph_first_capture_bytes / (1024.0 * 1024), static_cast<long long>(pw), static_cast<long long>(full), oh.graph_per_capture_bytes / (1024.0 * 1024),
                     cudagraph_mode_name(mode), settings.c_str(), static_cast<long long>(max_num_batched_tokens), notes.empty() ? "" : "; vLLM: ", notes.c_str(),
                     oh.graph_capture_source.c_str()),
              {{"graph_bytes", bytes},
               {"in_budget", 1.0},
               {"piecewise_graphs", static_cast<double>(pw)},
               {"full_graphs", static_cast<double>(full)},
               {"largest_capture_tokens", static_cast<double>(sizes.piecewise.empty() ? (sizes.full.empty() ? 0 : sizes.full.back()) : sizes.piecewise.back())},
               {"largest_full_tokens", static_cast<double>(sizes.full.empty() ? 0 : sizes.full.back())}}};
}


}  // namespace preflight::estimate::terms
