#include <gtest/gtest.h>

#include "base/units.hpp"
#include "device/device_spec.hpp"

using namespace preflight;
using namespace preflight::device;

TEST(DeviceCatalog, ShippedCatalogueValidatesAndResolvesAliases) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  EXPECT_GT(catalog->devices.size(), 40u);
  const DeviceSpec* b3 = catalog->find("Ascend910B3");
  ASSERT_NE(b3, nullptr);
  EXPECT_EQ(b3->id, "910B3");
  EXPECT_NEAR(bytes_to_gib(b3->usable_total_bytes()), 60.96, 0.01);
  const DeviceSpec* b4 = catalog->find("910B4");
  ASSERT_NE(b4, nullptr);
  EXPECT_NEAR(bytes_to_gib(b4->usable_total_bytes()), 29.49, 0.01);
  ASSERT_NE(catalog->find("A100-80G"), nullptr);
  ASSERT_NE(catalog->find("h100"), nullptr);
  EXPECT_EQ(match_device_text(*catalog, "NVIDIA H100 80GB (79.18 GiB total)")->id, "H100-SXM");
}

TEST(DeviceCatalog, UnknownDeviceSuggestsNearestNames) {
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  auto d = find_device(*catalog, "910B5");
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().kind, ErrorKind::not_found);
  EXPECT_NE(d.error().message.find("did you mean"), std::string::npos);
  EXPECT_NE(d.error().message.find("910B"), std::string::npos);
}

TEST(DeviceCatalog, RejectsBadRecordsAndAppliesOverlay) {
  auto bad = parse_json(R"({"schema_version":1,"devices":[{"id":"X","name":"x","vendor":"v","platform":"cuda","memory_bytes":-1,"sources":{"memory":"s"}}]})", "d.json");
  EXPECT_FALSE(parse_device_catalog(*bad, "d.json").has_value());
  auto unknown = parse_json(R"({"schema_version":1,"devices":[{"id":"X","name":"x","vendor":"v","platform":"cuda","memory_bytes":1,"colour":"red","sources":{"memory":"s"}}]})", "d.json");
  auto e = parse_device_catalog(*unknown, "d.json");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("unknown key"), std::string::npos);
  auto catalog = load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  auto overlay = parse_json(R"({"schema_version":1,"devices":[{"id":"910B3","hbm_bandwidth_bytes_per_s":1.49e12,"source":"preflight bw run"}]})", "mine.json");
  ASSERT_TRUE(apply_device_overlay(*catalog, *overlay, "mine.json").has_value());
  EXPECT_DOUBLE_EQ(*catalog->find("910B3")->hbm_bandwidth_bytes_per_s, 1.49e12);
  EXPECT_EQ(catalog->find("910B3")->overrides.size(), 1u);
}
