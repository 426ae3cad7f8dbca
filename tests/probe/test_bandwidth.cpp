#include <gtest/gtest.h>

#include "probe/bandwidth.hpp"

using namespace preflight;
using namespace preflight::probe;

TEST(Bandwidth, SummarizesPerRepeatRates) {
  // 1e9 B per repeat in 0.5, 0.25, 1.0 and 0.2 s: rates 2, 4, 1 and 5 GB/s.
  // Sorted 1, 2, 4, 5: min 1, median (2 + 4) / 2 = 3, max 5; aggregate 4e9 B / 1.95 s = 2.051282... GB/s.
  BandwidthResult r;
  r.operation = "copy";
  r.bytes_per_repeat = 1e9;
  r.seconds = {0.5, 0.25, 1.0, 0.2};
  ASSERT_TRUE(summarize_bandwidth(r).has_value());
  EXPECT_DOUBLE_EQ(r.min_bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(r.median_bytes_per_s, 3e9);
  EXPECT_DOUBLE_EQ(r.max_bytes_per_s, 5e9);
  EXPECT_NEAR(r.aggregate_bytes_per_s, 4e9 / 1.95, 1.0);
}

TEST(Bandwidth, OddCountTakesTheMiddleRate) {
  // 3e9 B in 1, 3 and 1.5 s: rates 3, 1 and 2 GB/s; the median is 2.
  BandwidthResult r;
  r.operation = "read";
  r.bytes_per_repeat = 3e9;
  r.seconds = {1.0, 3.0, 1.5};
  ASSERT_TRUE(summarize_bandwidth(r).has_value());
  EXPECT_DOUBLE_EQ(r.median_bytes_per_s, 2e9);
}

TEST(Bandwidth, RejectsSamplesThatGiveNoRate) {
  struct Case {
    double bytes;
    std::vector<double> seconds;
    const char* fragment;
  };
  const Case cases[] = {
      {1e9, {}, "no timed repeat"},
      {1e9, {0.5, 0.0}, "use a larger --size"},
      {1e9, {-1.0}, "use a larger --size"},
      {0.0, {1.0}, "bytes per repeat must be positive"},
  };
  for (const auto& c : cases) {
    BandwidthResult r;
    r.operation = "copy";
    r.bytes_per_repeat = c.bytes;
    r.seconds = c.seconds;
    auto s = summarize_bandwidth(r);
    ASSERT_FALSE(s.has_value()) << c.fragment;
    EXPECT_EQ(s.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(s.error().message.find(c.fragment), std::string::npos) << s.error().message;
  }
}

// Issue 17 (the llama.cpp CPU decode check): host kernels also carry each repeat's CPU time; its median
// rate is computed like the wall-clock one. 2e9 B in 0.5, 1.0, 0.25 s of CPU time: 4, 2, 8 GB/s, median 4.
// The wall times (1, 2, 4 s: a core shared with other work) do not enter it.
TEST(Bandwidth, Issue17_MedianRateOverCpuTime) {
  BandwidthResult r;
  r.operation = "read";
  r.bytes_per_repeat = 2e9;
  r.seconds = {1.0, 2.0, 4.0};
  r.cpu_seconds = {0.5, 1.0, 0.25};
  ASSERT_TRUE(summarize_bandwidth(r).has_value());
  EXPECT_DOUBLE_EQ(r.median_bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(r.median_cpu_bytes_per_s, 4e9);
  // A device copy has no CPU times: the field stays 0.
  BandwidthResult device;
  device.operation = "device_copy";
  device.bytes_per_repeat = 2e9;
  device.seconds = {1.0};
  ASSERT_TRUE(summarize_bandwidth(device).has_value());
  EXPECT_EQ(device.median_cpu_bytes_per_s, 0.0);
  // One CPU time per repeat, each positive.
  const std::pair<std::vector<double>, const char*> bad[] = {{{0.5, 1.0}, "2 cpu times for 3 repeats"}, {{0.5, 0.0, 1.0}, "s of cpu time"}};
  for (const auto& [cpu, fragment] : bad) {
    BandwidthResult b = r;
    b.cpu_seconds = cpu;
    auto s = summarize_bandwidth(b);
    ASSERT_FALSE(s.has_value()) << fragment;
    EXPECT_EQ(s.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(s.error().message.find(fragment), std::string::npos) << s.error().message;
  }
}
