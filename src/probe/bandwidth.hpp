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
  // Host kernels only (empty for device copies): per timed repeat, the longest CPU time one worker thread
  // spent on its slice (CLOCK_THREAD_CPUTIME_ID), i.e. the repeat's time without the moments the scheduler
  // gave the worker's core to other work; and the median rate over it.
  std::vector<double> cpu_seconds;
  double median_cpu_bytes_per_s = 0;
};

// Fills the rates from bytes_per_repeat and seconds (and median_cpu_bytes_per_s from cpu_seconds when
// there are any). invalid_argument when there is no sample, when bytes_per_repeat is not positive, when a
// time is not positive (a clock too coarse for the size), or when cpu_seconds is neither empty nor one per
// repeat.
Status summarize_bandwidth(BandwidthResult& result);

}  // namespace preflight::probe
