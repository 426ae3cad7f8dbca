// estimate/fit_terms: the terms estimate_fit adds up, one function per memory kind (the way llama.cpp
// keeps one class per memory kind and gguf-parser-go a typed footprint per device): weights per
// pipeline stage, each phase of the profile run and their peak, non-torch and graph memory, the KV
// budget, and the KV geometry per layer kind. Internal to estimate/ (fit.cpp composes them); every
// function is pure, and the integer products of model values are overflow-checked.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/shared_text.hpp"
#include "engine/allreduce_workspace.hpp"
#include "engine/moe_backend_workspace.hpp"
#include "estimate/fit.hpp"

namespace preflight::estimate::terms {

// a x b and a + b, or invalid_argument naming `what` (a model field and where it is used).
Expected<int64_t> checked_product(int64_t a, int64_t b, const std::string& what);
Expected<int64_t> checked_sum(int64_t a, int64_t b, const std::string& what);
// The same, naming `what` only when it overflows (the name is built for the error alone, so the
// common case formats nothing: these run for every layer of every candidate a plan tries).
inline Expected<int64_t> checked_product(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return checked_product(a, b, std::string(what));
}
inline Expected<int64_t> checked_sum(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return checked_sum(a, b, std::string(what));
}
// A model field at a layer, "layer 3: head_dim", named lazily.
struct AtLayer {
  const char* field;
  size_t layer;
  std::string str() const;
};
inline Expected<int64_t> checked_product(int64_t a, int64_t b, const AtLayer& what) {
  int64_t r = 0;
  if (!__builtin_mul_overflow(a, b, &r)) return r;
  return checked_product(a, b, what.str());
}
inline Expected<int64_t> checked_sum(int64_t a, int64_t b, const AtLayer& what) {
  int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return checked_sum(a, b, what.str());
}

// Tensor- and pipeline-parallel layout. vLLM's get_pp_indices gives the remainder layers to the
// stages before the last: the first stage holds ceil(n / pp) layers and the embedding, the last
// floor(n / pp) layers and the head.
// Data parallelism replicates the whole layout per engine; the routed experts are split over all
// DP x TP ranks of a stage (vLLM FusedMoEParallelConfig.make: whole experts per rank with expert
// parallel, the flattened DP x TP tensor split without), so a rank holds 1 / (DP x TP) of them.
// With DP > 1, EP and TP > 1 vLLM runs the MoE layers sequence-parallel (ParallelConfig
// use_sequence_parallel_moe) and builds the shared experts without TP (DeepseekV2MoE: disable_tp),
// so each rank holds them whole.
// Issue 15: `stage_layers` is every stage's layer count (estimate::pp_layer_partition: vLLM's split, or
// VLLM_PP_LAYER_PARTITION); first_layers and last_layers are its ends.
// Issue 15 (evid25): `expert_copies` is (routed experts + redundant experts) / routed experts: vLLM-Ascend's EPLB
// (--additional-config '{"eplb_config": {"num_redundant_experts": R}}') places E + R expert slots evenly over the EP
// ranks, each holding a whole expert's weights, so a rank holds (E + R) / (DP x TP) experts instead of E / (DP x TP).
struct StageLayout {
  int64_t tp = 1, pp = 1, dp = 1;
  bool sequence_parallel_moe = false;
  int64_t n_layers = 1, first_layers = 1, last_layers = 1;
  std::vector<int64_t> stage_layers;  // PP > 1: layers per stage in rank order
  double expert_copies = 1.0;
  int64_t expert_ranks() const { return tp * dp; }
  // The part of a routed-expert group's TP share that one rank holds: 1 / DP of the experts, times the redundant copies.
  double expert_share() const { return expert_copies / static_cast<double>(dp); }
};
StageLayout stage_layout(const model::ModelSpec& m, int64_t tp, int64_t pp, int64_t dp = 1, const std::vector<int64_t>& partition = {});

// The drafter speculative decoding adds (vLLM SpecDecodeBaseProposer.load_model): the target's own
// MTP layers (Part::mtp weights; embedding and head shared with the target), or for eagle / eagle3 a
// one-layer head of the target's shape; ngram and suffix add nothing. `layers`: its attention layers
// in the KV cache (vLLM gives each drafter attention layer its own KV spec).
struct Drafter {
  int64_t layers = 0;
  double weights_bytes = 0;  // this rank's share, in the model dtype unless the MTP weights are quantized with it
  // K + V elements of one token in one drafter layer on this rank when the drafter's own config gives them
  // (0: the target's attention geometry, as MTP layers and an assumed EAGLE head have).
  int64_t kv_elements_per_layer = 0;
  // Of `layers`, those that are sliding-window attention in the drafter's own config (DFlash2: layer_types all
  // "sliding_attention"), and their window: vLLM gives them a SlidingWindowSpec, a KV group of their own.
  int64_t sliding_layers = 0, sliding_window = 0;
  std::string rule;          // what was sized, with the assumption made
};
Drafter estimate_drafter(const model::ModelSpec& m, const model::QuantScheme& scheme, const Deployment& dep, const StageLayout& layout);

struct StageWeights {
  Term first;  // the only stage when PP is 1
  Term last;
  // Issue 15, stages between the first and the last: one decoder layer's bytes on this rank, and what every
  // stage holds besides its layers (the rotary caches); a middle stage of k layers holds shared + k x layer.
  double layer_bytes = 0, shared_bytes = 0;
};
// The storage scheme the deployment implies (what sized_model(m, dep).quant is), without copying the
// model: the checkpoint's own scheme, the override, or the --quantization flag's scheme (built once per
// flag and thread). The reference stays valid for the duration of the call that asked for it.
const model::QuantScheme& deployed_scheme(const model::ModelSpec& m, const Deployment& dep);
// FitEstimate::weight_scheme of `m` stored as `scheme`: the scheme's detail when quantized, else the model's dtype.
std::string weight_scheme_name(const model::ModelSpec& m, const model::QuantScheme& scheme);
// model::weight_group_bytes of `g` in `m` stored as `scheme` (sized_model(m, dep) without the copy);
// `formats` is model::SchemeFormats(scheme), made once for all groups.
double group_bytes(const model::ModelSpec& m, const model::QuantScheme& scheme, const model::SchemeFormats& formats, const model::WeightGroup& g);

// Weights per rank ("Model loading took"): the stored (or kernel-laid-out) bytes of every weight group x
// this rank's share, plus rotary caches and deepstack buffers; `scheme` is deployed_scheme(m, dep).
// What estimate_weights reads of the card, besides its MXFP4 layout (EngineProfile::mxfp4_layout_for) and, with
// `explain`, its id and family in the texts: whether block-FP8 weights load through Marlin on it (vLLM on CUDA, Ampere and
// Turing) and whether vLLM-Ascend keeps a FRACTAL_NZ copy of the vocab embeddings on its family. Two cards equal in
// these three and in max_num_batched_tokens get the same unexplained weights (issue 19, planfast11).
bool fp8_marlin_fallback(const device::DeviceSpec& device, const engine::EngineProfile& engine);
bool embedding_nz_copy_on(const device::DeviceSpec& device, const engine::EngineProfile& engine);
Expected<StageWeights> estimate_weights(const model::ModelSpec& m, const model::QuantScheme& scheme, const device::DeviceSpec& device,
                                        const engine::EngineProfile& engine, const engine::Overheads& oh, const Deployment& dep,
                                        const StageLayout& layout, int64_t max_num_batched_tokens);

// Issue 15: the workspace vLLM's chunked Gated DeltaNet prefill (vllm/model_executor/layers/fla/ops/chunk.py
// chunk_gated_delta_rule_fwd) holds inside one linear-attention layer over `batched_tokens` tokens on this rank, at its
// largest (chunk_fwd_o): per token and value head the fp32 gate cumsum, the bf16 solved A (64 wide), w, u, v_new and o;
// the per-chunk states h (one V x K state per 64-token chunk and value head, in the key dtype); and the l2-normalised
// q and k copies (key heads). 0 for a model without linear_attention layers. Model dtype bytes for the bf16 tensors.
double gdn_prefill_workspace_bytes(const model::ModelSpec& m, const StageLayout& layout, int64_t batched_tokens);

// Issue 15 (cudabudget): the pixel values per patch the vision tower's patch embedding reads (its input width:
// channels x temporal patch x patch x patch for Qwen2.5-VL / Qwen3-VL / Qwen3.5, channels x patch x patch for a
// generic ViT); 0 for a model without a tower. vLLM's encoder pass holds them twice on every rank, whatever the TP:
// the processor's fp32 tensor moved to the device and its copy in the tower's dtype
// (`pixel_values = image_input["pixel_values"].type(self.visual.dtype)` in _process_image_input).
int64_t vision_pixels_per_patch(const model::ModelSpec& m);

// The profile run (phases and peak) of the first stage, and the peak of the last when PP > 1.
struct ProfileRun {
  ActivationPhases phases;            // peak: the first (or only) stage
  double last_stage_peak_bytes = 0;   // text forward or sampler run (only the last stage samples)
  double held_hidden_bytes = 0;       // the forward's hidden states the sampler run finds still held
  bool encoder_profiles_video = false;
  int64_t encoder_budget_tokens = 0, encoder_items = 0;
  std::vector<std::string> assumptions;
};
// Issue 15 (dsv32r): what an MTP drafter adds to the profile peak where the engine profile's
// mtp_drafter_profile_tensors covers the version: its persistent buffers, max_num_batched_tokens x (2 x hidden x
// dtype bytes + 16 B), in every phase, and the target's output (T rows, or ceil(T / TP) under FLASHCOMM1 where the
// rule says the dummy run's output is not gathered) x hidden x dtype bytes, held through the drafter's pass. Zero
// without an MTP drafter (the target's own MTP layers), under PP or outside the rule. Errors: checked arithmetic.
struct MtpDrafterProfile {
  double buffers_bytes = 0;
  double held_output_bytes = 0;
  std::string source;
};
Expected<MtpDrafterProfile> mtp_drafter_profile_bytes(const model::ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep,
                                                      const StageLayout& layout, int64_t max_num_batched_tokens);
// `moe_routed_bytes` (issue 15, npumoe): the routed rows estimate_moe_all2all_rows derived for this layout; where they
// are more than 0 and the platform's live tensors carry MoE widths, the text unit of a MoE model is those widths (not
// the fitted hidden + 2 x routed mlp / TP) and the routed rows are added to the text forward outside the factor.
Expected<ProfileRun> estimate_profile_run(const model::ModelSpec& m, const engine::EngineProfile& engine, const engine::Overheads& oh,
                                          const Deployment& dep, const StageLayout& layout, int64_t max_num_batched_tokens,
                                          int64_t max_num_seqs, int64_t max_model_len, double moe_routed_bytes = 0);

// Which non-torch memory the engine's worker subtracts on a device of `device_family` (issue 15, nt018): increase where
// the profile counts only the increase since the init snapshot, the family is not one of its absolute families and the
// platform has a non_torch_snapshot_bytes constant; absolute otherwise.
engine::NonTorchCounted non_torch_counted(const engine::EngineProfile& engine, const engine::Overheads& oh, const std::string& device_family);
// Runtime context, communicator buffers and workspaces, with the platform's multi-rank share: non_torch_bytes where
// the worker counts the absolute non-torch memory, non_torch_bytes - non_torch_snapshot_bytes where it counts the
// increase only (non_torch_counted); the multi-rank share is non_torch_multi_rank_fraction x non_torch_bytes in both.
// Issue 15/16 (nccl): where `nccl_buffer_bytes` (estimate_nccl_buffers) is more than 0 it replaces the multi-rank share.
Term estimate_non_torch(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_family, const StageLayout& layout,
                        bool explain = true, double nccl_buffer_bytes = 0);
// Issue 15/16 (nccl): the NCCL communicator buffers of this rank's TP group that the engine version counts inside the
// budget (engines.json overheads[].nccl_buffers: vLLM before PR #25359): communicators x (channels of the deployment's
// interconnect on the device's family x connections per channel (1 at TP 2, 2 on a middle rank of more) x bytes per
// connection + the NVLS buffers where the domain has them and TP reaches nvls_min_ranks + the proxy's shared p2p buffer,
// p2p_channels x proxy_shared_steps x p2p_chunk_bytes, in the versions that connect at init). 0 bytes at TP 1, outside the
// versions, and for an interconnect whose channels are not derived (network, unknown, an underived family).
Term estimate_nccl_buffers(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_family, const StageLayout& layout,
                           const Deployment& dep);
// Issue 15 (tpws): what FlashInfer's trtllm all-reduce fusion workspace allocates on one rank (engines.json
// overheads[].allreduce_fusion_workspace, buffers_source and granularity_source): max_token_num = min(max input bytes /
// (hidden x dtype bytes), max_num_batched_tokens); a buffer of tp x tokens x hidden x 2, a flag of tp x flag bytes and
// a lamport buffer of copies x min(tp x tokens x hidden x (4 for fp32, else 2), cap), each rounded up to the buffer
// alignment, padded with the signal pad and rounded up to the granularity. Inputs are the record, the card's maximum
// input for this TP, and the model's hidden size and dtype bytes.
struct AllreduceWorkspaceSizes {
  int64_t max_token_num = 0;
  double buffer_bytes = 0, flag_bytes = 0, lamport_bytes = 0;  // as FlashInfer asks for them
  double allocated_bytes = 0;                                   // the three allocations on this rank
};
AllreduceWorkspaceSizes allreduce_workspace_sizes(const engine::AllreduceFusionWorkspace& w, double max_input_bytes, int64_t tensor_parallel_size,
                                                  int64_t hidden_size, int64_t dtype_bytes, int64_t max_num_batched_tokens);
// Issue 15 (tpws): the workspace term of this rank where the engine version allocates it for this layout, card and
// interconnect (AllreduceFusionWorkspace::allocated_by and a maximum input for the card at this TP); 0 bytes elsewhere.
// It sits inside the non-torch increase the profile subtracts, beside the non-torch term (not fitted, no band).
Term estimate_allreduce_workspace(const model::ModelSpec& m, const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_id,
                                  const StageLayout& layout, const Deployment& dep, int64_t max_num_batched_tokens);
// Issue 15 (evid24): one MoE layer's workspaces under a --moe-backend record (engines.json overheads[].moe_backend_workspaces,
// layout_source): with R = max_num_tokens x top_k routed rows, a dynamic workspace exists when R exceeds the static
// cutover, and the static one then holds min(R, cutover) rows per expert (else R): packed input rows x hidden/2 B, fp8
// scales align(rows, scale_row_align) x align(hidden/scale_block, scale_column_align) B, token map and weights 4 B per
// row, per expert; the dynamic one holds tiles = ceil(R / tile_rows) + min(E, R) - 1 tiles of tile_rows rows, each row
// hidden/2 + the scale columns + 8 B, and six int32 task arrays of tiles x ceil(n / tile_columns); the output buffer is
// max_num_tokens x hidden x output bytes. n is the expert width on this rank.
struct MoeBackendWorkspaceSizes {
  bool dynamic = false;
  int64_t static_rows = 0, dynamic_tiles = 0;
  double static_bytes = 0, dynamic_bytes = 0, output_bytes = 0;
  double layer_bytes = 0;  // the three together: one MoE layer
};
MoeBackendWorkspaceSizes moe_backend_workspace_sizes(const engine::MoeBackendWorkspace& w, int64_t num_experts, int64_t top_k, int64_t hidden_size,
                                                     int64_t intermediate_per_partition, int64_t max_num_tokens);
// Issue 15 (evid24): the term of this rank where the deployment's --moe-backend (dep.moe_backend) has a record for the
// engine version and card (MoeBackendWorkspace::allocated_by), the expert weights are the record's format and expert
// parallelism is off: the first stage's MoE layers x one layer's workspaces at max_num_batched_tokens. The buffers
// are allocated inside the profile run and kept, so vLLM counts them in its peak activation; the budget subtracts them
// beside the activation peak (not fitted, no band). 0 bytes elsewhere ("auto" never selects a backend with a record);
// the reasons a named backend takes no workspace go to `assumptions` when dep.explain.
Term estimate_moe_backend_workspace(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::Overheads& oh, const engine::EngineProfile& engine,
                                    const std::string& device_id, const StageLayout& layout, const Deployment& dep, int64_t expert_parallel_size,
                                    int64_t max_num_batched_tokens, std::vector<std::string>& assumptions);
// DSA context parallel (vLLM-Ascend, a model with a sparse-attention indexer, TP > 1, switched on as
// engine.dsa_cp_switch says): q_b_proj and kv_b_proj are built whole on every rank (ShardedCPColumnParallelOp;
// kv_b_proj kept as the bf16 W_UK / W_UV it is turned into), and one full-size o_proj pool is added
// (sfa_v1.py _init_o_proj_tp_full_params). The bytes this adds over the TP split, this rank, MTP layers included;
// 0 when off. `rule` gets the explanation when dep.explain.
double estimate_dsa_cp_extra(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const Deployment& dep,
                             const StageLayout& layout, std::string& rule);
// Issue 15: the expert-scale copies vLLM-Ascend's W8A8_DYNAMIC fused-MoE layers keep after loading
// (engine.moe_dynamic_scale_copies on the device's family): per routed expert held by this rank, bytes per w13
// (gate + up) and per w2 (down) output channel, over the first stage's MoE layers and, when they are the drafter, the
// MTP layers. 0 for other expert formats. `rule` gets the explanation when dep.explain.
double estimate_expert_scale_copies(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine,
                                    const std::string& device_family, const Deployment& dep, const StageLayout& layout, std::string& rule);
// Issue 15 (dpep): the bytes an fp32 MoE router adds over the model dtype (engine.moe_gate_fp32, MLA models only):
// every MoE layer's gate [experts, hidden] and e_score_correction_bias [experts] at 4 B instead of the model dtype's,
// on every rank (the router is replicated), over the first stage's MoE layers and, when they are the drafter, the MTP
// layers. 0 outside the rule's versions, for other attention kinds and for weights stored in a file's own format.
// `rule` gets the explanation when dep.explain.
double estimate_gate_fp32_extra(const model::ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep, const StageLayout& layout,
                                std::string& rule);

// Issue 15 (dsv32): the MLAPO weights vLLM-Ascend's sparse-attention layers build beside their own projections
// (engine.sfa_mlapo_copies, MLAPO on by dep.mlapo or the rule's default): per layer, the fused q_a / kv_a projection
// ((q_lora_rank + kv_lora_rank + qk_rope_head_dim) rows x hidden int8, 8 B of deq_scale + quant_bias per row) and this
// rank's q_b_proj (its rows / TP x q_lora_rank int8, 8 B per row), over the first stage's layers and, when they are the
// drafter, the MTP layers. 0 without an indexer, when the q_a projection is not ModelSlim W8A8 static, or with DSA
// context parallel on (sfa_v1.py turns MLAPO off there). `rule` gets the explanation when dep.explain.
double estimate_sfa_mlapo_copies(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const Deployment& dep,
                                 const StageLayout& layout, std::string& rule);
// Whether DSA context parallel is on (vLLM-Ascend, engine.dsa_cp_switch): the model has a sparse-attention indexer, TP > 1
// and the switch the profile names is set.
bool dsa_cp_on(const model::ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep, const StageLayout& layout);

// Expert parallel on NPU (issue 15): 2 x the buffer of every HCCL communicator the engine profile lists
// (ep_hccl_communicators; HCCL_BUFFSIZE from dep.hccl_buffsize_bytes, else CANN's default 200 MiB; the "dp"
// group only with DP > 1). 0 bytes without EP (expert_parallel_size 1) or with no communicators listed.
Term estimate_ep_communicators(const model::ModelSpec& m, const engine::EngineProfile& engine, const StageLayout& layout, int64_t expert_parallel_size,
                                const Deployment& dep);
// Dynamic EPLB on NPU (issue 15, evid26; dep.dynamic_eplb with expert parallel, engine profiles that list
// ep_hccl_communicators): what vLLM-Ascend's EPLB warm-up opens inside the profile run, before the KV sizing:
// 2 x HCCL_BUFFSIZE for the default process group's communicator (EplbUpdator.warm_up_eplb's batch_isend_irecv to every
// other rank) and the adaptor's receive buffers, one empty_like copy of one local expert's tensors of one MoE layer per
// local expert slot ((E + R) / EP of them). 0 bytes elsewhere.
Term estimate_eplb_warmup(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, int64_t expert_parallel_size,
                          const Deployment& dep);
// Expert parallel on an A2-class NPU (issue 15): above the MC2 token capacity vLLM-Ascend 0.13 - 0.25 runs the MoE
// layers on the DP all-gather path (engine.moe_allgather_families), so in the profile run every rank routes the
// N = DP x max_num_batched_tokens tokens of all DP ranks through its experts as N x top_k permuted rows. The
// bytes held at the down projection: the gathered hidden states N x hidden x dtype, its input R x
// moe_intermediate (int8 for ModelSlim experts, else the model dtype) and its output R x hidden x dtype,
// R = N x top_k. Subtracted from the KV budget beside the text forward's fitted factor, which sizes one
// rank's own tokens. Without EP (issue 15, a2ag) the same path runs at any token count with DP x T tokens and
// experts sharded over TP x DP: R x moe_intermediate / (TP x DP) in. 0 bytes off the listed families, on a dense
// model, or with EP at most 512 batched tokens (the largest MC2 capacity the default graph sizes give, where the
// profile run stays on MC2).
Term estimate_moe_allgather(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const std::string& device_family,
                            const Deployment& dep, const StageLayout& layout, int64_t expert_parallel_size, int64_t max_num_batched_tokens);
// Issue 15 (npumoe): the routed rows a MoE layer holds at its peak on vLLM-Ascend's all-to-all expert path in the
// profile run (engine.moe_all2all_rows, first record covering rule_version() on `device_family`), with expert parallel
// and max_num_batched_tokens above the record's above_tokens: R = tokens x top_k rows per rank (tokens = ceil(T / TP)
// in the record's split modes, else T; forced even routing spreads them over the EP ranks), holding
// model_dtype_rows x R x hidden x dtype + int8_rows x R x hidden x 1 B (int8 rows only for int8-dispatched experts,
// unquantized_input_rows more model-dtype rows for the others; a record with int8_experts_only applies to int8 alone). 0 bytes (and no term) where no record applies.
Term estimate_moe_all2all_rows(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const std::string& device_family,
                               const Deployment& dep, const StageLayout& layout, int64_t expert_parallel_size, int64_t max_num_batched_tokens);
// Issue 15 (mc2): the MC2 transport of a multi-node A2 EP group. On the profiles' moe_allgather_families, an EP group of
// 16 or more ranks (two or more 8-card nodes) with at most 24 experts per rank runs the profile run's first pass on
// MC2, whose dispatch opens RDMA queue pairs to the other node's ranks (vllm-ascend #5993, #5947); a source reports it
// failing on an old NPU driver and starting after the upgrade (#9005; engines.json mc2_transport_driver_failing /
// _fixed). not_used: no MC2 over nodes, or no rule; starts: the stated driver is at or above the fixed version (text
// only with `dep.explain`); fails: at or below the failing one (text: the engine's message and the fix); undecided: the
// driver is not stated, or lies between the two (text: what the verdict depends on). The texts name #9005; the whole source
// is engines.json mc2_transport_source (fit adds it as an assumption where it explains).
enum class Mc2Transport { not_used, starts, fails, undecided };
struct Mc2TransportVerdict {
  Mc2Transport state = Mc2Transport::not_used;
  SharedText text;  // the driver-not-stated text is one shared text per engine and EP size (issue 19)
};
Mc2TransportVerdict mc2_transport(const model::ModelSpec& m, const engine::EngineProfile& engine, const std::string& device_family, int64_t expert_parallel_size,
                                  const Deployment& dep);
// Issue 15: the CUDA graphs vLLM captures, in tokens, ascending (vllm/config/vllm.py _set_cudagraph_sizes and
// vllm/config/compilation.py adjust_cudagraph_sizes_for_spec_decode, 0.21 - 0.25). The ceiling is max_capture_size when
// given, else min(max_num_seqs x decode_query_len x 2, default_ceiling); then at most max_num_batched_tokens. The sizes are
// capture_sizes when given (deduplicated, those above max_num_batched_tokens dropped, sorted), else the grid 1, 2, 4,
// multiples of 8 below 256, then of 16, up to the ceiling, plus max_num_batched_tokens when it is within it. A given
// max_capture_size that differs from the largest size is an error with capture_sizes, else truncated (a note). With
// FULL decode graphs (FULL_AND_PIECEWISE, FULL_DECODE_ONLY, FULL) and speculative decoding (decode_query_len > 1) each
// size is rounded up to a multiple of decode_query_len, those above the largest dropped. PIECEWISE graphs take every size
// (PIECEWISE, FULL_AND_PIECEWISE); FULL graphs the uniform decode ones, at most max_num_seqs x decode_query_len tokens
// (FULL_AND_PIECEWISE, FULL_DECODE_ONLY), or every size (FULL). NONE: no graphs.
// invalid_argument with vLLM's own message: a non-positive ceiling, an empty capture_sizes, the inconsistent pair, no
// size left after rounding; and a non-positive capture size (vLLM does not check it).
struct CaptureInputs {
  int64_t max_num_seqs = 0, max_num_batched_tokens = 0, decode_query_len = 1;
  int64_t default_ceiling = 512;
  std::vector<int64_t> capture_sizes;
  std::optional<int64_t> max_capture_size;
  CudagraphMode mode = CudagraphMode::full_and_piecewise;
  bool operator==(const CaptureInputs&) const = default;
};
struct CaptureSizes {
  std::vector<int64_t> piecewise, full;
  std::vector<std::string> notes;  // the engine's warnings (truncation, sizes dropped)
};
Expected<CaptureSizes> cudagraph_capture_sizes(const CaptureInputs& in);
// The capture flags' checks, shared by --compilation-config (deploy, at flag time) and cudagraph_capture_sizes (on the
// sizes max_num_batched_tokens keeps). check_capture_size_values: every size a positive token count (vLLM does not
// check it; no graph of 0 tokens can be captured). check_max_capture_size (vllm/config/vllm.py _set_cudagraph_sizes):
// the maximum at least 1 and, when sizes are given too (largest_size: the largest of them, 0 when none is kept),
// equal to the largest. invalid_argument with vLLM's own message.
Status check_capture_size_values(const std::vector<int64_t>& sizes);
Status check_max_capture_size(int64_t max_capture_size, std::optional<int64_t> largest_size);
// The default settings (FULL_AND_PIECEWISE, ceiling 512, no sizes given).
CaptureSizes cudagraph_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int64_t decode_query_len);
// The cudagraph_mode the engine runs: eager mode NONE; else the given mode, else the optimization level's (where the
// version has levels: -O0 NONE, -O1 PIECEWISE, -O2/-O3 FULL_AND_PIECEWISE), else FULL_AND_PIECEWISE; then FlashInfer with
// speculative decoding falls back from FULL_AND_PIECEWISE to PIECEWISE where the version's rule says so, outside its
// TRTLLM devices. `note`, when not null, receives vLLM's warning for the fallback.
CudagraphMode resolve_cudagraph_mode(const engine::EngineProfile& engine, const Deployment& dep, const std::string& device_id, std::string* note);
// Graph capture memory (0 in eager mode or cudagraph_mode NONE) and whether the engine subtracts it before KV sizing.
// Where the engine estimates it before KV sizing (graph_in_budget) and the platform's overheads carry the capture
// constants, the term is that estimate (gpu_model_runner.profile_cudagraph_memory): the largest first capture of the
// modes plus, per mode, (graphs - 1) x the second capture, with the first-capture and per-graph costs fitted, over the
// capture sizes above. Elsewhere the platform's prior. max_num_seqs / max_num_batched_tokens: the resolved settings (0:
// the prior). invalid_argument: the capture settings vLLM rejects (cudagraph_capture_sizes). `fallback_note`, when not
// null, receives resolve_cudagraph_mode's note (vLLM's FlashInfer fallback warning; empty when none), so that callers
// do not resolve the mode again.
Expected<Term> estimate_graph(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_id, const Deployment& dep,
                              bool graph_in_budget, int64_t max_num_seqs = 0, int64_t max_num_batched_tokens = 0, std::string* fallback_note = nullptr);

