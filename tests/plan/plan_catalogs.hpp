// The embedded catalogues the planner and launch tests share, loaded once per test binary.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/launch_rules.hpp"
#include "engine/speed_profile.hpp"
#include "plan/planner.hpp"

namespace preflight::test {

struct Catalogs {
  device::DeviceCatalog devices;
  engine::EngineCatalog engines;
  engine::SpeedCatalog speeds;
  engine::LaunchRules rules;
  plan::PlanInputs inputs() const { return {&engines, &speeds, &rules, ""}; }
};

inline const Catalogs& catalogs() {
  static const Catalogs c = [] {
    Catalogs x;
    x.devices = *device::load_device_catalog();
    x.engines = *engine::load_engine_catalog();
    x.speeds = *engine::load_speed_catalog();
    const auto families = device::load_device_families();
    EXPECT_TRUE(families.has_value());
    auto rules = engine::load_launch_rules(families ? *families : std::vector<std::string>{});
    EXPECT_TRUE(rules.has_value()) << (rules ? "" : rules.error().describe());
    if (rules) x.rules = *rules;
    return x;
  }();
  return c;
}

inline device::DeviceSpec dev(const std::string& id) { return *device::find_device(catalogs().devices, id); }

}  // namespace preflight::test
