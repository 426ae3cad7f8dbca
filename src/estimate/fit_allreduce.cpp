// estimate/fit_allreduce: the FlashInfer all-reduce fusion workspace vLLM allocates inside its profile window at TP > 1
// on an NVSwitch group of SM 9.0 / 10.0 cards (issue 15, tpws; docs/memory-model.md, "The FlashInfer all-reduce
// workspace"). The arithmetic is FlashInfer's (trtllm_ar.py trtllm_create_ipc_workspace_for_all_reduce_fusion,
// mnnvl.py SymmDeviceMemory); every constant comes from engines.json overheads[].allreduce_fusion_workspace.
#include <algorithm>
#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/allreduce_workspace.hpp"
#include "estimate/fit_terms.hpp"
#include "engine/version_label.hpp"

namespace preflight::estimate::terms {

namespace {

double round_up(double bytes, double unit) { return std::ceil(bytes / unit) * unit; }

}  // namespace

AllreduceWorkspaceSizes allreduce_workspace_sizes(const engine::AllreduceFusionWorkspace& w, double max_input_bytes, int64_t tensor_parallel_size,
                                                  int64_t hidden_size, int64_t dtype_bytes, int64_t max_num_batched_tokens) {
  AllreduceWorkspaceSizes s;
  if (hidden_size <= 0 || dtype_bytes <= 0 || max_input_bytes <= 0) return s;
  // vLLM AllReduceFusionPass: max_size // (hidden_dim * element_size), at most max_num_batched_tokens.
  s.max_token_num = std::min(static_cast<int64_t>(std::floor(max_input_bytes / static_cast<double>(hidden_size * dtype_bytes))), max_num_batched_tokens);
  const double rows = static_cast<double>(tensor_parallel_size) * static_cast<double>(s.max_token_num) * static_cast<double>(hidden_size);
  s.buffer_bytes = rows * 2.0;
  s.flag_bytes = static_cast<double>(tensor_parallel_size * w.flag_bytes_per_rank);
  // use_fp32_lamport where the model dtype is float32: 4-byte lamport elements, else 2.
  const double lamport_comm = std::min(rows * (dtype_bytes == 4 ? 4.0 : 2.0), w.lamport_comm_max_bytes);
  s.lamport_bytes = static_cast<double>(w.lamport_copies) * lamport_comm;
  for (const double size : {s.buffer_bytes, s.flag_bytes, s.lamport_bytes})
    s.allocated_bytes += round_up(round_up(size, w.buffer_alignment_bytes) + w.signal_pad_bytes, w.granularity_bytes);
  return s;
}

Term estimate_allreduce_workspace(const model::ModelSpec& m, const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_id,
                                  const StageLayout& lay, const Deployment& dep, int64_t max_num_batched_tokens) {
  const Term none{"all-reduce workspace", 0, 0, {}, {}};
  const engine::AllreduceFusionWorkspace* w = oh.allreduce_fusion_workspace.get();
  if (!w || !w->allocated_by(engine, lay.tp, lay.pp, lay.dp, dep.interconnect)) return none;
  const double max_input = w->max_input_bytes(device_id, lay.tp);
  if (max_input <= 0) return none;
  const int64_t dtype_bytes = model::dtype_bits(m.dtype) / 8;
  const AllreduceWorkspaceSizes s = allreduce_workspace_sizes(*w, max_input, lay.tp, m.hidden_size, dtype_bytes, max_num_batched_tokens);
  if (!dep.explain) return {none.name, s.allocated_bytes, 0, {}, {}};
  const double mib = 1024.0 * 1024.0;
  return {none.name, s.allocated_bytes, 0,
          format("FlashInfer trtllm all-reduce fusion workspace, 3 buffers of this rank (buffer %.0f MiB, flag %.0f KiB, lamport %lld x %.0f MiB; max_token_num %lld = min(%.2f MiB / (hidden %lld x %lld "
                 "bytes), max_num_batched_tokens %lld)), each + %.0f-byte signal pad rounded up to %.0f MiB: %s %s, TP %lld on %s %s (versions: %s; "
                 "when: %s; sizes: %s; maximum input: %s; granularity: %s)",
                 s.buffer_bytes / mib, s.flag_bytes / 1024.0, static_cast<long long>(w->lamport_copies), s.lamport_bytes / static_cast<double>(w->lamport_copies) / mib,
                 static_cast<long long>(s.max_token_num), max_input / mib, static_cast<long long>(m.hidden_size), static_cast<long long>(dtype_bytes),
                 static_cast<long long>(max_num_batched_tokens), w->signal_pad_bytes, w->granularity_bytes / mib, engine.engine.c_str(),
                 engine::version_label(engine).c_str(), static_cast<long long>(lay.tp), engine::interconnect_name(dep.interconnect), device_id.c_str(),
                 w->counted.source.c_str(), w->conditions_source.c_str(), w->buffers_source.c_str(), w->max_input_source.c_str(), w->granularity_source.c_str()),
          {{"max_token_num", static_cast<double>(s.max_token_num)}, {"buffer_bytes", s.buffer_bytes}, {"flag_bytes", s.flag_bytes}, {"lamport_bytes", s.lamport_bytes},
           {"granularity_bytes", w->granularity_bytes}}};
}

}  // namespace preflight::estimate::terms
