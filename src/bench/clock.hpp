// bench/clock: the one monotonic clock every bench timestamp comes from. All intervals are
// nanoseconds of std::chrono::steady_clock (CLOCK_MONOTONIC); wall-clock time is used only for
// labels (run start in RFC 3339). Tests inject a ManualClock to drive timings exactly.
#pragma once

#include "base/units.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace preflight::bench {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual int64_t now_ns() const = 0;
};

class SteadyClock final : public Clock {
 public:
  int64_t now_ns() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
};

// A clock that moves only when told to (unit tests of the parser and statistics).
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ns = 0) : m_now_ns(start_ns) {}
  int64_t now_ns() const override { return m_now_ns; }
  void set_ns(int64_t t_ns) { m_now_ns = t_ns; }
  void advance_ms(double ms) { m_now_ns += static_cast<int64_t>(ms * 1e6); }

 private:
  int64_t m_now_ns;
};

// Wall-clock labels: preflight::utc_now_rfc3339 (base/units.hpp).
using preflight::utc_now_rfc3339;

inline double ns_to_ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

}  // namespace preflight::bench
