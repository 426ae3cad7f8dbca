#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "base/file.hpp"
#include "base/json_util.hpp"
#include "device/device_spec.hpp"
#include "device/measured_overlay.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::device;

namespace {
BandwidthMeasurement sample_run() {
  BandwidthMeasurement m;
  m.median_bytes_per_s = 1.267e12;
  m.min_bytes_per_s = 1.25e12;
  m.max_bytes_per_s = 1.28e12;
  m.repeats = 20;
  m.warmup = 3;
  m.buffer_bytes = 2147483648.0;
  m.device_index = 0;
  m.date = "2026-12-02T08:00:00Z";
  m.tool = "preflight bw 0.1.0 (test)";
  m.method = "aclrtMemcpy(ACL_MEMCPY_DEVICE_TO_DEVICE) + aclrtSynchronizeDevice";
  return m;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}
}  // namespace

TEST(MeasuredOverlay, SaveCreatesTheFileAndTheLoaderReadsItsProvenance) {
  const std::string dir = pftest::scratch_dir("overlay-create");
  const std::string path = dir + "/config/preflight/devices.json";  // parent folders do not exist yet
  auto catalog = load_builtin_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  auto saved = save_measured_copy_bandwidth(path, *catalog, "Ascend910B3", sample_run());
  ASSERT_TRUE(saved.has_value()) << saved.error().describe();
  EXPECT_EQ(*saved, "910B3");
  // No temporary file left; the lock file stays beside the overlay (removing it would race).
  EXPECT_EQ(list_directory(dir + "/config/preflight"), (std::vector<std::string>{"devices.json", "devices.json.lock"}));

  auto json = load_json_file(path);
  ASSERT_TRUE(json.has_value());
  auto merged = *catalog;
  ASSERT_TRUE(apply_device_overlay(merged, *json, path).has_value());
  const DeviceSpec* b3 = merged.find("910B3");
  ASSERT_NE(b3, nullptr);
  EXPECT_DOUBLE_EQ(*b3->measured_copy_bandwidth_bytes_per_s, 1.267e12);
  ASSERT_TRUE(b3->measured_copy_bandwidth.has_value());
  EXPECT_DOUBLE_EQ(b3->measured_copy_bandwidth->min_bytes_per_s, 1.25e12);
  EXPECT_DOUBLE_EQ(b3->measured_copy_bandwidth->max_bytes_per_s, 1.28e12);
  EXPECT_EQ(b3->measured_copy_bandwidth->repeats, 20);
  EXPECT_EQ(b3->measured_copy_bandwidth->date, "2026-12-02T08:00:00Z");
  EXPECT_EQ(b3->source_measured_copy_bandwidth, "preflight bw 0.1.0 (test), median of 20 copies on 2026-12-02T08:00:00Z (" + path + ")");
  EXPECT_EQ(b3->overrides, std::vector<std::string>{"measured_copy_bandwidth_bytes_per_s"});
  // The catalogue's other facts about the device are untouched.
  EXPECT_DOUBLE_EQ(*b3->hbm_bandwidth_bytes_per_s, 1.6e12);

  // load_device_catalog() (what fit and plan call) picks the file up through the environment.
  setenv("PREFLIGHT_DEVICE_OVERRIDES", path.c_str(), 1);
  auto loaded = load_device_catalog();
  unsetenv("PREFLIGHT_DEVICE_OVERRIDES");
  ASSERT_TRUE(loaded.has_value()) << loaded.error().describe();
  EXPECT_DOUBLE_EQ(*loaded->find("910B3")->measured_copy_bandwidth_bytes_per_s, 1.267e12);
}

