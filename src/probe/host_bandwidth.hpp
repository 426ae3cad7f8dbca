// probe/host_bandwidth: host memory bandwidth with STREAM-style kernels run by a team of threads over
// arrays of doubles much larger than the last-level cache. Bytes are counted as STREAM counts them
// (McCalpin, "STREAM: Sustainable Memory Bandwidth", stream.c): copy a = b moves 2 x N x 8 bytes,
// triad a = b + s * c moves 3 x N x 8, and read (sum of b, not in STREAM) moves 1 x N x 8. Stores
// that first read the line (write-allocate) are not counted, as in STREAM.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "probe/bandwidth.hpp"

namespace preflight::probe {

enum class HostKernel { copy, read, triad };
const char* host_kernel_name(HostKernel kernel);
// "copy" | "read" | "triad"; invalid_argument naming the known kernels otherwise.
Expected<HostKernel> parse_host_kernel(const std::string& name);

struct HostBandwidthOptions {
  uint64_t array_bytes = 256ull << 20;  // per array (three arrays); 256 MiB is far above any LLC we target
  int threads = 0;                      // 0: std::thread::hardware_concurrency()
  int warmup = 2;                       // untimed runs of each kernel (first touch, frequency ramp)
  int repeats = 10;                     // timed runs of each kernel
  std::vector<HostKernel> kernels = {HostKernel::copy, HostKernel::read, HostKernel::triad};
  std::function<void(const std::string&)> on_progress;  // optional; called between kernels
};

struct HostBandwidthReport {
  int threads = 0;
  uint64_t array_bytes = 0;  // rounded down to whole doubles per thread
  std::vector<BandwidthResult> results;  // one per kernel, in the order asked
};

// Allocates the arrays the kernels use (b always; a for copy and triad; c for triad), first-touches them
// on the threads that use them, runs each kernel warmup + repeats times, timing each repeat by the wall
// clock (seconds) and by the longest worker's thread CPU time (cpu_seconds), and checks the values it
// produced. invalid_argument for a size, thread count or
// repeat count out of range (the three arrays must fit in half of physical memory); io when an
// allocation fails; corrupt when a kernel produced a wrong value.
Expected<HostBandwidthReport> measure_host_bandwidth(const HostBandwidthOptions& options);

}  // namespace preflight::probe
