// plan/launch: the ready-to-run start command for a verified candidate: `vllm serve` with the sizing
// flags, the environment the stack needs and the workaround flags the launch rules know for this
// engine version and model. A quantized variant is served from a checkpoint that really has that
// format: a published one from the quantized-checkpoint catalogue, or the output of the conversion
// step printed before it. A layout that spans nodes gets one block per node (head, workers), each
// setting up the environment before `ray start`, since Ray workers inherit the environment of the
// `ray start` that launched them. With_data_parallel turns a one-node start into vLLM's native
// multi-node data parallel: replicas of the candidate's layout, each inside one node, no Ray.
#pragma once

#include <list>
#include <mutex>

#include "base/error.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

const char* workload_name(Workload workload);

// Which nodes the start spans, for the launch rules that hold only across nodes (the NIC exports, data/engines/launch.json
// multi_node): those of one replica (a replica over nodes is Ray's PP layout), or several nodes though each replica fits in
// one (native data parallel over nodes: DP+EP rows, `--data-parallel N`).
enum class NodeSpan {
  replica,  // default: the rules see several nodes only when the candidate itself spans them
  several,  // the replicas fill more than one node
};

// Which 16-bit float the card computes in (device::DeviceSpec::supports_dtype("bf16")).
enum class CardHalfPrecision {
  bf16_and_fp16,  // default
  fp16_only,      // no bfloat16: a bf16 checkpoint starts with --dtype float16
};

struct LaunchOptions {
  Workload workload = Workload::chat;
  // ux28: native data parallel over nodes also needs every node's interface exported (vLLM-Ascend's multi-node DP
  // tutorials set GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME, HCCL_SOCKET_IFNAME on each node); with_data_parallel writes them.
  NodeSpan node_span = NodeSpan::replica;
  // Issue 15: vLLM's --speculative-config JSON as the plan was given it; `vllm serve` carries it exactly,
  // single-quoted for the shell. Empty: no speculative decoding.
  std::string speculative_config;
  // Issue 15: vLLM's --compilation-config JSON as the plan was given it (dotted forms merged); `vllm serve` carries it
  // single-quoted. Empty: the version's capture defaults.
  std::string compilation_config;
  // Issue 16: the device catalogue family of the card the command starts on ("ascend-a2"): a launch rule with
  // when.device_families holds only for those. Empty: no card known, and such a rule does not hold.
  std::string device_family;
  // Issue 15/16 (plan28): the engine settings' arguments and environment (PlanInputs::engine_args); nullptr: none.
  const EngineArgs* engine_args = nullptr;
  // Issue 16 (ux29): the card computes in no bfloat16 (its catalogue dtypes: 310P, 910A, V100, T4): a bf16 checkpoint is
  // started with --dtype float16, as vLLM-Ascend's 310P guides and vLLM's own capability error ask.
  CardHalfPrecision half_precision = CardHalfPrecision::bf16_and_fp16;
  // ux29: the card's platform (device::DeviceSpec::platform): on "cpu" llama-server offloads nothing (no -ngl).
  std::string device_platform;
  // Issue 16 (llamacpp30): the host's cores for llama-server's -t on a CPU row (PlanInputs::host_cores); 0: not given.
  int64_t host_cores = 0;
};

// `text` as one POSIX shell word in single quotes; a quote inside it closes, escapes and reopens ('\'').
std::string shell_single_quoted(const std::string& text);
// Issue 19 (hard30): `text` as one POSIX shell word: as it is when it is not empty and every byte is one no shell reads
// specially (letters, digits and _ . / : @ % + = , -), else shell_single_quoted. A local model path reaches the start
// commands whole (a space, ';', '$(...)', a newline in a folder name).
std::string shell_word(const std::string& text);

// The repo id `vllm serve` and the quantized-checkpoint catalogue know for a model id: a hub reference as
// ModelSpec::id holds it ("hf:org/name@rev", "ms:org/name@rev"; hub/hub_ref) becomes "org/name"; any
// other id is returned as it is.
std::string hub_repo_id(const std::string& model_id);

// Whether `engine` does not serve the checkpoint's own format (its method is not accepted, or FP8 where
// the engine's FP8 path needs a config key the model lacks) and the engine's conversions (msModelSlim) can
// start from it: `catalog` lists the repo as a release of a BF16 original (Qwen/Qwen3-32B-FP8 of
// Qwen/Qwen3-32B), or has a cast of its format back to BF16 (issue 16: DeepSeek-V3, published in FP8 only,
// on vLLM-Ascend). False for a checkpoint that is not quantized.
bool converts_published_checkpoint(const model::ModelSpec& model, const engine::EngineProfile& engine, const engine::QuantizedCatalog& catalog);

// Issue 16: why no start command can serve candidate `c` (its variant, flag, TP and card count) as written, or "" when
// one can: the checkpoint is served as published, a catalogued one, a conversion's output or the engine's load-time
// quantization. Else "no start command: ..." (no published checkpoint and no recipe on the engine's platform, or a
// published format with no cast back to BF16). build_launch writes the same into `prepare`; the planner rejects such
// a row with it.
// Always "" for llama.cpp (its rows convert or name their own GGUF file).
std::string unservable_reason(const model::ModelSpec& model, const Candidate& c, const engine::EngineProfile& engine, const engine::QuantizedCatalog& catalog);