TEST(MeasuredOverlay, SaveMergesAndKeepsTheUsersOtherEntries) {
  const std::string dir = pftest::scratch_dir("overlay-merge");
  const std::string path = dir + "/devices.json";
  write(path, R"({"schema_version":1,"devices":[
    {"id":"910B4","runtime_total_bytes":31665479680,"source":"npu-smi on box 7"},
    {"id":"Ascend910B3","hbm_bandwidth_bytes_per_s":1.5e12,"source":"my datasheet"}]})");
  auto catalog = load_builtin_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  ASSERT_TRUE(save_measured_copy_bandwidth(path, *catalog, "910b3", sample_run()).has_value());
  auto second = sample_run();
  second.median_bytes_per_s = 1.27e12;
  ASSERT_TRUE(save_measured_copy_bandwidth(path, *catalog, "910B3", second).has_value());

  auto json = load_json_file(path);
  ASSERT_TRUE(json.has_value());
  const Json& list = (*json)["devices"];
  ASSERT_EQ(list.size(), 2u);  // updated in place, not appended twice
  EXPECT_EQ(list[0]["id"], "910B4");
  EXPECT_EQ(list[0]["runtime_total_bytes"], 31665479680);
  EXPECT_EQ(list[0]["source"], "npu-smi on box 7");
  EXPECT_EQ(list[1]["id"], "Ascend910B3");
  EXPECT_EQ(list[1]["hbm_bandwidth_bytes_per_s"], 1.5e12);
  EXPECT_EQ(list[1]["source"], "my datasheet");
  EXPECT_EQ(list[1]["measured_copy_bandwidth_bytes_per_s"], 1.27e12);
  EXPECT_EQ(list[1]["measured_copy_bandwidth"]["median_bytes_per_s"], 1.27e12);
}

TEST(MeasuredOverlay, RefusesUnknownDevicesAndUnreadableFiles) {
  const std::string dir = pftest::scratch_dir("overlay-refuse");
  auto catalog = load_builtin_device_catalog();
  ASSERT_TRUE(catalog.has_value());

  auto unknown = save_measured_copy_bandwidth(dir + "/new.json", *catalog, "910B5", sample_run());
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().kind, ErrorKind::not_found);
  EXPECT_NE(unknown.error().message.find("did you mean"), std::string::npos) << unknown.error().message;
  EXPECT_FALSE(path_exists(dir + "/new.json"));

  struct Case {
    const char* text;
    const char* fragment;
  };
  const Case cases[] = {
      {"{not json", "devices.json"},
      {R"({"schema_version":1,"devices":[{"id":"NoSuchCard","source":"x","runtime_total_bytes":1}]})", "NoSuchCard is not in the catalogue"},
      {R"({"schema_version":2,"devices":[]})", "schema_version 2"},
  };
  for (const auto& c : cases) {
    const std::string path = dir + "/devices.json";
    write(path, c.text);
    auto r = save_measured_copy_bandwidth(path, *catalog, "910B3", sample_run());
    ASSERT_FALSE(r.has_value()) << c.text;
    EXPECT_NE(r.error().describe().find(c.fragment), std::string::npos) << r.error().describe();
    auto after = read_text_file(path);
    ASSERT_TRUE(after.has_value());
    EXPECT_EQ(*after, c.text);  // left exactly as it was
  }
}

