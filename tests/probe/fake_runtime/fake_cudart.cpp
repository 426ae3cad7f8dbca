// A fake libcudart.so: the CUDA runtime calls preflight bw makes, on host memory, with the checks a
// real runtime makes (known buffers, cudaMemcpyDeviceToDevice = 3).
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "fake_runtime_state.hpp"

namespace {
constexpr int k_success = 0;
constexpr int k_invalid_value = 1;              // cudaErrorInvalidValue
constexpr int k_memory_allocation = 2;          // cudaErrorMemoryAllocation
constexpr int k_invalid_device = 101;           // cudaErrorInvalidDevice
constexpr int k_memcpy_device_to_device = 3;    // cudaMemcpyDeviceToDevice
}  // namespace

extern "C" {

const char* cudaGetErrorString(int code) {
  switch (code) {
    case k_success: return "no error";
    case k_invalid_value: return "invalid argument";
    case k_memory_allocation: return "out of memory";
    case k_invalid_device: return "invalid device ordinal";
    default: return "unrecognized error code";
  }
}

int cudaSetDevice(int device) {
  if (int rc = fake::enter("cudaSetDevice")) return rc;
  if (device < 0 || device > 7) return k_invalid_device;
  fake::state().device = device;
  return k_success;
}

int cudaMalloc(void** ptr, size_t size) {
  if (int rc = fake::enter("cudaMalloc")) return rc;
  if (!ptr || size == 0) return k_invalid_value;
  *ptr = std::malloc(size);
  if (!*ptr) return k_memory_allocation;
  std::lock_guard<std::mutex> lock(fake::state().mutex);
  fake::state().live.insert(*ptr);
  return k_success;
}

int cudaFree(void* ptr) {
  if (int rc = fake::enter("cudaFree")) return rc;
  {
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (fake::state().live.erase(ptr) == 0) return k_invalid_value;
  }
  std::free(ptr);
  return k_success;
}

int cudaMemset(void* ptr, int value, size_t count) {
  if (int rc = fake::enter("cudaMemset")) return rc;
  if (!fake::is_live(ptr)) return k_invalid_value;
  std::memset(ptr, value, count);
  return k_success;
}

int cudaMemcpy(void* dst, const void* src, size_t count, int kind) {
  if (int rc = fake::enter("cudaMemcpy")) return rc;
  if (kind != k_memcpy_device_to_device || !fake::is_live(dst) || !fake::is_live(src)) return k_invalid_value;
  std::memcpy(dst, src, count);
  return k_success;
}

int cudaDeviceSynchronize() {
  if (int rc = fake::enter("cudaDeviceSynchronize")) return rc;
  return k_success;
}

}  // extern "C"
