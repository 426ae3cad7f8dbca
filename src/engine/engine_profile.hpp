// engine/engine_profile: how an inference engine version sizes memory and what it prints
// (data/engines/engines.json): defaults, block-size rules, the available-KV formula variant, how
// tokens and concurrency are printed, which --quantization values it accepts on its platform, and
// the fitted overheads (activation peak, non-torch, graph memory) per platform with their evidence.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::engine {

struct Version {
  int major = 0, minor = 0, patch = 0;
  bool operator<(const Version& o) const;
  bool operator<=(const Version& o) const { return !(o < *this); }
  std::string text() const;
  bool operator==(const Version&) const = default;
};
// First "X.Y[.Z]" in `text` after `engine` when it is named there ("vllm 0.10.2 + vllm-ascend 0.10.2rc1").
std::optional<Version> parse_version(const std::string& text, const std::string& engine = {});

// Issue 15 (build): an engine build between release tags, as setuptools-scm names it. vLLM-Ascend's nightly wheels
// are versioned "<next tag>.dev<N>+g<hash>": N commits on main after the last tag, named after the tag that would
// follow it ("0.17.0rc2.dev66+g9d0b7c8e9" is 66 commits after v0.17.0rc1, git describe "v0.17.0rc1-66-g9d0b7c8e98").
// A rule that a PR starts or ends is keyed by the first main-branch build holding the PR (engines.json
// "from_build" / "before_build"), which a case's or a log's build decides where the vLLM version cannot.
struct EngineBuild {
  Version version;       // X.Y.Z of the tag line
  int64_t rc = -1;       // the tag line's rcN; -1: a final release ("0.18.0")
  int64_t dev = -1;      // .devN, commits since the last tag; -1: the tagged build itself
  std::string text;      // as given, the local part ("+g<hash>") included
  bool operator==(const EngineBuild&) const = default;
};

// Parses "X.Y.Z[rcN][.devN][+local]" (PEP 440 as setuptools-scm writes it; a leading "v" is accepted).
// invalid_argument naming `what` (the field or flag) for anything else, e.g. "0.17.0rc2.dev" or "main".
Expected<EngineBuild> parse_engine_build(const std::string& text, const std::string& what);

// PEP 440 order, the local part ignored: the tag line (X.Y.Z, then rcN before the final release), then within
// a line its dev builds before the tag itself (0.17.0rc2.dev66 < 0.17.0rc2.dev93 < 0.17.0rc2 < 0.17.0).
// Returns <0, 0 or >0.
int compare_engine_builds(const EngineBuild& a, const EngineBuild& b);

enum class TokensRule { blocks, concurrency_x_len };
enum class HybridBlockRule { cuda_align, npu_align128, npu_contiguous };
// Which non-torch memory a worker subtracts from the KV budget (EngineProfile::non_torch_counted).
enum class NonTorchCounted { absolute, increase };

// How an engine lays MXFP4 MoE experts out in memory at load, per device (gpt-oss): padded dimensions,
// a kept second copy of the scales, fp32 biases. data/engines/engines.json "mxfp4_layouts".
struct Mxfp4Layout {
  std::vector<std::string> devices, families;
  std::string backend;
  int64_t pad_intermediate = 1, pad_hidden = 1;
  int64_t scale_copy_pad_n = 0;  // 0: no second copy of the scales
  bool bias_fp32 = false;
  std::string source;
  bool operator==(const Mxfp4Layout&) const = default;
};

// One HCCL communicator an expert-parallel deployment opens before the KV cache is sized (issue 15). Each
// takes 2 x its buffer on the device (send and receive; CANN HCCL_BUFFSIZE). buffer_mib 0: the buffer is
// HCCL_BUFFSIZE (the environment's, CANN default 200); else the size the engine sets for the group.
struct HcclCommunicator {
  std::string group;      // "mc2", "ep", "dp"
  double buffer_mib = 0;  // 0 = HCCL_BUFFSIZE
  bool needs_dp = false;  // opened only when data_parallel_size > 1
  bool operator==(const HcclCommunicator&) const = default;
};

// How the engine picks a checkpoint's quantization when --quantization is not given (issues 15/16): a record
// of data/engines/engines.json "quantization_auto_detect". trigger: "descriptor_file" (quant_model_description.json
// beside config.json), "config_quantization_config" (config.json has any quantization_config),
// "config_quantization_config_without_quant_method" (one naming no quant_method). Without a matching record
// the engine runs the checkpoint unquantized, at the config dtype.
struct QuantizationAutoDetect {
  Version version_min, version_max;
  std::string trigger;
  std::string method;             // the --quantization value the engine then takes ("ascend")
  bool local_paths_only = false;  // the engine looks only inside a local directory (not a hub repo id)
  std::string source;
  bool operator==(const QuantizationAutoDetect&) const = default;
};