TEST(MeasuredOverlay, LoaderRejectsInconsistentMeasurements) {
  struct Case {
    const char* record;
    const char* fragment;
  };
  const std::string good_tail = R"("repeats":20,"buffer_bytes":2147483648,"date":"2026-12-02T08:00:00Z","tool":"preflight bw")";
  const Case cases[] = {
      {R"("min_bytes_per_s":1.3e12,"median_bytes_per_s":1.2e12,"max_bytes_per_s":1.4e12,)", "expected 0 < min_bytes_per_s <= median_bytes_per_s"},
      {R"("min_bytes_per_s":1.1e12,"median_bytes_per_s":1.2e12,"max_bytes_per_s":1.1e12,)", "expected 0 < min_bytes_per_s <= median_bytes_per_s"},
      {R"("min_bytes_per_s":1.1e12,"median_bytes_per_s":1.2e12,"max_bytes_per_s":1.3e12,"colour":"red",)", "unknown key devices[910B3].measured_copy_bandwidth.colour"},
  };
  auto catalog = load_builtin_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  for (const auto& c : cases) {
    const std::string text = std::string(R"({"schema_version":1,"devices":[{"id":"910B3","source":"s","measured_copy_bandwidth":{)") + c.record + good_tail + "}}]}";
    auto json = parse_json(text, "mine.json");
    ASSERT_TRUE(json.has_value()) << text;
    auto merged = *catalog;
    auto r = apply_device_overlay(merged, *json, "mine.json");
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt);
    EXPECT_NE(r.error().message.find(c.fragment), std::string::npos) << r.error().message;
  }
  // A scalar next to the record must be its median.
  auto disagree = parse_json(R"({"schema_version":1,"devices":[{"id":"910B3","source":"s","measured_copy_bandwidth_bytes_per_s":1.0e12,
    "measured_copy_bandwidth":{"min_bytes_per_s":1.1e12,"median_bytes_per_s":1.2e12,"max_bytes_per_s":1.3e12,)" + good_tail + "}}]}", "mine.json");
  ASSERT_TRUE(disagree.has_value());
  auto merged = *catalog;
  auto r = apply_device_overlay(merged, *disagree, "mine.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("disagrees with measured_copy_bandwidth.median_bytes_per_s"), std::string::npos) << r.error().message;
  // Without a date the record names no run.
  auto undated = parse_json(R"({"schema_version":1,"devices":[{"id":"910B3","source":"s","measured_copy_bandwidth":{"min_bytes_per_s":1,"median_bytes_per_s":1,
    "max_bytes_per_s":1,"repeats":1,"buffer_bytes":1,"tool":"t"}}]})", "mine.json");
  ASSERT_TRUE(undated.has_value());
  merged = *catalog;
  auto u = apply_device_overlay(merged, *undated, "mine.json");
  ASSERT_FALSE(u.has_value());
  EXPECT_NE(u.error().message.find("date"), std::string::npos) << u.error().message;
}

// Issue 19 item 8: 16 saves at once for 16 devices used to leave 4-5 entries (each read the file,
// merged its own device and renamed over the others). Each thread opens its own lock descriptor,
// as separate processes would.
TEST(MeasuredOverlay, Issue19_ConcurrentSavesAllSurvive) {
  const std::string dir = pftest::scratch_dir("overlay-concurrent");
  const std::string path = dir + "/devices.json";
  auto catalog = load_builtin_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  std::vector<std::string> ids;
  for (const auto& d : catalog->devices) {
    if (d.hbm_bandwidth_bytes_per_s && ids.size() < 16) ids.push_back(d.id);
  }
  ASSERT_EQ(ids.size(), 16u);
  std::vector<std::string> errors(ids.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ids.size(); ++i) {
    threads.emplace_back([&, i] {
      auto run = sample_run();
      run.median_bytes_per_s = *catalog->find(ids[i])->hbm_bandwidth_bytes_per_s * 0.5;
      run.min_bytes_per_s = run.median_bytes_per_s * 0.99;
      run.max_bytes_per_s = run.median_bytes_per_s * 1.01;
      auto saved = save_measured_copy_bandwidth(path, *catalog, ids[i], run);
      if (!saved) errors[i] = saved.error().describe();
    });
  }
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(errors[i], "") << ids[i];
  auto json = load_json_file(path);
  ASSERT_TRUE(json.has_value());
  std::set<std::string> saved_ids;
  for (const auto& entry : (*json)["devices"]) saved_ids.insert(entry["id"].get<std::string>());
  EXPECT_EQ(saved_ids, std::set<std::string>(ids.begin(), ids.end()));
  EXPECT_EQ((*json)["devices"].size(), 16u);
}
