// base/units: byte and rate constants and the formatting of sizes. GiB for memory (binary), GB only
// where a datasheet says GB. Helpers here never decide which to use; callers name the unit.
#pragma once

#include <cstdint>
#include <string>

namespace preflight {

inline constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;
inline constexpr double k_mib = 1024.0 * 1024.0;
inline constexpr double k_gb = 1e9;

inline double bytes_to_gib(double bytes) { return bytes / k_gib; }
inline double gib_to_bytes(double gib) { return gib * k_gib; }

// printf-style formatting into a std::string.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// 1234567 -> "1,234,567" (the thousands separators vLLM prints with f"{n:,}").
std::string with_thousands(int64_t value);

// A byte count for messages, in binary units chosen by size: "10,000 bytes" below 1 MiB, then
// "12.5 MiB" below 1 GiB, then "9.2 GiB" (one decimal, so a small size never reads "0.0").
std::string format_bytes(uint64_t bytes);

// Fixed precision, e.g. fixed(16.6284, 2) -> "16.63".
std::string fixed(double value, int precision);

// "2026-12-02T17:24:55Z" for the current wall-clock time (RFC 3339 UTC; labels and provenance only).
std::string utc_now_rfc3339();

}  // namespace preflight
