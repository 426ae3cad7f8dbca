#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "device/device_platform.hpp"
#include "device/device_spec.hpp"

using namespace preflight;
using namespace preflight::device;

// Issue 19 (start-up time): fit's flag checks read the card's platform from the build-time index instead of parsing
// its record. Every card of the whole catalogue, by its id, by each alias and in another case, must give the platform
// its parsed record gives; a list, a name of ambiguous_names ("A100": devices.json ambiguous_names[0]), an unknown
// name and an existing overlay file give none, and the caller loads the catalogue as before.
TEST(DeviceCatalog, Issue19_IndexedPlatformEqualsTheParsedRecord) {
  const std::string overlay = ::testing::TempDir() + "issue19_platform_overlay.json";
  std::remove(overlay.c_str());
  ASSERT_EQ(setenv("PREFLIGHT_DEVICE_OVERRIDES", overlay.c_str(), 1), 0);
  auto whole = load_builtin_device_catalog();
  ASSERT_TRUE(whole.has_value()) << whole.error().describe();
  ASSERT_GE(whole->devices.size(), 92u);  // devices.json at ea38f99: 92 cards
  auto lowered = [](const std::string& text) {  // as DeviceCatalog::find compares: case, spaces, '-' and '_' ignored
    std::string out;
    for (char c : text)
      if (c != ' ' && c != '-' && c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  auto ambiguous = [&](const std::string& name) {
    for (const auto& a : whole->ambiguous_names)
      if (lowered(a.name) == lowered(name)) return true;
    return false;
  };
  for (const auto& d : whole->devices) {
    std::vector<std::string> names = d.aliases;
    names.push_back(d.id);
    names.push_back(lowered(d.id));
    for (const auto& name : names) {
      const auto platform = indexed_device_platform(name);
      if (platform) EXPECT_EQ(*platform, d.platform) << name;
      else EXPECT_TRUE(ambiguous(name)) << name;  // a name of ambiguous_names: the whole catalogue decides
    }
  }
  EXPECT_EQ(indexed_device_platform("910B3"), std::optional<std::string>("npu"));  // devices.json 910B3 "platform": "npu"
  EXPECT_EQ(indexed_device_platform("H100-SXM"), std::optional<std::string>("cuda"));
  EXPECT_EQ(indexed_device_platform("A100"), std::nullopt);
  EXPECT_EQ(indexed_device_platform("910B3,910B3"), std::nullopt);
  EXPECT_EQ(indexed_device_platform("no such card"), std::nullopt);
  std::ofstream(overlay) << R"({"schema_version":1,"devices":[]})";
  EXPECT_EQ(indexed_device_platform("910B3"), std::nullopt);
  unsetenv("PREFLIGHT_DEVICE_OVERRIDES");
  std::remove(overlay.c_str());
}
