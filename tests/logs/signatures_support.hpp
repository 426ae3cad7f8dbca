// The shipped log signatures (data/doctor/error_signatures.json), loaded once per test binary; a catalogue that does
// not load throws, which fails the test that asked for it.
#pragma once

#include <stdexcept>

#include "logs/engine_log.hpp"

namespace pftest {

inline const preflight::logs::SignatureSet& shipped_signatures() {
  static const preflight::logs::SignatureSet s = [] {
    auto loaded = preflight::logs::load_signatures();
    if (!loaded) throw std::runtime_error(loaded.error().describe());
    return *loaded;
  }();
  return s;
}

}  // namespace pftest
