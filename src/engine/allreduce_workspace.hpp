// engine/allreduce_workspace: the FlashInfer all-reduce fusion workspace a CUDA engine allocates inside its profile
// window at TP > 1 (issue 15, tpws), read from engines.json overheads[cuda].allreduce_fusion_workspace. vLLM's
// AllReduceFusionPass (on by default at -O2 from PR #34299 where TP > 1, the card is SM 9.0 / 10.x and flashinfer is
// installed) creates it when torch.compile runs its passes, which is during the profile run; FlashInfer's trtllm
// backend allocates three buffers as SymmDeviceMemory, each rounded up to the multicast granularity. The sizes follow
// from the model's hidden size and dtype, max_num_batched_tokens and a per-(card, TP) maximum input size
// (docs/memory-model.md, "The FlashInfer all-reduce workspace").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"
#include "engine/nccl_buffers.hpp"

namespace preflight::engine {

// vLLM's maximum all-reduce input fused on one card kind at one TP size (FI_ALLREDUCE_FUSION_MAX_SIZE_MB).
struct AllreduceMaxInput {
  std::vector<std::string> devices;  // device catalogue ids of one compute capability
  int64_t tensor_parallel_size = 0;
  double bytes = 0;
  bool operator==(const AllreduceMaxInput&) const = default;
};

struct AllreduceFusionWorkspace {
  std::string engine;                  // "vllm"
  EngineProfile::VersionRule counted;  // the versions that allocate it inside the profile window
  std::vector<Interconnect> interconnects;  // where the workspace can be created (multicast needs an NVSwitch)
  int64_t pipeline_parallel_max = 1;   // the fusion is off above these (vLLM issues #35426, #34458)
  int64_t data_parallel_max = 1;
  std::string conditions_source;
  std::vector<AllreduceMaxInput> max_inputs;
  std::string max_input_source;
  int64_t lamport_copies = 3;          // lamport_buffer_size = lamport_copies x lamport_comm_size
  int64_t flag_bytes_per_rank = 1024;  // BarrierFlagCount (256) x sizeof(int)
  double lamport_comm_max_bytes = 0;   // MAX_COMM_SIZE: the cap on lamport_comm_size
  double buffer_alignment_bytes = 0;   // round_up(size, 1 << 21) before allocation
  std::string buffers_source;
  double signal_pad_bytes = 0;         // SymmDeviceMemory adds SIGNAL_PAD_SIZE to every buffer
  double granularity_bytes = 0;        // and rounds it up to the multicast granularity
  std::string granularity_source;
  bool operator==(const AllreduceFusionWorkspace&) const = default;

  // The maximum input for a card `device_id` at `tensor_parallel_size`, or 0 (not in the table: no workspace).
  double max_input_bytes(const std::string& device_id, int64_t tensor_parallel_size) const;
  // Whether engine `e` allocates it for this layout on `interconnect`: its engine and versions, TP > 1, PP and DP
  // within their limits, and an interconnect where the workspace can be created.
  bool allocated_by(const EngineProfile& e, int64_t tensor_parallel_size, int64_t pipeline_parallel_size, int64_t data_parallel_size,
                    Interconnect interconnect) const;
};

// overheads[].allreduce_fusion_workspace; corrupt errors name the file and key.
Expected<AllreduceFusionWorkspace> parse_allreduce_fusion_workspace(const JsonObject& r, const std::string& origin);

}  // namespace preflight::engine