// Issue 15, dating evidence: the first release inside a profile's version range ("0.13.0rc1", released
// 2025-12-27), as the engine's own release records give it. A log or case that states only a date takes the newest
// profile released by then (deploy::resolve_engine).
struct FirstRelease {
  std::string version;
  int32_t date = 0;  // yyyymmdd
  std::string date_text;  // "2025-12-27"
  std::string source;
  bool operator==(const FirstRelease&) const = default;
};

// An NPU driver (Ascend HDK) version as npu-smi prints it ("23.0.7", "24.1.rc3.7", "25.3.RC1", "25.5.0"): its
// dot-separated parts, a number or rcN each; a release candidate sorts below the release of the same prefix
// (25.3.RC1 < 25.3.0), and missing trailing parts count as 0 (compare_npu_driver_versions).
struct NpuDriverVersion {
  std::vector<std::pair<int, int64_t>> parts;  // (0 rc / 1 release, number)
  std::string text;
  bool operator==(const NpuDriverVersion&) const = default;
};

struct CaptureRules;       // engine/capture_rules.hpp
struct CapturedGraphCost;  // engine/capture_rules.hpp
// A catalogue record's capture rules / captured-graph cost, shared, compared by content (two loads of one catalogue
// compare equal); the comparisons are in engine/capture_rules.cpp, where the types are complete. Null: none.
struct CaptureRulesRef {
  std::shared_ptr<const CaptureRules> rules;
  bool operator==(const CaptureRulesRef& other) const;
};
struct CapturedGraphCostRef {
  std::shared_ptr<const CapturedGraphCost> cost;
  bool operator==(const CapturedGraphCostRef& other) const;
};

