// plan/planner: answers the two questions users ask before booking hardware. "What can this
// hardware run?" (plan_for_device: every catalogue model and the quantized variants the engine
// accepts) and "what does this model need?" (plan_for_model: the cheapest device count, layout and
// quantization per device type). Every candidate is verified by estimate_fit and estimate_speed;
// every rejected one keeps its reason. Recommendations carry a ready-to-run launch (plan/launch).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/memory.hpp"
#include "base/shared_text.hpp"
#include "deploy/deployment.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/launch_rules.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/speed.hpp"
#include "estimate/speed_lines.hpp"
#include "model/model_spec.hpp"
#include "model/quant_variant.hpp"

namespace preflight::plan {

struct PlanTargets {
  std::optional<int64_t> context_tokens;   // per request; default min(32768, model max)
  int64_t concurrency = 1;                 // requests served at once, each at the full context
  std::optional<double> min_tokens_per_s;  // per stream, at `concurrency`
  std::optional<int64_t> decode_context_tokens;  // context at which speed is quoted; default the context target (issue 20)
  std::optional<double> bandwidth_bytes_per_s;  // measured copy bandwidth (replaces the catalogue)
  std::optional<double> gpu_memory_utilization;
  // Issue 15: plan --speculative-config, parsed and its drafter resolved as fit does (deploy::deployment_from_flags):
  // every candidate is sized with it (candidate_deployment). method empty: no speculative decoding.
  estimate::SpeculativeConfig speculative;
  // Issue 15: plan --compilation-config / -O / --attention-backend, parsed as fit parses them: every candidate's graph
  // term uses the capture settings. Empty: the version's defaults.
  estimate::GraphCaptureConfig graph_capture;
  // Issue 15 (dcp): plan --decode-context-parallel-size: every candidate sized with it (not searched over); the start
  // commands carry it where it is above 1.
  int64_t decode_context_parallel_size = 1;
  // Issue 15/16 (nccl): plan --interconnect: every candidate's TP group reaches its peers so. Unset: each card's default
  // (candidate_interconnect).
  std::optional<engine::Interconnect> interconnect;
  // Issue 15/16 (plan28): the engine settings fit takes too (cli/engine_flags: --kv-cache-dtype, --enforce-eager,
  // --max-num-seqs, ...), as deploy::deployment_from_flags makes them: every candidate's deployment starts from this one
  // (candidate_deployment), its layout, context and quantization then the candidate's own. Default: the engine's defaults.
  estimate::Deployment engine_settings;
  // Issue 16 (planq32): --dtype as given, lowercased ("" when not given): the rows' model takes it (cli), a card that cannot
  // compute in it is refused with fit's words (deploy::model_dtype_refusal), the start command carries it.
  std::string model_dtype;
  // Issue 15/16 (plan28): a context above a model's derived max_model_len (ModelSpec::derived_max_model_len) is vLLM's
  // ValueError (deploy::check_max_model_len): such a row is rejected with it, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN is set
  // (allowed: sized at the context, its start command sets the variable).
  deploy::LongMaxModelLen long_max_model_len = deploy::LongMaxModelLen::refused;
};

// Issue 15/16 (plan28): what every vLLM row's start command carries for the engine settings (cli/engine_flags renders
// them in vLLM's spelling): arguments of `vllm serve`, its environment, and the environment only an NPU row's engine
// reads (HCCL_BUFFSIZE). --kv-cache-dtype is not here: each row's start command writes its fit's KV cache dtype.
struct EngineArgs {
  std::vector<std::string> serve_args;  // "--enforce-eager", "--max-num-seqs 64"
  std::vector<std::string> env;         // "VLLM_USE_FLASHINFER_SAMPLER=1"
  std::vector<std::string> npu_env;     // "HCCL_BUFFSIZE=400"
};

// The commands one node runs, in order (head first), when a layout spans nodes.
struct NodeCommands {
  std::string role;                // "head" | "worker"
  std::vector<std::string> lines;  // environment set-up and exports, then `ray start`
};

struct Launch {
  std::vector<std::string> prepare;     // once, before the first start: download and convert a checkpoint
  std::vector<std::string> shell;       // set-up lines before the serve command
  std::vector<std::string> env;         // NAME=value
  std::string checkpoint;               // what `vllm serve` loads: a hub repo id or a converted path
  std::string serve;                    // vllm serve ...
  std::vector<std::string> multi_node;  // every node's block as text (head, workers), when the layout spans nodes
  std::vector<NodeCommands> nodes;      // the same blocks as records
  std::vector<std::string> notes;       // why each workaround is there (with source)
};

// Issue 19 (round 9): a row's start commands, held once per distinct launch (plan::same_launch) and shared by the rows
// that have it, so that a row holds a pointer and not its own 3-4 KB of text. Read-only once made: a change is a new
// Launch assigned whole. An unset one reads as an empty Launch (a row without start commands).
class SharedLaunch {
 public:
  SharedLaunch() = default;
  SharedLaunch(Launch launch) : m_launch(std::make_shared<const Launch>(std::move(launch))) {}  // implicit: `c.launch = build_launch(...)`
  const Launch& operator*() const;
  const Launch* operator->() const { return &**this; }

