#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <thread>

#include "probe/host_bandwidth.hpp"

using namespace preflight;
using namespace preflight::probe;

TEST(HostBandwidth, RunsEachKernelAndCountsBytesTheStreamWay) {
  HostBandwidthOptions o;
  o.array_bytes = 4ull << 20;  // small: a unit test measures the plumbing, not this machine
  o.threads = 2;
  o.warmup = 1;
  o.repeats = 3;
  int progress_lines = 0;
  o.on_progress = [&](const std::string&) { ++progress_lines; };
  auto r = measure_host_bandwidth(o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->threads, 2);
  EXPECT_EQ(r->array_bytes, 4194304u);
  EXPECT_EQ(progress_lines, 3);
  ASSERT_EQ(r->results.size(), 3u);
  // STREAM: copy 2 x N x 8, read 1 x N x 8, triad 3 x N x 8 bytes per repeat.
  const struct {
    const char* name;
    double bytes;
  } expected[] = {{"copy", 2 * 4194304.0}, {"read", 4194304.0}, {"triad", 3 * 4194304.0}};
  for (size_t i = 0; i < 3; ++i) {
    const auto& k = r->results[i];
    EXPECT_EQ(k.operation, expected[i].name);
    EXPECT_DOUBLE_EQ(k.bytes_per_repeat, expected[i].bytes);
    EXPECT_EQ(k.warmup, 1);
    EXPECT_EQ(k.seconds.size(), 3u);
    // Plausible for any machine that runs the tests, even a loaded CI runner under ASan: between
    // 10 MB/s and 10 TB/s. A broken clock or byte count lands outside by orders of magnitude.
    EXPECT_GT(k.median_bytes_per_s, 1e7) << k.operation;
    EXPECT_LT(k.median_bytes_per_s, 1e13) << k.operation;
    EXPECT_LE(k.min_bytes_per_s, k.median_bytes_per_s);
    EXPECT_LE(k.median_bytes_per_s, k.max_bytes_per_s);
  }
}

TEST(HostBandwidth, UnevenSlicesStillCheckEveryValue) {
  // 1,000,003 B is 125,000 doubles (3 bytes dropped), split over 3 threads as 41,664 + 41,664 + 41,672.
  HostBandwidthOptions o;
  o.array_bytes = 1000003;
  o.threads = 3;
  o.warmup = 0;
  o.repeats = 1;
  o.kernels = {HostKernel::triad, HostKernel::read};
  auto r = measure_host_bandwidth(o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->array_bytes, 1000000u);
  ASSERT_EQ(r->results.size(), 2u);
  EXPECT_EQ(r->results[0].operation, "triad");
  EXPECT_DOUBLE_EQ(r->results[1].bytes_per_repeat, 1000000.0);
}

TEST(HostBandwidth, RejectsOptionsOutOfRange) {
  struct Case {
    uint64_t bytes;
    int threads;
    int repeats;
    int warmup;
    const char* fragment;
  };
  const Case cases[] = {
      {1 << 20, -1, 3, 1, "threads must be in [1, 1024], got -1"},
      {1 << 20, 5000, 3, 1, "threads must be in [1, 1024], got 5000"},
      {1 << 20, 1, 0, 1, "repeats must be in"},
      {1 << 20, 1, 3, -2, "warm-up runs must be in"},
      {100, 4, 3, 1, "too small for 4 threads"},
      {1ull << 50, 1, 3, 1, "exceed half of physical memory"},
  };
  for (const auto& c : cases) {
    HostBandwidthOptions o;
    o.array_bytes = c.bytes;
    o.threads = c.threads;
    o.repeats = c.repeats;
    o.warmup = c.warmup;
    auto r = measure_host_bandwidth(o);
    ASSERT_FALSE(r.has_value()) << c.fragment;
    EXPECT_EQ(r.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(r.error().message.find(c.fragment), std::string::npos) << r.error().message;
  }
}

TEST(HostBandwidth, ParsesKernelNames) {
  EXPECT_EQ(*parse_host_kernel("copy"), HostKernel::copy);
  EXPECT_EQ(*parse_host_kernel("read"), HostKernel::read);
  EXPECT_EQ(*parse_host_kernel("triad"), HostKernel::triad);
  auto bad = parse_host_kernel("scale");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("known: copy, read, triad"), std::string::npos);
}

// Issue 17 (the llama.cpp CPU decode check drifted with the machine's load): each repeat is also timed by
// the workers' thread CPU time, which leaves out the moments the scheduler ran other work on their core.
// Pinned to one CPU with a busy thread beside it, the worker gets about half the core: the wall-clock rate
// falls to about half of the CPU-time rate, which counts only the slices the worker ran. 128 MiB: far above
// the 16-64 MiB a core of the test host keeps in cache, so both runs read memory.
TEST(HostBandwidth, Issue17_CpuTimeLeavesOutTimeSliceLostToOtherWork) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);  // this thread; the threads it starts inherit it
  HostBandwidthOptions o;
  o.array_bytes = 128ull << 20;
  o.threads = 1;
  o.warmup = 1;
  o.repeats = 5;
  o.kernels = {HostKernel::read};
  auto alone = measure_host_bandwidth(o);
  std::atomic<bool> stop{false};
  std::thread busy([&] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  auto shared = measure_host_bandwidth(o);
  stop = true;
  busy.join();
  sched_setaffinity(0, sizeof saved, &saved);
  ASSERT_TRUE(alone.has_value()) << alone.error().describe();
  ASSERT_TRUE(shared.has_value()) << shared.error().describe();
  const auto& a = alone->results.at(0);
  const auto& s = shared->results.at(0);
  ASSERT_EQ(s.cpu_seconds.size(), 5u);
  for (size_t i = 0; i < s.seconds.size(); ++i) EXPECT_LE(s.cpu_seconds[i], s.seconds[i] + 1e-3) << "repeat " << i;  // timed inside the wall window
  std::printf("alone: wall %.2f GB/s, cpu %.2f GB/s; beside a busy thread: wall %.2f GB/s, cpu %.2f GB/s\n", a.median_bytes_per_s / 1e9,
              a.median_cpu_bytes_per_s / 1e9, s.median_bytes_per_s / 1e9, s.median_cpu_bytes_per_s / 1e9);
  // Sharing the CPU with a busy thread halves the reader's wall-clock rate (it runs about half the slices) while its
  // CPU-time rate counts only the slices it ran: measured 1.97-2.04 x the wall rate over 7 runs on this project's
  // machine, alone and with other tests running, so 1.6 x still fails a CPU time that tracked the wall (1.0 x).
  // The CPU-time rate is not compared with the rate measured alone: in a VM a thread's CPU time also counts host steal
  // and the cache refills after each switch, and those moved it between 0.34 and 0.79 of the alone rate from run to run.
  EXPECT_GT(s.median_cpu_bytes_per_s, 1.6 * s.median_bytes_per_s);
}
