#include "probe/device_bandwidth.hpp"

#include <chrono>
#include <cstdlib>
#include <memory>

#include "base/file.hpp"
#include "base/units.hpp"
#include "probe/runtime_library.hpp"

namespace preflight::probe {

namespace {

constexpr int k_max_repeats = 100000;

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The runtime calls one copy benchmark needs, whatever the vendor. Failures name the call and code.
class DeviceApi {
 public:
  virtual ~DeviceApi() = default;
  virtual Status open_device(int index) = 0;
  virtual Expected<void*> allocate(uint64_t bytes) = 0;
  virtual Status fill(void* buffer, uint64_t bytes) = 0;
  virtual Status copy(void* dst, const void* src, uint64_t bytes) = 0;
  virtual Status synchronize() = 0;
  virtual void release(void* buffer) = 0;  // cleanup: errors are ignored
  virtual void close_device() = 0;         // cleanup: errors are ignored
  virtual std::string method() const = 0;
};

Error call_failed(const RuntimeLibrary& lib, const std::string& call, int code, const std::string& meaning) {
  std::string message = format("%s failed with error %d", call.c_str(), code);
  if (!meaning.empty()) message += " (" + meaning + ")";
  message += " [" + lib.path() + "]";
  return make_error(ErrorKind::io, message, lib.path());
}

// AscendCL, declared from the CANN AscendCL API reference (acl/acl.h, acl/acl_rt.h): aclError is an
// int, ACL_SUCCESS 0, ACL_ERROR_REPEAT_INITIALIZE 100002; aclrtMemMallocPolicy ACL_MEM_MALLOC_HUGE_FIRST
// = 0; aclrtMemcpyKind ACL_MEMCPY_DEVICE_TO_DEVICE = 3. aclrtMemcpy is synchronous.
class AclApi final : public DeviceApi {
 public:
  using InitFn = int (*)(const char*);
  using FinalizeFn = int (*)();
  using SetDeviceFn = int (*)(int32_t);
  using ResetDeviceFn = int (*)(int32_t);
  using MallocFn = int (*)(void**, size_t, int);
  using FreeFn = int (*)(void*);
  using MemsetFn = int (*)(void*, size_t, int32_t, size_t);
  using MemcpyFn = int (*)(void*, size_t, const void*, size_t, int);
  using SynchronizeDeviceFn = int (*)();
  static constexpr int k_success = 0;
  static constexpr int k_repeat_initialize = 100002;
  static constexpr int k_malloc_huge_first = 0;
  static constexpr int k_memcpy_device_to_device = 3;

  static Expected<std::unique_ptr<DeviceApi>> load(RuntimeLibrary& lib) {
    auto api = std::make_unique<AclApi>(lib);
    if (auto s = lib.bind("aclInit", api->m_init); !s) return s.error();
    if (auto s = lib.bind("aclFinalize", api->m_finalize); !s) return s.error();
    if (auto s = lib.bind("aclrtSetDevice", api->m_set_device); !s) return s.error();
    if (auto s = lib.bind("aclrtResetDevice", api->m_reset_device); !s) return s.error();
    if (auto s = lib.bind("aclrtMalloc", api->m_malloc); !s) return s.error();
    if (auto s = lib.bind("aclrtFree", api->m_free); !s) return s.error();
    if (auto s = lib.bind("aclrtMemset", api->m_memset); !s) return s.error();
    if (auto s = lib.bind("aclrtMemcpy", api->m_memcpy); !s) return s.error();
    if (auto s = lib.bind("aclrtSynchronizeDevice", api->m_synchronize); !s) return s.error();
    return std::unique_ptr<DeviceApi>(std::move(api));
  }

  explicit AclApi(RuntimeLibrary& lib) : m_lib(lib) {}

  Status open_device(int index) override {
    const int init = m_init(nullptr);
    if (init != k_success && init != k_repeat_initialize) return call_failed(m_lib, "aclInit", init, "");
    m_initialized = init == k_success;  // finalize only what we initialized
    if (int rc = m_set_device(index); rc != k_success) return call_failed(m_lib, format("aclrtSetDevice(%d)", index), rc, "");
    m_device = index;
    return Ok{};
  }
  Expected<void*> allocate(uint64_t bytes) override {
    void* p = nullptr;
    if (int rc = m_malloc(&p, bytes, k_malloc_huge_first); rc != k_success) {
      return call_failed(m_lib, format("aclrtMalloc(%llu B)", static_cast<unsigned long long>(bytes)), rc, "");
    }
    return p;
  }
  Status fill(void* buffer, uint64_t bytes) override {
    if (int rc = m_memset(buffer, bytes, 1, bytes); rc != k_success) return call_failed(m_lib, "aclrtMemset", rc, "");
    return Ok{};
  }
  Status copy(void* dst, const void* src, uint64_t bytes) override {
    if (int rc = m_memcpy(dst, bytes, src, bytes, k_memcpy_device_to_device); rc != k_success) {
      return call_failed(m_lib, "aclrtMemcpy(ACL_MEMCPY_DEVICE_TO_DEVICE)", rc, "");
    }
    return Ok{};
  }
  Status synchronize() override {
    if (int rc = m_synchronize(); rc != k_success) return call_failed(m_lib, "aclrtSynchronizeDevice", rc, "");
    return Ok{};
  }
  void release(void* buffer) override { (void)m_free(buffer); }
  void close_device() override {
    if (m_device >= 0) (void)m_reset_device(m_device);
    if (m_initialized) (void)m_finalize();
  }
  std::string method() const override { return "aclrtMemcpy(ACL_MEMCPY_DEVICE_TO_DEVICE) + aclrtSynchronizeDevice, host steady clock per copy"; }

