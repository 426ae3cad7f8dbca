// Private to src/engine: the overheads record reader engine_catalog.cpp calls (engine_overheads.cpp).
#pragma once

#include <string>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// One engines.json "overheads" record; corrupt naming `origin`, the record's platform and the key.
Expected<Overheads> parse_overheads(const Json& item, const std::string& origin);

}  // namespace preflight::engine
