// device/device_spec: an accelerator as the estimator sees it (capacity the runtime reports,
// bandwidth, compute by dtype, interconnect), and the device catalogue (data/devices/devices.json)
// with a user overlay of measured values that takes precedence and is reported as such.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::device {

struct DeviceSpec {
  std::string id;
  std::string name;
  std::string vendor;    // huawei | nvidia | amd | apple | cambricon
  std::string platform;  // npu | cuda | rocm | metal | other
  std::string family;
  std::vector<std::string> aliases;
  double memory_bytes = 0;                     // nominal
  std::optional<double> runtime_total_bytes;   // what mem_get_info reports as total
  std::optional<double> hbm_bandwidth_bytes_per_s;
  std::optional<double> measured_copy_bandwidth_bytes_per_s;
  std::optional<double> bf16_dense_flops;
  std::optional<double> fp16_dense_flops;
  std::optional<double> fp8_dense_flops;
  std::optional<double> int8_dense_ops;
  std::string interconnect;
  std::optional<double> interconnect_bandwidth_bytes_per_s;
  std::vector<std::string> dtypes;
  std::string source_memory, source_runtime_total, source_bandwidth, source_compute;
  std::string confidence_runtime_total, confidence_bandwidth;
  std::string origin;  // catalogue file (and overlay file when overridden)
  std::vector<std::string> overrides;  // fields replaced by the user's measured file

  // Capacity used for memory arithmetic: runtime total when known, else nominal (an assumption).
  double usable_total_bytes() const { return runtime_total_bytes.value_or(memory_bytes); }
  bool supports_dtype(const std::string& dtype) const;
};

struct DeviceCatalog {
  std::vector<DeviceSpec> devices;
  const DeviceSpec* find(const std::string& name) const;  // id or alias, case-insensitive
  std::vector<std::string> names() const;
};

Expected<DeviceCatalog> parse_device_catalog(const Json& root, const std::string& origin);
// Measured overrides: {"schema_version":1,"devices":[{"id":"910B3","runtime_total_bytes":..,
// "hbm_bandwidth_bytes_per_s":..,"source":"preflight bw 2026-12-02"}]}.
Status apply_device_overlay(DeviceCatalog& catalog, const Json& root, const std::string& origin);

// The embedded catalogue plus the user's measured file when present ($PREFLIGHT_DEVICE_OVERRIDES,
// else $XDG_CONFIG_HOME/preflight/devices.json, else ~/.config/preflight/devices.json).
Expected<DeviceCatalog> load_device_catalog();
std::string device_overlay_path();

// Looks up a device by id or alias; not_found with the nearest names suggested.
Expected<DeviceSpec> find_device(const DeviceCatalog& catalog, const std::string& name);

// Maps free text ("NVIDIA H100 80GB (79.18 GiB total)") to a device: the longest id or alias
// found in the text (ignoring case, spaces and hyphens). nullptr when none matches.
const DeviceSpec* match_device_text(const DeviceCatalog& catalog, const std::string& text);

}  // namespace preflight::device