 private:
  RuntimeLibrary& m_lib;
  InitFn m_init = nullptr;
  FinalizeFn m_finalize = nullptr;
  SetDeviceFn m_set_device = nullptr;
  ResetDeviceFn m_reset_device = nullptr;
  MallocFn m_malloc = nullptr;
  FreeFn m_free = nullptr;
  MemsetFn m_memset = nullptr;
  MemcpyFn m_memcpy = nullptr;
  SynchronizeDeviceFn m_synchronize = nullptr;
  bool m_initialized = false;
  int m_device = -1;
};

// CUDA runtime, declared from the CUDA Runtime API reference: cudaError_t is an int enum with
// cudaSuccess 0; cudaMemcpyKind cudaMemcpyDeviceToDevice = 3. A device-to-device cudaMemcpy may
// return before the copy ends, hence the cudaDeviceSynchronize inside the timed region.
class CudaApi final : public DeviceApi {
 public:
  using SetDeviceFn = int (*)(int);
  using MallocFn = int (*)(void**, size_t);
  using FreeFn = int (*)(void*);
  using MemsetFn = int (*)(void*, int, size_t);
  using MemcpyFn = int (*)(void*, const void*, size_t, int);
  using DeviceSynchronizeFn = int (*)();
  using GetErrorStringFn = const char* (*)(int);
  static constexpr int k_success = 0;
  static constexpr int k_memcpy_device_to_device = 3;

  static Expected<std::unique_ptr<DeviceApi>> load(RuntimeLibrary& lib) {
    auto api = std::make_unique<CudaApi>(lib);
    if (auto s = lib.bind("cudaSetDevice", api->m_set_device); !s) return s.error();
    if (auto s = lib.bind("cudaMalloc", api->m_malloc); !s) return s.error();
    if (auto s = lib.bind("cudaFree", api->m_free); !s) return s.error();
    if (auto s = lib.bind("cudaMemset", api->m_memset); !s) return s.error();
    if (auto s = lib.bind("cudaMemcpy", api->m_memcpy); !s) return s.error();
    if (auto s = lib.bind("cudaDeviceSynchronize", api->m_synchronize); !s) return s.error();
    (void)lib.bind("cudaGetErrorString", api->m_error_string);  // optional: used for messages only
    return std::unique_ptr<DeviceApi>(std::move(api));
  }

  explicit CudaApi(RuntimeLibrary& lib) : m_lib(lib) {}

  Status open_device(int index) override {
    if (int rc = m_set_device(index); rc != k_success) return failed(format("cudaSetDevice(%d)", index), rc);
    return Ok{};
  }
  Expected<void*> allocate(uint64_t bytes) override {
    void* p = nullptr;
    if (int rc = m_malloc(&p, bytes); rc != k_success) return failed(format("cudaMalloc(%llu B)", static_cast<unsigned long long>(bytes)), rc);
    return p;
  }
  Status fill(void* buffer, uint64_t bytes) override {
    if (int rc = m_memset(buffer, 1, bytes); rc != k_success) return failed("cudaMemset", rc);
    return Ok{};
  }
  Status copy(void* dst, const void* src, uint64_t bytes) override {
    if (int rc = m_memcpy(dst, src, bytes, k_memcpy_device_to_device); rc != k_success) return failed("cudaMemcpy(cudaMemcpyDeviceToDevice)", rc);
    return Ok{};
  }
  Status synchronize() override {
    if (int rc = m_synchronize(); rc != k_success) return failed("cudaDeviceSynchronize", rc);
    return Ok{};
  }
  void release(void* buffer) override { (void)m_free(buffer); }
  void close_device() override {}
  std::string method() const override { return "cudaMemcpy(cudaMemcpyDeviceToDevice) + cudaDeviceSynchronize, host steady clock per copy"; }

