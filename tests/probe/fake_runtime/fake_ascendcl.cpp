// A fake libascendcl.so: the AscendCL calls preflight bw makes, on host memory. It enforces the
// contract a real runtime enforces (aclInit first, a device set before allocating, device-to-device
// kind 3, destMax >= count, known buffers) so that a wrong call sequence fails the test.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "fake_runtime_state.hpp"

namespace {
constexpr int k_success = 0;
constexpr int k_invalid_param = 100000;        // ACL_ERROR_INVALID_PARAM
constexpr int k_uninitialize = 100001;         // ACL_ERROR_UNINITIALIZE
constexpr int k_repeat_initialize = 100002;    // ACL_ERROR_REPEAT_INITIALIZE
constexpr int k_memcpy_device_to_device = 3;   // ACL_MEMCPY_DEVICE_TO_DEVICE
}  // namespace

extern "C" {

int aclInit(const char* config_path) {
  (void)config_path;
  if (int rc = fake::enter("aclInit")) return rc;
  if (fake::state().initialized) return k_repeat_initialize;
  fake::state().initialized = true;
  return k_success;
}

int aclFinalize() {
  if (int rc = fake::enter("aclFinalize")) return rc;
  if (!fake::state().initialized) return k_uninitialize;
  fake::state().initialized = false;
  return k_success;
}

int aclrtSetDevice(int32_t device) {
  if (int rc = fake::enter("aclrtSetDevice")) return rc;
  if (!fake::state().initialized) return k_uninitialize;
  if (device < 0 || device > 7) return k_invalid_param;
  fake::state().device = device;
  return k_success;
}

int aclrtResetDevice(int32_t device) {
  if (int rc = fake::enter("aclrtResetDevice")) return rc;
  if (device != fake::state().device) return k_invalid_param;
  fake::state().device = -1;
  return k_success;
}

int aclrtMalloc(void** ptr, size_t size, int policy) {
  if (int rc = fake::enter("aclrtMalloc")) return rc;
  if (fake::state().device < 0 || !ptr || size == 0 || policy < 0 || policy > 7) return k_invalid_param;
  *ptr = std::malloc(size);
  if (!*ptr) return 207001;  // ACL_ERROR_RT_MEMORY_ALLOCATION
  std::lock_guard<std::mutex> lock(fake::state().mutex);
  fake::state().live.insert(*ptr);
  return k_success;
}

int aclrtFree(void* ptr) {
  if (int rc = fake::enter("aclrtFree")) return rc;
  {
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (fake::state().live.erase(ptr) == 0) return k_invalid_param;
  }
  std::free(ptr);
  return k_success;
}

int aclrtMemset(void* ptr, size_t max_count, int32_t value, size_t count) {
  if (int rc = fake::enter("aclrtMemset")) return rc;
  if (!fake::is_live(ptr) || count > max_count) return k_invalid_param;
  std::memset(ptr, value, count);
  return k_success;
}

int aclrtMemcpy(void* dst, size_t dest_max, const void* src, size_t count, int kind) {
  if (int rc = fake::enter("aclrtMemcpy")) return rc;
  if (kind != k_memcpy_device_to_device || count > dest_max || !fake::is_live(dst) || !fake::is_live(src)) return k_invalid_param;
  std::memcpy(dst, src, count);
  return k_success;
}

int aclrtSynchronizeDevice() {
  if (int rc = fake::enter("aclrtSynchronizeDevice")) return rc;
  return fake::state().device < 0 ? k_invalid_param : k_success;
}

}  // extern "C"
