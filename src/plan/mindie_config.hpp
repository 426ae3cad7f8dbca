// plan/mindie_config: `plan MODEL --engine mindie`: the smallest worldSize (1, 2, 4, 8, then whole nodes) at
// which MindIE Service's static KV pool (estimate/mindie) holds the requested concurrency at the requested
// context, and the MindIE Service config.json for it (Version, LogConfig, ServerConfig, BackendConfig with
// ModelDeployConfig / ModelConfig / ScheduleConfig, every key MindIE documents as required, with its
// documented default unless the plan sets it) and the start commands, per node when it spans nodes
// (RANKTABLEFILE, MIES_CONTAINER_IP). Keys and defaults: data/engines/mindie.json and its sources.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "device/device_spec.hpp"
#include "estimate/mindie.hpp"
#include "model/model_spec.hpp"

namespace preflight::plan {

struct MindiePlanRequest {
  int64_t context_tokens = 0;              // maxSeqLen; 0: min(32768, max_position_embeddings)
  int64_t concurrency = 1;                 // requests of full length the KV pool must hold at once
  std::optional<int64_t> world_size;       // fixed worldSize, else the smallest that fits
  estimate::MindieOptions base;            // catalogue defaults with the user's overrides (npuMemSize, cacheBlockSize, maxIterTimes, fraction)
  std::string model_name;                  // ModelConfig.modelName (default: the last part of the model id)
  std::string weight_path;                 // ModelConfig.modelWeightPath (default /home/weight/<modelName>)
};

struct MindiePlan {
  std::string device_id;
  estimate::MindieOptions options;         // the chosen config.json values
  estimate::MindieEstimate estimate;
  int64_t nodes = 1;
  int64_t cards_per_node = 8;
  std::vector<std::string> rejected;       // "worldSize 1: ..." for every smaller layout tried
  Json config;                             // config.json
  std::string start_script;                // start.sh (per node when nodes > 1)
};

// Errors: unsupported (format, multimodal auto npuMemSize) and invalid_argument (documented ranges) from
// estimate_mindie; not_found when no worldSize up to max_nodes x cards_per_node holds the concurrency.
Expected<MindiePlan> plan_mindie(const model::ModelSpec& spec, const device::DeviceSpec& device, const MindiePlanRequest& request,
                                 const estimate::MindieCatalog& catalog);

// The config.json object for these options (pure; no file access).
Json render_mindie_config(const estimate::MindieOptions& o, const std::string& model_name, const std::string& weight_path, int64_t nodes,
                          int64_t cards_per_node, const estimate::MindieCatalog& catalog);

}  // namespace preflight::plan
