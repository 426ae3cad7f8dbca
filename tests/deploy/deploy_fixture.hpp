// The deployment tests' fixture (test_deployment.cpp, test_deployment_devices.cpp): the embedded device, engine and
// model catalogues loaded once, and a deployment resolved from a device, an engine and flags.
#pragma once

#include <string>

#include "deploy/deployment.hpp"
#include "model/model_catalog.hpp"

namespace pftest::deployfx {

using namespace preflight;
struct Fixture {
  device::DeviceCatalog devices;
  engine::EngineCatalog engines;
  model::ModelSpec model;
};

inline const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture x;
    x.devices = *device::load_builtin_device_catalog();
    x.engines = *engine::load_engine_catalog();
    x.model = *model::model_spec_from_catalog(*model::builtin_model_catalog().find("Qwen/Qwen3-8B"));
    return x;
  }();
  return f;
}

inline deploy::Inputs inputs(const std::string& device, const std::string& engine, const deploy::Flags& flags = {}) {
  return {fixture().model, {device, "--device", deploy::DeviceForm::name}, {engine, "", "--engine", "", "", deploy::UnknownVersion::error}, flags};
}

inline Expected<deploy::Resolved> resolve(const deploy::Inputs& in) { return deploy::resolve_deployment(in, {&fixture().devices, &fixture().engines}); }

}  // namespace pftest::deployfx
