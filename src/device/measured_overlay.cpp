#include "device/measured_overlay.hpp"

#include "base/file.hpp"
#include "base/file_lock.hpp"
#include "base/json_keys.hpp"
#include "base/json_writer.hpp"
#include "base/units.hpp"

namespace preflight::device {

namespace {

Json measurement_to_json(const BandwidthMeasurement& run) {
  return Json{{"median_bytes_per_s", run.median_bytes_per_s}, {"min_bytes_per_s", run.min_bytes_per_s}, {"max_bytes_per_s", run.max_bytes_per_s},
              {"repeats", run.repeats}, {"warmup", run.warmup}, {"buffer_bytes", run.buffer_bytes}, {"device_index", run.device_index},
              {"date", run.date}, {"tool", run.tool}, {"method", run.method}};
}

}  // namespace

Expected<std::string> save_measured_copy_bandwidth(const std::string& path, const DeviceCatalog& catalog, const std::string& device_name,
                                                   const BandwidthMeasurement& run) {
  PF_TRY(device, find_device(catalog, device_name));
  PF_TRY(lock, FileLock::acquire(path));  // base/file_lock: concurrent saves merge, none is lost
  (void)lock;
  Json root = Json{{"schema_version", 1}, {"devices", Json::array()}};
  if (path_exists(path)) {
    PF_TRY(existing, load_owned_json_file(path));  // hard31: the bound and repeated-key check every reading of it has
    // Refuse to replace a file we could not read back: the user's other entries would be lost.
    DeviceCatalog probe = catalog;
    PF_TRY(valid, apply_device_overlay(probe, existing, path));
    (void)valid;
    root = std::move(existing);
  }
  Json& list = root["devices"];
  Json* entry = nullptr;
  for (auto& item : list) {
    const DeviceSpec* named = catalog.find(item.value("id", ""));
    if (named && named->id == device.id) {
      entry = &item;
      break;
    }
  }
  if (!entry) {
    list.push_back(Json{{"id", device.id}, {"source", format("preflight bw --save, %s", run.date.c_str())}});
    entry = &list.back();
  }
  (*entry)["measured_copy_bandwidth_bytes_per_s"] = run.median_bytes_per_s;
  (*entry)["measured_copy_bandwidth"] = measurement_to_json(run);

  DeviceCatalog check = catalog;
  PF_TRY(merged_ok, apply_device_overlay(check, root, path));
  (void)merged_ok;
  PF_TRY(written, write_text_file_atomically(path, dump_json(root, 2) + "\n"));
  (void)written;
  return device.id;
}

}  // namespace preflight::device
