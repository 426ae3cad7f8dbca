// plan/dp_ep: data parallel + expert parallel layouts for MoE models (issue 15). vLLM's DP+EP runs
// data_parallel_size engine replicas of TP ranks each, attention replicated per replica and the routed
// experts split as whole experts over all DP x TP ranks (--enable-expert-parallel), each replica with
// its own KV cache (https://docs.vllm.ai/en/latest/serving/expert_parallel_deployment/). plan_for_model
// asks this module for the DP+EP layouts of each device and keeps one as a row of its own where it is
// cheaper than the TP/PP layouts (see add_dp_ep_candidates), with its start commands (native data parallel,
// one node or several: --data-parallel-size-local, --data-parallel-address, --headless on the other nodes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/planner.hpp"

namespace preflight::plan {

struct DpEpLayout {
  int64_t num_devices = 2, data_parallel_size = 2, tensor_parallel_size = 1;
  int64_t pipeline_parallel_size = 1;  // PP inside a replica (plan --data-parallel N of a TP x PP row; dpep33)
  // --enable-expert-parallel: whole experts over DP x TP ranks; off (plan --data-parallel N alone), vLLM's FusedMoE
  // splits each expert as TP flattened over DP x TP ranks (fused_moe/config.py FusedMoEParallelConfig.make).
  bool expert_parallel = true;
};

// The DP+EP layouts of `num_devices` for a MoE model: TP in 1, 2, 4, 8 (at most `devices_per_node`, so a
// replica stays inside a node), DP = num_devices / TP of at least 2, and EP = num_devices ranks at most the
// model's routed experts (vLLM refuses more). Empty for a dense model. Smallest TP (most replicas) first.
std::vector<DpEpLayout> dp_ep_layouts(const model::ModelSpec& model, int64_t num_devices, int64_t devices_per_node);

// One DP+EP candidate, verified as every plan candidate is: fit per replica (estimate_fit with DP and EP),
// the concurrency target over all replicas (each replica's max_concurrency x DP), speed per replica at its
// share of the streams, and where it meets the targets its start commands. `variant` as evaluate_candidate.
// `unservable` holds issue 16's answer (plan::unservable_reason) for this (model, variant, device) at TP 1 and at TP > 1,
// filled on first use and shared by the variant's layouts, as the TP/PP rows share theirs.
struct UnservableAnswers {
  std::optional<std::string> tp1, tp_many;
};
Candidate evaluate_dp_ep(const model::ModelSpec& model, const device::DeviceSpec& device, const PlanInputs& in, const std::string& variant,
                         const DpEpLayout& layout, const PlanTargets& targets, UnservableAnswers& unservable);

// Issue 15 (dpep33): `plan --data-parallel N [--expert-parallel]`: `row` (a TP/PP row of `model` on `device`) as the
// start its commands make, N replicas of its TP x PP ranks (N x TP x PP devices), verified as evaluate_dp_ep verifies a
// DP+EP row: each rank's fit as `fit --data-parallel-size N [--enable-expert-parallel]` sizes it (experts over DP x TP
// ranks, each replica its own KV cache and printed lines), the concurrency over all replicas, speed per replica. Its
// launch is left to the caller (with_data_parallel of `row`). Not `meets`, with the reason, where the layout fails.
Candidate data_parallel_row(const model::ModelSpec& model, const device::DeviceSpec& device, const PlanInputs& in, const Candidate& row,
                            const DpEpLayout& layout, const PlanTargets& targets);

// One replica of a DP+EP row (num_devices = TP x PP), the candidate launch and kubernetes take with a DP size.
Candidate dp_replica(const Candidate& candidate);

// Issue 15: for a MoE model, per device of `devices`, the DP+EP layouts of 2, 4, 8, 16 devices (up to
// `max_devices`), at the smallest count where one meets the targets, and at no more devices than the
// device's TP/PP row in `r`. It is kept as a recommended row when it is cheaper, which means: it meets the
// targets on fewer devices than the TP/PP row (or where no TP/PP layout does), or on the same devices it
// serves more requests at once at the context target (DP x each replica's concurrency) at no lower
// precision. `cheaper` says which and by how much; layouts that are not cheaper go to the rejected ones with
// that comparison. Rows stay ordered by device count, a kept DP+EP row before its device's TP/PP row.
void add_dp_ep_candidates(PlanResult& r, const model::ModelSpec& model, const std::vector<device::DeviceSpec>& devices, const PlanInputs& in,
                          const PlanTargets& targets, int64_t max_devices);

// Issue 15, `plan --device D --num-devices N`: for each recommended MoE row of `r` (N devices of `device`), the DP+EP
// layout of the same N devices and variant that serves the most requests at once; inserted just before the row when
// it is cheaper in the sense above (more requests at once on the same devices), else listed among the rejected.
void add_dp_ep_rows_for_device(PlanResult& r, const std::vector<model::ModelSpec>& models, const device::DeviceSpec& device, const PlanInputs& in,
                               const PlanTargets& targets);

}  // namespace preflight::plan