struct EngineProfile {
  std::string id;
  std::string engine;    // vllm | vllm-ascend | llama.cpp
  Version version_min, version_max;
  std::optional<FirstRelease> first_release;
  // The version the user named (--engine E@X.Y.Z, a case's engine version) when one selected this profile;
  // empty: none named. Variant rules with a version bound compare rule_version() (issue 16: W4A8_DYNAMIC
  // loads from vLLM-Ascend 0.9.1, inside the 0.7-0.12 profile).
  std::optional<Version> version_named;
  Version rule_version() const { return version_named.value_or(version_max); }
  // Issue 15 (build): the engine build a case, a log or --engine-build gave ("0.17.0rc2.dev66+g9d0b7c8e9"); it
  // decides the rules that carry a build boundary (VersionRule from_build / before_build, non_torch_increase_from_build).
  // Empty: every rule is decided by rule_version().
  std::optional<EngineBuild> build_named;
  std::string platform;  // npu | cuda | any
  double default_gpu_memory_utilization = 0.9;
  int64_t block_size = 16;
  HybridBlockRule hybrid_block_rule = HybridBlockRule::cuda_align;
  std::string hybrid_mamba_mode;  // none | align
  // The Mamba cache mode --enable-prefix-caching selects on a hybrid model (vLLM PR #30877: "align", two state
  // blocks per request); empty: the version has no such mode and the flag leaves hybrid_mamba_mode. Optional key.
  std::string hybrid_prefix_caching_mode;
  // What a sparse-attention (DeepSeek-V3.2 lightning indexer) layer caches per token beside its MLA latent:
  // fp8_scaled = index_head_dim fp8 + 4 B scale per 128 (vLLM), bf16 = index_head_dim x 2 B, mla_page = a
  // second page the size of the MLA latent (the indexer's page padded to it). Optional key, default fp8_scaled.
  std::string sparse_indexer_cache = "fp8_scaled";
  std::string sparse_indexer_cache_source;
  // Issue 15 (evid28): the first main-branch build with sparse_indexer_cache's layout; a named build below it keeps
  // sparse_indexer_cache_before_build, the layout of the builds before the PR (vLLM-Ascend PR #6610 moved the DSA
  // indexer from a second MLA-sized page to its own bf16 slot while the vLLM version stayed 0.15.0). Unset: the
  // profile's layout holds for every build.
  std::optional<EngineBuild> sparse_indexer_cache_from_build;
  std::string sparse_indexer_cache_before_build;
  std::string sparse_indexer_cache_from_build_source;
  // The indexer layout of this profile's build: sparse_indexer_cache_before_build for a named build below
  // sparse_indexer_cache_from_build, else sparse_indexer_cache.
  const std::string& indexer_cache_for_build() const;
  // KV-cache groups of a hybrid model: vLLM pads every layer kind to the largest one when largest <
  // ratio x smallest (else groups take the smallest). The ratio changed by version; the catalogue's
  // "hybrid_group_padding" entry covering the selected version sets it (select_engine).
  double hybrid_group_padding_ratio = 1.0;
  std::string hybrid_group_padding_source;
  struct GroupPadding {
    Version version_min, version_max;
    double ratio = 1.0;
    std::string source;
    bool operator==(const GroupPadding&) const = default;
  };
  std::vector<GroupPadding> hybrid_group_paddings;  // the catalogue's entries whose range reaches this profile
  int64_t max_num_seqs = 256;
  int64_t max_num_batched_tokens = 2048;
  int64_t max_num_batched_tokens_large_device = 8192;
  int64_t max_num_seqs_large_device = 256;     // >= 70 GiB devices that are not A100 (vLLM get_batch_defaults)
  int64_t unchunked_prefill_up_to = 0;         // V0: chunked prefill off up to this max_model_len, so the
                                               // profile batch is max(max_model_len, max_num_batched_tokens)
  // Sampler dummy run of the profile: peak = copies x (seqs x vocab x fp32) + fixed bytes, on every rank
  // (V1 all-gathers the logits; V0 samples on the driver, which then sets the minimum).
  double sampler_logit_copies = 1.0;
  double sampler_fixed_bytes = 0.0;
  // Where the version samples with FlashInfer when it is installed (vLLM 0.9.2-0.11.0): its copies; the
  // prediction keeps the native path and widens the high side of the band by the difference.
  double sampler_logit_copies_if_flashinfer = 1.0;
  std::string sampler_source;
  bool profiles_mm_encoder = true;             // the profile run includes the vision encoder's dummy pass
  // Issue 15 (mm): --limit-mm-per-prompt '{"image": {"count": 1, "width": W, "height": H}}' sizes the dummy image of that pass
  // (vLLM PR #25631, from 0.11.1: ImageDummyOptions); earlier versions take only counts.
  bool mm_dummy_size_options = true;
  // Issue 15 (vLLM 0.14-0.15, vllm#32105): under PP the max_model_len check sums the whole model's KV over
  // every stage's layers and compares it with the smallest stage's budget ("whole_model"); else per stage.
  std::string pp_max_model_len_check = "per_stage";
  std::string pp_max_model_len_check_source;
  std::vector<Mxfp4Layout> mxfp4_layouts;      // the catalogue's layouts whose version range reaches this profile
  // The layout this profile uses on a device (by id, then by family); nullptr: as stored in the checkpoint.
  const Mxfp4Layout* mxfp4_layout_for(const std::string& device_id, const std::string& family) const;
  bool requested_ceil = false;
  bool graph_memory_in_budget = false;
  TokensRule tokens_rule = TokensRule::blocks;
  std::string weights_line, kv_line;
  bool merged_token_line = false;
  // Issue 15 (v0eng30): set where the deployment runs vLLM's V0 engine (deploy/engine_core, data/engines/engine_cores.json):
  // what V0 prints instead of V1's "GPU KV cache size" / "Maximum concurrency" pair. The worker's memory summary
  // (templates as kv_line), the executor's "# {device_name} blocks: N, # CPU blocks: M" (M = swap_space_bytes // the bytes
  // of one block over every layer; no line where device_name is empty), "Maximum concurrency for L tokens per request:
  // X.XXx" (N x block_size / L) where the version prints it, and first the V1 oracle's warning where it fell back to V0.
  struct V0Lines {
    std::vector<std::string> memory_lines;
    std::string device_name;
    bool concurrency_line = false;
    double swap_space_bytes = 0;
    std::string fallback_warning;
    bool operator==(const V0Lines&) const = default;
  };
  std::optional<V0Lines> v0_lines;
  std::vector<std::string> supported_quantization;  // "*" = every method vLLM has
  std::string quantization_rejection;               // "{q} quantization is currently not supported in npu."
  std::string fp8_requires, fp8_failure;
  std::string source;
  // Expert parallel on NPU (issue 15): the communicators the MoE token dispatchers open at model construction
  // (before the profile run, so the KV budget is measured without them), with their source. Empty: none.
  std::vector<HcclCommunicator> ep_hccl_communicators;
  std::string ep_hccl_source;
  // What turns on DSA context parallel for a model with a sparse-attention indexer (vLLM-Ascend): "flashcomm1"
  // (VLLM_ASCEND_ENABLE_FLASHCOMM1=1, 0.13-0.20), "additional_config" ({"enable_dsa_cp": true}, 0.21+), empty: never.
  std::string dsa_cp_switch;
  std::string dsa_cp_source;
  // vLLM-Ascend layer sharding on a prefill (kv producer) instance with DSA context parallel
  // (enable_dsa_cp_with_layer_shard): the source of the rule, empty where the profile does not have it.
  std::string dsa_cp_layer_shard_source;
  // Device families on which the worker divides its KV budget (vLLM-Ascend's 310P worker halves it for
  // operator workspace) by kv_budget_divisor, with the source. Empty: no division.
  std::vector<std::string> kv_budget_divided_families;
  double kv_budget_divisor = 1.0;
  std::string kv_budget_divisor_source;
  // Device families on which expert parallel's MoE layers run the DP all-gather path in the profile run
  // (vLLM-Ascend 0.13 - 0.25 on A2: select_moe_comm_method takes ALLGATHER above the MC2 token capacity), so
  // every rank routes the tokens of all DP ranks (issue 15, estimate_moe_allgather). Empty: none.
  std::vector<std::string> moe_allgather_families;
  std::string moe_allgather_source;
  // Issue 15 (mc2): on those families, an EP group of 16 or more ranks (two or more 8-card A2 nodes) dispatches the
  // profile run's first pass through MC2, whose RDMA queue pairs to the other node's ranks fail to allocate ("Failed to
  // allocate resource[qp] ... Memory resources are exhausted") on an old NPU driver. The highest driver (Ascend HDK,
  // npu-smi) version a source reports failing and the lowest it reports starting after the upgrade; between them the
  // verdict is undecided. Both parsed and validated (failing below fixed) by the catalogue loader, with their text.
  // Empty source: no rule.
  NpuDriverVersion mc2_transport_driver_failing;
  NpuDriverVersion mc2_transport_driver_fixed;
  std::string mc2_transport_source;
  // Issue 15 (nt018): which non-torch memory the worker subtracts from its KV budget. absolute: the device-wide
  // total - free - torch memory after the profile run (vLLM-Ascend 0.7 - 0.17, and 0.18+ on the families in
  // non_torch_absolute_families, whose own worker keeps it); increase: only the growth since the init snapshot
  // (vLLM's memory_profiling non_torch_increase, vLLM-Ascend PR #7427 from 0.18.0rc1). Set with its source.
  NonTorchCounted non_torch_counted = NonTorchCounted::absolute;
  std::vector<std::string> non_torch_absolute_families;
  std::string non_torch_counted_source;
  // Issue 15 (build): the first build that counts the increase (PR #7427's merge on main); a named build below it
  // still counts the absolute non-torch memory. Unset: the profile's count holds for every build.
  std::optional<EngineBuild> non_torch_increase_from_build;
  std::string non_torch_increase_from_build_source;
  // Issue 15: versions whose platform config turns the Ascend scheduler on for every non-MLA text-only model and
  // raises max_num_batched_tokens to max_model_len (chunked prefill off, even over the flag), so the profile run
  // forwards max_model_len tokens. Unset: the version leaves max_num_batched_tokens as given.
  struct VersionRule {
    Version version_min, version_max;
    std::string source;
    // Issue 15 (build): the first main-branch build holding the PR that starts (from_build) or ends (before_build)
    // the rule; with a build named, that end of the range is decided by the build instead of the version.
    std::optional<EngineBuild> from_build, before_build;
    bool covers(const Version& v) const { return version_min <= v && v <= version_max; }
    bool operator==(const VersionRule&) const = default;
  };
  // Whether `rule` holds for this profile: its version range at rule_version(), except that an end with a build
  // boundary is decided by build_named when one is given.
  bool rule_applies(const VersionRule& rule) const;
  // Issue 15 (misc950): a rule of this profile with a build boundary, and whether it holds here (decided by
  // build_named where one is given, else by the version), for the outputs that say what a build decided.
  struct BuildRule {
    std::string rule;      // the engines.json key and, for a list, the entry ("moe_dynamic_scale_copies fused_w1_scale, fused_w2_scale")
    std::string boundary;  // "from 0.17.0rc2.dev73" / "before 0.15.0rc2.dev85"
    bool holds = false;
    std::string effect;    // what holding means, or not holding
    bool operator==(const BuildRule&) const = default;
  };
  std::vector<BuildRule> build_rules() const;
  // Whether `rule` (one of the optional version rules below) is set and holds (rule_applies).
  bool applies(const std::optional<VersionRule>& rule) const { return rule && rule_applies(*rule); }
  std::optional<VersionRule> whole_prompt_prefill;
  // Issue 15: versions that give a drafter's sliding-window layers (DFlash / DFlash2 configs with sliding layer_types)
  // their own SlidingWindowSpec KV group; outside it they count as full-attention layers of the target's group.
  std::optional<VersionRule> drafter_sliding_kv_group;
  // Issue 16: the versions whose ModelOpt configs give an untied ParallelLMHead the checkpoint's linear method (vLLM PR
  // #42124), so a ModelOpt checkpoint that quantizes lm_head (QuantScheme::lm_head_quantized) loads; on the profile's
  // other versions its loader refuses the head's scales with modelopt_lm_head_load_error ("{arch}": the architecture).
  // Unset: the engine reads no ModelOpt checkpoint (no check).
  std::optional<VersionRule> modelopt_lm_head_quantized;
  std::string modelopt_lm_head_load_error;
  // Issue 15: device families on which every vocab embedding (embed_tokens, lm_head) keeps its ND weight and a second,
  // FRACTAL_NZ copy (weight_nz) made at load, from version_min of the rule. Empty families: none.
  std::vector<std::string> embedding_nz_copy_families;
  std::optional<VersionRule> embedding_nz_copy;
  // Issue 15 (acc30): device families on which the attention metadata builder makes one max_model_len x max_model_len
  // causal mask at the first forward with attention, after KV sizing, from version_min of the rule (vLLM-Ascend 310P:
  // AttentionMaskBuilder310, PR #6803). The mask holds element_bytes a position, padded to multiples of 16 (FRACTAL_NZ),
  // and peak_copies of it are live while it is made; one stays for the life of the engine. Empty families: none.
  struct SquareAttentionMask {
    std::vector<std::string> families;
    VersionRule rule;
    double element_bytes = 0;
    double peak_copies = 0;
    // Non-empty: where this holds of the torch_npu build (not an input of the estimate), the builder makes a fixed
    // compressed mask instead, so the square one is only the high end of the band.
    std::string compressed_when;
    bool operator==(const SquareAttentionMask&) const = default;
  };
  std::optional<SquareAttentionMask> square_attention_mask;
  // Issue 15: versions whose MoE layers build every token dispatcher (MC2 and all-to-all included) whatever the layout,
  // so a MoE model on more than one rank opens the ep_hccl_communicators with expert parallel off too. Unset: only with EP.
  std::optional<VersionRule> moe_hccl_communicators_without_ep;
  // Issue 15 (evid23): builds before vLLM-Ascend PR #3073 (before_build 0.11.0rc1.dev35) create every process group
  // without an hccl_buffer_size option, so each communicator (mc2, ep, dp and the TP group) takes HCCL_BUFFSIZE instead
  // of the per-group sizes ep_hccl_communicators lists. Unset: the listed sizes.
  std::optional<VersionRule> hccl_every_group_at_buffsize;
  // Issue 15 (dpep): versions that build the MoE router of an MLA model (vLLM's is_deepseek_mla: DeepSeek-V2/V3/V3.2,
  // Kimi-K2, ...) as an fp32 layer: the gate weight [experts, hidden] and its e_score_correction_bias are held in fp32
  // on every rank instead of the model dtype, inside "Loading model weights took". Unset: the model dtype.
  std::optional<VersionRule> moe_gate_fp32;
  // Issue 15 (dsv32): versions in which vLLM-Ascend keeps vLLM's sequence-parallel MoE off (platform.py sets
  // all2all_backend to "flashinfer_all2allv", "a tricky way to disable use_sequence_parallel_moe in vllm"), so a
  // DP x TP x EP layout builds the shared experts TP-split, and only its own shared_expert_dp_enabled()
  // (VLLM_ASCEND_ENABLE_FLASHCOMM1=1 or --additional-config '{"enable_shared_expert_dp": true}') builds them whole
  // on every rank (ops/linear_op.py get_parallel_op). Unset: vLLM's rule (whole with DP > 1, EP and TP > 1).
  std::optional<VersionRule> shared_experts_whole_only_with_sp;
  // Issue 15 (dsv32): the MLAPO weights a sparse-attention (DSA) layer builds beside its own projections when MLAPO is on
  // (attention/sfa_v1.py _process_weights_for_fused_mlapo: wd_qkv, the fused q_a / kv_a int8 weight, and wu_q, this
  // rank's q_b_proj int8 weight, with their float32 deq_scale and int32 quant_bias; the originals are dropped only on a
  // KV consumer). Built only when the fused q_a / kv_a projection is ModelSlim W8A8 static and DSA context parallel is
  // off. `default_on`: VLLM_ASCEND_ENABLE_MLAPO's default in the rule's versions. Empty: none.
  struct MlapoCopyRule {
    bool default_on = false;
    VersionRule rule;
    bool operator==(const MlapoCopyRule&) const = default;
  };
  std::vector<MlapoCopyRule> sfa_mlapo_copies;
  // The MLAPO rule covering rule_version(), or nullptr.
  const MlapoCopyRule* sfa_mlapo_rule() const;
  // Issue 15 (dsv32r): what an MTP drafter (vLLM's EagleProposer serving deepseek_mtp and the other *_mtp methods) adds to
  // the profile run's peak. Its persistent buffers, made in the model runner's constructor before the profile run:
  // hidden_states and inputs_embeds [max_num_batched_tokens, hidden] in the model dtype, input_ids (int32), positions
  // (int64) and arange (int32) of max_num_batched_tokens; and the target's output hidden states [T, hidden], which
  // _dummy_run keeps while drafter.dummy_run runs the MTP layer (a decoder layer of the target's kind) over the same T.
  // `output_gathered_under_sp`: with sequence parallel (VLLM_ASCEND_ENABLE_FLASHCOMM1=1) the dummy run's output is
  // all-gathered to T rows (true) or left as this rank's ceil(T / TP) rows (false). Empty: not counted.
  struct MtpDrafterProfileRule {
    bool output_gathered_under_sp = false;
    VersionRule rule;
    bool operator==(const MtpDrafterProfileRule&) const = default;
  };
  std::vector<MtpDrafterProfileRule> mtp_drafter_profile_tensors;
  // The MTP drafter rule covering rule_version(), or nullptr.
  const MtpDrafterProfileRule* mtp_drafter_profile_rule() const;
  // Issue 15: copies of the routed experts' per-channel scales that vLLM-Ascend's W8A8_DYNAMIC fused-MoE method
  // (AscendW8A8DynamicFusedMoEMethod.process_weights_after_loading) keeps beside the checkpoint's tensors, inside
  // "Loading model weights took": bytes per w13 (gate + up) output channel and per w2 (down) output channel of every
  // expert, on the listed device families, in the rule's version range. Empty: none.
  struct ExpertScaleCopy {
    std::string tensors;  // what the engine names them, e.g. "w13_weight_scale_fp32"
    double w13_bytes_per_channel = 0, w2_bytes_per_channel = 0;
    std::vector<std::string> families;
    VersionRule rule;
    bool operator==(const ExpertScaleCopy&) const = default;
  };
  std::vector<ExpertScaleCopy> moe_dynamic_scale_copies;
  // Issue 15 (npumoe): the rows a MoE layer's all-to-all expert path holds at its peak in the profile run (vLLM-Ascend
  // fused_experts_with_all2all in 0.10.0, TokenDispatcherWithAll2AllV from 0.13): with expert parallel, each rank sends
  // and receives R = tokens x top_k rows (tokens split over TP first in the listed modes), and at the combine holds
  // model_dtype_rows tensors of R x hidden in the model dtype plus int8_rows of R x hidden int8 (int8-dispatched
  // experts only), or unquantized_input_rows more in the model dtype (experts that are not int8). Taken on the listed families when max_num_batched_tokens exceeds above_tokens (the MC2 token
  // capacity, below which the engine dispatches through MC2 instead). Empty: no all-to-all rows derived.
  struct MoeAll2AllRows {
    std::vector<std::string> families;
    double model_dtype_rows = 0, int8_rows = 0;
    double unquantized_input_rows = 0;               // the permuted input, held in the model dtype when the experts are not int8
    bool int8_experts_only = false;                   // the path exists only in the W8A8_DYNAMIC method
    std::vector<std::string> tokens_split_by_tp_in;  // execution modes ("graph", "eager") whose MoE splits tokens over TP
    int64_t above_tokens = 0;
    VersionRule rule;
    bool operator==(const MoeAll2AllRows&) const = default;
  };
  std::vector<MoeAll2AllRows> moe_all2all_rows;
  // Issue 15: versions whose model runner allocates the KV tensors vLLM shares between a hybrid model's attention and
  // linear-attention (state) layers more than once, after KV sizing (vLLM-Ascend _allocate_kv_cache_tensors):
  // per_layer, one tensor per layer sharing it; per_kind, one for the state layers and one K/V pair for the attention
  // layers. The budget counts each shared tensor once, so the extra copies must fit above gpu_memory_utilization.
  // Empty: shared once.
  enum class HybridKvCopies { per_layer, per_kind };
  struct HybridKvCopyRule {
    HybridKvCopies copies = HybridKvCopies::per_kind;
    VersionRule rule;
    bool operator==(const HybridKvCopyRule&) const = default;
  };
  std::vector<HybridKvCopyRule> hybrid_kv_tensor_copies;
  // The rule covering rule_version(), or nullptr.
  const HybridKvCopyRule* hybrid_kv_copy_rule() const;
  // Issue 15 (CUDA graph flags): the versions in which -O<n> / --optimization-level is an optimization level whose
  // default cudagraph_mode is NONE (-O0), PIECEWISE (-O1) or FULL_AND_PIECEWISE (-O2, -O3); outside it -O<n> is the
  // compilation level and leaves the capture alone. Unset: not an optimization level in this profile.
  std::optional<VersionRule> optimization_levels;
  // Issue 15: devices whose default capture ceiling is not vLLM's 512 tokens (data center Blackwell: 1024), in the
  // rule's versions. Empty: 512 everywhere.
  struct CaptureCeiling {
    int64_t tokens = 0;
    std::vector<std::string> devices;  // catalogue ids
    VersionRule rule;
    bool operator==(const CaptureCeiling&) const = default;
  };
  std::vector<CaptureCeiling> cudagraph_capture_ceilings;
  // Issue 15: versions in which the FlashInfer attention backend supports full CUDA graphs of single-token decode only
  // (AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE) except on the listed devices (TRTLLM attention: UNIFORM_BATCH), so
  // with speculative decoding FULL_AND_PIECEWISE falls back to PIECEWISE. Unset: not modelled.
  std::optional<VersionRule> flashinfer_spec_decode_piecewise;
  std::vector<std::string> flashinfer_uniform_batch_devices;
  // The default capture ceiling on device `device_id` in this profile's rule version (512 unless a ceiling lists it).
  int64_t cudagraph_default_ceiling(const std::string& device_id) const;

