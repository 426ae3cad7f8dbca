// device/device_spec: an accelerator as the estimator sees it (capacity the runtime reports,
// bandwidth, compute by dtype, interconnect), and the device catalogue (data/devices/devices.json)
// with a user overlay of measured values that takes precedence and is reported as such.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::device {

// A device-to-device copy measurement recorded by `preflight bw --save` in the user's overlay: the
// provenance of measured_copy_bandwidth_bytes_per_s (which is its median). Bytes per copy are counted
// read + write (2 x buffer_bytes), as in the seed report and shared/reference/hardware-notes.md.
struct BandwidthMeasurement {
  double median_bytes_per_s = 0;
  double min_bytes_per_s = 0;
  double max_bytes_per_s = 0;
  int64_t repeats = 0;      // timed copies
  int64_t warmup = 0;       // untimed copies before them
  double buffer_bytes = 0;  // per buffer
  int64_t device_index = 0;
  std::string date;    // RFC 3339 UTC, when the measurement ran
  std::string tool;    // "preflight bw 0.1.0 (build commit)"
  std::string method;  // the runtime calls timed
};

// The accelerators one server holds when a card's record does not say (devices.json devices_per_node): the
// 8-accelerator server (NVIDIA HGX / DGX, Atlas 800 A2 / 800I A2).
constexpr int64_t k_default_devices_per_node = 8;

struct DeviceSpec {
  std::string id;
  std::string name;
  std::string vendor;    // huawei | nvidia | amd | apple | cambricon
  std::string platform;  // npu | cuda | rocm | metal | other
  std::string family;
  std::vector<std::string> aliases;
  double memory_bytes = 0;                     // nominal
  std::optional<double> runtime_total_bytes;   // what mem_get_info reports as total
  // How the memory is attached: hbm | gddr_ecc (GDDR with ECC on by default: inline ECC takes a share) | gddr |
  // unified (shared with the host) | lpddr | host. Groups the cards whose runtime total is a like share of nominal.
  std::string memory_kind;
  // When runtime_total_bytes is unknown: nominal x the median runtime/nominal ratio of the catalogue's measured cards
  // of the same vendor and memory_kind (derive_class_runtime_totals), and the assumption that says so with the band.
  std::optional<double> class_runtime_total_bytes;
  std::string class_runtime_total_rule;
  // The rule's parts for listings (`devices`): the band (nominal x the lowest and highest ratio of the class), the
  // median ratio and the number of measured cards it was taken over; 0 when class_runtime_total_bytes is empty.
  double class_runtime_total_low_bytes = 0, class_runtime_total_high_bytes = 0;
  double class_runtime_total_ratio = 0;
  size_t class_runtime_total_cards = 0;
  std::optional<double> hbm_bandwidth_bytes_per_s;
  std::optional<double> measured_copy_bandwidth_bytes_per_s;  // device-to-device copy, read + write counted
  std::optional<BandwidthMeasurement> measured_copy_bandwidth;  // its provenance when the overlay recorded one
  std::optional<double> bf16_dense_flops;
  std::optional<double> fp16_dense_flops;
  std::optional<double> fp8_dense_flops;
  std::optional<double> int8_dense_ops;
  std::string interconnect;
  std::optional<double> interconnect_bandwidth_bytes_per_s;
  // Issue 15/16 (nccl): how the card is built: sxm (a module on an HGX / DGX baseboard) or pcie (an add-in card); empty
  // where neither (superchips, single units). The NCCL buffer term's default interconnect is chosen from it
  // (engines.json overheads[cuda].nccl_buffers.defaults), with source_form_factor.
  std::string form_factor;
  std::string source_form_factor;
  std::vector<std::string> dtypes;
  // Issue 15 (ux29): the devices of this kind one server holds as the runtime numbers them (an Atlas 800 A3 shows its
  // 8 Ascend 910C as 16 dies), from devices.json devices_per_node with sources.devices_per_node; unset: the default above.
  // TP stays inside a node and a layout past it spans nodes (plan's node blocks, the speed model's link).
  std::optional<int64_t> devices_per_node;
  std::string source_devices_per_node;
  std::string source_memory, source_runtime_total, source_bandwidth, source_compute;
  std::string source_measured_copy_bandwidth;  // set when the overlay replaced the catalogue's measured copy figure
  std::string confidence_runtime_total, confidence_bandwidth;
  std::string origin;  // catalogue file (and overlay file when overridden)
  std::vector<std::string> overrides;  // fields replaced by the user's measured file

