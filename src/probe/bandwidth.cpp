#include "probe/bandwidth.hpp"

#include <algorithm>

#include "base/units.hpp"

namespace preflight::probe {

Status summarize_bandwidth(BandwidthResult& result) {
  if (result.seconds.empty()) return make_error(ErrorKind::invalid_argument, format("%s: no timed repeat", result.operation.c_str()));
  if (!(result.bytes_per_repeat > 0)) return make_error(ErrorKind::invalid_argument, format("%s: bytes per repeat must be positive", result.operation.c_str()));
  std::vector<double> rates;
  double total_seconds = 0;
  for (double s : result.seconds) {
    if (!(s > 0)) return make_error(ErrorKind::invalid_argument, format("%s: a repeat took %g s; use a larger --size", result.operation.c_str(), s));
    rates.push_back(result.bytes_per_repeat / s);
    total_seconds += s;
  }
  std::sort(rates.begin(), rates.end());
  const size_t n = rates.size();
  result.min_bytes_per_s = rates.front();
  result.max_bytes_per_s = rates.back();
  result.median_bytes_per_s = n % 2 ? rates[n / 2] : (rates[n / 2 - 1] + rates[n / 2]) / 2;
  result.aggregate_bytes_per_s = result.bytes_per_repeat * static_cast<double>(n) / total_seconds;
  return Ok{};
}

}  // namespace preflight::probe
