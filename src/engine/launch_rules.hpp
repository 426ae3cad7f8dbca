// engine/launch_rules: what a start command needs besides sizing flags (data/engines/launch.json):
// environment set-up lines, environment variables and workaround flags known for an engine version
// and a kind of model, each with its source.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct LaunchRule {
  std::string id;
  std::string engine;  // "*" = any vLLM-family engine
  Version version_min, version_max;
  bool always = false;
  bool vision = false;
  std::vector<std::string> model_type_prefixes;
  std::vector<std::string> shell;
  std::map<std::string, std::string> env;
  std::vector<std::string> flags;
  std::string note, source;
};

struct LaunchRules {
  std::vector<LaunchRule> rules;
  std::string origin;
};

Expected<LaunchRules> parse_launch_rules(const Json& root, const std::string& origin);
Expected<LaunchRules> load_launch_rules();

}  // namespace preflight::engine
