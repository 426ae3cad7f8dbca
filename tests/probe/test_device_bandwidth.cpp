#include <gtest/gtest.h>

#include "probe/device_bandwidth.hpp"
#include "probe/runtime_library.hpp"
#include "fake_library.hpp"

using namespace preflight;
using namespace preflight::probe;

namespace {
DeviceBandwidthOptions small_run(DeviceRuntime runtime, const std::string& lib) {
  DeviceBandwidthOptions o;
  o.runtime = runtime;
  o.library_path = lib;
  o.buffer_bytes = 1ull << 20;
  o.warmup = 3;
  o.repeats = 5;
  return o;
}
}  // namespace

TEST(DeviceBandwidth, AscendCopiesThroughTheRuntimeAndCleansUp) {
  pftest::FakeRuntime fake(FAKE_ACL_LIB);
  ASSERT_TRUE(fake.loaded());
  auto o = small_run(DeviceRuntime::ascend, FAKE_ACL_LIB);
  o.device_index = 2;
  auto r = measure_device_bandwidth(o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->library_path, FAKE_ACL_LIB);
  EXPECT_EQ(r->device_index, 2);
  EXPECT_EQ(r->copy.operation, "device_copy");
  EXPECT_DOUBLE_EQ(r->copy.bytes_per_repeat, 2.0 * 1048576);  // read + write
  EXPECT_EQ(r->copy.seconds.size(), 5u);
  EXPECT_GT(r->copy.median_bytes_per_s, 1e7);  // a host memcpy of 1 MiB: far above 10 MB/s, even under ASan
  EXPECT_LT(r->copy.median_bytes_per_s, 1e13);
  EXPECT_NE(r->method.find("ACL_MEMCPY_DEVICE_TO_DEVICE"), std::string::npos);
  // 3 warm-up + 5 timed copies, each followed by a synchronize (plus one after the fill).
  EXPECT_EQ(fake.calls("aclrtMemcpy"), 8);
  EXPECT_EQ(fake.calls("aclrtSynchronizeDevice"), 9);
  EXPECT_EQ(fake.calls("aclInit"), 1);
  EXPECT_EQ(fake.calls("aclrtSetDevice"), 1);
  EXPECT_EQ(fake.calls("aclrtMalloc"), 2);
  EXPECT_EQ(fake.calls("aclrtMemset"), 1);
  EXPECT_EQ(fake.calls("aclrtFree"), 2);
  EXPECT_EQ(fake.calls("aclrtResetDevice"), 1);
  EXPECT_EQ(fake.calls("aclFinalize"), 1);
  EXPECT_EQ(fake.live_buffers(), 0);
}

TEST(DeviceBandwidth, CudaCopiesThroughTheRuntimeAndCleansUp) {
  pftest::FakeRuntime fake(FAKE_CUDART_LIB);
  ASSERT_TRUE(fake.loaded());
  auto r = measure_device_bandwidth(small_run(DeviceRuntime::cuda, FAKE_CUDART_LIB));
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->copy.seconds.size(), 5u);
  EXPECT_DOUBLE_EQ(r->copy.bytes_per_repeat, 2.0 * 1048576);
  EXPECT_NE(r->method.find("cudaMemcpyDeviceToDevice"), std::string::npos);
  EXPECT_EQ(fake.calls("cudaMemcpy"), 8);
  EXPECT_EQ(fake.calls("cudaDeviceSynchronize"), 9);
  EXPECT_EQ(fake.calls("cudaFree"), 2);
  EXPECT_EQ(fake.live_buffers(), 0);
}

