// engine/version_range: the {version_min, version_max} pair every versioned record of engines.json carries, read one
// way for the profiles, their rule objects, the NCCL buffer record and the all-reduce and MoE backend workspace records.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// A record's version_min and version_max: both parsable and min <= max, else nullopt (the caller names the record).
Expected<std::optional<std::pair<Version, Version>>> read_version_range(const JsonObject& r);

// One version field of a record, `key` ("version_min"): its text parsed, else "<where>: <key> '<text>' is not a version"
// (the loaders of model_support, quantization_methods, flag_versions, speculative_methods and vllm_gguf_types).
Expected<Version> read_version_field(const JsonObject& r, const std::string& key, const std::string& where, const std::string& origin);

// A source text under `key` that is not blank ("<origin>: <key> is empty: every figure needs its source").
Expected<std::string> read_source_field(const JsonObject& r, const std::string& key, const std::string& origin);

// A workspace record's version_min / version_max ("bad version range", named at version_min) and its version_source.
Expected<EngineProfile::VersionRule> read_counted_versions(const JsonObject& r, const std::string& origin);

// A profile's rule object (engines.json profiles[id].<key>, or one item of a rule list): its version_min / version_max
// ("<origin>: <id>: <key>: bad version range"), its source, and no keys but those and `extra`. The capture, sampler
// warm-up and multimodal profile-run rules read theirs with it.
Expected<EngineProfile::VersionRule> read_rule_range(const JsonObject& c, const std::string& origin, const std::string& id, const std::string& key,
                                                     const std::vector<std::string>& extra);

}  // namespace preflight::engine
