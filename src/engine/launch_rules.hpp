// engine/launch_rules: what a start command needs besides sizing flags (data/engines/launch.json):
// environment set-up lines, environment variables and workaround flags known for an engine version
// and a kind of model, each with its source; plus the quantized-checkpoint catalogue a start command
// draws on (engine/quantized_checkpoints).
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"
#include "engine/quantized_checkpoints.hpp"

namespace preflight::engine {

struct LaunchRule {
  std::string id;
  std::string engine;  // "*" = any vLLM-family engine
  Version version_min, version_max;
  // Which models (any one): always, a vision tower, a model_type prefix, an exact model_type.
  bool always = false;
  bool vision = false;
  std::vector<std::string> model_type_prefixes;
  std::vector<std::string> model_types;
  // Filters that must all hold as well.
  std::string workload;                        // "chat" | "agent"; empty = any workload
  bool multi_node = false;                     // only when the layout spans nodes
  std::vector<std::string> model_id_contains;  // the hub id contains one of these (case-insensitive)
  std::vector<std::string> model_id_excludes;  // the hub id contains none of these (case-insensitive)
  // Issue 16: the device families (device catalogue `family`, "ascend-a2") the rule holds on; empty = any device.
  std::vector<std::string> device_families;
  std::vector<std::string> shell;
  std::map<std::string, std::string> env;
  std::vector<std::string> flags;
  std::string note, source;
};

struct LaunchRules {
  std::vector<LaunchRule> rules;
  std::string origin;
  QuantizedCatalog quantized;  // data/engines/quantized_checkpoints.json
};

// `device_families`: the family names the device catalogue knows (device::load_device_families); a rule whose
// when.device_families names another is a corrupt error naming the file and the rule.
Expected<LaunchRules> parse_launch_rules(const Json& root, const std::string& origin, std::span<const std::string> device_families);
// Loads data/engines/launch.json and data/engines/quantized_checkpoints.json.
Expected<LaunchRules> load_launch_rules(std::span<const std::string> device_families);

}  // namespace preflight::engine
