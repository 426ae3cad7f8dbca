// engine/version_label: the engine version a message names. A version the user named (--engine E@0.23.0, a case's,
// a log's) as given; otherwise the profile's range as its id writes it ("0.23-0.26"), never rule_version()'s upper
// bound of the range, which is a sentinel ("0.26.99") no release carries (ux32).
#pragma once

#include <string>

#include "engine/engine_profile.hpp"

namespace preflight::engine {

inline std::string version_label(const EngineProfile& e) {
  if (e.version_named) return e.version_named->text();
  const auto at = e.id.find('@');
  return at == std::string::npos ? e.rule_version().text() : e.id.substr(at + 1);
}

}  // namespace preflight::engine
