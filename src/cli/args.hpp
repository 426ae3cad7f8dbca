// cli/args: a small flag parser. Flags are --name value or --name=value; switches have no value.
// Unknown flags are usage errors (exit 2) with the nearest known flag suggested.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "deploy/deployment.hpp"

namespace preflight::cli {

struct FlagSpec {
  std::string name;   // without dashes
  bool takes_value = true;
};

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;
  bool has(const std::string& name) const { return values.count(name) > 0; }
  std::optional<std::string> get(const std::string& name) const;
  Expected<std::optional<int64_t>> get_int(const std::string& name) const;
  Expected<std::optional<double>> get_double(const std::string& name) const;
};

// vLLM's deployment flags as given on the command line, each with its flag as origin, for
// deploy::resolve_deployment (which checks them). invalid_argument when a value is not a number.
Expected<deploy::Flags> deployment_flags(const Args& args);

Expected<Args> parse_args(const std::vector<std::string>& argv, const std::vector<FlagSpec>& flags);

}  // namespace preflight::cli
