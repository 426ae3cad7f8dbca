// estimate/speed: how fast a deployment decodes and prefills, from what really moves. A decode step
// reads every active weight byte a rank holds (MoE: the distinct experts a batch touches, shared
// experts always), the KV cache at the current context (sliding layers up to their window), and the
// recurrent state of linear-attention/Mamba layers; it is bounded below by the compute roofline, and
// adds the engine's fixed cost (per step in graph mode, per operator in eager mode), the MoE routing
// cost, and one all-reduce per attention and per MLP block under tensor parallelism (cross-node:
// slower NIC bandwidth and latency). Prefill is compute-bound. Calibrated constants come from
// engine::SpeedProfile; every result carries a band and its provenance.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/inline_vector.hpp"
#include "base/shared_text.hpp"
#include "device/device_spec.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/fit.hpp"
#include "model/model_spec.hpp"

namespace preflight::estimate {

// Issue 19: the per-rank traffic of a decode step that the device does not change: the weight bytes each rank
// reads, its KV bytes per token per layer, the recurrent state, the attention FLOPs and the operators per step. It
// follows from the model, its stored scheme (and Deployment::group_bytes), the tensor-parallel size, the KV cache
// dtype and the speed profile's operators per layer kind.
struct StepTraffic {
  double dense_weight_bytes = 0;     // per rank, all stages: read every step
  double expert_weight_bytes = 0;    // per rank, all routed experts of all layers
  double active_params = 0;          // per rank, per token (experts at k / E)
  std::vector<double> kv_bytes_per_token_layer;  // per rank
  std::vector<int64_t> window;       // 0 = full
  double state_bytes_per_sequence = 0;  // per rank
  double attention_flops_per_context_token = 0;  // per rank, per decoded token, per context token
  int64_t moe_layers = 0;
  double dispatch_ops = 0;
};

// Issue 19: one StepTraffic for the estimates of one model's deployments on many devices (plan: every card of a
// platform for one model, variant and count), handed in through SpeedWorkload::traffic. The memo belongs to the model
// named at construction: it keeps a reference, so that model must outlive the memo and stay unchanged while it is in
// use; estimate_speed uses it only for that model object. Every other input is compared by value: the first get()
// fills it, a later one reads it when the scheme, the tensor-parallel size, the KV cache dtype and the profile's
// operator counts equal those it was filled from, else refills it. (Deployment::group_bytes only saves work: the
// traffic is the same with or without it.)
// Issue 19 (round 21): with StepTrafficInputs::held the caller also keeps every scheme and profile object it passes
// unchanged while the memo is in use (a plan: the variant's scheme in its scratch deployment, the profiles of its
// const speed catalogue), so a get() with the very objects of the last fill or hit, at the same TP size and KV cache
// dtype, reads the traffic without comparing the scheme and the operator counts again (they were a third of a
// whole-catalogue plan's speed estimates); other objects are compared by value as above.
enum class StepTrafficInputs {
  compared,  // default: the scheme and the profile's operator counts compared by value on every get()
  held,      // the objects passed stay unchanged while the memo is in use: the last ones are not compared again
};

class StepTrafficMemo {
 public:
  explicit StepTrafficMemo(const model::ModelSpec& model, StepTrafficInputs inputs = StepTrafficInputs::compared) : m_model(model), m_inputs(inputs) {}
  const model::ModelSpec& model() const { return m_model; }
  // The traffic of the memo's model stored as `scheme` under `dep` with `profile`'s operators.
  const StepTraffic& get(const model::QuantScheme& scheme, const engine::SpeedProfile& profile, const Deployment& dep);

