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

// vllm-ascend's nightly CI layout of DeepSeek-V3.2-W8A8 on one A3 node (8900e33): DP 2 x TP 8 with expert parallel,
// max_model_len 8,192, 4 sequences, 8,192 batched tokens, utilization 0.92, --quantization ascend (msModelSlim W8A8:
// routed experts W8A8_DYNAMIC). Used by the DP+EP weight and communicator tests.
inline preflight::estimate::Deployment dsv32_a3_nightly() {
  preflight::estimate::Deployment d;
  d.tensor_parallel_size = 8;
  d.data_parallel_size = 2;
  d.enable_expert_parallel = true;
  d.max_model_len = 8192;
  d.max_num_seqs = 4;
  d.max_num_batched_tokens = 8192;
  d.gpu_memory_utilization = 0.92;
  d.quantization = "ascend";
  return d;
}

}  // namespace pftest