  // Capacity used for memory arithmetic: runtime total when known, else the memory class's rule, else nominal (each
  // of the last two an assumption).
  double usable_total_bytes() const { return runtime_total_bytes.value_or(class_runtime_total_bytes.value_or(memory_bytes)); }
  bool supports_dtype(const std::string& dtype) const;
  int64_t node_devices() const { return devices_per_node.value_or(k_default_devices_per_node); }
};

// A name several catalogue cards answer to ("A100", "910B", "RTX 4060 Ti"): the card assumed for it and why,
// from devices.json "ambiguous_names" (issue 15). Every id names a device; assumed is one of candidates.
struct AmbiguousName {
  std::string name;
  std::string assumed;                  // device id
  std::vector<std::string> candidates;  // device ids, the assumed one among them
  std::string reason;                   // why that card, with its source
};

struct DeviceCatalog {
  std::vector<DeviceSpec> devices;
  std::vector<AmbiguousName> ambiguous_names;
  const DeviceSpec* find(const std::string& name) const;  // id or alias, case-insensitive
  std::vector<std::string> names() const;
};

// Every record names its memory_kind (one of the list above); a gddr_ecc record also gives sources.memory_kind (the
// ECC default). Cards without a runtime total get the class rule of derive_class_runtime_totals(catalog, catalog).
Expected<DeviceCatalog> parse_device_catalog(const Json& root, const std::string& origin);
// For each card of target without runtime_total_bytes: class_runtime_total_bytes = memory_bytes x the median of
// runtime_total_bytes / memory_bytes over the cards of reference with the same vendor and memory_kind whose runtime
// total is "measured" (printed by torch on that card; derived and estimated totals are left out), and
// class_runtime_total_rule naming those cards and the band (min-max ratio). No measured card: both left empty
// (nominal is used). Issue 15: the ratios differ by class (HBM ~1%, GDDR with ECC on ~8%, GeForce GDDR ~1.5-3%).
void derive_class_runtime_totals(const DeviceCatalog& reference, DeviceCatalog& target);
// What the class rule reads of one reference card: the built-in catalogue's cards come from the build-time index
// (base/embedded.hpp, no record parsed), another catalogue's from its parsed records (runtime_totals_of).
struct RuntimeTotalSample {
  std::string id, vendor, memory_kind, confidence_runtime_total;
  double memory_bytes = 0;
  std::optional<double> runtime_total_bytes;
};
std::vector<RuntimeTotalSample> runtime_totals_of(const DeviceCatalog& catalog);
void derive_class_runtime_totals(const std::vector<RuntimeTotalSample>& reference, DeviceCatalog& target);
// devices.json text as parse_json reads it, except that NaN, Infinity and -Infinity outside strings are
// kept as the strings "NaN", "Infinity", "-Infinity", so that a quantity holding one is an error naming
// it (parse_json alone reads them as null, which in the catalogue means "not known").
Expected<Json> parse_device_json(const std::string& text, const std::string& origin);
// parse_device_json then parse_device_catalog: every quantity finite and positive, else a corrupt
// error naming the file, the record and the field.
Expected<DeviceCatalog> parse_device_catalog_text(const std::string& text, const std::string& origin);
// Measured overrides: {"schema_version":1,"devices":[{"id":"910B3","runtime_total_bytes":..,
// "hbm_bandwidth_bytes_per_s":..,"source":"preflight bw 2026-12-02"}]}. An entry may also carry
// "measured_copy_bandwidth": {"median_bytes_per_s", "min_bytes_per_s", "max_bytes_per_s", "repeats",
// "warmup", "buffer_bytes", "device_index", "date", "tool", "method"} (written by `preflight bw --save`);
// its median becomes measured_copy_bandwidth_bytes_per_s, and a scalar beside it must agree.
Status apply_device_overlay(DeviceCatalog& catalog, const Json& root, const std::string& origin);

