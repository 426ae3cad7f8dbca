// estimate/fit: what vLLM / vLLM-Ascend will do with a model on a device: weights per rank, the
// profiled activation peak, non-torch and graph memory, the KV budget, KV-cache groups and pages,
// and the exact lines the engine prints ("Available KV cache memory", "GPU KV cache size",
// "Maximum concurrency"), with the verdict and the engine's own failure message. Pure functions:
// every term names its rule, and calibrated terms carry an uncertainty band.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/shared_text.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/nccl_buffers.hpp"
#include "model/model_spec.hpp"

namespace preflight::estimate {

enum class ExecutionMode { graph, eager };

// vLLM's --speculative-config (vllm/config/speculative.py SpeculativeConfig): the method and the
// tokens proposed per step. method empty: no speculative decoding.
struct SpeculativeConfig {
  std::string method;                  // mtp (and the *_mtp aliases) | eagle | eagle3 | draft_model | ngram | suffix | ...
  int64_t num_speculative_tokens = 0;
  std::string model;                   // "model": the drafter's checkpoint (eagle, eagle3, draft_model)
  bool mtp() const;                    // the target's own MTP layers are the drafter
  bool has_drafter_layers() const;     // a neural drafter with its own weights and attention layers (not ngram / suffix)
  // Issue 15: the drafter checkpoint's own config (eagle, eagle3, draft_model, dflash with "model"), resolved
  // like the target (catalogue, --models DIR, hub cache) by deploy; null: not read (EAGLE then assumes a head of
  // the target's shape; draft_model and dflash cannot be sized and deploy refuses them).
  std::shared_ptr<const model::ModelSpec> drafter;
  bool separate_checkpoint() const;    // eagle, eagle3, draft_model, dflash: the drafter is its own checkpoint
};

// Issue 15: vLLM's cudagraph_mode (vllm/config/compilation.py CUDAGraphMode): which graphs the engine captures.
// FULL_AND_PIECEWISE (the default from v0.11): full graphs of uniform decode batches, piecewise graphs of the rest.
enum class CudagraphMode { none, piecewise, full, full_decode_only, full_and_piecewise };
constexpr int k_cudagraph_mode_count = 5;
const char* cudagraph_mode_name(CudagraphMode mode);                         // "FULL_AND_PIECEWISE"
std::optional<CudagraphMode> parse_cudagraph_mode(const std::string& name);  // case-insensitive; nullopt when unknown

// Issue 15: the capture settings users give (--compilation-config / -cc and its dotted forms, -O<n>, --attention-backend).
// Unset members take the engine version's defaults.
struct GraphCaptureConfig {
  std::vector<int64_t> capture_sizes;          // cudagraph_capture_sizes; empty: vLLM's default grid
  std::optional<int64_t> max_capture_size;     // max_cudagraph_capture_size
  std::optional<CudagraphMode> mode;           // cudagraph_mode
  std::optional<int64_t> optimization_level;   // -O<n> / --optimization-level (0..3)
  std::string attention_backend;               // --attention-backend / VLLM_ATTENTION_BACKEND, upper case; empty: not stated
};

// One pipeline stage's card under heterogeneous pipeline parallelism (issue 15): stages in PP rank order.
struct StageDevice {
  std::string device_id;
  double total_bytes = 0;  // the card's total as the runtime reports it
};

// Issue 19: each weight group's stored bytes (terms::group_bytes, in m.weights order) of one model under one
// scheme, computed once by a caller that fits many deployments of the same (model, variant) (plan's card counts)
// and shared by the fit's weights and the speed estimate's traffic. Used only for the model and scheme it names.
// Issue 19 (round 13): where the fit's weights place a group, read from its module name once per model (not per fit).
struct GroupPlace {
  bool layer = false;          // a text decoder layer's weight (is_layer_weight): split across pipeline stages
  bool shared_expert = false;  // a shared expert's (".shared_expert." in the module): whole under sequence-parallel MoE
  bool lm_head = false;        // "lm_head": on the last pipeline stage
  bool embed_tokens = false;   // "model.embed_tokens": on the first pipeline stage
};
GroupPlace group_place(const model::WeightGroup& group);

struct GroupBytes {
  const model::ModelSpec* model = nullptr;
  const model::QuantScheme* scheme = nullptr;
  std::vector<double> bytes;
  std::vector<GroupPlace> places;  // group_place of each group, in m.weights order
  std::vector<model::WeightFormat> formats;  // each group's storage format under `scheme` (model::SchemeFormats)
  SharedText weight_scheme;  // FitEstimate::weight_scheme under `scheme` (terms::weight_scheme_name), one text for every fit (round 14)
  // bytes.data() when this was computed for `m` stored as `s` (places and formats too), else nullptr (the caller computes them).
  const double* for_model(const model::ModelSpec& m, const model::QuantScheme& s) const {
    const size_t n = m.weights.size();
    return model == &m && scheme == &s && bytes.size() == n && places.size() == n && formats.size() == n ? bytes.data() : nullptr;
  }
};

// What one layer of each kind caches on one rank (the KV geometry's pass over the layers; the last layer of a kind sets
// its size, as the engine's uniform page requires them equal).
struct KvScan {
  int64_t attn_layers = 0, sliding_layers = 0, state_layers = 0;
  int64_t attn_1tok = 0;   // K+V bytes of one token in one attention layer
  int64_t k_1tok = 0;      // K bytes only (NPU hybrid alignment)
  int64_t conv_bytes = 0, ssm_bytes = 0, state_bytes = 0;
  int64_t sliding_window = 0;
};

// Issue 19: the layer passes of one model's KV geometry, kept per input they read (TP, cache dtype bytes, speculative
// tokens, the engine's indexer layout, SSM cache bits), so that a plan's fits of the model (every variant, count and
// card) scan its layers once per input rather than once per fit. Used only for the model it is built for (a
// reference: the model must outlive it); a pass that fails (an overflow) is not kept.
class KvScanMemo {
 public:
  explicit KvScanMemo(const model::ModelSpec& m) : model_(&m) {}
  const model::ModelSpec& model() const { return *model_; }
  const KvScan* find(int64_t tp, int64_t cache_bytes, int64_t spec_tokens, const std::string& indexer_cache, int ssm_bits) const {
    for (const auto& e : entries_)
      if (e.tp == tp && e.cache_bytes == cache_bytes && e.spec_tokens == spec_tokens && e.ssm_bits == ssm_bits && e.indexer_cache == indexer_cache) return &e.scan;
    return nullptr;
  }
  void keep(int64_t tp, int64_t cache_bytes, int64_t spec_tokens, const std::string& indexer_cache, int ssm_bits, const KvScan& scan) {
    entries_.push_back({tp, cache_bytes, spec_tokens, indexer_cache, ssm_bits, scan});
  }

