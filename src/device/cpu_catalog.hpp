// device/cpu_catalog: CPUs llama.cpp runs on (data/devices/cpus.json, embedded): per socket, the memory
// channels, data bus width, rated transfer rate and peak bandwidth, each record with its source URL.
// Kept apart from devices.json (accelerators): a CPU's capacity is what its DIMMs give, not a datasheet
// figure, so a record carries the platform maximum only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::device {

struct CpuSpec {
  std::string id, name, vendor;
  std::vector<std::string> aliases;
  int64_t cores = 0;
  std::string memory_type;          // DDR5, LPDDR5X, ...
  int64_t memory_channels = 0;      // as the vendor counts them
  int64_t memory_bus_bits = 0;      // data bus width, 64 per DDR channel
  int64_t memory_mt_per_s = 0;      // rated transfer rate
  double peak_bandwidth_bytes_per_s = 0;
  std::string peak_bandwidth_kind;  // datasheet | vendor claim | derived (bus / 8 x rate)
  double max_memory_bytes = 0;      // platform maximum per socket
  std::string source, retrieved, notes;
  // Issue 20: whether the figures were checked against a fetched page: verified | partly verified |
  // not verified, and verified_by: the page(s) and what each confirms (or why none was found).
  std::string verification, verified_by;
  std::string origin;               // the catalogue file
};

struct CpuCatalog {
  std::vector<CpuSpec> cpus;
  // Id, name or alias, case-insensitive, ignoring spaces, '-' and '_' ("EPYC 9654", "epyc-9654").
  const CpuSpec* find(const std::string& name) const;
};

// Validates every record: known keys only, schema_version 1, a source, a unique id, positive numbers,
// a peak within 5 % of bus bits / 8 x MT/s, and a verification status (verified / partly verified with a
// URL in verified_by; not verified with the reason). Errors are corrupt and name the file and the record id.
Expected<CpuCatalog> parse_cpu_catalog(const Json& root, const std::string& origin);
// The embedded data/devices/cpus.json.
Expected<CpuCatalog> load_cpu_catalog();

}  // namespace preflight::device