 private:
  const model::ModelSpec& m_model;
  StepTrafficInputs m_inputs = StepTrafficInputs::compared;
  const model::QuantScheme* m_scheme_object = nullptr;           // held: the objects of the last fill or hit
  const std::map<std::string, double>* m_ops_object = nullptr;
  bool m_filled = false;
  model::QuantScheme m_scheme;
  int64_t m_tensor_parallel_size = 0;
  std::string m_kv_cache_dtype;
  std::map<std::string, double> m_ops_per_layer;
  StepTraffic m_traffic;
};

struct SpeedWorkload {
  int64_t context_tokens = 1024;     // tokens already in the sequence while decoding (prompt + generated)
  int64_t input_tokens = 1024;       // prompt length for prefill / TTFT
  std::vector<int64_t> concurrency = {1};  // batch sizes to evaluate
  int64_t devices_per_node = 8;      // a layout with tp x pp above this crosses nodes
  std::optional<double> bandwidth_bytes_per_s;  // measured copy bandwidth (preflight bw, --bandwidth); replaces the catalogue
  std::string engine_version;        // the engine's version text as stated ("0.8.4rc2", "vllm-ascend v0.7.x"); empty: current
  StepTrafficMemo* traffic = nullptr;  // issue 19: the step traffic shared by estimates on many devices; nullptr: computed here
};

// The first "major.minor[.patch]" in a version text ("vllm-ascend v0.8.4rc2" -> {0, 8, 4}); nullopt when none.
std::optional<std::vector<int>> first_version(const std::string& text);

// True when `version_text` names a version below `since` (both read with first_version); false when either has none.
bool version_before(const std::string& version_text, const std::string& since);

struct StepTerms {
  double weight_bytes = 0;      // per rank, per step
  double kv_bytes = 0;          // per rank, per step
  double state_bytes = 0;       // per rank, per step (read + write)
  double memory_s = 0;
  double compute_s = 0;
  double overhead_s = 0;        // graph step cost, or eager operator dispatch
  double moe_s = 0;
  double communication_s = 0;            // latency + bandwidth terms
  double communication_bandwidth_s = 0;  // the bandwidth part alone
  double step_s = 0;
  std::string bound;            // memory | compute | overhead | communication
};

struct SpeedPoint {
  int64_t concurrency = 1;
  StepTerms terms;
  double per_stream_tokens_per_s = 0;
  double aggregate_tokens_per_s = 0;
  double per_stream_low = 0, per_stream_high = 0;  // band
};

struct SpeedEstimate {
  // Issue 19 (planfast14): SharedText, one block per thread and text (a plan's rows hold tens of thousands of estimates,
  // which its ranking moves: a std::string's move copied its characters).
  SharedText engine, platform, mode;
  double bandwidth_bytes_per_s = 0;        // copy bandwidth used as the basis
  double bandwidth_low_bytes_per_s = 0;    // the range that basis allows (equal to it when measured; one-sided
  double bandwidth_high_bytes_per_s = 0;   // for a prior such as the 910B4's); the speed band spans it
  bool bandwidth_is_prior = false;         // datasheet x copy fraction, or a catalogue prior: not measured
  SharedText bandwidth_source;
  double effective_bandwidth_bytes_per_s = 0;
  int64_t tensor_parallel_size = 1, pipeline_parallel_size = 1;
  bool cross_node = false;
  SharedText link;                         // the link the all-reduces and hand-offs are taken to cross (issue 20), empty at TP1/PP1
  int64_t context_tokens = 0;
  // One per requested concurrency. Issue 19 (fitcopy36): the first in place (a plan asks for one), as are a row's usual
  // provenance lines and assumptions below: three heap blocks a row were 24 M of the whole-catalogue plan's instructions.
  InlineVector<SpeedPoint, 1> points;
  double single_stream_tokens_per_s = 0;   // at concurrency 1
  double single_stream_low = 0, single_stream_high = 0;
  double prefill_tokens_per_s = 0;
  int64_t input_tokens = 0;
  double ttft_s = 0;
  double ttft_low_s = 0, ttft_high_s = 0;
  double dispatch_ops_per_step = 0;        // operators issued per decode step (eager cost basis)
  int64_t allreduces_per_step = 0;
  double allreduce_latency_units = 0;      // all-reduces x ceil(log2 tp) rounds, each costing the profile's latency
  // The latency per round when it is a measured figure, not the profile's fitted allreduce_latency_s: PCIe-only
  // devices under a profile with pcie_allreduce_latency_s (issue 20); 0 otherwise. Cross-node latency not included.
  double allreduce_fixed_latency_s = 0;
  int64_t moe_layers = 0;
  // Issue 19 (round 10): the texts are SharedText, so that a plan's rows that repeat one (a device's bandwidth basis, the
  // link, the profile's efficiency: built once per thread and key, TextMemo) hold it once.
  InlineVector<SharedText, 2> provenance;   // a plan row's: its link line, where it has one
  InlineVector<SharedText, 4> assumptions;  // nine rows in ten of a whole-catalogue plan carry one to four
};

// Expected number of distinct experts a batch of `batch` tokens touches when each picks `k` of `n`
// uniformly: n x (1 - (1 - k/n)^batch).
double expected_distinct_experts(int64_t n, int64_t k, int64_t batch);

// Expected number of experts held by the busiest rank when `distinct` experts, drawn uniformly without
// replacement from `n`, are dealt out whole over `ranks` ranks the way vLLM's --enable-expert-parallel does
// (determine_expert_map: n / ranks each, the first n % ranks ranks one more). With expert parallel the step
// waits for that rank (the experts' partial sums meet in the all-reduce). A fractional `distinct` (the
// expected distinct experts of a batch) interpolates between its two integer neighbours. 0 when n or ranks
// is not positive; `distinct` is clamped to [0, n].
double expected_busiest_rank_experts(int64_t n, int64_t ranks, double distinct);

// Decode and prefill speed for one deployment. `catalog` supplies the cross-node network and the
// copy fraction of peak used when the device has no measured bandwidth. With deployment.explain false
// the text (provenance, bandwidth_source, assumptions) stays empty and every number is the same.
SpeedEstimate estimate_speed(const model::ModelSpec& model, const device::DeviceSpec& device, const engine::SpeedProfile& profile,
                             const engine::SpeedCatalog& catalog, const Deployment& deployment, const SpeedWorkload& workload);

// The same, for the deployment `fit` resolved: the values both estimates use (tensor and pipeline
// parallel sizes, max_num_batched_tokens with the engine's and the device's defaults applied, the KV
// cache dtype) are read from `fit`, so the fit and speed lines of one run never disagree.
SpeedEstimate estimate_speed(const model::ModelSpec& model, const device::DeviceSpec& device, const engine::SpeedProfile& profile,
                             const engine::SpeedCatalog& catalog, const Deployment& deployment, const FitEstimate& fit,
                             const SpeedWorkload& workload);

}  // namespace preflight::estimate
