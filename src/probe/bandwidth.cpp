#include "probe/bandwidth.hpp"

#include <algorithm>

#include "base/units.hpp"

namespace preflight::probe {

namespace {

double median_of_sorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

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
  result.median_bytes_per_s = median_of_sorted(rates);
  result.aggregate_bytes_per_s = result.bytes_per_repeat * static_cast<double>(n) / total_seconds;
  if (result.cpu_seconds.empty()) return Ok{};
  if (result.cpu_seconds.size() != n)
    return make_error(ErrorKind::invalid_argument, format("%s: %zu cpu times for %zu repeats", result.operation.c_str(), result.cpu_seconds.size(), n));
  std::vector<double> cpu_rates;
  for (double s : result.cpu_seconds) {
    if (!(s > 0)) return make_error(ErrorKind::invalid_argument, format("%s: a repeat took %g s of cpu time; use a larger --size", result.operation.c_str(), s));
    cpu_rates.push_back(result.bytes_per_repeat / s);
  }
  std::sort(cpu_rates.begin(), cpu_rates.end());
  result.median_cpu_bytes_per_s = median_of_sorted(cpu_rates);
  return Ok{};
}

}  // namespace preflight::probe