 private:
  struct Entry {
    int64_t tp = 0, cache_bytes = 0, spec_tokens = 0;
    std::string indexer_cache;
    int ssm_bits = 0;
    KvScan scan;
  };
  const model::ModelSpec* model_;
  std::vector<Entry> entries_;
};

// vLLM's flags, with their meanings. Unset optionals take the engine version's defaults.
struct Deployment {
  int64_t tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;
  // --data-parallel-size: engine replicas, each with its own TP x PP ranks, KV cache and printed lines;
  // MoE experts are split over DP x TP ranks (by EP with --enable-expert-parallel, else flattened TP).
  int64_t data_parallel_size = 1;
  // --decode-context-parallel-size (issue 15, dcp): each request's KV tokens split over this many ranks of a TP group.
  int64_t decode_context_parallel_size = 1;
  bool enable_expert_parallel = false;  // --enable-expert-parallel
  SpeculativeConfig speculative;        // --speculative-config
  std::optional<double> gpu_memory_utilization;
  std::optional<int64_t> max_model_len;
  std::optional<int64_t> max_num_seqs;
  std::optional<int64_t> max_num_batched_tokens;
  std::string kv_cache_dtype = "auto";  // auto | fp8 | fp8_e4m3 | fp8_e5m2 | int8
  std::string quantization;             // --quantization; empty = what the checkpoint says
  ExecutionMode mode = ExecutionMode::graph;
  GraphCaptureConfig graph_capture;     // issue 15: --compilation-config, -O<n>, --attention-backend
  // Issue 15 (evid24): vLLM's --moe-backend (vllm/config/kernel.py KernelConfig.moe_backend), as given; empty: not stated,
  // vLLM's default "auto". A backend with a record in engines.json overheads[].moe_backend_workspaces adds its workspaces
  // (terms::estimate_moe_backend_workspace); others are sized as the default path.
  std::string moe_backend;
  bool skip_mm_profiling = false;       // --skip-mm-profiling: the profile run leaves the vision encoder out
  // --enable-prefix-caching / --no-enable-prefix-caching; unset: the version's default. On a hybrid model it
  // selects vLLM's Mamba cache mode, so the state blocks each request holds (engines.json hybrid_prefix_caching_mode).
  std::optional<bool> enable_prefix_caching;
  // Issue 15 (round 14): chunked prefill as stated; unset: the version's default (V0: on above 32K on CUDA). false with
  // max_num_batched_tokens unset: vLLM's SchedulerConfig takes max(max_model_len, 2048), so the profile run forwards a
  // whole max_model_len prompt.
  std::optional<bool> enable_chunked_prefill;
  std::string mamba_ssm_cache_dtype;    // --mamba-ssm-cache-dtype (empty or auto: the model's SSM state dtype)
  bool no_video = false;                // --limit-mm-per-prompt '{"video": 0}': the profile run never takes the video item
  bool no_images = false;               // --limit-mm-per-prompt '{"image": 0}': nor the image (with no video: text only)
  bool language_model_only = false;     // --language-model-only: no_video and no_images set by the flag (named in the notes)
  // Issue 15 (mm): --limit-mm-per-prompt '{"image": {"count": 1, "width": W, "height": H}}': the dummy image's size in pixels
  // (0: the largest image the processor makes), on engines that take it (engines.json mm_dummy_size_options).
  int64_t image_dummy_width = 0;
  int64_t image_dummy_height = 0;
  std::optional<double> device_total_bytes;  // measured total (overrides the catalogue)
  std::optional<double> kv_cache_memory_bytes;  // --kv-cache-memory-bytes: skips profiling (vLLM >= 0.11)
  // HCCL_BUFFSIZE in the engine's environment (bytes; CANN default 200 MiB when unset): the buffer of the NPU
  // communicators that take it (vLLM-Ascend's MC2 group), issue 15.
  std::optional<double> hccl_buffsize_bytes;
  // Issue 15 (mc2): the NPU driver (Ascend HDK) version as npu-smi prints it ("23.0.7", "25.5.0"); empty when not
  // stated. It decides the MC2 transport of a multi-node A2 EP group (engines.json mc2_transport_driver_*).
  std::string npu_driver_version;
  // vLLM-Ascend switches that turn on DSA context parallel on a sparse-attention (indexer) model, issue 15:
  // VLLM_ASCEND_ENABLE_FLASHCOMM1=1 in the environment, --additional-config '{"enable_dsa_cp": true}'.
  bool flashcomm1 = false;
  bool enable_dsa_cp = false;
  // --additional-config '{"layer_sharding": ["q_b_proj", "o_proj"]}' and a kv producer (prefill) instance.
  std::vector<std::string> layer_sharding;
  bool kv_producer = false;
  // Issue 15 (dsv32): vLLM-Ascend --additional-config '{"enable_shared_expert_dp": true}' (shared experts whole on every
  // rank, as VLLM_ASCEND_ENABLE_FLASHCOMM1=1 makes them), and VLLM_ASCEND_ENABLE_MLAPO as the environment sets it
  // (unset: the version's default, engines.json sfa_mlapo_copies).
  bool enable_shared_expert_dp = false;
  // Issue 15 (evid25): vLLM-Ascend --additional-config '{"eplb_config": {"num_redundant_experts": R}}': R more expert
  // slots spread over the EP ranks (with expert parallel; terms::StageLayout::expert_copies). 0: none, the default.
  int64_t num_redundant_experts = 0;
  // Issue 15 (evid26): vLLM-Ascend --additional-config '{"eplb_config": {"dynamic_eplb": true}}': the EPLB warm-up of the
  // profile run opens the default process group's HCCL communicator and the adaptor's expert buffers
  // (terms::estimate_eplb_warmup). false: static or no EPLB, the default.
  bool dynamic_eplb = false;
  std::optional<bool> mlapo;
  // Issue 15: the sampling path the engine took, where the evidence says it: true when it printed "Using FlashInfer for
  // top-p & top-k sampling." (or VLLM_USE_FLASHINFER_SAMPLER=1), false when it printed "FlashInfer is not available.
  // Falling back to the PyTorch-native implementation" (or VLLM_USE_FLASHINFER_SAMPLER=0); unset: the version's default.
  std::optional<bool> flashinfer_sampler;
  // Issue 15 (acc30): VLLM_ROCM_MOE_PADDING as the engine's environment sets it (vllm/envs.py: bool(int(value)), default
  // "1"): false turns off the expert row padding of engines.json overheads[].moe_row_padding; unset: the engine's default.
  std::optional<bool> moe_row_padding;
  // How weights are stored when neither the checkpoint nor --quantization says (a GGUF preset applied
  // to a config.json model); replaces scheme_for_flag's assumption.
  std::optional<model::QuantScheme> quant_scheme;
  // Heterogeneous pipeline parallelism (issue 15): the card of each stage, in PP rank order (empty: every
  // stage on the deployment's device). Each stage sizes its own budget on its own card; the tightest one
  // sets num_blocks (vLLM takes the minimum over workers).
  std::vector<StageDevice> stage_devices;
  // VLLM_PP_LAYER_PARTITION: decoder layers per stage, in rank order (empty: vLLM get_pp_indices' split).
  std::vector<int64_t> pp_layer_partition;
  // Issue 15/16 (nccl): how the GPUs of a TP group reach each other (--interconnect, a case's `interconnect`, else the
  // default deploy resolves from the card's form factor); it sizes the NCCL buffers of the versions that count them.
  // unknown: no NCCL buffer term (the fixed multi-rank share of the non-torch term).
  engine::Interconnect interconnect = engine::Interconnect::unknown;
  // false: the estimate leaves its explanatory text empty (assumptions, provenance, the terms' rules and
  // inputs, the printed start-up lines) and computes every number, the verdict and the failure message
  // exactly as with true. For callers that print none of that text (plan's candidate search).
  bool explain = true;
  // false: `ranks` (the per-rank tree) stays empty; every other field is as with true. For callers that
  // keep many estimates and show only their summary numbers (plan's candidates, issue 19).
  bool rank_tree = true;
  // false: `terms` (the itemized budget) stays empty; every number they hold is in the flat fields too, which are as
  // with true. For callers that keep many estimates and show only their summary numbers (plan's candidates, issue 19).
  bool memory_terms = true;
  // Issue 19: precomputed weight-group bytes (group_bytes_for); nullptr: the estimates compute them.
  const GroupBytes* group_bytes = nullptr;
  // Issue 19: the model's KV layer passes, shared by the fits of one model (KvScanMemo; used only for its model);
  // nullptr: each fit scans the layers.
  KvScanMemo* kv_scan = nullptr;
};

// after_kv_oom: the KV cache is sized and allocated, then the warm-up dies: graph capture (CUDA graphs / NPU
// ACL graphs, FULL_DECODE_ONLY included) needs more than the memory left above gpu_memory_utilization (issue 15).
// mc2_transport (issue 15): the MC2 dispatch of the profile run's first pass cannot allocate its RDMA queue pairs (an
// NPU driver below the fixed version, engines.json mc2_transport_driver_*), before any KV budget is printed.
enum class Failure { none, invalid_layout, unsupported_quantization, weights_oom, kv_negative, max_model_len_too_large, after_kv_oom, mc2_transport };
const char* failure_name(Failure failure);

struct MemoryTerm {
  // "weights", "activation peak", ...: always a string literal (issue 19, fitcopy36: a std::string name was allocated and
  // copied with every term a plan's fits make, the longer names on the heap; never set it from a std::string).
  std::string_view name;
  double bytes = 0;
  double band_bytes = 0;  // +/- uncertainty (0 = exact by mechanism)
  std::string rule;       // formula and inputs
  std::vector<std::pair<std::string, double>> inputs;  // the values the rule multiplies, by name, in its order
};
// One term of a rank's footprint (gguf-parser-go's typed footprint: weights / activation / KV, each with its sum).
using Term = MemoryTerm;

// The profile run's phases, run one after another (vLLM profile_run): the text forward over
// max_num_batched_tokens, the vision encoder's dummy pass, the sampler dummy run. The peak is the largest
// of them, the encoder outputs held through the text and sampler runs added to those two.
struct ActivationPhases {
  Term text_forward;     // fitted factor x text unit
  Term vision_encoder;   // 0 bytes when the pass is not profiled (or not on this stage)
  Term sampler_run;      // engine copies x sampler unit + fixed bytes + held hidden states (0 on a stage that does not sample)
  double text_unit_bytes = 0;     // max_num_batched_tokens x (hidden + 2 x mlp / TP) x dtype bytes
  double sampler_unit_bytes = 0;  // min(max_num_seqs, max_num_batched_tokens) x vocab x fp32
  double vision_unit_bytes = 0;   // patches x ((vision intermediate + 3 x vision hidden) / TP + vision hidden) x dtype bytes (the factor scales it); 0: derived pass (vis28)
  double encoder_held_bytes = 0;  // encoder outputs in the encoder cache through the text and sampler runs
  // Issue 15 (cudabudget): the dummy item's pixel values during the encoder pass, fp32 from the processor plus the
  // tower-dtype copy; not split by TP (terms::vision_pixel_bytes). Part of vision_encoder, outside the fitted factor.
  double vision_pixel_bytes = 0;
  double text_workspace_bytes = 0;  // issue 15: the GDN chunked-prefill workspace added to the text forward (terms::gdn_prefill_workspace_bytes)
  double text_moe_routed_bytes = 0;  // issue 15 (npumoe): a MoE layer's all-to-all routed rows in the text forward (terms::estimate_moe_all2all_rows)
  // Issue 15 (dsv32r): an MTP drafter's persistent buffers (in every phase) and the target tensors the drafter reads,
  // held through the text forward (NPU mtp_drafter_profile_tensors; vLLM EAGLE-3 / DFlash aux hidden states, hyb).
  double drafter_buffers_bytes = 0;
  double drafter_held_output_bytes = 0;
  Term peak;
};

struct KvGroup {
  // full_attention | sliding_attention | mla_attention | state: a string literal (issue 19, fitcopy36: copied with every
  // fit's groups, "sliding_attention" on the heap as a std::string)
  std::string_view kind;
  int64_t layers = 0;
  int64_t page_bytes = 0;           // per layer, per block, per rank
  int64_t blocks_per_request = 0;   // at max_model_len
  int64_t whole_layers = 0;         // this kind's layers in the whole model, every PP stage (issue 15's whole-model check)
};

// KV-cache geometry (reference sec 2-3): pages per layer kind, groups, blocks, and what they hold.
// Every rank ends with the same num_blocks (the engine takes the minimum over workers).
struct KvGeometry {
  std::vector<KvGroup> groups;
  int64_t block_size = 0;
  // The smallest block size over the groups, which the blocks-form token line multiplies (reference 2.3): a hybrid's
  // state groups have block max_model_len in Mamba cache mode none (vLLM's MambaSpec "only one block"), the attention
  // block in align mode. 0: block_size.
  int64_t token_block_size = 0;
  int64_t page_bytes = 0;            // common page per layer per block, this rank
  int64_t group_size = 0;            // layers per group (shared tensors)
  double group_padding_ratio = 0;    // vLLM pads to the largest layer kind when largest < ratio x smallest
  int64_t demand_blocks = 0;         // blocks one request at max_model_len needs, all groups
  int64_t num_groups = 0;
  int64_t num_blocks = 0;
  int64_t kv_tokens = 0, kv_tokens_low = 0, kv_tokens_high = 0;
  double max_concurrency = 0;
  int64_t kv_bytes_per_token = 0;          // this rank, all attention layers
  int64_t state_bytes_per_sequence = 0;    // this rank, all recurrent layers
};

// What one rank holds at start-up. Under tensor parallelism every rank of a stage holds the same, so
// a fit lists one entry per pipeline stage that differs: "all" (PP 1), else "first" and "last".
struct RankFootprint {
  int64_t rank = 0;           // global rank of the first rank this entry stands for
  std::string stage;          // all | first | last
  Term weights;
  ActivationPhases activation;
  Term non_torch;
  Term graph;                 // 0 bytes in eager mode; inside the budget only when graph_in_budget
  Term available_kv;          // what this rank prints as "Available KV cache memory"
  KvGeometry kv;
};

// One pipeline stage (PP > 1): its layers, its card, its own budget and the blocks that budget holds.
struct PipelineStageFit {
  int64_t stage = 0;
  std::string device_id;
  int64_t first_layer = 0, layers = 0;  // decoder layers [first_layer, first_layer + layers)
  double total_bytes = 0, requested_bytes = 0;
  double weights_bytes = 0;      // "Model loading took" on this stage's ranks
  double activation_bytes = 0;   // its profile-run peak (the encoder on the first, the sampler on the last)
  double available_kv_bytes = 0; // what this stage's workers print as "Available KV cache memory"
  int64_t num_blocks = 0;        // blocks this budget holds for this stage's layers; the engine takes the minimum
  bool tightest = false;         // the stage whose blocks the engine keeps
};

struct FitEstimate {
  std::string engine_id;
  std::string device_id;
  int64_t tensor_parallel_size = 1, pipeline_parallel_size = 1;
  int64_t decode_context_parallel_size = 1;  // Deployment::decode_context_parallel_size (issue 15, dcp)
  int64_t data_parallel_size = 1;
  int64_t expert_parallel_size = 1;  // ranks the routed experts are split over as whole experts (1: EP off)
  int64_t drafter_layers = 0;        // speculative decoding: the drafter's attention layers in the KV cache
  double drafter_weights_bytes = 0;  // this rank's share of the drafter's weights (inside weights_bytes)
  double gpu_memory_utilization = 0;
  int64_t max_model_len = 0;
  int64_t max_num_seqs = 0, max_num_batched_tokens = 0;
  int64_t block_size = 0;
  std::string kv_cache_dtype;
  std::string quantization;         // method the engine will run
  // Issue 19 (round 14): SharedText, so that a plan's fits of one (model, variant) hold one scheme name (GroupBytes) and the
  // cards that copy a refused fit share its message.
  SharedText weight_scheme;         // how weights are stored

