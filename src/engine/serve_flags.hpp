// engine/serve_flags: the first vLLM release whose `vllm serve` takes each multi-node data-parallel flag
// (data/engines/serve_flags.json, issue 15 multinode32). An older parser stops before anything loads with argparse's
// "vllm: error: unrecognized arguments: ..." (exit 2); fit, plan and validate refuse such a start with that line.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct ServeFlag {
  std::string flag;   // "--data-parallel-address"
  std::string short_name;  // "-dpa"; empty when it has none
  Version version_min;
  std::string source;
};

struct ServeFlagCatalog {
  std::vector<ServeFlag> flags;
  std::string origin;
};

// corrupt naming `origin` and the record: an unknown key, a missing source, a duplicate flag, a flag not spelled
// "--name", a bad version.
Expected<ServeFlagCatalog> parse_serve_flags(const Json& root, const std::string& origin);
// The embedded data/engines/serve_flags.json, parsed once.
const Expected<ServeFlagCatalog>& shipped_serve_flags();

// One flag a start gives, as argparse sees its tokens: the flag and, for a flag with a value, the value's text.
struct GivenServeFlag {
  std::string flag;  // "--data-parallel-address"
  std::string value;  // "10.0.0.1"; empty for a switch (--headless)
};

// The line `vllm serve` prints when engine `engine_name` (vllm, vllm-ascend) at `version` does not know some of
// `given` ("vllm: error: unrecognized arguments: --headless --data-parallel-address 10.0.0.1", the tokens in the order
// given), or "" when it knows them all. A flag the catalogue does not list, and other engines: "" (not ours to judge).
std::string unrecognized_flags_refusal(const ServeFlagCatalog& catalog, const std::string& engine_name, const Version& version,
                                       const std::vector<GivenServeFlag>& given);

}  // namespace preflight::engine