 private:
  Error failed(const std::string& call, int code) const {
    const char* text = m_error_string ? m_error_string(code) : nullptr;
    return call_failed(m_lib, call, code, text ? text : "");
  }
  RuntimeLibrary& m_lib;
  SetDeviceFn m_set_device = nullptr;
  MallocFn m_malloc = nullptr;
  FreeFn m_free = nullptr;
  MemsetFn m_memset = nullptr;
  MemcpyFn m_memcpy = nullptr;
  DeviceSynchronizeFn m_synchronize = nullptr;
  GetErrorStringFn m_error_string = nullptr;
};

// Frees the buffers and closes the device on every path out of the measurement.
struct DeviceSession {
  DeviceApi& api;
  bool opened = false;
  std::vector<void*> buffers;
  ~DeviceSession() {
    for (void* b : buffers) api.release(b);
    if (opened) api.close_device();
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const char* device_runtime_name(DeviceRuntime runtime) {
  return runtime == DeviceRuntime::cuda ? "cuda" : "ascend";
}

std::vector<std::string> runtime_library_candidates(DeviceRuntime runtime, const std::string& explicit_path) {
  if (!explicit_path.empty()) return {explicit_path};
  const std::string from_env = env_or_empty(runtime == DeviceRuntime::cuda ? "PREFLIGHT_CUDART_LIB" : "PREFLIGHT_ACL_LIB");
  if (!from_env.empty()) return {from_env};
  std::vector<std::string> out;
  if (runtime == DeviceRuntime::cuda) {
    out = {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"};
    if (const std::string home = env_or_empty("CUDA_HOME"); !home.empty()) out.push_back(join_path(home, "lib64/libcudart.so"));
    out.push_back("/usr/local/cuda/lib64/libcudart.so");
  } else {
    out = {"libascendcl.so"};
    for (const char* var : {"ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"}) {
      if (const std::string home = env_or_empty(var); !home.empty()) out.push_back(join_path(home, "lib64/libascendcl.so"));
    }
  }
  return out;
}

Expected<DeviceBandwidthReport> measure_device_bandwidth(const DeviceBandwidthOptions& options) {
  if (options.device_index < 0) return make_error(ErrorKind::invalid_argument, format("device index must be >= 0, got %d", options.device_index));
  if (options.repeats < 1 || options.repeats > k_max_repeats) return make_error(ErrorKind::invalid_argument, format("repeats must be in [1, %d], got %d", k_max_repeats, options.repeats));
  if (options.warmup < 0 || options.warmup > k_max_repeats) return make_error(ErrorKind::invalid_argument, format("warm-up runs must be in [0, %d], got %d", k_max_repeats, options.warmup));
  if (options.buffer_bytes < 4096) return make_error(ErrorKind::invalid_argument, format("buffer size must be at least 4096 B, got %llu", static_cast<unsigned long long>(options.buffer_bytes)));

  PF_TRY(lib, RuntimeLibrary::open(runtime_library_candidates(options.runtime, options.library_path)));
  PF_TRY(api, options.runtime == DeviceRuntime::cuda ? CudaApi::load(lib) : AclApi::load(lib));
  DeviceSession session{*api};
  session.opened = true;  // close_device() undoes whatever part of open_device() succeeded
  PF_TRY(opened, api->open_device(options.device_index));
  (void)opened;
  PF_TRY(src, api->allocate(options.buffer_bytes));
  session.buffers.push_back(src);
  PF_TRY(dst, api->allocate(options.buffer_bytes));
  session.buffers.push_back(dst);
  PF_TRY(filled, api->fill(src, options.buffer_bytes));
  (void)filled;
  PF_TRY(settled, api->synchronize());
  (void)settled;

  DeviceBandwidthReport report;
  report.runtime = options.runtime;
  report.library_path = lib.path();
  report.device_index = options.device_index;
  report.buffer_bytes = options.buffer_bytes;
  report.method = api->method();
  BandwidthResult& r = report.copy;
  r.operation = "device_copy";
  r.warmup = options.warmup;
  r.bytes_per_repeat = 2.0 * static_cast<double>(options.buffer_bytes);
  r.counting = format("2 x %llu B (read source + write destination)", static_cast<unsigned long long>(options.buffer_bytes));
  if (options.on_progress) {
    options.on_progress(format("%s device %d: %d warm-up + %d timed copies of %.0f MiB", device_runtime_name(options.runtime), options.device_index,
                               options.warmup, options.repeats, static_cast<double>(options.buffer_bytes) / k_mib));
  }
  for (int i = 0; i < options.warmup + options.repeats; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    PF_TRY(copied, api->copy(dst, src, options.buffer_bytes));
    (void)copied;
    PF_TRY(synced, api->synchronize());
    (void)synced;
    if (i >= options.warmup) r.seconds.push_back(seconds_since(t0));
  }
  PF_TRY(summarized, summarize_bandwidth(r));
  (void)summarized;
  return report;
}

}  // namespace preflight::probe
