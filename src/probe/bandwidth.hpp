// probe/bandwidth: the record every bandwidth measurement produces (host kernels, device copies):
// the operation, how many bytes one timed repeat counts and why, the raw per-repeat times, and
// min / median / max / aggregate rates derived from them. Rates are bytes per second; reports
// show decimal GB/s (1 GB = 1e9 bytes) and say so.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"

namespace preflight::probe {

struct BandwidthResult {
  std::string operation;         // copy | read | triad | device_copy
  std::string counting;          // how bytes_per_repeat is counted, e.g. "2 x 268435456 B (read + write)"
  double bytes_per_repeat = 0;   // bytes counted for one timed repeat
  int warmup = 0;                // untimed repeats run first
  std::vector<double> seconds;   // one wall time per timed repeat, in order
  double min_bytes_per_s = 0;
  double median_bytes_per_s = 0;  // of the per-repeat rates; the mean of the two middle ones for an even count
  double max_bytes_per_s = 0;
  double aggregate_bytes_per_s = 0;  // all counted bytes over all timed seconds (the seed's torch_npu method)
};

// Fills the rates from bytes_per_repeat and seconds. invalid_argument when there is no sample, when
// bytes_per_repeat is not positive, or when a time is not positive (a clock too coarse for the size).
Status summarize_bandwidth(BandwidthResult& result);

}  // namespace preflight::probe