TEST(DeviceBandwidth, MissingLibraryIsAClearError) {
  auto r = measure_device_bandwidth(small_run(DeviceRuntime::ascend, "/nonexistent/libascendcl.so"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  EXPECT_NE(r.error().message.find("cannot load the runtime library (tried /nonexistent/libascendcl.so)"), std::string::npos) << r.error().message;
}

TEST(DeviceBandwidth, LibraryWithoutTheRuntimeSymbolsIsAClearError) {
  // The fake CUDA runtime has no AscendCL symbol.
  auto r = measure_device_bandwidth(small_run(DeviceRuntime::ascend, FAKE_CUDART_LIB));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::not_found);
  EXPECT_NE(r.error().message.find("symbol aclInit not found"), std::string::npos) << r.error().message;
}

TEST(DeviceBandwidth, FailingRuntimeCallsNameTheCallAndCodeAndReleaseEverything) {
  struct Case {
    DeviceRuntime runtime;
    const char* lib;
    const char* fail;
    const char* code;
    const char* fragment;
    int frees;
  };
  const Case cases[] = {
      {DeviceRuntime::ascend, FAKE_ACL_LIB, "aclrtMalloc", "207001", "aclrtMalloc(1048576 B) failed with error 207001", 0},
      {DeviceRuntime::ascend, FAKE_ACL_LIB, "aclrtMemcpy", "507899", "aclrtMemcpy(ACL_MEMCPY_DEVICE_TO_DEVICE) failed with error 507899", 2},
      {DeviceRuntime::ascend, FAKE_ACL_LIB, "aclrtSetDevice", "107001", "aclrtSetDevice(0) failed with error 107001", 0},
      {DeviceRuntime::cuda, FAKE_CUDART_LIB, "cudaMalloc", "2", "cudaMalloc(1048576 B) failed with error 2 (out of memory)", 0},
      {DeviceRuntime::cuda, FAKE_CUDART_LIB, "cudaDeviceSynchronize", "700", "cudaDeviceSynchronize failed with error 700", 2},
  };
  for (const auto& c : cases) {
    pftest::FakeRuntime fake(c.lib);
    ASSERT_TRUE(fake.loaded());
    pftest::ScopedEnv fail("FAKE_RUNTIME_FAIL", c.fail);
    pftest::ScopedEnv code("FAKE_RUNTIME_FAIL_CODE", c.code);
    auto r = measure_device_bandwidth(small_run(c.runtime, c.lib));
    ASSERT_FALSE(r.has_value()) << c.fail;
    EXPECT_EQ(r.error().kind, ErrorKind::io);
    EXPECT_NE(r.error().message.find(c.fragment), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.lib), std::string::npos) << r.error().message;
    EXPECT_EQ(fake.live_buffers(), 0) << c.fail;
    EXPECT_EQ(fake.calls(c.runtime == DeviceRuntime::ascend ? "aclrtFree" : "cudaFree"), c.frees) << c.fail;
    if (c.runtime == DeviceRuntime::ascend) EXPECT_EQ(fake.calls("aclFinalize"), 1) << c.fail;
  }
}

TEST(DeviceBandwidth, RejectsOptionsOutOfRange) {
  struct Case {
    int device;
    uint64_t bytes;
    int repeats;
    const char* fragment;
  };
  const Case cases[] = {
      {-1, 1 << 20, 5, "device index must be >= 0"},
      {0, 100, 5, "buffer size must be at least 4096 B"},
      {0, 1 << 20, 0, "repeats must be in"},
  };
  for (const auto& c : cases) {
    auto o = small_run(DeviceRuntime::ascend, FAKE_ACL_LIB);
    o.device_index = c.device;
    o.buffer_bytes = c.bytes;
    o.repeats = c.repeats;
    auto r = measure_device_bandwidth(o);
    ASSERT_FALSE(r.has_value()) << c.fragment;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(r.error().message.find(c.fragment), std::string::npos) << r.error().message;
  }
}

TEST(RuntimeLibrary, CandidatesPreferTheExplicitPathThenTheEnvironment) {
  EXPECT_EQ(runtime_library_candidates(DeviceRuntime::ascend, "/x/libascendcl.so"), std::vector<std::string>{"/x/libascendcl.so"});
  {
    pftest::ScopedEnv env("PREFLIGHT_ACL_LIB", "/opt/fake/libascendcl.so");
    EXPECT_EQ(runtime_library_candidates(DeviceRuntime::ascend, ""), std::vector<std::string>{"/opt/fake/libascendcl.so"});
  }
  {
    pftest::ScopedEnv env("PREFLIGHT_CUDART_LIB", "/opt/fake/libcudart.so");
    EXPECT_EQ(runtime_library_candidates(DeviceRuntime::cuda, ""), std::vector<std::string>{"/opt/fake/libcudart.so"});
  }
  const auto cuda = runtime_library_candidates(DeviceRuntime::cuda, "");
  ASSERT_FALSE(cuda.empty());
  EXPECT_EQ(cuda.front(), "libcudart.so");
  EXPECT_EQ(runtime_library_candidates(DeviceRuntime::ascend, "").front(), "libascendcl.so");
}

TEST(RuntimeLibrary, OpensTheFirstCandidateThatLoadsAndFindsSymbols) {
  auto lib = RuntimeLibrary::open({"/nonexistent/a.so", FAKE_CUDART_LIB});
  ASSERT_TRUE(lib.has_value()) << lib.error().describe();
  EXPECT_EQ(lib->path(), FAKE_CUDART_LIB);
  EXPECT_TRUE(lib->symbol("cudaMalloc").has_value());
  auto missing = lib->symbol("aclrtMalloc");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("symbol aclrtMalloc not found"), std::string::npos);
  auto none = RuntimeLibrary::open({"/nonexistent/a.so", "/nonexistent/b.so"});
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message.find("tried /nonexistent/a.so, /nonexistent/b.so"), std::string::npos) << none.error().message;
}