  // The catalogue's quantization_auto_detect records whose version range overlaps this profile.
  std::vector<QuantizationAutoDetect> quantization_auto_detects;
  // The record with `trigger` covering rule_version(), or nullptr: the engine does not pick the method up that way.
  const QuantizationAutoDetect* auto_detect(const std::string& trigger) const;

  bool accepts_quantization(const std::string& method) const;
  // Whether this profile runs on a device of `device_platform` (cuda profiles also serve rocm).
  bool runs_on(const std::string& device_platform) const;
  // Issue 15 (warmup33): vLLM's graph capture rules this profile's record carries (engine/capture_rules.hpp: the grid of
  // the versions before 0.11, the versions that capture after KV sizing, models' own capture ceilings). Null: none.
  CaptureRulesRef graph_capture_rules;
  bool operator==(const EngineProfile&) const = default;
};

// Fitted per-platform quantities (evidence and refit script named in the file).
// Issue 15: the tensors one dense decoder layer holds at its activation peak, in per-token widths of the model's
// hidden size, its attention output (heads x head_dim / TP) and its MLP intermediate / TP (element counts, times the
// model dtype's bytes and the profile run's tokens). Read from the engine's code path, not fitted (engines.json
// overheads[].text_activation_live_tensors, with its source).
struct TextActivationWidths {
  double hidden = 0, attention_output = 0, mlp = 0;
  bool operator==(const TextActivationWidths&) const = default;
};
// Issue 15 (npumoe): the same for a MoE decoder layer at its routed peak (the expert combine), where the layer's
// routed rows are derived (EngineProfile::moe_all2all_rows): widths of the hidden size, the attention output and the
// router logits (one per routed expert); the routed rows themselves are counted by the rule.
struct MoeActivationWidths {
  double hidden = 0, attention_output = 0, router_logits = 0;
  bool operator==(const MoeActivationWidths&) const = default;
};
struct TextActivationLiveTensors {
  TextActivationWidths graph;  // torch.compile's FX code frees each value after its last use
  TextActivationWidths eager;  // Python frames hold their locals until they return
  std::string source;
  std::optional<MoeActivationWidths> moe_graph, moe_eager;
  std::string moe_source;
  bool operator==(const TextActivationLiveTensors&) const = default;
};

