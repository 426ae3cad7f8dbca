#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include <sys/wait.h>

#include "base/json_util.hpp"
#include "../test_support.hpp"

namespace {
using Run = pftest::CliRun;
// Runs the real binary with `env` prefixed; stdout only, or stdout and stderr together.
Run run(const std::string& env, const std::string& args, bool with_stderr = true) { return pftest::run_cli(args, {env, with_stderr}); }
}  // namespace

TEST(CliBw, HostJsonHasTheEnvelopeAndOneRecordPerKernel) {
  auto r = run("", "bw --target host --size 8 --threads 2 --repeats 3 --warmup 1 --json", false);
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = preflight::parse_json(r.out, "stdout");
  ASSERT_TRUE(j.has_value()) << r.out;
  EXPECT_EQ((*j)["schema_version"], 1);
  EXPECT_EQ((*j)["command"], "bw");
  EXPECT_TRUE(j->contains("build_commit"));
  EXPECT_EQ((*j)["unit"], "GB/s, 1 GB = 1e9 bytes");
  EXPECT_EQ((*j)["threads"], 2);
  EXPECT_EQ((*j)["array_bytes"], 8388608);
  ASSERT_EQ((*j)["results"].size(), 3u);
  EXPECT_EQ((*j)["results"][0]["operation"], "copy");
  EXPECT_EQ((*j)["results"][0]["bytes_per_repeat"], 2.0 * 8388608);
  EXPECT_EQ((*j)["results"][0]["seconds"].size(), 3u);
  EXPECT_EQ((*j)["results"][2]["operation"], "triad");
  EXPECT_EQ((*j)["results"][2]["bytes_per_repeat"], 3.0 * 8388608);
}

TEST(CliBw, NpuThroughTheFakeRuntimeSavesToTheOverlay) {
  const std::string dir = pftest::scratch_dir("cli-bw-save");
  const std::string overlay = dir + "/devices.json";
  std::ofstream(overlay) << R"({"schema_version":1,"devices":[{"id":"910B4","runtime_total_bytes":31665479680,"source":"npu-smi"}]})";
  const std::string env = "PREFLIGHT_DEVICE_OVERRIDES=" + overlay + " PREFLIGHT_ACL_LIB=" + FAKE_ACL_LIB;
  auto r = run(env, "bw --target npu --size 4 --repeats 5 --device Ascend910B3 --save");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("3 warm-up + 5 timed copies of 4,194,304 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 x 4194304 B (read source + write destination)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("saved to " + overlay + " as 910B3"), std::string::npos) << r.out;

  auto saved = preflight::load_json_file(overlay);
  ASSERT_TRUE(saved.has_value());
  const auto& list = (*saved)["devices"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["id"], "910B4");  // the user's entry is kept
  EXPECT_EQ(list[1]["id"], "910B3");
  EXPECT_EQ(list[1]["measured_copy_bandwidth"]["repeats"], 5);
  EXPECT_EQ(list[1]["measured_copy_bandwidth"]["buffer_bytes"], 4194304.0);
  EXPECT_EQ(list[1]["measured_copy_bandwidth_bytes_per_s"], list[1]["measured_copy_bandwidth"]["median_bytes_per_s"]);

  // `preflight devices` (the catalogue fit and plan read) now reports the override.
  auto d = run("PREFLIGHT_DEVICE_OVERRIDES=" + overlay, "devices --json", false);
  ASSERT_EQ(d.code, 0) << d.out;
  auto dj = preflight::parse_json(d.out, "stdout");
  ASSERT_TRUE(dj.has_value());
  bool found = false;
  for (const auto& dev : (*dj)["devices"]) {
    if (dev["id"] != "910B3") continue;
    found = true;
    EXPECT_EQ(dev["overrides"], preflight::Json::array({"measured_copy_bandwidth_bytes_per_s"}));
  }
  EXPECT_TRUE(found);
}

TEST(CliBw, FailuresAreClearWithTheDocumentedExitCodes) {
  struct Case {
    std::string env;
    std::string args;
    int code;
    const char* fragment;
  };
  const std::string fail_malloc = std::string("FAKE_RUNTIME_FAIL=aclrtMalloc FAKE_RUNTIME_FAIL_CODE=207001 PREFLIGHT_ACL_LIB=") + FAKE_ACL_LIB;
  const Case cases[] = {
      {"", "bw --target npu --runtime-lib /nonexistent/libascendcl.so --size 4", 1, "cannot load the runtime library (tried /nonexistent/libascendcl.so)"},
      {fail_malloc, "bw --target npu --size 4", 1, "aclrtMalloc(4194304 B) failed with error 207001"},
      {"", std::string("bw --target cuda --runtime-lib ") + FAKE_ACL_LIB + " --size 4", 1, "symbol cudaSetDevice not found"},
      {"", "bw --target tpu", 2, "--target: expected host, cuda or npu, got 'tpu'"},
      {"", "bw --target host --save", 2, "a host measurement is saved with --device cpu"},
      {"", "bw --target npu --save", 2, "--save needs --device ID"},
      {"", "bw --target npu --device 910B5 --save", 2, "did you mean"},
      {"", "bw --target npu --device H100 --save", 2, "--device H100-SXM is a cuda device; this measures --target npu"},
      {"", "bw --target npu --threads 4", 2, "--threads and --kernel apply to --target host"},
      {"", "bw --size 0", 2, "--size: expected MiB in [1, "},
      {"", "bw --kernel copy,scale --size 4", 2, "unknown host kernel 'scale'"},
      {"", "bw --repats 3", 2, "did you mean --repeats"},
  };
  for (const auto& c : cases) {
    auto r = run(c.env, c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.fragment), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.find("Segmentation"), std::string::npos);
  }
}
