// probe/device_bandwidth: accelerator memory bandwidth measured as the seed report measured it on a
// 910B3 (shared/seeds/001, section 1: two 2 GiB buffers, 3 warm-up copies, 20 timed copies, counted
// read + write): a device-to-device copy between two device buffers, through the vendor runtime
// loaded at run time (CUDA runtime: cudaMalloc / cudaMemcpy; AscendCL: aclrtMalloc / aclrtMemcpy).
// Each repeat is timed on the host steady clock around the copy and a device synchronize. Bytes are
// counted as 2 x buffer per copy (each byte is read once and written once), the convention of the
// seed and of the published copy figures in shared/reference/hardware-notes.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "probe/bandwidth.hpp"

namespace preflight::probe {

enum class DeviceRuntime { cuda, ascend };
const char* device_runtime_name(DeviceRuntime runtime);  // "cuda" | "ascend"

// Where the runtime library is looked for, in order. An explicit path is the only candidate; else
// $PREFLIGHT_CUDART_LIB or $PREFLIGHT_ACL_LIB when set; else the usual sonames (libcudart.so and its
// versioned names, libascendcl.so) and the toolkit directories named by $CUDA_HOME,
// $ASCEND_TOOLKIT_HOME and $ASCEND_HOME_PATH.
std::vector<std::string> runtime_library_candidates(DeviceRuntime runtime, const std::string& explicit_path);

struct DeviceBandwidthOptions {
  DeviceRuntime runtime = DeviceRuntime::ascend;
  int device_index = 0;
  uint64_t buffer_bytes = 2ull << 30;  // per buffer; the seed's 2 GiB fp16 tensor
  int warmup = 3;                      // the seed's warm-up copies
  int repeats = 20;                    // the seed's timed copies
  std::string library_path;            // empty: runtime_library_candidates()
  std::function<void(const std::string&)> on_progress;  // optional
};

struct DeviceBandwidthReport {
  DeviceRuntime runtime = DeviceRuntime::ascend;
  std::string library_path;  // the library actually loaded
  int device_index = 0;
  uint64_t buffer_bytes = 0;
  std::string method;        // the calls timed, e.g. "aclrtMemcpy(ACL_MEMCPY_DEVICE_TO_DEVICE) + aclrtSynchronizeDevice"
  BandwidthResult copy;      // operation "device_copy"
};

// Loads the runtime, selects the device, allocates two buffers, fills the source, runs warmup + repeats
// copies and frees everything (also on failure). not_found when no runtime library loads or a symbol is
// missing; io when a runtime call fails, naming the call and its error code; invalid_argument for
// options out of range.
Expected<DeviceBandwidthReport> measure_device_bandwidth(const DeviceBandwidthOptions& options);

}  // namespace preflight::probe
