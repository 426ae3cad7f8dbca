#include "device/cpu_catalog.hpp"

#include <cmath>
#include <set>

#include "base/embedded.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::device {

namespace {

std::string squash(const std::string& text) {
  std::string out;
  for (char c : to_lower(text))
    if (c != ' ' && c != '-' && c != '_') out += c;
  return out;
}

constexpr double k_peak_tolerance = 0.05;  // vendor claims round (Apple: 800 GB/s for 819.2)

Expected<CpuSpec> parse_cpu(const Json& j, const std::string& origin, size_t index) {
  const std::string prefix = format("cpus[%zu]", index);
  if (!j.is_object()) return make_error(ErrorKind::corrupt, origin + ": " + prefix + ": expected an object", origin);
  JsonObject o(j, origin, prefix);
  PF_TRY(keys, o.only_keys({"id", "name", "vendor", "aliases", "cores", "memory_type", "memory_channels", "memory_bus_bits", "memory_mt_per_s",
                            "peak_bandwidth_bytes_per_s", "peak_bandwidth_kind", "max_memory_bytes", "source", "retrieved", "notes", "verification", "verified_by"}));
  (void)keys;
  CpuSpec c;
  PF_TRY(id, o.string("id"));
  c.id = id;
  auto bad = [&](const std::string& what) { return make_error(ErrorKind::corrupt, format("%s: cpu '%s': %s", origin.c_str(), c.id.c_str(), what.c_str()), origin); };
  PF_TRY(name, o.string("name"));
  PF_TRY(vendor, o.string("vendor"));
  PF_TRY(cores, o.int_("cores"));
  PF_TRY(type, o.string("memory_type"));
  PF_TRY(channels, o.int_("memory_channels"));
  PF_TRY(bus, o.int_("memory_bus_bits"));
  PF_TRY(rate, o.int_("memory_mt_per_s"));
  PF_TRY(peak, o.number("peak_bandwidth_bytes_per_s"));
  PF_TRY(kind, o.string("peak_bandwidth_kind"));
  PF_TRY(max_memory, o.number("max_memory_bytes"));
  PF_TRY(source, o.string("source"));
  PF_TRY(retrieved, o.string("retrieved"));
  PF_TRY(notes, o.opt_string("notes"));
  PF_TRY(verification, o.string("verification"));
  PF_TRY(verified_by, o.string("verified_by"));
  c.name = name, c.vendor = vendor, c.cores = cores, c.memory_type = type, c.memory_channels = channels, c.memory_bus_bits = bus;
  c.memory_mt_per_s = rate, c.peak_bandwidth_bytes_per_s = peak, c.peak_bandwidth_kind = kind, c.max_memory_bytes = max_memory;
  c.source = source, c.retrieved = retrieved, c.notes = notes.value_or(""), c.origin = origin;
  c.verification = verification, c.verified_by = verified_by;
  if (const Json* a = o.find("aliases")) {
    if (!a->is_array()) return bad("aliases: expected an array of strings");
    for (const auto& x : *a) {
      if (!x.is_string()) return bad("aliases: expected an array of strings");
      c.aliases.push_back(x.get<std::string>());
    }
  }
  if (c.id.empty()) return make_error(ErrorKind::corrupt, origin + ": " + prefix + ": empty id", origin);
  if (trim(c.source).empty()) return bad("missing source");
  if (verification != "verified" && verification != "partly verified" && verification != "not verified")
    return bad("verification: expected verified, partly verified or not verified, found '" + verification + "'");
  if (verification != "not verified" && verified_by.find("https://") == std::string::npos && verified_by.find("http://") == std::string::npos)
    return bad("verified_by: a " + verification + " record needs the URL of the page that confirms it");
  if (trim(verified_by).empty()) return bad("verified_by: empty (say why the figures are not verified)");
  if (kind != "datasheet" && kind != "vendor claim" && kind != "derived") return bad("peak_bandwidth_kind: expected datasheet, vendor claim or derived, found '" + kind + "'");
  if (cores <= 0 || channels <= 0 || bus <= 0 || bus % 16 != 0 || rate <= 0) return bad("cores, memory_channels, memory_bus_bits (a multiple of 16) and memory_mt_per_s must be positive");
  if (!std::isfinite(peak) || peak <= 0 || !std::isfinite(max_memory) || max_memory <= 0) return bad("peak_bandwidth_bytes_per_s and max_memory_bytes must be finite and positive");
  const double derived = static_cast<double>(bus) / 8.0 * static_cast<double>(rate) * 1e6;
  if (std::abs(peak / derived - 1.0) > k_peak_tolerance)
    return bad(format("peak_bandwidth_bytes_per_s %.4g is not bus %lld bit / 8 x %lld MT/s = %.4g (within 5 %%)", peak, static_cast<long long>(bus), static_cast<long long>(rate), derived));
  return c;
}

}  // namespace

const CpuSpec* CpuCatalog::find(const std::string& name) const {
  const std::string key = squash(name);
  for (const auto& c : cpus) {
    if (squash(c.id) == key || squash(c.name) == key) return &c;
    for (const auto& a : c.aliases)
      if (squash(a) == key) return &c;
  }
  return nullptr;
}

Expected<CpuCatalog> parse_cpu_catalog(const Json& root, const std::string& origin) {
  if (!root.is_object()) return make_error(ErrorKind::corrupt, origin + ": expected an object", origin);
  JsonObject o(root, origin);
  PF_TRY(keys, o.only_keys({"schema_version", "note", "cpus"}));
  (void)keys;
  PF_TRY(schema, o.schema_v1());
  (void)schema;
  PF_TRY(list, o.array("cpus"));
  CpuCatalog catalog;
  std::set<std::string> names;
  for (size_t i = 0; i < list->size(); ++i) {
    PF_TRY(c, parse_cpu((*list)[i], origin, i));
    // Names of one record may coincide ("epyc-9654" and "EPYC 9654"); across records they may not.
    std::set<std::string> own;
    for (const auto& n : c.aliases) own.insert(squash(n));
    own.insert(squash(c.id));
    for (const auto& n : own)
      if (names.count(n)) return make_error(ErrorKind::corrupt, format("%s: cpu '%s': duplicate id or alias '%s'", origin.c_str(), c.id.c_str(), n.c_str()), origin);
    names.insert(own.begin(), own.end());
    catalog.cpus.push_back(std::move(c));
  }
  return catalog;
}

Expected<CpuCatalog> load_cpu_catalog() {
  const std::string origin = "data/devices/cpus.json";
  PF_TRY(root, parse_json(std::string(embedded_data("devices/cpus.json")), origin));
  return parse_cpu_catalog(root, origin);
}

}  // namespace preflight::device
