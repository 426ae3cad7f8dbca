// engine/moe_backend_workspace: the persistent workspaces a MoE kernel backend chosen with vLLM's --moe-backend allocates
// inside the profile run (issue 15, evid24), read from engines.json overheads[cuda].moe_backend_workspaces.
//
// vLLM's `--moe-backend` (vllm/config/kernel.py KernelConfig.moe_backend, normalized by _normalize_moe_backend: lower
// case, '-' read as '_'; "auto" by default) picks the expert kernels of every fused MoE layer. Most backends take their
// scratch from the modular kernel's per-call workspaces, which the activation term covers. FlashInfer's b12x backend on
// SM 12.x (FlashInferB12xExperts) instead builds one B12xMoEWrapper(use_cuda_graph=True, max_num_tokens=...) per MoE
// layer on that layer's first forward, which is inside the profile run, and the wrapper keeps a static workspace, a
// dynamic workspace and an output buffer for the life of the engine (docs/memory-model.md, "The FlashInfer b12x MoE
// workspace"). A record here gives the versions that do that, the cards the backend runs on, and FlashInfer's layout
// constants; the estimate (terms::estimate_moe_backend_workspace) sizes the buffers from the model's MoE shapes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct MoeBackendWorkspace {
  std::string engine;                  // "vllm"
  std::string backend;                 // the --moe-backend value, as vLLM normalizes it ("flashinfer_b12x")
  EngineProfile::VersionRule counted;  // the versions whose every MoE layer allocates its own workspace in the profile run
  std::vector<std::string> devices;    // device catalogue ids the backend runs on (its _supports_current_device)
  std::string weight_format;           // the expert weight format it accepts ("nvfp4")
  std::string conditions_source;       // where the per-layer allocation, its capacity and the conditions are read
  // FlashInfer's layout (blackwell_sm12x/moe_dispatch.py at the tag the source names):
  int64_t static_cutover_routed_rows = 0;  // _STATIC_COMPACT_CUTOVER_PAIRS_DEFAULT: the static workspace's rows when a dynamic one exists
  int64_t tile_rows = 0;                   // _LEVEL_TILE_M: the dynamic workspace's M tile
  int64_t tile_columns = 0;                // _LEVEL_TILE_N: the gate tile (the dynamic task queue)
  int64_t scale_block = 0;                 // _NVFP4_BLOCK_SIZE: one fp8 scale per this many input columns
  int64_t scale_column_align = 0;          // the scale columns are padded to this multiple
  int64_t scale_row_align = 0;             // the static workspace's scale rows are padded to this multiple
  int64_t output_bytes_per_element = 0;    // the wrapper's bf16 output buffer
  std::string layout_source;
  bool operator==(const MoeBackendWorkspace&) const = default;

  // Whether engine `e` allocates it for `backend` (as normalized) on card `device_id`: its engine, versions and cards.
  bool allocated_by(const EngineProfile& e, const std::string& backend_name, const std::string& device_id) const;
};

// vLLM's normalization of a --moe-backend value (KernelConfig._normalize_moe_backend): lower case, '-' read as '_'.
std::string normalize_moe_backend(const std::string& value);

// overheads[].moe_backend_workspaces[]; corrupt errors name the file and key.
Expected<std::vector<MoeBackendWorkspace>> parse_moe_backend_workspaces(const Json& list, const std::string& origin, const std::string& where);

}  // namespace preflight::engine