struct NcclBuffers;  // engine/nccl_buffers.hpp
struct AllreduceFusionWorkspace;  // engine/allreduce_workspace.hpp
struct MoeBackendWorkspace;       // engine/moe_backend_workspace.hpp
struct MoeRowPadding;             // engine/moe_row_padding.hpp

struct Overheads {
  std::string platform;
  double non_torch_bytes = 0;
  double graph_bytes = 0;
  double activation_bytes_per_batched_token_factor = 0;
  // Where set, a dense model's text unit is the live-tensor bytes of one decoder layer (the factor multiplies it);
  // unset, and for MoE models, max_num_batched_tokens x (hidden + 2 x mlp / TP) x dtype bytes.
  std::optional<TextActivationLiveTensors> text_activation_live_tensors;
  double vision_activation_factor = 0;
  // Rotary caches the engine keeps on the device, bytes per max_position x rotary_dim element (inside
  // "Model loading took"): 2 for vLLM's bf16 cos_sin_cache; more on NPU, where the cache stays fp32
  // and vllm-ascend keeps further cos/sin copies.
  double rope_cache_bytes_per_element = 2;
  std::string rope_cache_source;
  // Issue 15 (acc31): what a DeepseekScalingRotaryEmbedding (an MLA model's scaled rope, model::RopeClass) keeps, in copies
  // of its [max_position, rotary_dim] cache in the model dtype; unset: rope_cache_bytes_per_element as for any rope.
  std::optional<double> rope_cache_deepseek_scaling_copies;
  std::string rope_cache_deepseek_scaling_source;
  std::optional<bool> graph_memory_in_budget;  // platform exception to the engine profile's rule
  std::string evidence;
  double band_fraction = 0.3;
  double non_torch_band_bytes = 0;  // floor of the non-torch band: the spread of printed non-torch memory
  // Extra non-torch memory of a multi-rank deployment (TP x PP > 1: communicator buffers, IPC handles), as
  // a fraction of non_torch_bytes; fitted, with its evidence.
  double non_torch_multi_rank_fraction = 0;
  std::string non_torch_multi_rank_source;
  // Issue 15 (nt018): the non-torch memory already on the device at the worker's init snapshot (the runtime context),
  // printed by the engine, with its source. A worker that counts only the increase since the snapshot
  // (NonTorchCounted::increase) subtracts non_torch_bytes less this. Unset: non_torch_bytes for both counts.
  std::optional<double> non_torch_snapshot_bytes;
  std::string non_torch_snapshot_source;
  // Issue 15: the pre-capture CUDA graph estimate (vLLM 0.21+ profile_cudagraph_memory) as a function of the capture
  // sizes: the first capture, and each further graph; fitted on printed "Estimated CUDA graph memory" lines, with
  // their source. 0: not modelled, graph_bytes is used.
  double graph_first_capture_bytes = 0;
  double graph_per_capture_bytes = 0;
  std::string graph_capture_source;
  // Issue 15/16 (nccl): the NCCL communicator buffers counted inside the budget by the engine versions it names, by
  // interconnect (engine/nccl_buffers.hpp; engines.json overheads[].nccl_buffers). Null: not modelled on this platform.
  std::shared_ptr<const NcclBuffers> nccl_buffers;
  // Issue 15 (tpws): the FlashInfer all-reduce fusion workspace the engine versions it names allocate inside the profile
  // window at TP > 1 (engine/allreduce_workspace.hpp; engines.json overheads[].allreduce_fusion_workspace). Null: none.
  std::shared_ptr<const AllreduceFusionWorkspace> allreduce_fusion_workspace;
  // Issue 15 (evid24): the workspaces a --moe-backend value allocates per MoE layer inside the profile run, for the
  // versions and cards each record names (engine/moe_backend_workspace.hpp; engines.json overheads[].moe_backend_workspaces).
  // Null: no backend allocates one on this platform.
  std::shared_ptr<const std::vector<MoeBackendWorkspace>> moe_backend_workspaces;
  // Issue 15 (acc29): the row padding the engine versions it names give unquantized MoE expert weights at load on this
  // platform (engine/moe_row_padding.hpp; engines.json overheads[].moe_row_padding: vLLM's VLLM_ROCM_MOE_PADDING). Null: none.
  std::shared_ptr<const MoeRowPadding> moe_row_padding;
  // Issue 15 (warmup33): the cost of graphs captured after KV sizing on this platform (engine/capture_rules.hpp;
  // engines.json overheads[].graph_captured_*). Null: not modelled (the graph_bytes prior).
  CapturedGraphCostRef captured_graph_cost;
  // nccl_buffers, allreduce_fusion_workspace, moe_backend_workspaces and moe_row_padding compare by address
  bool operator==(const Overheads&) const = default;
};

