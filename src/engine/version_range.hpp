// engine/version_range: the {version_min, version_max} pair every versioned record of engines.json carries, read one
// way for the profiles, their rule objects, the NCCL buffer record and the all-reduce workspace record.
#pragma once

#include <optional>
#include <utility>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// A record's version_min and version_max: both parsable and min <= max, else nullopt (the caller names the record).
Expected<std::optional<std::pair<Version, Version>>> read_version_range(const JsonObject& r);

}  // namespace preflight::engine
