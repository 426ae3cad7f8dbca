// engine/flag_versions: vLLM command-line flags that exist only in a range of releases (data/engines/flag_versions.json,
// issue 15 arch32): --speculative-config from 0.8.2; --speculative-model, --num-speculative-tokens and
// --speculative-draft-tensor-parallel-size up to 0.8.2. Outside its range `vllm serve`'s argparse stops with
// "vllm serve: error: unrecognized arguments: FLAG ...", exit 2. vLLM-Ascend X.Y parses as vLLM X.Y.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct FlagVersions {
  std::string flag;  // "--speculative-config"
  std::string short_name;  // "-dpa"; empty when it has none
  Version version_min, version_max;
  std::string replacement;  // what the versions outside the range take instead
  std::string source;
};

struct FlagVersionCatalog {
  std::vector<FlagVersions> records;
  std::string origin;
  const FlagVersions* find(const std::string& flag) const;
};

// corrupt naming `origin` and the record: an unknown key, an empty source or replacement, a duplicate id, a bad version,
// version_max below version_min.
Expected<FlagVersionCatalog> parse_flag_versions(const Json& root, const std::string& origin);
// The embedded data/engines/flag_versions.json, parsed once per process.
const Expected<FlagVersionCatalog>& shipped_flag_versions();

// argparse's refusal of `flag` given as `as_written` (the flag and its value) on `engine_name` (vllm, vllm-ascend) at
// `version`, with the range that has it and its replacement; "" when that version parses it, the flag has no record, or
// the engine is another.
// A flag as given on a command line, for the refusal of several at once.
struct GivenFlag {
  std::string flag;   // "--data-parallel-address"
  std::string value;  // "10.0.0.1"; empty for a switch (--headless)
};
// argparse's refusal of every given flag the version's parser lacks, in the order given ("vllm: error: unrecognized
// arguments: --headless --data-parallel-start-rank 1"); "" when it has them all or the engine is not vLLM's.
std::string unrecognized_flags_refusal(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version,
                                       const std::vector<GivenFlag>& given);
std::string flag_version_refusal(const FlagVersionCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& flag,
                                 const std::string& as_written);

}  // namespace preflight::engine