 private:
  std::shared_ptr<const Launch> m_launch;
};

// Issue 16 (llamacpp30): a llama.cpp row's buffers as llama.cpp allocates them at start (plan/llama_rows), summed over
// its devices, and the -c / -np its llama-server line passes.
struct LlamaRowBuffers {
  int64_t ctx_size = 0;  // -c: the KV cells llama.cpp allocates, shared by the slots
  int64_t slots = 1;     // -np: requests at once, -c / -np cells each
  double model_bytes = 0, kv_bytes = 0, compute_bytes = 0, output_bytes = 0, rs_bytes = 0;
  double device_bytes = 0;  // the most one device holds (a CPU row: all of it), held against its memory
  std::string device;       // that device as llama.cpp names it (CPU, CUDA0, ...)
  std::vector<std::string> formulas, assumptions;
};

// Issue 19 (planfast4): what a plan keeps of a candidate's fit: the numbers and verdict its outputs (table, JSON, start
// commands, DP+EP rows, speculative rows) and its reasons read, named and typed as in estimate::FitEstimate. A whole
// FitEstimate is 848 B with seven vectors and four strings; a plan holds ~79,000 rows, which the ranking moves and the
// caller frees, so a row keeps this (about a third of it) and the fit itself lives in its worker's scratch only while
// the row is built. `fit --json` and `preflight fit` show a whole deployment's fit; a plan row never did (no terms,
// groups, ranks, stages, lines or assumptions: Deployment::explain, rank_tree and memory_terms are off in a plan).
struct RowFit {
  SharedText engine_id;  // the profile the fit ran under (Candidate::engine_id's text); empty: no fit ran
  // Planfast14: this text and kv_cache_dtype are SharedText, as Candidate's are: a row is moved as the ranking orders it,
  // and a std::string's move was most of a row's (~530 instructions, ~58,000 moves in a whole-catalogue plan).
  SharedText device_id;
  int64_t decode_context_parallel_size = 1;  // the row's layout and context are the Candidate's own fields
  int64_t drafter_layers = 0;
  double drafter_weights_bytes = 0;
  double gpu_memory_utilization = 0;
  SharedText kv_cache_dtype;
  SharedText weight_scheme;
  double total_bytes = 0, requested_bytes = 0, weights_bytes = 0, nccl_buffer_bytes = 0, available_kv_bytes = 0;
  double activation_vision_bytes = 0;
  bool encoder_profiles_video = false;
  bool fits = false;
  estimate::Failure failure = estimate::Failure::none;
  int64_t num_blocks = 0, kv_tokens = 0, kv_bytes_per_token_rank = 0;
  double max_concurrency = 0;
  SharedText failure_message;
  SharedText verdict_depends_on;
  std::shared_ptr<const LlamaRowBuffers> llama;  // a llama.cpp row's own sizing (plan/llama_rows); null on other engines' rows
};

// The RowFit of `fit`; `engine_id` is the id of the profile it ran under (fit.engine_id's text) and `device_id` the
// card's (fit.device_id's text), held shared rather than copied per row (one made here where they are not those texts).
RowFit row_fit(const estimate::FitEstimate& fit, const SharedText& engine_id, const SharedText& device_id = {});

struct Candidate {
  // Issue 19 (round 14): the texts every candidate of a model, variant or engine repeats (model id, variant, engine
  // id, quantization flag) and the reason, which the cards and counts of one (model, variant) often share (a
  // failure copied with its fit, a model's layout-free facts), are SharedText: one block for all of them.
  SharedText model_id;
  SharedText variant;               // the variant's full name: "bf16 as published", "msModelSlim W8A8 (static; ...)", ...
  SharedText variant_id;            // its id in data/variants/quant_variants.json; empty = checkpoint as published
  int variant_rank = 0;             // 0 as published, 1 eight-bit, 2 four-bit (ranking: higher precision first)
  SharedText quantization_flag;     // --quantization value, empty = checkpoint as published
  bool no_video = false;           // only the start without video input fits (the profile's dummy video is too large)
  bool skip_mm_profiling = false;  // only the start without the encoder profile fits the context
  int64_t fit_with_encoder_pass_tokens = 0;  // KV tokens with that profile (under the context)
  // Planfast14: SharedText as the texts above (one block per card in a plan), and so are cheaper, interconnect and its
  // basis: a row's move is then the SharedText's pointers, not a std::string's characters.
  SharedText device_id;
  SharedText engine_id;
  int64_t num_devices = 1, tensor_parallel_size = 1, pipeline_parallel_size = 1;
  // Issue 15, DP+EP rows (plan/dp_ep): data_parallel_size replicas of TP x PP with --enable-expert-parallel;
  // num_devices counts every replica. `fit` is one replica's (the engine prints per DP rank).
  int64_t data_parallel_size = 1;
  bool expert_parallel = false;
  SharedText cheaper;               // a DP+EP row: why it is kept over the TP/PP layouts of the same device
  int64_t context_tokens = 0;
  double params = 0;                // total parameters
  RowFit fit;                       // numbers and verdict (the whole FitEstimate: `preflight fit`)
  estimate::SpeedEstimate speed;
  // Issue 19 (planfast5): a RowDetail::every_row row's decode-step and prefill provenance lines, left out of
  // speed.provenance and kept as the numbers they print (estimate/speed_lines.hpp); the JSON writer writes them in their
  // places, and estimate::provenance_with(speed, speed_lines) is the whole provenance. Unset elsewhere.
  estimate::SpeedLines speed_lines;
  double tokens_per_s = 0;          // per stream at the target concurrency
  double aggregate_tokens_per_s = 0;
  bool meets = false;
  SharedText reason;                // why it fails, or why it fits (architecture facts)
  SharedLaunch launch;             // the start commands (empty: none built for this row)
  // Issue 15/16 (nccl, misc21): a row whose fit counts the NCCL buffers of its TP group (TP > 1 where the version counts
  // them, engines.json nccl_buffers.counted) names the interconnect they were sized for ("nvswitch"; "unknown" where the
  // card's form factor has no default) and how it was chosen: "--interconnect pcie", or fit's assumption
  // (deploy::interconnect_assumption). Both empty: the row has no such term.
  SharedText interconnect;
  SharedText interconnect_basis;
};

// Issue 19 (round 20): a plan's rows. A whole-catalogue plan writes ~76 MB of fresh candidate slots (460 lists of
// ~166 KB; ~124 MB before a row kept a RowFit): their blocks come from chunks backed by huge pages (base/memory
// LargeBlockAllocator), a few dozen faults of 2 MiB instead of ~19,000 of 4 KiB. Otherwise a std::vector.
using CandidateList = std::vector<Candidate, LargeBlockAllocator<Candidate>>;

struct PlanResult {
  CandidateList recommended;  // ranked
  CandidateList rejected;     // with reasons
  std::vector<std::string> assumptions;
  // ux31: when nothing meets the targets within --max-devices, the fewest devices that would ("8 x H100-SXM, --max-devices
  // 8"); empty when none does up to 64 or rows were found.
  std::string fewest_that_meet;
};

// What the served model is used for; it selects the launch rules (plan/launch.hpp).
enum class Workload {
  chat,   // default: the rules for plain chat serving
  agent,  // tool calls and reasoning: the tool-call and reasoning parsers of the model family
};

// What a plan builds for its recommended rows beyond their numbers, verdicts and reasons. Either way
// every row, its order and every number are the same.
enum class RowDetail {
  every_row,  // default: every recommended row has its start commands (launch) and its speed estimate's text
              // (provenance): what `plan --json` writes
  table,      // only what the table prints: the first recommended row's start commands, no speed provenance
};

struct PlanInputs {
  const engine::EngineCatalog* engines = nullptr;
  const engine::SpeedCatalog* speeds = nullptr;
  const engine::LaunchRules* launch_rules = nullptr;
  std::string engine;                  // "vllm-ascend@0.23", or empty = the device platform's engine, newest
  // Issue 15/16 (misc21): --engine-version's V when --engine names no engine (deploy::apply_engine_version puts it into
  // `engine` as "E@V" otherwise): the platform's engine at that version, on every device. Empty: none.
  std::string engine_version;
  Workload workload = Workload::chat;  // for the start command's launch rules
  std::string variant;                 // plan --variant: only this variant (an id of the list, "bf16" = as published); empty = every one
  RowDetail detail = RowDetail::every_row;
  int threads = 1;                     // workers plan_for_device shares the models among (0 = the hardware's concurrency)
  // Issue 15: the --speculative-config JSON exactly as given, for the start commands (LaunchOptions); the
  // sizing reads PlanTargets::speculative, parsed from the same text. Empty: none.
  std::string speculative_config;
  // Issue 15: the --compilation-config JSON as given (dotted forms merged), for the start commands. Empty: none.
  std::string compilation_config;
  // Issue 15/16 (plan28): --engine-build, parsed, with its origin: decides the rules with a build boundary, as in fit.
  std::optional<engine::EngineBuild> engine_build;
  std::string engine_build_origin;
  EngineArgs engine_args;  // issue 15/16 (plan28): the engine settings' start-command arguments
  // ux28: `plan --data-parallel N`: the replicas each row is started as. Rows whose N replicas fill more than one node
  // get the launch rules that hold across nodes (every node exports its interface, as Ray's layout over nodes does).
  int64_t data_parallel_replicas = 1;
  // Issue 16 (llamacpp30): `plan --host-cores N`: a CPU row's llama-server line passes -t N (0: not given; llama.cpp's
  // default, its physical cores, applies and the row's notes say so).
  int64_t host_cores = 0;
  // Issue 15 (eng31): --kv-cache-dtype as given ("" = none; PlanTargets::engine_settings sizes with it): vLLM's V1 oracle
  // sends some cards to the V0 engine for it (plan_engine on a device, engine_cores.json v1_fallbacks).
  std::string kv_cache_dtype;
  std::string attention_backend;  // --attention-backend as given ("" = none), which the same oracle reads (eng31)
};

// The engine a plan resolves on every device (deploy::resolve_engine): `engine`, with `engine_version` as its version.
// deploy::stated_engine_version of it is the version the speed estimate reads (SpeedWorkload::engine_version).
deploy::EngineInput plan_engine_input(const PlanInputs& in);
// That engine's profile on a device of `platform` (deploy::resolve_engine), with the build of --engine-build named on it
// as fit's resolve_deployment names it (issue 15/16, plan28: the rules with a build boundary then read it).
Expected<engine::EngineProfile> plan_engine(const PlanInputs& in, const std::string& platform);
// Issue 15 (eng31): that engine's profile on `dev` as fit resolves it there: also what vLLM's V1 oracle sends back to V0
// on this card (deploy::apply_v1_fallback: a card below compute capability 8.0 on vLLM 0.8 - 0.10.1, a --kv-cache-dtype
// on Ampere / Ada 0.8 - 0.9 or an NPU 0.8 - 0.10), so a plan row sizes and prints V0 where fit does. The assumptions it
// makes go to `assumptions` when given.
Expected<engine::EngineProfile> plan_engine(const PlanInputs& in, const device::DeviceSpec& dev, std::vector<std::string>* assumptions = nullptr);
// Issue 15 (eng31): the engine-core assumptions (the V0 engine, by default or by the V1 oracle) among `said` (what
// plan_engine said on a card), each once, added to `r`'s assumptions: the plan says which cards' rows were sized as V0, as
// fit does. plan_for_device and plan_for_model add them from the engines they resolve (issue 19, llamacpp33: the CLI
// resolved every card's engine a second time for them).
void note_engine_cores(PlanResult& r, std::vector<std::string> said);

// Variants worth trying for a model on an engine (ids of data/variants/quant_variants.json; "" = the
// checkpoint as published): when the checkpoint is not quantized, the 8- and 4-bit variants whose
// --quantization the engine accepts and that no rule of the variant rejects on every device of it
// (vLLM-Ascend: msModelSlim W8A8, W4A8_DYNAMIC, and W4A16 for MoE models; vLLM: FP8 at load, and AWQ where
// `published` (default: the shipped data/engines/quantized_checkpoints.json) lists an AWQ checkpoint of the
// model, else compressed-tensors W4A16, the variant its conversion recipe produces). A checkpoint published
// in a format the engine does not serve gets the same variants where a conversion can start from it: its BF16
// original, or a cast back to BF16 (FP8 block on vLLM-Ascend; converts_published_checkpoint).
// Issue 16: only variants a
// start command can serve as written: a published checkpoint of the model in it, a conversion recipe on the
// engine's platform, or fp8 at load (msModelSlim W4A16, with no catalogued recipe, is left out).
// Issue 16: with `device_family` (a card's family in data/devices/devices.json), also the variants only some cards run
// (the Ascend 950 MX schemes W8A8_MXFP8, W4A4_MXFP4, W4A16_MXFP4, W4A8_MXFP) that no rule of the variant rejects on that family at
// the engine's version and for the model's kind, and that a start command can serve; an experts-only 4-bit variant
// (W4A4_MXFP4) is not tried on a model without experts, where it is the 8-bit variant's bytes. Empty: no card, none of them.
std::vector<std::string> quantization_variants(const model::ModelSpec& model, const engine::EngineProfile& engine,
                                               const engine::QuantizedCatalog* published = nullptr, const std::string& device_family = "");

// Issue 16 (quant26): `variants` (one list per model of `models`, quantization_variants' ids) less the conversion rows of
// a quantized release that the checkpoint catalogue (in.launch_rules, else the shipped one) lists as made from a BF16
// original among `models`: those rows start from that original, which lists the same variants (see planner.cpp). Its
// own format ("" or its own variant id) is kept, and so is every list when the original is not in `models`.
void drop_release_conversions(const std::vector<model::ModelSpec>& models, const PlanInputs& in, std::vector<std::vector<std::string>>& variants);

// What of the card-bound variants (above) the engine's rules let a card of `device_family` try, for a dense and for a
// MoE model ("" when none): two cards of one platform with the same key get the same variant lists in a plan.
std::string card_bound_variants_key(const engine::EngineProfile& engine, const std::string& device_family);

// `variant`: an id of data/variants/quant_variants.json ("" = as published); the candidate is sized
// with that variant's storage, as `fit --variant` sizes it. Device counts tried by the plans: 1, 2,
// 4, 8 (one node) and 16 (two nodes, TP 8 x PP 2).
Candidate evaluate_candidate(const model::ModelSpec& model, const device::DeviceSpec& device, const PlanInputs& in, const std::string& variant,
                             int64_t num_devices, const PlanTargets& targets);

// Question 1: what this hardware runs. `models` are the catalogue (or any list), evaluated on
// `in.threads` workers; the result does not depend on their number.
PlanResult plan_for_device(const std::vector<model::ModelSpec>& models, const device::DeviceSpec& device, int64_t num_devices,
                           const PlanInputs& in, const PlanTargets& targets);

// Question 1 for many devices at once (the whole catalogue, `bench/micro`): for each device and each
// count in `device_counts`, in that order, exactly what plan_for_device returns for the pair. The
// parameter count of each model is computed once, the engine and variant lists once per platform; the
// (model, variant) pairs of each platform are shared among `threads` workers (std::thread; 0 = the
// hardware's concurrency), each evaluated over every count and every card of the platform together, so
// that the work the cards share is done once (issue 19: the fit per set of cards with the same fit, the
// step traffic, the start commands per distinct launch).
struct DevicePlan {
  std::string device_id;
  int64_t num_devices = 1;
  PlanResult result;
};
std::vector<DevicePlan> plan_for_devices(const std::vector<model::ModelSpec>& models, const std::vector<device::DeviceSpec>& devices,
                                         const std::vector<int64_t>& device_counts, const PlanInputs& in, const PlanTargets& targets, int threads = 0);
// Issue 19 (planfast7b): frees `plans` (plan_for_devices' result; empty after) on `threads` workers, each taking whole
// plans in turn: a whole-catalogue plan holds ~146,000 heap blocks in its rows (the speed estimates' points, provenance
// and assumptions), whose freeing on one thread after the workers were done took a fifth of the calling worker's time.
void release_plans(std::vector<DevicePlan>& plans, int threads = 0);

// Question 2: what this model needs, per device type: the cheapest count, layout and variant.
PlanResult plan_for_model(const model::ModelSpec& model, const std::vector<device::DeviceSpec>& devices, const PlanInputs& in,
                          const PlanTargets& targets, int64_t max_devices);

// Shared by the planner's rows and plan/dp_ep's DP+EP rows, so both size and name a candidate alike.
// Precision rank: published weights 0 (Candidate's default), eight-bit 1, four-bit 2.
int variant_rank(const model::QuantVariant& v);
// Issue 16: a published quantized checkpoint is named by the variant its descriptor is ("FP8 block 128x128 ..."),
// its storage detail only when it is no single variant of the list.
std::string published_label(const model::ModelSpec& m);
// The context a candidate is sized at: the target, or min(32,768, the model's maximum) without one; the maximum is
// vLLM's derived max_model_len (ModelSpec::derived_max_model_len: rope scaling, the config's smallest length key), else
// max_position_embeddings. A target above it is never lowered silently: the context stays the target and `reason` is
// vLLM's ValueError (deploy::check_max_model_len, origin --context), unless targets.long_max_model_len allows it, or
// `engine` is one that starts above the model's length (refuses_long_context): then no reason.
int64_t candidate_context(const model::ModelSpec& m, const PlanTargets& targets, const std::string& engine, std::string& reason);
// Issue 16 (llamacpp31): whether `engine` (an engine name: "vllm", "llama.cpp") refuses a context above the model's length
// as vLLM's max_model_len check does; llama.cpp warns 'n_ctx_seq > n_ctx_train' and starts (plan/llama_rows). The one
// answer plan's --context check (cli) and candidate_context read (issue 19, llamacpp33: each skipped it on its own).
bool refuses_long_context(const std::string& engine);
// The deployment a candidate is sized as (its layout, context, quantization and the targets' utilization), with no
// explanatory text (Deployment::explain) and no per-rank tree: a plan shows numbers, verdicts and reasons;
// `preflight fit` explains one deployment in full.
estimate::Deployment candidate_deployment(const Candidate& c, const model::QuantVariant* v, const PlanTargets& targets);
// Issue 15/16 (nccl): the interconnect a candidate of `tensor_parallel_size` on `device` is sized with: targets.interconnect,
// else the default of the card's form factor (engines.json overheads[].nccl_buffers.defaults), else unknown.
engine::Interconnect candidate_interconnect(const PlanTargets& targets, const engine::Overheads& oh, const device::DeviceSpec& device, int64_t tensor_parallel_size);
// Issue 15/16 (nccl, misc21): Candidate::interconnect and interconnect_basis of `c` (its TP size set) where `engine`
// counts the NCCL buffers at that TP size; left empty elsewhere.
void note_interconnect(Candidate& c, const PlanTargets& targets, const engine::EngineProfile& engine, const engine::Overheads& oh, const device::DeviceSpec& device);

}  // namespace preflight::plan
