// The inputs of one estimate::estimate_fit call, from the embedded catalogues: a model id, a catalogue device and an
// engine at a version. Shared by the estimate tests (each used to carry its own copy).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "model/model_source.hpp"

namespace pftest {

struct FitSetup {
  preflight::model::ModelSpec model;
  preflight::device::DeviceSpec device;
  preflight::engine::EngineProfile engine;
  preflight::engine::Overheads overheads;
};

// A lookup that fails is a test failure naming what was not found; the field it fills keeps its default.
inline FitSetup fit_setup(const std::string& model_id, const std::string& device_id, const std::string& engine_id, const std::string& version) {
  using namespace preflight;
  FitSetup s;
  auto m = model::resolve_model(model_id);
  EXPECT_TRUE(m.has_value()) << model_id << ": " << (m ? "" : m.error().describe());
  if (m) s.model = *m;
  auto devices = device::load_device_catalog();
  EXPECT_TRUE(devices.has_value());
  if (!devices) return s;
  auto d = device::find_device(*devices, device_id);
  EXPECT_TRUE(d.has_value()) << device_id << ": " << (d ? "" : d.error().describe());
  if (d) s.device = *d;
  auto engines = engine::load_engine_catalog();
  EXPECT_TRUE(engines.has_value());
  if (!engines) return s;
  auto e = engine::select_engine(*engines, engine_id, version);
  EXPECT_TRUE(e.has_value()) << engine_id << "@" << version << ": " << (e ? "" : e.error().describe());
  if (!e) return s;
  s.engine = *e;
  const auto* oh = engines->overheads_for(s.engine.platform);
  EXPECT_NE(oh, nullptr) << s.engine.platform;
  if (oh) s.overheads = *oh;
  return s;
}

}  // namespace pftest