  double total_bytes = 0, requested_bytes = 0;
  double weights_bytes = 0, activation_bytes = 0, non_torch_bytes = 0, graph_bytes = 0;
  // Issue 15 (nt018): which non-torch memory the worker subtracts (terms::non_torch_counted): the device-wide amount,
  // or only its increase since the init snapshot.
  engine::NonTorchCounted non_torch_counted = engine::NonTorchCounted::absolute;
  // Expert parallel on NPU: the HCCL buffers of the communicators the MoE dispatchers open before the profile
  // run (2 x buffer each), subtracted from the budget (issue 15). 0 without EP or on other platforms.
  double ep_communicator_bytes = 0;
  // Issue 15/16 (nccl): the NCCL communicator buffers of the TP group that the engine version counts inside the budget
  // (terms::estimate_nccl_buffers), subtracted from it; 0 where none (they replace the fixed multi-rank non-torch share).
  double nccl_buffer_bytes = 0;
  // Issue 15 (tpws): the FlashInfer all-reduce fusion workspace this rank allocates inside the profile window
  // (terms::estimate_allreduce_workspace: vLLM 0.19 at TP > 1 on an NVSwitch group of SM 9.0 / 10.0 cards), subtracted
  // from the budget beside the non-torch term; 0 where none.
  double allreduce_workspace_bytes = 0;
  // Expert parallel on A2 (vLLM-Ascend 0.13 - 0.25): the DP all-gather MoE path's rows in the profile run, subtracted
  // from the budget beside the activation peak (issue 15, terms::estimate_moe_allgather). 0 elsewhere.
  double moe_allgather_bytes = 0;
  // Issue 15 (evid24): the workspaces a --moe-backend keeps from the profile run on (terms::estimate_moe_backend_workspace),
  // inside vLLM's printed peak activation; subtracted from the budget beside the activation peak. 0 elsewhere.
  double moe_backend_workspace_bytes = 0;
  // DSA context parallel (vLLM-Ascend, sparse-attention models): what keeping q_b_proj / kv_b_proj whole and one
  // full o_proj adds to this rank's weights (inside weights_bytes). 0 when it is off.
  double dsa_cp_weights_bytes = 0;
  // vLLM-Ascend W8A8_DYNAMIC MoE: the fp32 / int64 copies of the expert scales kept after loading (issue 15,
  // engines.json moe_dynamic_scale_copies), inside weights_bytes. 0 elsewhere.
  double expert_scale_copy_bytes = 0;
  // Issue 15 (dpep): the bytes an fp32 MoE router adds over the model dtype (engines.json moe_gate_fp32, MLA models),
  // inside weights_bytes. 0 elsewhere.
  double gate_fp32_extra_bytes = 0;
  // Issue 15 (dsv32): the MLAPO weights of sparse-attention layers (engines.json sfa_mlapo_copies), inside weights_bytes.
  // 0 elsewhere.
  double sfa_mlapo_bytes = 0;
  // What the worker divides its budget by on this device (vLLM-Ascend's 310P worker: 2); 1 elsewhere.
  double kv_budget_divisor = 1.0;
  double available_kv_bytes = 0;
  double available_kv_band_bytes = 0;
  double available_kv_band_high_bytes = 0; // the high side: wider where the engine may take a cheaper path
  double available_kv_low_bytes() const { return available_kv_bytes - available_kv_band_bytes; }
  double available_kv_high_bytes() const { return available_kv_bytes + available_kv_band_high_bytes; }
  bool graph_in_budget = false;     // graph memory estimated before KV sizing and subtracted
  // What the warm-up after KV sizing needs outside the budget (graph capture outside it), low and high ends, and the 1 - util headroom per device it must fit in.
  double after_kv_needed_low_bytes = 0, after_kv_needed_high_bytes = 0, after_kv_headroom_bytes = 0;
  // Issue 15 (acc30): of it, the peak of the square attention mask the engine makes at its first forward with attention
  // (engines.json square_attention_mask: vLLM-Ascend 310P, max_model_len x max_model_len); the low end is 0 where the
  // torch_npu build decides whether the mask is that size or the compressed one.
  double after_kv_mask_low_bytes = 0, after_kv_mask_high_bytes = 0;
  // What the fitted activation constants multiply (tools/fit_overheads.py refits them from these):
  // max_num_batched_tokens x (hidden + 2 x mlp / TP) x dtype bytes, and seqs x vocab x fp32; the
  // sampler run (engine's multiple of that unit + held hidden states) and the vision encoder peak.
  double activation_text_unit_bytes = 0, activation_sampler_unit_bytes = 0;
  double activation_sampler_bytes = 0, activation_vision_bytes = 0, activation_vision_unit_bytes = 0;
  bool encoder_profiles_video = false;  // the profiled item is a dummy video (larger than the largest image)
  int64_t encoder_budget_tokens = 0, encoder_items = 0;  // vLLM's "budget of N tokens, profiled with K ... items" (0: no pass)
  double activation_encoder_held_bytes = 0;  // encoder outputs held through the text and sampler runs
  double activation_text_workspace_bytes = 0;  // issue 15: the GDN chunked-prefill workspace in the text forward's peak
  double activation_text_moe_routed_bytes = 0;  // issue 15 (npumoe): the MoE all-to-all routed rows in the text forward's peak
  double activation_drafter_buffers_bytes = 0;      // issue 15 (dsv32r): an MTP drafter's persistent buffers, in the profile peak
  double activation_drafter_held_output_bytes = 0;  // issue 15 (dsv32r, hyb): target tensors held for the drafter (text forward)
  double activation_vision_pixel_bytes = 0;    // issue 15: the encoder pass's pixel values (not fitted, not split by TP)
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
  // Issue 15: where the engine checks max_model_len against the whole model's KV under PP (vLLM 0.14-0.15,
  // engines.json pp_max_model_len_check), the whole model's KV for one request at max_model_len (all stages'
  // layers, this rank's heads) and the largest length whose whole-model KV fits the smallest stage's budget
  // (the engine's "estimated maximum model length"); kv_capacity_tokens is capped by it.
  bool pp_whole_model_check = false;
  double pp_whole_model_kv_bytes = 0;
  int64_t pp_whole_model_max_len = 0;