struct EngineCatalog {
  std::vector<EngineProfile> profiles;
  std::vector<Overheads> overheads;
  std::string origin;
  const Overheads* overheads_for(const std::string& platform) const;
  // Overheads for `engine` on a device of `device_platform`: rocm has its own record, a profile
  // for "any" platform takes the device's, else the profile's platform.
  const Overheads* overheads_for(const EngineProfile& engine, const std::string& device_platform) const;
  std::vector<std::string> engines() const;
};

// The engine a device platform runs when none is named: vllm-ascend on NPUs, vllm elsewhere.
std::string default_engine_for(const std::string& device_platform);

// Sets the profile's hybrid group padding ratio (and its source) to the entry covering version `v`.
void apply_group_padding(EngineProfile& profile, const Version& v);

// parse_npu_driver_version: invalid_argument naming `what` for a text that is not an NpuDriverVersion.
Expected<NpuDriverVersion> parse_npu_driver_version(const std::string& text, const std::string& what);
// -1, 0 or 1 as a is below, equal to or above b.
int compare_npu_driver_versions(const NpuDriverVersion& a, const NpuDriverVersion& b);

Expected<EngineCatalog> parse_engine_catalog(const Json& root, const std::string& origin);
Expected<EngineCatalog> load_engine_catalog();