// Issue 15: the profile run's token count where the engine version raises max_num_batched_tokens to max_model_len
// (engines.json whole_prompt_prefill: vLLM-Ascend's Ascend scheduler forced on for non-MLA text-only models), else
// `batched_tokens` unchanged. `max_model_len` is the deployment's resolved length.
int64_t whole_prompt_batched_tokens(const model::ModelSpec& m, const engine::EngineProfile& engine, int64_t batched_tokens, int64_t max_model_len);

// Issue 15, pipeline stages: every stage's budget on its own card (Deployment::stage_devices, else the
// deployment's device): requested - weights - activation peak - non-torch [- graph], with the first stage
// holding the embedding and encoder, the last the head and the sampler, the middle ones their layers only.
// Empty for PP 1.
struct StageBudgetInputs {
  std::string device_id;  // the deployment's device (every stage's, without stage_devices)
  double total_bytes = 0, utilization = 0;
  bool requested_ceil = false;  // the engine rounds requested up (EngineProfile::requested_ceil)
  double non_torch_bytes = 0, graph_bytes = 0;  // graph: 0 unless subtracted before KV sizing
  double first_activation_bytes = 0, middle_activation_bytes = 0, last_activation_bytes = 0;
  double ep_communicator_bytes = 0;  // NPU expert-parallel HCCL communicators, on every rank before KV sizing
  double kv_budget_divisor = 1;      // 310P from vLLM-Ascend 0.18: the worker halves the budget
};
std::vector<PipelineStageFit> estimate_stage_budgets(const StageLayout& layout, const StageWeights& weights, const Deployment& dep, const StageBudgetInputs& in);
// The budget that sizes num_blocks, in first-stage layer units: the smallest of available x first / layers.
double stage_blocks_budget(const StageLayout& layout, const std::vector<PipelineStageFit>& stages);
// Each stage's own num_blocks (available in first-stage units // page // group size) and the tightest one.
void mark_stage_blocks(std::vector<PipelineStageFit>& stages, const StageLayout& layout, int64_t page_bytes, int64_t group_size);