// The embedded catalogue plus the user's measured file when present ($PREFLIGHT_DEVICE_OVERRIDES,
// else $XDG_CONFIG_HOME/preflight/devices.json, else ~/.config/preflight/devices.json).
Expected<DeviceCatalog> load_device_catalog();
// load_device_catalog() as one device name needs it (issue 19, start-up time): when device_text is
// exactly one card's id or alias (case, spaces, hyphens and underscores ignored, as DeviceCatalog::find
// matches) and not a name of ambiguous_names, the catalogue holds that card (and the cards the overlay
// names, with the overlay applied) parsed from their records alone (the build-time index of
// base/embedded.hpp), so find, find_device and match_device answer that name as on the whole
// catalogue. Anything else (a list, free text, an unknown name, a malformed overlay) loads the whole
// catalogue, with its errors and suggestions.
Expected<DeviceCatalog> load_device_catalog_for(const std::string& device_text);
// The embedded catalogue alone, without the overlay (for writing the overlay).
Expected<DeviceCatalog> load_builtin_device_catalog();
// Issue 16: the family names of the embedded catalogue's cards ("ascend-a2", "hopper"), each once, in file order:
// the names launch rules may narrow a start command to (engine/launch_rules when.device_families). Read from the
// build-time index without parsing a record; the whole catalogue when the index does not copy the field. The overlay
// changes measured values only, never a family.
Expected<std::vector<std::string>> load_device_families();
std::string device_overlay_path();

// Looks up a device by id or alias; not_found with the nearest names suggested.
Expected<DeviceSpec> find_device(const DeviceCatalog& catalog, const std::string& name);

// Maps free text ("NVIDIA H100 80GB (79.18 GiB total)") to a device: the longest id or alias
// found in the text (ignoring case, spaces and hyphens) among the devices whose memory agrees with a size
// the text states ("A100 40GB" is the 40 GB card). nullptr when none matches.
const DeviceSpec* match_device_text(const DeviceCatalog& catalog, const std::string& text);

// A device found for a text, and the assumption made when the text names several cards.
struct DeviceMatch {
  const DeviceSpec* device = nullptr;
  std::string assumption;  // "'A100' names 4 cards (...); assumed A100-80G-SXM (...): <reason>", else empty
};

// match_device_text with ambiguous names: a catalogue name listed in ambiguous_names (or found in the text
// as its longest match) resolves to its assumed card, or to the one candidate a stated size agrees with,
// and the assumption says which card was taken and why. device nullptr when nothing matches.
DeviceMatch match_device(const DeviceCatalog& catalog, const std::string& text);

// The device whose runtime total (what torch.{cuda,npu}.mem_get_info()[1] reports, printed to 0.01 GiB)
// equals total_bytes within 0.006 GiB, among those of platform (any when empty). Several: the one an
// ambiguous name assumes, else the first; the assumption names the others. nullptr when none.
DeviceMatch match_device_total(const DeviceCatalog& catalog, double total_bytes, const std::string& platform);

// A memory size as people write it: "24GiB", "24 GiB", "24GB" (decimal), "512MiB", "1.5TiB", "80000000000B",
// in bytes. invalid_argument naming flag for a bare number, an unknown unit, or a size not finite and positive.
Expected<double> parse_memory_size(const std::string& text, const std::string& flag);

}  // namespace preflight::device