// What a command's engine flags name (issue 19): the engine as given ("vllm-ascend@0.23", "vllm", empty for the
// platform's default), a version given apart from it (--engine-version; "@V" wins, as in select_engine), and the
// device's platform (empty where unknown).
struct EngineCatalogSelection {
  std::string engine;
  std::string version;
  std::string device_platform;
};
// The catalogue as far as select_engine and deploy::resolve_engine can reach for `selection`, parsed from those
// records alone (engine/engine_catalog_select.cpp): a version that one of the engine's profiles covers -> that profile,
// else every profile of the engine; the engine's rule records; the overheads records overheads_for can return on that
// platform (all where it is unknown). An engine the index does not know, or none named without a platform, -> the
// whole catalogue (load_engine_catalog), so errors and suggestions are the same. Same errors as load_engine_catalog.
Expected<EngineCatalog> load_engine_catalog_for(const EngineCatalogSelection& selection);

// The engine name (lower case, trimmed) and the version text of an engine flag: "E@V" -> {E, V}, else {E, version_raw}.
std::pair<std::string, std::string> split_engine_text(const std::string& engine_raw, const std::string& version_raw);

// "vllm-ascend@0.23", "vllm", "vllm-ascend 0.11.0rc3"; empty version = newest known.
// not_found with suggestions for an unknown engine or a version outside every range.
Expected<EngineProfile> select_engine(const EngineCatalog& catalog, const std::string& engine, const std::string& version);

}  // namespace preflight::engine