  bool fits = false;
  Failure failure = Failure::none;
  SharedText failure_message;       // as the engine words it
  // Issue 15 (mc2): what the verdict depends on that the inputs do not state (the NPU driver version of a multi-node A2
  // EP group's MC2 transport), with the versions that decide it; empty when the verdict is decided. `fits` is then the
  // memory verdict, and the start fails or not by this condition. A SharedText (issue 19): the driver-not-stated text is
  // one per engine and EP size, shared by every plan row that carries it.
  SharedText verdict_depends_on;
  std::vector<PipelineStageFit> stages;  // PP > 1: every stage in rank order (fit --json "stages")
  std::vector<RankFootprint> ranks;  // the typed tree the flat fields above summarise (fit --json "ranks")
  std::vector<std::string> lines;   // what the engine prints at start-up
  std::vector<std::string> assumptions;
  std::vector<std::string> provenance;
};

// Issue 15 (dcp): vLLM's refusal of --decode-context-parallel-size `dcp` at tensor parallel size `tp` for model `m`, as
// the engine words it ("ValueError: tp_size=8 must be divisible bydcp_size=3."); empty when it starts (always for dcp 1).
// TP a multiple of dcp; without MLA, TP above the KV heads, dcp at most TP // KV heads and dividing the query heads per
// KV head; no sliding-window layers. Sources in fit.cpp.
std::string decode_context_parallel_rejection(const model::ModelSpec& m, int64_t tp, int64_t dcp);

// The estimate, or invalid_argument when a product or sum of the model's values overflows 64 bits (a
// config with kv_lora_rank or ssm_state_size near 2^62 must not wrap to a small KV and "fit"); the message
// names the field and the layer.
Expected<FitEstimate> try_estimate_fit(const model::ModelSpec& model, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                       const engine::Overheads& overheads, const Deployment& deployment);

// Issues 15/16: a ModelSlim checkpoint (quant_method "ascend", read from quant_model_description.json)
// deployed without --quantization and without a variant's scheme. What the engine then runs depends on its
// version (try_estimate_fit follows its auto-detection), and plan's fix search offers --quantization ascend.
bool modelslim_without_quantization_flag(const model::ModelSpec& model, const Deployment& deployment);

// try_estimate_fit for callers that take a verdict: an overflow is a refused deployment
// (Failure::invalid_layout, the error's message as failure_message), never a fit.
FitEstimate estimate_fit(const model::ModelSpec& model, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                         const engine::Overheads& overheads, const Deployment& deployment);
// That refused deployment for `error` (what try_estimate_fit returned), for callers that hold the Expected already.
FitEstimate refused_fit(const device::DeviceSpec& device, const engine::EngineProfile& engine, const Deployment& deployment, const Error& error);

// Issue 19: whether the fit gives the same estimate on `a` and on `b` for every model, overheads and deployment
// with `engine` (explain false, no stage_devices), apart from the device id it records (the estimate's
// device_id and its stages'): the fields of a device the fit reads are equal (platform, family, nominal and
// runtime totals) and `engine` takes the same MXFP4 layout, graph capture ceiling and FlashInfer graph support on
// both. A caller that fits many devices (plan's catalogue sweep) fits one device of each such set and gives the others
// a copy with their own id.
bool same_fit_device(const device::DeviceSpec& a, const device::DeviceSpec& b, const engine::EngineProfile& engine);

// Issue 19: the weight-group bytes of `model` as `deployment` stores it (its deployed scheme), for
// Deployment::group_bytes. Valid while `model` is unchanged and `deployment`'s quantization is the same.
GroupBytes group_bytes_for(const model::ModelSpec& model, const Deployment& deployment);

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

// Decoder layers per pipeline stage as vLLM splits them (vllm/distributed/utils.py get_pp_indices): with
// `given` (VLLM_PP_LAYER_PARTITION) that list, else num_hidden_layers // pp each and the remainder one
// each to the stages before the last, from the second-to-last backwards. invalid_argument with vLLM's
// messages when `given` has not pp entries or does not sum to the layers, or names a stage of no layers.
Expected<std::vector<int64_t>> pp_layer_partition(int64_t num_hidden_layers, int64_t pp, const std::vector<int64_t>& given);

// vLLM's accepted --speculative-config methods (SpeculativeMethod), in its order.
const std::vector<std::string>& speculative_methods();

// Applies the scheme a --quantization value implies when the checkpoint does not carry it.
model::QuantScheme scheme_for_flag(const std::string& quantization, const model::QuantScheme& checkpoint);

}  // namespace preflight::estimate