// Issue 19 (planfast6): what build_launch computes from a candidate's model, variant and card class but not from its
// layout, kept between its calls for the candidates of one (model, variant) on the cards of one launch class
// (same_launch_family): the launch rules' part (their set-up lines, environment, flags and notes, by whether the layout
// spans nodes) and the checkpoint choice (what `vllm serve` loads, its --quantization, environment, notes and `prepare`
// lines), each with the candidate's fields it read: the checkpoint choice by the TP size and the card count only where
// it read them (a published checkpoint vLLM refuses under TP; a conversion recipe's --device list). A whole-catalogue
// `plan --json` built them for each of its 3,257 start commands (~55% of build_launch's instructions); the counts of one
// (model, variant) differ in their serve line. A call with another model, engine, rules or options than the memo's last
// empties it first; the objects it names stay alive and unchanged while it is used, as for the call. The node size is
// no key of the memo (planfast9): a part reads it only through the card count of a conversion's --device list, which
// keys that part, so one memo serves every launch class of a (model, variant): cards of other node sizes, half
// precision or rule families (their rule parts keyed by same_launch_family, as before).
struct LaunchMemo {
  struct RulePart {
    bool multi_node = false;
    std::string device_family;
    SharedText model_id;
    std::vector<std::string> shell, env, flags, notes;
  };
  struct CheckpointPart {
    SharedText model_id, variant, variant_id, quantization_flag;
    bool reads_tensor_parallel = false, reads_devices = false;
    int64_t tensor_parallel_size = 0, devices = 0;  // compared only where read
    std::string checkpoint, flag;
    std::vector<std::string> env, notes, prepare;
  };
  const model::ModelSpec* model = nullptr;
  const engine::EngineProfile* engine = nullptr;
  const engine::LaunchRules* rules = nullptr;
  Workload workload = Workload::chat;
  std::string speculative_config, compilation_config;
  std::vector<RulePart> rule_parts;
  std::vector<CheckpointPart> checkpoints;
  struct SharedRuleParts* shared = nullptr;  // perfcmd37: where set, the rule parts are taken from and kept there (see below)
};

// Issue 19 (perfcmd37): the launch rules' parts of one model, shared by the memos of its variants' work items (a rule part
// reads the model, its id, the engine, the rules, the workload, whether the layout spans nodes and the card's rule family,
// never the variant: a whole-catalogue `plan --json` built them again for each of ~20 variants of a model, 9.2 M
// instructions). Its key is a memo's (model, engine, rules, options), set by the first memo that uses it; a memo of
// another key does not use it. Parts are added, never removed or moved, while it lives; several threads may use it.
struct SharedRuleParts {
  std::mutex mu;
  const model::ModelSpec* model = nullptr;
  const engine::EngineProfile* engine = nullptr;
  const engine::LaunchRules* rules = nullptr;
  Workload workload = Workload::chat;
  std::string speculative_config, compilation_config;
  std::list<LaunchMemo::RulePart> parts;  // no allocation until a part is added (a deque allocated at construction)
};

// The start commands of `candidate`. With `memo`, the same, its layout-free parts taken from the memo where a call for
// the same inputs filled them (see LaunchMemo).
Launch build_launch(const model::ModelSpec& model, const Candidate& candidate, const engine::EngineProfile& engine, const engine::LaunchRules& rules,
                    int64_t devices_per_node, const LaunchOptions& options = {}, LaunchMemo* memo = nullptr);

// Issue 19: whether build_launch gives candidates `a` and `b` the same start commands (for the same model, engine,
// rules, devices per node and options): every field of a candidate it reads is equal (model, variant and flag, card
// count and layout, context, utilization, KV cache dtype, the video and encoder-profiling switches). The device is
// not among them: a plan copies one card's start commands to another's row of the same count when the launch rules
// treat both cards' families alike (same_launch_family; LaunchOptions::device_family, which rules may narrow by).
bool same_launch(const Candidate& a, const Candidate& b);

// Issue 19 (round 16): whether every rule of `rules` treats device families `a` and `b` alike (its when.device_families
// holds for both or for neither). build_launch reads LaunchOptions::device_family only there, so a candidate's start
// commands on a card of one family are those on a card of the other: a plan copies them between such cards, not only
// within one family (one rule names families today, so every CUDA card and every NPU family outside it is one class).
bool same_launch_family(const engine::LaunchRules& rules, const std::string& a, const std::string& b);

// vLLM's native data parallel (https://docs.vllm.ai/en/latest/serving/data_parallel_deployment.html):
// `size` replicas of the candidate's TP x PP layout, as many per node as fit (--data-parallel-size-local),
// the API server on the first node (--data-parallel-address, --data-parallel-rpc-port) and the other
// nodes --headless from --data-parallel-start-rank NODE_RANK x local. Every node sets up the
// environment first. Where a replica fits in one node this replaces Ray: ranks talk over the RPC
// port, no Ray cluster to start. One node: --data-parallel-size alone.
struct DataParallelOptions {
  int64_t size = 2;            // replicas (DP ranks)
  int64_t rpc_port = 13345;    // the port of vLLM's documented example
  bool expert_parallel = false;  // --enable-expert-parallel: MoE experts split over the DP x TP ranks
};
struct DataParallelLayout {
  int64_t replica_devices = 1, local = 1, nodes = 1;  // devices per replica, replicas per node, nodes
};
// invalid_argument when a replica spans nodes (PP across nodes: Ray's layout), when the engine is
// llama.cpp, or when the replicas do not fill whole nodes.
Expected<DataParallelLayout> data_parallel_layout(const Candidate& candidate, int64_t devices_per_node, int64_t size);
Expected<Launch> with_data_parallel(const Candidate& candidate, int64_t devices_per_node, const DataParallelOptions& options);

}  // namespace preflight::plan
