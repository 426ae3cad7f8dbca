// engine/launch_rules: what a start command needs besides sizing flags (data/engines/launch.json):
// environment set-up lines, environment variables and workaround flags known for an engine version
// and a kind of model, each with its source; plus the quantized-checkpoint catalogue a start command
// draws on (engine/quantized_checkpoints).
#pragma once

#include <map>
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

Expected<LaunchRules> parse_launch_rules(const Json& root, const std::string& origin);
// Loads data/engines/launch.json and data/engines/quantized_checkpoints.json.
Expected<LaunchRules> load_launch_rules();

}  // namespace preflight::engine