// Cache geometry per layer kind, groups and blocks for a KV budget of `available_blocks` bytes
// (first-stage layer units), its low and high sides for the band.
struct KvInputs {
  std::string kv_cache_dtype;
  int64_t drafter_layers = 0;         // speculative decoding: attention layers added by the drafter
  int64_t drafter_kv_elements = 0;    // Drafter::kv_elements_per_layer (0: the target's geometry)
  int64_t num_speculative_tokens = 0; // lengthens the conv state and adds state blocks per request
  int64_t max_model_len = 0, max_num_batched_tokens = 0;
  double available_blocks_bytes = 0, band_bytes = 0, band_high_bytes = 0;
  bool explain = true;  // Deployment::explain: false adds nothing to `provenance`
  std::optional<bool> enable_prefix_caching;  // Deployment::enable_prefix_caching (unset: the version's default mode)
  int ssm_cache_bits = 0;  // --mamba-ssm-cache-dtype as bits per SSM state element (0: each layer's own ssm_dtype)
  KvScanMemo* scans = nullptr;  // Deployment::kv_scan: the layer pass taken from it, or kept in it (issue 19)
  // Of drafter_layers, the sliding-window ones and their window (Drafter::sliding_layers / sliding_window).
  int64_t drafter_sliding_layers = 0, drafter_sliding_window = 0;
  // Deployment::decode_context_parallel_size (issue 15, dcp): a request's full-attention blocks cover ceil(L / D) tokens
  // and the printed token count is num_blocks x block size x D.
  int64_t decode_context_parallel_size = 1;
};
// --mamba-ssm-cache-dtype as bits per element: float32 32, float16 / bfloat16 16, "" or auto 0 (the model's own
// mamba_ssm_dtype); -1 for any other value (vLLM's MambaDType has only these).
int mamba_ssm_cache_bits(const std::string& dtype);
Expected<KvGeometry> estimate_kv_geometry(const model::ModelSpec& m, const engine::EngineProfile& engine, const StageLayout& layout,
                                          const KvInputs& in, std::vector<std::string>& provenance);
