// Pipeline stages (issue 15): vLLM's layer split per PP rank and each stage's own KV budget on its own
// card (heterogeneous pipeline parallelism). Every worker profiles and sizes its KV cache from its own
// memory; the engine keeps the smallest num_blocks over the workers (vLLM get_kv_cache_configs), so the
// tightest stage sets the blocks every stage allocates.
#include "estimate/fit_terms.hpp"

#include <algorithm>
#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::estimate {

namespace {

// 128-bit integers (a GCC/Clang extension, marked so for -Wpedantic): the sum of up to 2^64 int64 values, exactly.
__extension__ typedef __int128 PartitionSum;
__extension__ typedef unsigned __int128 PartitionSumMagnitude;

// `v` in decimal, as Python prints an int.
std::string partition_sum_text(PartitionSum v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  PartitionSumMagnitude u = negative ? -static_cast<PartitionSumMagnitude>(v) : static_cast<PartitionSumMagnitude>(v);
  std::string digits;
  for (; u > 0; u /= 10) digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
  return negative ? "-" + digits : digits;
}

}  // namespace

Expected<std::vector<int64_t>> pp_layer_partition(int64_t n, int64_t pp, const std::vector<int64_t>& given) {
  if (pp < 1) return make_error(ErrorKind::invalid_argument, format("pipeline parallel size %lld: expected at least 1", static_cast<long long>(pp)));
  if (!given.empty()) {
    // vllm/distributed/utils.py get_pp_indices, VLLM_PP_LAYER_PARTITION branch (its f-string messages).
    if (static_cast<int64_t>(given.size()) != pp)
      return make_error(ErrorKind::invalid_argument,
                        format("ValueError: len(partitions)=%zu does not match pp_size=%lld.", given.size(), static_cast<long long>(pp)));
    // Issue 19 (hard35): Python sums without a bound; an int64 sum of "9223372036854775807,1" wrapped to -2^63, which
    // the message printed. 128 bits hold the sum of any 2^64 int64 values exactly.
    PartitionSum sum = 0;
    for (const int64_t k : given) sum += k;
    if (sum != n)
      return make_error(ErrorKind::invalid_argument,
                        format("ValueError: sum(partitions)=%s does not match num_hidden_layers=%lld.", partition_sum_text(sum).c_str(), static_cast<long long>(n)));
    for (size_t s = 0; s < given.size(); ++s)
      if (given[s] < 1)
        return make_error(ErrorKind::invalid_argument,
                          format("stage %zu of VLLM_PP_LAYER_PARTITION has %lld layers; expected at least 1 per stage", s, static_cast<long long>(given[s])));
    return given;
  }
  // The default: n // pp each; the remainder one each to partitions[-2], partitions[-3], ... (the last
  // stage also holds the final norm and the head; the first the embedding).
  std::vector<int64_t> parts(static_cast<size_t>(pp), n / pp);
  const int64_t remaining = n % pp;
  for (int64_t i = 2; i < remaining + 2; ++i) parts[static_cast<size_t>(pp - i)] += 1;
  return parts;
}

namespace terms {

std::vector<PipelineStageFit> estimate_stage_budgets(const StageLayout& lay, const StageWeights& weights, const Deployment& dep, const StageBudgetInputs& in) {
  std::vector<PipelineStageFit> out;
  if (lay.pp <= 1 || static_cast<int64_t>(lay.stage_layers.size()) != lay.pp) return out;
  int64_t first_layer = 0;
  for (int64_t s = 0; s < lay.pp; ++s) {
    PipelineStageFit st;
    st.stage = s;
    st.layers = lay.stage_layers[static_cast<size_t>(s)];
    st.first_layer = first_layer;
    first_layer += st.layers;
    const bool own_card = static_cast<int64_t>(dep.stage_devices.size()) == lay.pp;
    st.device_id = own_card ? dep.stage_devices[static_cast<size_t>(s)].device_id : in.device_id;
    st.total_bytes = own_card ? dep.stage_devices[static_cast<size_t>(s)].total_bytes : in.total_bytes;
    st.requested_bytes = st.total_bytes * in.utilization;
    if (in.requested_ceil) st.requested_bytes = std::ceil(st.requested_bytes);
    if (s == 0) {
      st.weights_bytes = weights.first.bytes;
      st.activation_bytes = in.first_activation_bytes;
    } else if (s == lay.pp - 1) {
      st.weights_bytes = weights.last.bytes;
      st.activation_bytes = in.last_activation_bytes;
    } else {  // no embedding, head, encoder or sampler: its layers, the shared buffers and the text forward
      st.weights_bytes = weights.shared_bytes + static_cast<double>(st.layers) * weights.layer_bytes;
      st.activation_bytes = in.middle_activation_bytes;
    }
    st.available_kv_bytes = std::floor(std::floor(st.requested_bytes - st.weights_bytes - st.activation_bytes - in.non_torch_bytes - in.graph_bytes -
                                                  in.ep_communicator_bytes) /
                                       in.kv_budget_divisor);
    out.push_back(st);
  }
  return out;
}

double stage_blocks_budget(const StageLayout& lay, const std::vector<PipelineStageFit>& stages) {
  double budget = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    const double in_first_units = stages[s].available_kv_bytes * static_cast<double>(lay.first_layers) / static_cast<double>(stages[s].layers);
    budget = s == 0 ? in_first_units : std::min(budget, in_first_units);
  }
  return budget;
}

void mark_stage_blocks(std::vector<PipelineStageFit>& stages, const StageLayout& lay, int64_t page_bytes, int64_t group_size) {
  if (stages.empty() || page_bytes <= 0 || group_size <= 0) return;
  size_t tight = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    const double in_first_units = stages[s].available_kv_bytes * static_cast<double>(lay.first_layers) / static_cast<double>(stages[s].layers);
    stages[s].num_blocks = in_first_units > 0 ? static_cast<int64_t>(in_first_units) / page_bytes / group_size : 0;
    if (stages[s].num_blocks < stages[tight].num_blocks) tight = s;
  }
  stages[tight].tightest = true;
}

}  // namespace terms

}  // namespace preflight::estimate
