// deploy/deployment: the one resolution step from what people give (a device name or the free text a
// report writes, an engine "vllm-ascend@0.23" or a version string as logs and cases write it, and typed
// optional flags, each with where it came from) to a resolved deployment: model, device, engine profile,
// overheads and the estimate::Deployment, with its assumptions and provenance. fit, logs, validate,
// bench --device and plan all go through it, so one bad input gives one error, named by its origin
// ("--gpu-memory-utilization: expected a number in (0, 1], found 1.5"), whichever command read it.
// Model resolution stays with the caller (catalogue, directories, hub): this step receives the ModelSpec.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_core.hpp"
#include "engine/engine_profile.hpp"
#include "engine/nccl_buffers.hpp"
#include "engine/quantization_methods.hpp"
#include "estimate/fit.hpp"
#include "model/model_spec.hpp"

namespace preflight::deploy {

// A value and where it came from: "--max-num-seqs", "seed-cases.jsonl:3: gpu_memory_utilization",
// "log line 12: gpu_memory_utilization". Errors about the value start with the origin.
template <typename T>
struct Given {
  T value{};
  std::string origin;
};

enum class DeviceForm { name, free_text };

// name: a catalogue id or alias (not_found with suggestions otherwise). free_text: the way a report
// writes it ("NVIDIA H100 80GB (79.18 GiB total)"): the longest catalogue id or alias in it, else a
// device built from the total memory the text states; a stated total also replaces the catalogue's.
struct DeviceInput {
  std::string text;
  std::string origin;
  DeviceForm form = DeviceForm::name;
  // --device-memory (issue 15): the card's memory as the runtime reports it. With a name it replaces that
  // card's total; alone (empty text) or with a name outside the catalogue it makes a generic device of
  // `platform` (cuda | npu | rocm | cpu; empty = cuda). Each is said in the assumptions.
  std::optional<double> memory_bytes;
  std::string platform;
};

enum class UnknownVersion { error, newest };

// engine: "vllm", "vllm-ascend@0.23", "llama.cpp"; empty = the default engine of the device's platform.
// version: as logs and cases write it ("0.11.0rc3", "0.1.dev7548+gbaba038 (main, ~v0.9.2)"); a version
// that selects no profile is dated by the first "vX.Y" inside it, then inside version_hint (free text
// such as a case's notes), then by printed_tokens_are_blocks, each dating recorded as an assumption. unknown: what a version that still
// selects nothing does: an error (fit, bench) or the newest profile with the assumption (logs, validate).
struct EngineInput {
  std::string engine;
  std::string version;
  std::string origin;
  std::string version_hint;
  std::string version_hint_origin;
  UnknownVersion unknown = UnknownVersion::error;
  // The format of the log's own printed lines, when nothing else dates it: true when "GPU KV cache size" is
  // num_blocks x block size (it differs from int(concurrency x max_model_len)), false when it is that
  // product. An undated version then takes the newest profile that prints that way (said in the assumptions).
  std::optional<bool> printed_tokens_are_blocks;
  // Issue 15: free text that may carry the evidence's date ("github.com/.../issues/5993 (2026-01-19)"); its first
  // YYYY-MM-DD dates an otherwise undated version: the newest profile whose first release came out by then.
  std::string evidence_date;
  std::string evidence_date_origin;
  // Issue 15 (build): the engine build that ran ("0.17.0rc2.dev66+g9d0b7c8e9", engine_build, --engine-build, a
  // log's vllm-ascend version line), already parsed; it decides the rules with a build boundary. Unset: none.
  std::optional<engine::EngineBuild> build;
  std::string build_origin;
  // Issue 15 (misc950): which printed line gave `version` and why, when take_printed_versions chose between two; empty:
  // none chosen. resolve_deployment adds it to the assumptions.
  std::string version_choice;
  // Issue 15 (v0eng29): the engine core the evidence shows (a log's V0 lines or VLLM_USE_V1, a case's engine_core) and
  // where ("log line 12: Initializing a V0 LLM engine (v0.9.1)"). V0 takes the V0 record of data/engines/engine_cores.json
  // covering the version (deploy/engine_core.hpp) and dates a version nothing else dates. Unset: the version's default.
  std::optional<engine::EngineCore> engine_core;
  std::string engine_core_origin;
};

// Issue 15/16 (misc21): --engine E[@V] and --engine-version V are one setting, the engine's version: it selects the
// memory profile and the speed rules alike. V goes into `in` as "E@V" when --engine names the engine, else into
// in.version (the device platform's engine at V), with `origin` ("--engine-version"). Both flags naming different
// versions is invalid_argument naming both; the same version twice is accepted. Nothing given leaves `in` as it was.
Status apply_engine_version(EngineInput& in, const std::optional<std::string>& engine_version, const std::string& origin);
// The version an EngineInput states, as written: after "@" in its engine ("vllm-ascend@0.8.4rc2" -> "0.8.4rc2"), else
// its version; empty when neither states one. The speed estimate's SpeedWorkload::engine_version.
std::string stated_engine_version(const EngineInput& in);
// The same from an engine text ("vllm@0.10.1") and a version given beside it (--engine-version's V).
std::string stated_engine_version(const std::string& engine, const std::string& version);

// Issue 15 (misc950): a version as a log prints it ("0.18.0+empty", "0.17.0rc2.dev93+g8e0789bb3") and where
// ("log line 2: vllm-ascend version").
struct PrintedVersion {
  std::string text;
  std::string origin;
};

// The engine version and build of a vLLM-Ascend deployment from the vLLM and vllm-ascend version lines a log prints,
// set in `in` the way a case gives engine_version / engine_build and fit takes --engine vllm-ascend@V
// --engine-build B, so that resolve_engine selects the same profile and rules for all three:
// - build: the vllm-ascend line when it is X.Y.Z[rcN][.devN][+local] (engine::parse_engine_build);
// - version: the vLLM line when the vllm-ascend line is a main-branch build between tags (".devN"): such a build is
//   named after the last tag on main, not after the vLLM release it runs with (0.15.0rc2.dev46 ran vLLM 0.16.0,
//   0.16.0rc2.dev45 vLLM 0.17.0, 0.17.0rc2.dev66 vLLM 0.18.0: the nightly logs of data/evidence/vllm-startup-public.jsonl),
//   and the profiles are keyed by that release; else the vllm-ascend line (a tagged release pins its vLLM); else the
//   vLLM line. in.version_choice says which line decided and, when the other names a different X.Y, that it was not used.
// Lines that are absent leave `in` as it was.
void take_printed_versions(EngineInput& in, const std::optional<PrintedVersion>& vllm, const std::optional<PrintedVersion>& vllm_ascend);

// Issue 15 (misc21): the engine of a recorded deployment as its record states it: a validation case, and the case
// `logs --emit-case` writes, which `logs` resolves through the same step (so that logs and validate of its case select
// the same profile and build rules). engine empty = the device platform's default.
struct RecordedEngine {
  std::optional<std::string> engine, version, detail, notes, source;  // a case's engine, engine_version, engine_detail, notes, source
  std::optional<engine::EngineBuild> build;                            // its engine_build, parsed
  std::optional<engine::EngineCore> engine_core;                       // issue 15 (v0eng29): its engine_core ("v0" | "v1")
  std::optional<double> kv_cache_tokens, max_concurrency;             // its printed token and concurrency lines
  std::optional<int64_t> concurrency_len;
};
// The EngineInput of a record: the version (engine_version, else engine_detail) and, where it selects no profile, a
// "vX.Y" inside it, then inside the notes; still undated, the first date in the source, else in engine_detail, else in
// engine_version; then the printed token line's format (printed_tokens_are_blocks); the build; a version that selects
// nothing takes the newest profile (UnknownVersion::newest). Origins as a case names its fields ("engine_version",
// "case notes", ...).
EngineInput recorded_engine_input(const RecordedEngine& record);

// vLLM's flags as given; unset ones take the engine version's defaults.
struct Flags {
  std::optional<Given<int64_t>> tensor_parallel_size, pipeline_parallel_size, num_devices;
  // --data-parallel-size, --data-parallel-size-local (ranks on this node; headless nodes start 0 API
  // servers and the same per-rank engine), --enable-expert-parallel.
  std::optional<Given<int64_t>> data_parallel_size, data_parallel_size_local;
  std::optional<Given<bool>> enable_expert_parallel;
  // Issue 16 (quant33): --allow-deprecated-quantization (vLLM >= 0.14.0): a method the version deprecates loads with a
  // warning instead of ModelConfig's ValueError (engine::deprecated_quantization_refusal).
  std::optional<Given<bool>> allow_deprecated_quantization;
  // Issue 15 (multinode32): vLLM's multi-node data-parallel flags (vllm/engine/arg_utils.py, vllm/entrypoints/cli/serve.py;
  // the first release of each: data/engines/flag_versions.json). --headless: this node runs engines only, no API server;
  // --data-parallel-start-rank / -dpr: the first DP rank of this node; --data-parallel-address / -dpa and
  // --data-parallel-rpc-port / -dpp: the head node the ranks meet at; --data-parallel-backend / -dpb: mp | ray;
  // --data-parallel-hybrid-lb, --data-parallel-external-lb: the load-balancing mode; --api-server-count / -asc.
  std::optional<Given<bool>> headless, data_parallel_hybrid_lb, data_parallel_external_lb;
  std::optional<Given<int64_t>> data_parallel_start_rank, data_parallel_rpc_port, api_server_count;
  std::optional<Given<std::string>> data_parallel_address, data_parallel_backend;
  // Issue 15 (dpep33): --data-parallel-rank / -dpn (vLLM 0.9.2): this start is that one DP rank, behind an external load
  // balancer; --nnodes / -n and --node-rank / -r (vLLM 0.11.1, torchrun-style): the nodes the DP x TP x PP world is
  // split over evenly and this node's index, from which vLLM infers the node's DP ranks (arg_utils.py create_engine_config).
  // --master-addr / --master-port (0.11.1): the head node of that world's torch.distributed group (and, with the mp
  // backend and no --data-parallel-address, the DP address).
  std::optional<Given<int64_t>> data_parallel_rank, nnodes, node_rank, master_port;
  std::optional<Given<std::string>> master_addr;
  // Issue 15 (dcp): --decode-context-parallel-size / -dcp (vLLM ParallelConfig.decode_context_parallel_size): the ranks
  // of a TP group over which each request's KV tokens are split; no extra devices.
  std::optional<Given<int64_t>> decode_context_parallel_size;
  std::optional<Given<std::string>> speculative_config;   // vLLM's JSON: '{"method": "mtp", "num_speculative_tokens": 2}' 
  // Issue 15: --compilation-config / -cc as vLLM's JSON ('{"cudagraph_capture_sizes": [1, 2, 4], "cudagraph_mode": "PIECEWISE"}'),
  // its dotted forms merged in (-cc.max_cudagraph_capture_size=16); -O<n> / --optimization-level; --attention-backend.
  std::optional<Given<std::string>> compilation_config;
  std::optional<Given<int64_t>> optimization_level;
  std::optional<Given<std::string>> attention_backend;
  // Issue 15 (evid24): --moe-backend (vllm/config/kernel.py KernelConfig.moe_backend: auto, triton, marlin, flashinfer_cutlass,
  // flashinfer_b12x, ...), normalized as vLLM does (lower case, '-' read as '_').
  std::optional<Given<std::string>> moe_backend;
  std::optional<Given<double>> gpu_memory_utilization;
  std::optional<Given<int64_t>> max_model_len, max_num_seqs, max_num_batched_tokens;
  std::optional<Given<std::string>> kv_cache_dtype, quantization;
  // Issue 15 (warmup32): --dtype (vLLM ModelConfig.dtype): auto|half|float16|bfloat16|float|float32. Every unquantized
  // parameter, the activations and an auto KV cache take it (model_dtype_flag); auto keeps the config's.
  std::optional<Given<std::string>> dtype;
  std::optional<Given<std::string>> limit_mm_per_prompt;  // vLLM's JSON: '{"image": 1, "video": 0}'
  std::optional<Given<bool>> enforce_eager, skip_mm_profiling;
  std::optional<Given<bool>> enable_prefix_caching;       // --enable-prefix-caching (true) / --no-enable-prefix-caching (false)
  // Issue 15 (round 14): chunked prefill as the engine states it (V0 prints chunked_prefill_enabled=...); false with no
  // --max-num-batched-tokens makes the profile run forward a whole max_model_len prompt.
  std::optional<Given<bool>> enable_chunked_prefill;
  // Issue 15: --language-model-only (vLLM, the 'language_model_only' engine argument): every modality's limit at 0, so
  // the profile run is text only and, on vLLM >= 0.16, the vision tower is not built or loaded.
  std::optional<Given<bool>> language_model_only;
  // Issue 15: --mamba-ssm-cache-dtype (vLLM CacheConfig.mamba_ssm_cache_dtype): the dtype of a Mamba / Gated-DeltaNet
  // layer's SSM state; auto keeps the model's (Qwen3.5: the config's mamba_ssm_dtype).
  std::optional<Given<std::string>> mamba_ssm_cache_dtype;
  std::optional<Given<double>> device_total_bytes;        // a measured or stated total (replaces the catalogue's)
  std::optional<Given<double>> hccl_buffsize_mb;          // HCCL_BUFFSIZE in the engine's environment (CANN MB = MiB; default 200)
  std::optional<Given<std::string>> npu_driver_version;  // issue 15 (mc2): the NPU driver (Ascend HDK) version npu-smi prints
  // Issue 15/16 (nccl): how the GPUs of a TP group reach each other: nvswitch | nvlink-direct | pcie | network
  // (engine::parse_interconnect). Unset: the default of the card's form factor and TP size (an assumption, with a band).
  std::optional<Given<std::string>> interconnect;
  std::optional<Given<bool>> flashcomm1;                  // VLLM_ASCEND_ENABLE_FLASHCOMM1=1 in the environment
  std::optional<Given<bool>> enable_dsa_cp;               // vLLM-Ascend --additional-config '{"enable_dsa_cp": true}'
  std::optional<Given<bool>> enable_shared_expert_dp;     // vLLM-Ascend --additional-config '{"enable_shared_expert_dp": true}'
  std::optional<Given<std::string>> layer_sharding;       // vLLM-Ascend --additional-config '{"layer_sharding": [...]}', names joined by ","
  std::optional<Given<int64_t>> num_redundant_experts;    // vLLM-Ascend --additional-config '{"eplb_config": {"num_redundant_experts": R}}'
  std::optional<Given<bool>> dynamic_eplb;                // vLLM-Ascend --additional-config '{"eplb_config": {"dynamic_eplb": true}}'
  std::optional<Given<bool>> kv_producer;                 // --kv-transfer-config kv_role kv_producer or kv_both (a prefill instance)
  std::optional<Given<bool>> mlapo;                       // VLLM_ASCEND_ENABLE_MLAPO in the environment (issue 15, dsv32)
  std::optional<Given<bool>> flashinfer_sampler;          // issue 15: the sampling path a log printed or VLLM_USE_FLASHINFER_SAMPLER set
  std::optional<Given<bool>> rocm_moe_padding;            // issue 15 (acc30): VLLM_ROCM_MOE_PADDING in the environment (bool(int(value)))
  std::optional<model::QuantScheme> quant_scheme;         // a storage scheme the checkpoint does not state
  // Issue 15: VLLM_PP_LAYER_PARTITION as vLLM reads it ("24,40": decoder layers per stage, in rank order).
  std::optional<Given<std::string>> pp_layer_partition;
  // Issue 15: where a speculative drafter checkpoint's config is looked for besides the catalogue and the local
  // hub cache (fit/plan --models DIR: <org>__<name>/config.json).
  std::vector<std::string> drafter_model_dirs;
};

// Issue 15 (multinode32): the node a start describes under vLLM's data parallel: its DP ranks
// [start_rank, start_rank + local) of data_parallel_size (--data-parallel-size-local, else 1 for an external-LB rank,
// else the whole DP size), whether it starts an API server (--headless: none) and its devices (local x TP x PP).
// Issue 15 (dpep33): with --nnodes N > 1 the node holds world / N devices; a replica (TP x PP) larger than that spans
// nodes (`devices` then is that share of one replica, `local_ranks` 1), node_rank's share of it.
struct DataParallelNode {
  int64_t start_rank = 0, local_ranks = 1, devices = 1;
  bool api_server = true;
  int64_t nnodes = 1, node_rank = 0;
  bool replica_spans_nodes = false;
};
DataParallelNode data_parallel_node(const Flags& flags, int64_t tensor_parallel_size, int64_t pipeline_parallel_size, int64_t data_parallel_size);

// Issue 15 (multinode32): vLLM's own refusals of the multi-node data-parallel flags at the engine's version
// (`engine` its profile, compared at rule_version()): a flag the version's parser does not have (argparse's
// "vllm: error: unrecognized arguments: ..."), --headless with --data-parallel-size-local 0, --headless with
// --api-server-count, --headless with --data-parallel-hybrid-lb, --data-parallel-hybrid-lb without
// --data-parallel-size-local, --data-parallel-start-rank without --headless on 0.9.2, a backend other than mp or ray,
// a start rank whose local ranks pass the DP size. invalid_argument naming the flag's origin. On success, adds to
// `assumptions` what the start describes on its node (its ranks and devices, headless or not) and what vLLM takes
// silently that a multi-node start gets wrong (no --data-parallel-address: 127.0.0.1). Other engines: Ok, nothing added.
// Issue 15 (graph34): from vLLM 0.21 an external-LB start (--data-parallel-rank or --data-parallel-external-lb) with DP > 1
// of a model without experts (`model_num_experts` 0: vLLM's ModelConfig.is_moe, num_experts > 0) is refused with
// vLLM's "Non-MoE models do not support external data parallel mode. ..." ValueError.
Status check_data_parallel_flags(const Flags& flags, const engine::EngineProfile& engine, int64_t tensor_parallel_size, int64_t pipeline_parallel_size,
                                 int64_t data_parallel_size, int64_t model_num_experts, const std::string& device_id, std::vector<std::string>& assumptions);
// The refusal above alone (vLLM 0.21 on, DP > 1, an external-LB start, a model without experts), for `validate` to score
// a recorded start of that kind as one that does not start; nullopt where vLLM takes it.
std::optional<Error> non_moe_external_data_parallel_refusal(const Flags& flags, const engine::EngineProfile& engine, int64_t data_parallel_size,
                                                            int64_t model_num_experts);

// Issue 15 (dcp): vLLM's checks of --decode-context-parallel-size `dcp` against the model and the TP size: TP a multiple
// of it; for a model without MLA, TP above the KV heads, dcp at most TP // KV heads and dividing the query heads per KV
// head; no sliding-window layers. invalid_argument with the engine's own message after `origin`. Ok for dcp 1.
Status check_decode_context_parallel(const model::ModelSpec& m, int64_t tensor_parallel_size, int64_t decode_context_parallel_size, const std::string& origin);

struct Inputs {
  model::ModelSpec model;
  DeviceInput device;
  EngineInput engine;
  Flags flags;
};

struct Catalogs {
  const device::DeviceCatalog* devices = nullptr;
  const engine::EngineCatalog* engines = nullptr;
};

// How resolve_engine came to its profile: the inputs name the version ("vllm@0.18", a version in a range), the
// evidence dates it (a "vX.Y" in a hint, the evidence's date, the printed token line's format), or neither, so the
// newest profile is assumed (issue 15: then the prediction is also given across the versions, see VersionBand).
enum class VersionBasis { stated, dated, newest_assumed };

struct Resolved {
  model::ModelSpec model;
  device::DeviceSpec device;
  engine::EngineProfile engine;
  VersionBasis engine_version_basis = VersionBasis::stated;
  engine::Overheads overheads;
  estimate::Deployment deployment;
  std::vector<std::string> assumptions;  // every choice this step made that the inputs did not state
  std::vector<std::string> provenance;   // "gpu_memory_utilization 0.9 from --gpu-memory-utilization"
  // Issue 15/16 (nccl): where the interconnect was assumed (not given) and the version counts the NCCL buffers, the other
  // interconnects its default rule names as plausible (the band, across_interconnects); empty otherwise.
  std::vector<engine::Interconnect> interconnect_alternatives;
  // Issue 16 (quant33): whether the command passes --allow-deprecated-quantization (Flags::allow_deprecated_quantization).
  engine::DeprecatedQuantization deprecated_quantization = engine::DeprecatedQuantization::refused;
};

// The --kv-cache-dtype values the estimate sizes (auto = the model's dtype).
const std::vector<std::string>& known_kv_cache_dtypes();

// Issue 15 (warmup32): the model dtype a --dtype value names (vLLM's _STR_DTYPE_TO_TORCH_DTYPE: half and float16, bfloat16,
// float and float32); nullopt for auto or a name vLLM does not take (check_flags refuses that one).
std::optional<model::Dtype> model_dtype_flag(const std::string& value);

// The checks every command applies to flags, one message per bad value, joined with "; " into one
// invalid_argument error: utilization finite in (0, 1]; parallel sizes, num_devices, max_model_len,
// max_num_seqs and max_num_batched_tokens at least 1; num_devices divisible by TP x PP x DP (by PP x DP
// when TP is not given); data_parallel_size_local at most data_parallel_size (vLLM ParallelConfig's
// message); a known kv-cache dtype; --limit-mm-per-prompt a JSON object of non-negative counts;
// --speculative-config a JSON object whose method vLLM accepts (its pydantic message otherwise); HCCL_BUFFSIZE an
// integer of at least 1 (CANN's rule); an NPU driver version npu-smi's form (engine::parse_npu_driver_version). `platform` (cuda | npu | rocm | cpu; empty = cuda) names the device-control
// variable in the quote of vLLM's own failure (device_control_env_var).
Status check_flags(const Flags& flags, const std::string& platform = "");

// The variable vLLM's platform sets to give each rank its devices (Platform.device_control_env_var):
// ASCEND_RT_VISIBLE_DEVICES on npu (vllm-ascend vllm_ascend/platform.py NPUPlatform), CPU_VISIBLE_MEMORY_NODES
// on cpu (vllm/platforms/cpu.py), CUDA_VISIBLE_DEVICES on cuda and rocm (vllm/platforms/cuda.py, rocm.py) and
// when the platform is not known.
std::string device_control_env_var(const std::string& platform);

// The platform a --device text names before it is resolved: --platform when given, else the catalogue
// card's, else a platform word in the text (ascend, npu, amd, ...); empty when none says.
std::string device_text_platform(const std::string& text, const std::string& platform_flag);

// --speculative-config as vLLM reads it: method (else inferred from "model" as vLLM does: "eagle3" in
// the name -> eagle3, "eagle" -> eagle, else draft_model), num_speculative_tokens (default 1), model.
// invalid_argument with vLLM's message for a method outside its SpeculativeMethod list.
Expected<estimate::SpeculativeConfig> parse_speculative_config(const Given<std::string>& given);

// --compilation-config as vLLM reads it (vllm/config/compilation.py CompilationConfig): cudagraph_capture_sizes (a list
// of integers), max_cudagraph_capture_size (an integer), cudagraph_mode (a CUDAGraphMode name, any case), and "level" /
// "mode" (0: no compilation; kept only as the compilation level). Other keys are vLLM's and are ignored. invalid_argument:
// not a JSON object, a field of the wrong type, a non-positive size, an unknown mode (vLLM's validator
// CUDAGraphMode[value.upper()] raises KeyError).
Expected<estimate::GraphCaptureConfig> parse_compilation_config(const Given<std::string>& given);
// Merges a dotted argument into the flag's JSON as vLLM's FlexibleArgumentParser does (-cc.key=value,
// --compilation-config.key.sub value): the value is JSON when it parses, else its text. `key` is what follows the first
// dot. invalid_argument when the flag's JSON so far is not an object.
Status merge_dotted_json(std::optional<Given<std::string>>& into, const std::string& key, const std::string& value, const std::string& origin);

// The estimate::Deployment the flags describe (after check_flags): TP = num_devices / (PP x DP) when TP is
// not given. invalid_argument as check_flags.
Expected<estimate::Deployment> deployment_from_flags(const Flags& flags, const std::string& platform = "");

// What a log's printed "GPU KV cache size: T tokens" and "Maximum concurrency for L tokens per request: Cx" say
// about the version: true (num_blocks x block size, vLLM before 0.21) when T differs from int(C x L) by more than
// C's printed 0.01 allows; nullopt when they agree (both formats fit) or L is not positive.
std::optional<bool> printed_tokens_are_blocks(double tokens, double concurrency, int64_t len);

// The engine profile an EngineInput selects, and the assumptions made (datings, newest profile).
// not_found for an unknown engine, or a version outside every range with UnknownVersion::error.
Expected<engine::EngineProfile> resolve_engine(const EngineInput& input, const engine::EngineCatalog& engines, const std::string& device_platform,
                                               std::vector<std::string>& assumptions);
// The same, also saying how the profile was chosen (`basis`, set whenever a profile is returned).
Expected<engine::EngineProfile> resolve_engine(const EngineInput& input, const engine::EngineCatalog& engines, const std::string& device_platform,
                                               std::vector<std::string>& assumptions, VersionBasis& basis);

// The device a DeviceInput names; assumptions gets the stated total used for a device outside the
// catalogue, the card assumed for an ambiguous name ("A100", "910B") and why, the card a free-text name
// or a runtime total identified, and --device-memory's size. not_found when a name matches nothing, or
// free text names no device and states no total; invalid_argument for --platform without
// --device-memory, an unknown platform, or a platform the named card is not on.
Expected<device::DeviceSpec> resolve_device(const DeviceInput& input, const device::DeviceCatalog& devices, std::vector<std::string>& assumptions);

// Total memory stated in a device description ("79.18 GiB total", "total_gpu_memory=23.58GiB",
// "total memory 65452113920 B", "15.99 GiB usable"), in bytes.
std::optional<double> stated_total_bytes(const std::string& text);

// Heterogeneous pipeline parallelism (issue 15): a DeviceInput of the name form whose text lists one card per
// stage, comma-separated in PP rank order ("A100-80G,L40S"), puts each stage on its own card; the first is the
// deployment's device. Errors: a count other than the pipeline parallel size, cards of different platforms.

// The whole step: flags checked, device, engine (which must run on the device's platform) and its
// overheads resolved, the deployment built. Errors: invalid_argument (a bad flag, an engine for another
// platform, expert parallel over more DP x TP ranks than the model has experts), not_found (device, engine, version, overheads).
Expected<Resolved> resolve_deployment(const Inputs& inputs, const Catalogs& catalogs);

// Issue 15: a --max-model-len above the model's derived length (ModelSpec::derived_max_model_len) is vLLM's ValueError
// at config time, which vLLM-Ascend inherits: invalid_argument naming `origin` and quoting the engine, unless
// VLLM_ALLOW_LONG_MAX_MODEL_LEN is set ("1" or "true", as vllm/envs.py reads it), where vLLM warns and takes the
// length: then an assumption says so. No check where the model states no length or no --max-model-len is given.
enum class LongMaxModelLen { refused, allowed };
Status check_max_model_len(const model::ModelSpec& model, const std::optional<Given<int64_t>>& max_model_len, LongMaxModelLen allow,
                           std::vector<std::string>& assumptions);
// VLLM_ALLOW_LONG_MAX_MODEL_LEN as vLLM reads it from an environment value (nullptr: unset).
LongMaxModelLen long_max_model_len_from_env(const char* value);

// Issue 15, "the version from the evidence": when the inputs name an engine without a version that selects a
// profile and nothing dates it (no "@X.Y", no dated hint, no evidence date a profile's first release precedes, no
// printed token line a profile prints: VersionBasis::newest_assumed), the estimate under every profile of that
// engine that runs on the device, instead of silently the newest. One point per profile, oldest first.
struct VersionPoint {
  std::string engine_id;   // the profile ("vllm@0.9.2-0.11.0")
  bool fits = false;
  estimate::Failure failure = estimate::Failure::none;
  int64_t kv_tokens = 0;
  double available_kv_bytes = 0;
  double max_concurrency = 0;
};
struct VersionBand {
  std::vector<VersionPoint> points;  // empty when the version is stated or dated
  int64_t kv_tokens_min = 0, kv_tokens_max = 0;  // over the points that size a KV cache
  int fitting = 0;                   // points whose verdict is fits
  int64_t max_model_len = 0;         // issue 15 (fitcons27): the context every point is sized at, tokens
};

// The band over the plausible versions (see VersionBand); profiles whose flags the version rejects are left out, and
// fewer than two profiles left is no band (llama.cpp@any: one profile for every version).
VersionBand across_versions(const Inputs& inputs, const Catalogs& catalogs);

// Issue 15/16 (nccl, misc21): the assumption fit states (and plan per row) when the interconnect of a TP group of
// `tensor_parallel_size` on `dev` is the default `rule` of its form factor, not given: "assumed nvswitch: <why> (H100-SXM,
// form factor sxm, TP 2; <source>); give --interconnect".
std::string interconnect_assumption(const device::DeviceSpec& dev, const engine::InterconnectDefault& rule, int64_t tensor_parallel_size);
// The same where the card's form factor has no default at that TP size: the buffers are left to the fixed non-torch share.
std::string no_interconnect_default(const device::DeviceSpec& dev, const engine::EngineProfile& eng, int64_t tensor_parallel_size);

// Issue 15/16 (nccl): the estimate under the assumed interconnect and under each alternative its default rule names
// (Resolved::interconnect_alternatives), the assumed one first. Empty when the interconnect was given, the version does
// not count the NCCL buffers, or the rule names no alternative.
struct InterconnectPoint {
  std::string interconnect;  // "nvswitch"
  bool assumed = false;      // the default the estimate took
  bool fits = false;
  estimate::Failure failure = estimate::Failure::none;
  int64_t kv_tokens = 0;
  double available_kv_bytes = 0;
  double nccl_buffer_bytes = 0;
  double allreduce_workspace_bytes = 0;  // issue 15 (tpws): allocated only where the group has NVSwitch multicast
  double max_concurrency = 0;
};
struct InterconnectBand {
  std::vector<InterconnectPoint> points;
  int64_t kv_tokens_min = 0, kv_tokens_max = 0;  // over the points that size a KV cache
  double available_kv_min_bytes = 0, available_kv_max_bytes = 0;
  int fitting = 0;
  int64_t max_model_len = 0;  // issue 15 (fitcons27): the context every point is sized at, tokens
};
InterconnectBand across_interconnects(const Inputs& inputs, const Catalogs& catalogs, const Resolved& resolved);

}  // namespace preflight::deploy