// Issue 19 (planfast11): estimate_kv_geometry in two steps. The shape (layer scan, block layout, groups and the blocks a
// request needs) reads no budget: kv_in's available_blocks_bytes, band_bytes and band_high_bytes are read only by the
// second step, num_blocks and the token counts (kv_blocks_and_tokens), so that a fit memo takes one shape for every card
// of a class. estimate_kv_geometry(...) is estimate_kv_shape(...) followed by kv_blocks_and_tokens on the same inputs.
Expected<KvGeometry> estimate_kv_shape(const model::ModelSpec& m, const engine::EngineProfile& engine, const StageLayout& layout,
                                       const KvInputs& in, std::vector<std::string>& provenance);
void kv_blocks_and_tokens(KvGeometry& shape, const engine::EngineProfile& engine, const KvInputs& in);

// The after-KV verdict (fit_after_kv.cpp): records what the start needs outside the budget after KV sizing (hybrid KV
// copies, graph capture outside the budget) and the headroom, and turns a fitting estimate into after_kv_oom with the
// engine's message when even the low end does not fit, or adds the risk to the assumptions when only the high end does.
void decide_after_kv(FitEstimate& e, const engine::EngineProfile& engine, const engine::Overheads& oh, const Deployment& dep);
// Issue 15 (acc30): records in e.after_kv_mask_low_bytes / _high_bytes the peak of the square attention mask the version
// makes on `device`'s family at its first forward with attention (engines.json square_attention_mask): max_model_len `len`
// rounded up to 16, squared, x element_bytes x peak_copies; the low end 0 where the torch_npu build decides (compressed_when).
void estimate_square_attention_mask(FitEstimate& e, const engine::EngineProfile& engine, const device::DeviceSpec& device, int64_t len);

}  // namespace preflight::estimate::terms
