#include <algorithm>
#include <array>
#include <cmath>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <regex>
#include <span>
#include <unordered_set>

#include "base/embedded.hpp"
#include "base/file.hpp"
#include "base/json_keys.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "device/device_names.hpp"
#include "device/device_platform.hpp"
#include "device/device_spec.hpp"

namespace preflight::device {

namespace {
std::string squash(const std::string& text) {
  std::string out;
  for (char c : to_lower(text)) {
    if (c != ' ' && c != '-' && c != '_') out += c;
  }
  return out;
}

// A quantity in devices.json (or the user's overlay) is a finite positive number. parse_json keeps
// Python's NaN / Infinity tokens as markers (non_finite_token), so they are named in the error.
// In the catalogue null means "not known"; in an overlay, which only replaces values, it is an error.
enum class NullValue { absent, error };
Status check_positive_numbers(const Json& record, const std::string& origin, const std::string& prefix, NullValue null_value,
                              std::initializer_list<const char*> keys) {
  if (!record.is_object()) return Ok{};
  for (const char* key : keys) {
    auto it = record.find(key);
    if (it == record.end()) continue;
    auto bad = [&](const std::string& found) {
      return make_error(ErrorKind::corrupt, format("%s: %s.%s: expected a finite positive number, found %s", origin.c_str(), prefix.c_str(), key, found.c_str()),
                        origin);
    };
    if (it->is_null()) {
      if (null_value == NullValue::error) return bad("null");
      continue;
    }
    if (auto token = non_finite_token(*it)) return bad(*token);
    if (it->is_string()) continue;  // the typed reader names the wrong type
    if (!it->is_number()) continue;
    const double v = it->get<double>();
    if (!std::isfinite(v) || !(v > 0)) return bad(format("%g", v));
  }
  return Ok{};
}

Expected<BandwidthMeasurement> parse_bandwidth_measurement(const Json& j, const std::string& origin, const std::string& prefix) {
  JsonObject o(j, origin, prefix);
  PF_TRY(keys, o.only_keys({"median_bytes_per_s", "min_bytes_per_s", "max_bytes_per_s", "repeats", "warmup", "buffer_bytes", "device_index", "date", "tool", "method"}));
  (void)keys;
  PF_TRY(finite, check_positive_numbers(j, origin, prefix, NullValue::error, {"median_bytes_per_s", "min_bytes_per_s", "max_bytes_per_s", "buffer_bytes"}));
  (void)finite;
  BandwidthMeasurement m;
  PF_TRY(median, o.number("median_bytes_per_s"));
  PF_TRY(low, o.number("min_bytes_per_s"));
  PF_TRY(high, o.number("max_bytes_per_s"));
  PF_TRY(repeats, o.int_("repeats"));
  PF_TRY(warmup, o.opt_int("warmup"));
  PF_TRY(buffer, o.number("buffer_bytes"));
  PF_TRY(index, o.opt_int("device_index"));
  PF_TRY(date, o.string("date"));
  PF_TRY(tool, o.string("tool"));
  PF_TRY(method, o.opt_string("method"));
  if (!(low > 0) || !(low <= median) || !(median <= high)) {
    return make_error(ErrorKind::corrupt, format("%s: %s: expected 0 < min_bytes_per_s <= median_bytes_per_s <= max_bytes_per_s, found %.0f, %.0f, %.0f",
                                                 origin.c_str(), prefix.c_str(), low, median, high), origin);
  }
  if (repeats < 1 || !(buffer > 0)) return make_error(ErrorKind::corrupt, format("%s: %s: repeats and buffer_bytes must be positive", origin.c_str(), prefix.c_str()), origin);
  if (date.empty() || tool.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: date and tool must name the run", origin.c_str(), prefix.c_str()), origin);
  m.median_bytes_per_s = median;
  m.min_bytes_per_s = low;
  m.max_bytes_per_s = high;
  m.repeats = repeats;
  m.warmup = warmup.value_or(0);
  m.buffer_bytes = buffer;
  m.device_index = index.value_or(0);
  m.date = date;
  m.tool = tool;
  m.method = method.value_or("");
  return m;
}

const DeviceSpec* find_by_id(const DeviceCatalog& catalog, const std::string& id) {
  for (const auto& d : catalog.devices) if (d.id == id) return &d;
  return nullptr;
}

// devices.json "ambiguous_names": [{"name", "assumed", "candidates", "reason"}] (optional). Each id must name a
// device of this file and the assumed card must be a candidate, so an assumption never points at nothing.
Expected<std::vector<AmbiguousName>> parse_ambiguous_names(const Json& root, const DeviceCatalog& catalog, const std::string& origin) {
  std::vector<AmbiguousName> out;
  if (!root.is_object() || !root.contains("ambiguous_names")) return out;
  const Json& list = root.at("ambiguous_names");
  if (!list.is_array()) return make_error(ErrorKind::corrupt, format("%s: ambiguous_names: expected an array", origin.c_str()), origin);
  for (const auto& item : list) {
    JsonObject pre(item, origin, "ambiguous_names[]");
    PF_TRY(name, pre.string("name"));
    const std::string where = "ambiguous_names[" + name + "]";
    JsonObject r(item, origin, where);
    PF_TRY(keys, r.only_keys({"name", "assumed", "candidates", "reason"}));
    (void)keys;
    AmbiguousName a;
    a.name = name;
    PF_TRY(assumed, r.string("assumed"));
    a.assumed = assumed;
    PF_TRY(reason, r.string("reason"));
    a.reason = reason;
    const Json* c = r.find("candidates");
    if (!c || !c->is_array() || c->empty()) return r.wrong_type("candidates", "a non-empty array of device ids");
    for (const auto& s : *c) {
      if (!s.is_string()) return r.wrong_type("candidates", "a non-empty array of device ids");
      a.candidates.push_back(s.get<std::string>());
    }
    for (const auto& id : a.candidates) {
      if (!find_by_id(catalog, id)) return make_error(ErrorKind::corrupt, format("%s: %s.candidates: no device %s", origin.c_str(), where.c_str(), id.c_str()), origin);
    }
    if (std::find(a.candidates.begin(), a.candidates.end(), a.assumed) == a.candidates.end()) {
      return make_error(ErrorKind::corrupt, format("%s: %s.assumed: %s is not one of its candidates", origin.c_str(), where.c_str(), a.assumed.c_str()), origin);
    }
    if (trim(a.name).empty() || trim(a.reason).empty()) return make_error(ErrorKind::corrupt, format("%s: %s: name and reason must not be empty", origin.c_str(), where.c_str()), origin);
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

namespace {
// Kept in the order the error message lists them.
constexpr std::array<std::string_view, 6> k_memory_kinds = {"hbm", "gddr_ecc", "gddr", "unified", "lpddr", "host"};
}  // namespace

namespace {
void clear_class_runtime_total(DeviceSpec& d) {
  d.class_runtime_total_bytes.reset();
  d.class_runtime_total_rule.clear();
  d.class_runtime_total_low_bytes = d.class_runtime_total_high_bytes = d.class_runtime_total_ratio = 0;
  d.class_runtime_total_cards = 0;
}
}  // namespace

std::vector<RuntimeTotalSample> runtime_totals_of(const DeviceCatalog& catalog) {
  std::vector<RuntimeTotalSample> out;
  out.reserve(catalog.devices.size());
  for (const auto& d : catalog.devices) out.push_back({d.id, d.vendor, d.memory_kind, d.confidence_runtime_total, d.memory_bytes, d.runtime_total_bytes});
  return out;
}

void derive_class_runtime_totals(const DeviceCatalog& reference, DeviceCatalog& target) { derive_class_runtime_totals(runtime_totals_of(reference), target); }

void derive_class_runtime_totals(const std::vector<RuntimeTotalSample>& reference, DeviceCatalog& target) {
  for (auto& d : target.devices) {
    clear_class_runtime_total(d);
    if (d.runtime_total_bytes || d.memory_bytes <= 0) continue;
    std::vector<double> ratios;
    std::string members;
    for (const auto& m : reference) {
      if (m.vendor != d.vendor || m.memory_kind != d.memory_kind || !m.runtime_total_bytes || m.confidence_runtime_total != "measured" || m.memory_bytes <= 0) continue;
      const double ratio = *m.runtime_total_bytes / m.memory_bytes;
      ratios.push_back(ratio);
      members += format("%s%s %.4f", members.empty() ? "" : ", ", m.id.c_str(), ratio);
    }
    if (ratios.empty()) continue;
    std::sort(ratios.begin(), ratios.end());
    const size_t n = ratios.size();
    const double median = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
    d.class_runtime_total_bytes = d.memory_bytes * median;
    d.class_runtime_total_low_bytes = d.memory_bytes * ratios.front();
    d.class_runtime_total_high_bytes = d.memory_bytes * ratios.back();
    d.class_runtime_total_ratio = median;
    d.class_runtime_total_cards = n;
    d.class_runtime_total_rule = format("%s: runtime total unknown; assumed %.2f GiB = nominal %.2f GiB x %.4f, the median runtime/nominal ratio of the %zu "
                                        "measured %s %s cards (%s); band %.4f-%.4f (%.2f-%.2f GiB)",
                                        d.id.c_str(), bytes_to_gib(*d.class_runtime_total_bytes), bytes_to_gib(d.memory_bytes), median, n, d.vendor.c_str(),
                                        d.memory_kind.c_str(), members.c_str(), ratios.front(), ratios.back(), bytes_to_gib(d.class_runtime_total_low_bytes),
                                        bytes_to_gib(d.class_runtime_total_high_bytes));
  }
}

bool DeviceSpec::supports_dtype(const std::string& dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

const DeviceSpec* DeviceCatalog::find(const std::string& name) const {
  const std::string key = squash(trim(name));
  for (const auto& d : devices) if (squash(d.id) == key) return &d;
  for (const auto& d : devices) {
    for (const auto& a : d.aliases) if (squash(a) == key) return &d;
  }
  return nullptr;
}

std::vector<std::string> DeviceCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& d : devices) {
    out.push_back(d.id);
    for (const auto& a : d.aliases) out.push_back(a);
  }
  return out;
}

Expected<DeviceCatalog> parse_device_catalog(const Json& root, const std::string& origin) {
  DeviceCatalog catalog;
  JsonObject top(root, origin);
  PF_TRY(top_keys, top.only_keys({"schema_version", "note", "devices", "ambiguous_names"}));  // issue 15 (v0eng29)
  (void)top_keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(list, top.array("devices"));
  std::unordered_set<std::string> names;
  for (const auto& item : *list) {
    JsonObject pre(item, origin, "devices[]");
    PF_TRY(id, pre.string("id"));
    JsonObject r(item, origin, "devices[" + id + "]");
    PF_TRY(keys, r.only_keys({"id", "name", "vendor", "platform", "family", "aliases", "memory_bytes", "runtime_total_bytes", "memory_kind",
                              "hbm_bandwidth_bytes_per_s", "measured_copy_bandwidth_bytes_per_s", "bf16_dense_flops", "fp16_dense_flops", "fp8_dense_flops", "int8_dense_ops",
                              "interconnect", "interconnect_bandwidth_bytes_per_s", "form_factor", "devices_per_node", "dtypes", "confidence", "sources"}));
    (void)keys;
    PF_TRY(finite, check_positive_numbers(item, origin, "devices[" + id + "]", NullValue::absent,
                                          {"memory_bytes", "runtime_total_bytes", "hbm_bandwidth_bytes_per_s", "measured_copy_bandwidth_bytes_per_s", "bf16_dense_flops",
                                           "fp16_dense_flops", "fp8_dense_flops", "int8_dense_ops", "interconnect_bandwidth_bytes_per_s"}));
    (void)finite;
    DeviceSpec d;
    d.id = id;
    d.origin = origin;
    PF_TRY(name, r.string("name"));
    d.name = name;
    PF_TRY(vendor, r.string("vendor"));
    d.vendor = vendor;
    PF_TRY(platform, r.string("platform"));
    d.platform = platform;
    PF_TRY(family, r.opt_string("family"));
    d.family = family.value_or("");
    if (const Json* a = r.find("aliases")) {
      if (!a->is_array()) return r.wrong_type("aliases", "an array of strings");
      for (const auto& s : *a) {
        if (!s.is_string()) return r.wrong_type("aliases", "an array of strings");
        d.aliases.push_back(s.get<std::string>());
      }
    }
    PF_TRY(memory, r.number("memory_bytes"));
    if (memory <= 0) return make_error(ErrorKind::corrupt, format("%s: %s: memory_bytes must be positive", origin.c_str(), id.c_str()), origin);
    d.memory_bytes = memory;
    PF_TRY(rt, r.opt_number("runtime_total_bytes"));
    d.runtime_total_bytes = rt;
    if (rt && (*rt <= 0 || *rt > memory * 1.01)) {
      return make_error(ErrorKind::corrupt, format("%s: %s: runtime_total_bytes %.0f is not within (0, memory_bytes]", origin.c_str(), id.c_str(), *rt), origin);
    }
    PF_TRY(kind, r.string("memory_kind"));
    if (std::find(k_memory_kinds.begin(), k_memory_kinds.end(), kind) == k_memory_kinds.end()) {
      return make_error(ErrorKind::corrupt, format("%s: devices[%s].memory_kind: expected one of hbm, gddr_ecc, gddr, unified, lpddr, host, found '%s'", origin.c_str(),
                                                   id.c_str(), kind.c_str()), origin);
    }
    d.memory_kind = kind;
    PF_TRY(bw, r.opt_number("hbm_bandwidth_bytes_per_s"));
    d.hbm_bandwidth_bytes_per_s = bw;
    PF_TRY(mbw, r.opt_number("measured_copy_bandwidth_bytes_per_s"));
    d.measured_copy_bandwidth_bytes_per_s = mbw;
    PF_TRY(bf16, r.opt_number("bf16_dense_flops"));
    d.bf16_dense_flops = bf16;
    PF_TRY(fp16, r.opt_number("fp16_dense_flops"));
    d.fp16_dense_flops = fp16;
    PF_TRY(fp8, r.opt_number("fp8_dense_flops"));
    d.fp8_dense_flops = fp8;
    PF_TRY(int8, r.opt_number("int8_dense_ops"));
    d.int8_dense_ops = int8;
    PF_TRY(ic, r.opt_string("interconnect"));
    d.interconnect = ic.value_or("");
    PF_TRY(icbw, r.opt_number("interconnect_bandwidth_bytes_per_s"));
    d.interconnect_bandwidth_bytes_per_s = icbw;
    PF_TRY(form, r.opt_string("form_factor"));
    if (form && *form != "sxm" && *form != "pcie")
      return make_error(ErrorKind::corrupt, format("%s: devices[%s].form_factor: expected sxm or pcie, found '%s'", origin.c_str(), id.c_str(), form->c_str()), origin);
    d.form_factor = form.value_or("");
    // Issue 15 (ux29): the devices one server holds, a whole number from 1 to 1024, with its source below.
    if (const Json* n = r.find("devices_per_node")) {
      if (!n->is_number_integer() || n->get<int64_t>() < 1 || n->get<int64_t>() > 1024)
        return make_error(ErrorKind::corrupt, format("%s: devices[%s].devices_per_node: expected a whole number from 1 to 1024, found %s", origin.c_str(), id.c_str(),
                                                     n->dump().c_str()), origin);
      d.devices_per_node = n->get<int64_t>();
    }
    if (const Json* dt = r.find("dtypes"); dt && dt->is_array()) {
      for (const auto& s : *dt) if (s.is_string()) d.dtypes.push_back(s.get<std::string>());
    }
    const Json* sources = r.find("sources");
    if (!sources || !sources->is_object()) return make_error(ErrorKind::corrupt, format("%s: %s: missing sources", origin.c_str(), id.c_str()), origin);
    JsonObject s(*sources, origin, "devices[" + id + "].sources");
    // Issue 15 (v0eng29): a misspelt source key ("runtime_totl") left the fact without its source in silence.
    PF_TRY(source_keys, s.only_keys({"memory", "runtime_total", "bandwidth", "compute", "form_factor", "memory_kind", "interconnect", "aliases", "devices_per_node"}));
    (void)source_keys;
    PF_TRY(sm, s.string("memory"));
    d.source_memory = sm;
    PF_TRY(srt, s.opt_string("runtime_total"));
    d.source_runtime_total = srt.value_or("");
    PF_TRY(sbw, s.opt_string("bandwidth"));
    d.source_bandwidth = sbw.value_or("");
    PF_TRY(sc, s.opt_string("compute"));
    d.source_compute = sc.value_or("");
    PF_TRY(sform, s.opt_string("form_factor"));
    if (!d.form_factor.empty() && trim(sform.value_or("")).empty())
      return make_error(ErrorKind::corrupt, format("%s: %s: form_factor has no source (sources.form_factor)", origin.c_str(), id.c_str()), origin);
    d.source_form_factor = sform.value_or("");
    PF_TRY(snode, s.opt_string("devices_per_node"));
    if (d.devices_per_node && trim(snode.value_or("")).empty())
      return make_error(ErrorKind::corrupt, format("%s: %s: devices_per_node has no source (sources.devices_per_node)", origin.c_str(), id.c_str()), origin);
    d.source_devices_per_node = snode.value_or("");
    PF_TRY(skind, s.opt_string("memory_kind"));
    if (d.memory_kind == "gddr_ecc" && trim(skind.value_or("")).empty()) {
      return make_error(ErrorKind::corrupt, format("%s: %s: memory_kind gddr_ecc needs sources.memory_kind (where the ECC default is stated)", origin.c_str(), id.c_str()), origin);
    }
    if (d.runtime_total_bytes && d.source_runtime_total.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: runtime_total_bytes has no source", origin.c_str(), id.c_str()), origin);
    if (d.hbm_bandwidth_bytes_per_s && d.source_bandwidth.empty()) return make_error(ErrorKind::corrupt, format("%s: %s: bandwidth has no source", origin.c_str(), id.c_str()), origin);
    if (const Json* conf = r.find("confidence"); conf && conf->is_object()) {
      JsonObject c(*conf, origin, "devices[" + id + "].confidence");
      PF_TRY(confidence_keys, c.only_keys({"memory", "runtime_total", "bandwidth", "compute"}));
      (void)confidence_keys;
      PF_TRY(crt, c.opt_string("runtime_total"));
      d.confidence_runtime_total = crt.value_or("");
      PF_TRY(cbw, c.opt_string("bandwidth"));
      d.confidence_bandwidth = cbw.value_or("");
    }
    // The names DeviceCatalog::find matches (squashed ids and aliases of the records before this one),
    // kept in a set: a find() per name made the check quadratic and the largest part of a start.
    if (names.count(squash(trim(id)))) return make_error(ErrorKind::corrupt, format("%s: duplicate device id or alias %s", origin.c_str(), id.c_str()), origin);
    for (const auto& a : d.aliases) {
      if (names.count(squash(trim(a)))) return make_error(ErrorKind::corrupt, format("%s: %s: alias %s already names another device", origin.c_str(), id.c_str(), a.c_str()), origin);
    }
    names.insert(squash(d.id));
    for (const auto& a : d.aliases) names.insert(squash(a));
    catalog.devices.push_back(std::move(d));
  }
  PF_TRY(ambiguous, parse_ambiguous_names(root, catalog, origin));
  catalog.ambiguous_names = std::move(ambiguous);
  derive_class_runtime_totals(catalog, catalog);
  return catalog;
}

Status apply_device_overlay(DeviceCatalog& catalog, const Json& root, const std::string& origin) {
  JsonObject top(root, origin);
  PF_TRY(top_keys, top.only_keys({"schema_version", "note", "devices"}));
  (void)top_keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(list, top.array("devices"));
  std::unordered_set<std::string> seen;
  for (const auto& item : *list) {
    JsonObject pre(item, origin, "devices[]");
    PF_TRY(id, pre.string("id"));
    JsonObject r(item, origin, "devices[" + id + "]");
    PF_TRY(keys, r.only_keys({"id", "runtime_total_bytes", "hbm_bandwidth_bytes_per_s", "measured_copy_bandwidth_bytes_per_s", "measured_copy_bandwidth", "source"}));
    (void)keys;
    PF_TRY(finite, check_positive_numbers(item, origin, "devices[" + id + "]", NullValue::error, {"runtime_total_bytes", "hbm_bandwidth_bytes_per_s", "measured_copy_bandwidth_bytes_per_s"}));
    (void)finite;
    PF_TRY(source, r.string("source"));
    const DeviceSpec* found = catalog.find(id);
    if (!found) {
      return make_error(ErrorKind::not_found, format("%s: device %s is not in the catalogue", origin.c_str(), id.c_str()), origin);
    }
    // Issue 19 (hard30): a device named twice was applied twice, the last values silently winning and the override listed
    // twice (STYLE: a duplicate id is an error naming the file and the record).
    if (!seen.insert(found->id).second) {
      return make_error(ErrorKind::corrupt, format("%s: devices[%s]: duplicate id (%s is named by an earlier record)", origin.c_str(), id.c_str(), found->id.c_str()), origin);
    }
    DeviceSpec& d = const_cast<DeviceSpec&>(*found);
    PF_TRY(rt, r.opt_number("runtime_total_bytes"));
    PF_TRY(bw, r.opt_number("hbm_bandwidth_bytes_per_s"));
    PF_TRY(mbw, r.opt_number("measured_copy_bandwidth_bytes_per_s"));
    for (double v : {rt.value_or(1), bw.value_or(1), mbw.value_or(1)}) {
      if (!(v > 0)) return make_error(ErrorKind::corrupt, format("%s: %s: measured values must be positive", origin.c_str(), id.c_str()), origin);
    }
    if (rt && *rt > d.memory_bytes * 1.01) {
      return make_error(ErrorKind::corrupt, format("%s: devices[%s].runtime_total_bytes: %.0f exceeds the device's memory_bytes %.0f", origin.c_str(), id.c_str(), *rt,
                                                   d.memory_bytes), origin);
    }
    std::optional<BandwidthMeasurement> run;
    if (const Json* m = r.find("measured_copy_bandwidth")) {
      PF_TRY(parsed, parse_bandwidth_measurement(*m, origin, "devices[" + id + "].measured_copy_bandwidth"));
      if (mbw && std::abs(*mbw - parsed.median_bytes_per_s) > 1e-9 * parsed.median_bytes_per_s) {
        return make_error(ErrorKind::corrupt, format("%s: %s: measured_copy_bandwidth_bytes_per_s %.0f disagrees with measured_copy_bandwidth.median_bytes_per_s %.0f",
                                                     origin.c_str(), id.c_str(), *mbw, parsed.median_bytes_per_s), origin);
      }
      mbw = parsed.median_bytes_per_s;
      run = parsed;
    }
    if (rt) {
      d.runtime_total_bytes = rt;
      d.source_runtime_total = source + " (" + origin + ")";
      d.overrides.push_back("runtime_total_bytes");
      clear_class_runtime_total(d);
    }
    if (bw) { d.hbm_bandwidth_bytes_per_s = bw; d.source_bandwidth = source + " (" + origin + ")"; d.overrides.push_back("hbm_bandwidth_bytes_per_s"); }
    if (mbw) {
      d.measured_copy_bandwidth_bytes_per_s = mbw;
      d.measured_copy_bandwidth = run;
      d.source_measured_copy_bandwidth = run ? format("%s, median of %lld copies on %s (%s)", run->tool.c_str(), static_cast<long long>(run->repeats), run->date.c_str(), origin.c_str())
                                             : source + " (" + origin + ")";
      d.overrides.push_back("measured_copy_bandwidth_bytes_per_s");
    }
    d.origin += " + " + origin;
  }
  return Ok{};
}

std::string device_overlay_path() {
  if (const char* p = std::getenv("PREFLIGHT_DEVICE_OVERRIDES"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return join_path(x, "preflight/devices.json");
  const char* home = std::getenv("HOME");
  return join_path(home ? home : "/root", ".config/preflight/devices.json");
}

Expected<Json> parse_device_json(const std::string& text, const std::string& origin) { return parse_json(text, origin); }

Expected<DeviceCatalog> parse_device_catalog_text(const std::string& text, const std::string& origin) {
  PF_TRY(json, parse_device_json(text, origin));
  return parse_device_catalog(json, origin);
}

Expected<DeviceCatalog> load_builtin_device_catalog() {
  return parse_device_catalog_text(std::string(embedded_data("devices/devices.json")), "data/devices/devices.json");
}

Expected<DeviceCatalog> load_device_catalog() {
  PF_TRY(catalog, load_builtin_device_catalog());
  const std::string overlay = device_overlay_path();
  if (path_exists(overlay)) {
    // Issue 19: within base/json_keys' overlay bound (4 MiB), and a repeated key is not the last one silently (hard30).
    PF_TRY(overlay_json, load_owned_json_file(overlay));
    PF_TRY(ok, apply_device_overlay(catalog, overlay_json, overlay));
    (void)ok;
  }
  return catalog;
}

namespace {

constexpr std::string_view k_devices_file = "devices/devices.json";

// The indexed record DeviceCatalog::find would answer for name: an id first, then an alias.
std::optional<size_t> indexed_device(std::span<const EmbeddedRecord> records, const std::string& name) {
  const std::string key = squash(trim(name));
  for (size_t i = 0; i < records.size(); ++i)
    if (squash(std::string(records[i].id)) == key) return i;
  for (size_t i = 0; i < records.size(); ++i)
    for (const auto& a : records[i].aliases)
      if (squash(std::string(a)) == key) return i;
  return std::nullopt;
}

// match_device resolves a name of ambiguous_names through its candidates: those need the whole catalogue.
bool names_ambiguous(const std::string& name) {
  for (const auto& r : embedded_records(k_devices_file, "ambiguous_names")) {
    const std::string key = squash(trim(std::string(r.id)));
    if (key == squash(name) || key == squash(trim(name))) return true;
  }
  return false;
}

// The indexed record of the one card device_text names where that record alone answers it: not a list, not a name
// of ambiguous_names (both need the whole catalogue); nullopt otherwise.
std::optional<size_t> single_indexed_device(std::span<const EmbeddedRecord> records, const std::string& device_text) {
  if (device_text.find(',') != std::string::npos || names_ambiguous(device_text)) return std::nullopt;
  return indexed_device(records, device_text);
}

// The class rule's inputs of every built-in card, from the fields the build-time index copies (CMakeLists.txt:
// vendor, memory_kind, memory_bytes, runtime_total_bytes, confidence.runtime_total); nullopt when the index lacks
// one or a number does not read back, and the whole catalogue is parsed instead.
std::optional<std::vector<RuntimeTotalSample>> indexed_runtime_totals(std::span<const EmbeddedRecord> records) {
  std::vector<RuntimeTotalSample> out;
  out.reserve(records.size());
  auto number = [](std::string_view text) -> std::optional<double> {
    if (text.empty()) return std::nullopt;
    const std::string s(text);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
  };
  for (const auto& r : records) {
    auto field = [&](std::string_view name) { return embedded_record_field(k_devices_file, "devices", r, name); };
    const auto vendor = field("vendor"), kind = field("memory_kind"), memory = field("memory_bytes"), total = field("runtime_total_bytes"),
               confidence = field("confidence.runtime_total");
    if (!vendor || !kind || !memory || !total || !confidence) return std::nullopt;
    RuntimeTotalSample s{std::string(r.id), std::string(*vendor), std::string(*kind), std::string(*confidence), 0, std::nullopt};
    const auto memory_bytes = number(*memory);
    if (!memory_bytes) return std::nullopt;
    s.memory_bytes = *memory_bytes;
    if (!total->empty()) {
      s.runtime_total_bytes = number(*total);
      if (!s.runtime_total_bytes) return std::nullopt;
    }
    out.push_back(std::move(s));
  }
  return out;
}

// The overlay's ids as indexed records; nullopt when the overlay cannot be read that way or names a
// card the index does not hold (the whole catalogue then gives the error).
std::optional<std::vector<size_t>> overlay_devices(std::span<const EmbeddedRecord> records, const Json& overlay) {
  std::vector<size_t> out;
  if (!overlay.is_object() || !overlay.contains("devices") || !overlay.at("devices").is_array()) return std::nullopt;
  for (const auto& item : overlay.at("devices")) {
    if (!item.is_object() || !item.contains("id") || !item.at("id").is_string()) return std::nullopt;
    const auto i = indexed_device(records, item.at("id").get<std::string>());
    if (!i) return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

}  // namespace

Expected<std::vector<std::string>> load_device_families() {
  std::vector<std::string> out;
  auto add = [&](std::string_view family) {
    if (!family.empty() && std::find(out.begin(), out.end(), family) == out.end()) out.emplace_back(family);
  };
  bool indexed = true;
  for (const auto& r : embedded_records(k_devices_file, "devices")) {
    const auto family = embedded_record_field(k_devices_file, "devices", r, "family");
    if (!family) {
      indexed = false;
      break;
    }
    add(*family);
  }
  if (indexed && !out.empty()) return out;
  out.clear();
  PF_TRY(catalog, load_builtin_device_catalog());
  for (const auto& d : catalog.devices) add(d.family);
  return out;
}

std::optional<std::string> indexed_device_platform(const std::string& device_text) {
  const auto records = embedded_records(k_devices_file, "devices");
  const auto named = single_indexed_device(records, device_text);
  if (!named || path_exists(device_overlay_path())) return std::nullopt;
  const auto platform = embedded_record_field(k_devices_file, "devices", records[*named], "platform");
  if (!platform || platform->empty()) return std::nullopt;
  return std::string(*platform);
}

Expected<DeviceCatalog> load_device_catalog_for(const std::string& device_text) {
  const auto records = embedded_records(k_devices_file, "devices");
  const auto named = single_indexed_device(records, device_text);
  if (!named) return load_device_catalog();
  std::vector<size_t> wanted{*named};
  std::optional<Json> overlay_json;
  const std::string overlay = device_overlay_path();
  if (path_exists(overlay)) {
    auto parsed = load_owned_json_file(overlay);
    if (!parsed) return load_device_catalog();
    const auto more = overlay_devices(records, *parsed);
    if (!more) return load_device_catalog();
    wanted.insert(wanted.end(), more->begin(), more->end());
    overlay_json = std::move(*parsed);
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::string text = "{\"schema_version\":1,\"devices\":[";
  for (size_t i : wanted) {
    const std::string_view record = embedded_record_text(k_devices_file, records[i]);
    if (record.empty()) return load_device_catalog();
    if (i != wanted.front()) text += ',';
    text.append(record);
  }
  text += "]}";
  PF_TRY(catalog, parse_device_catalog_text(text, "data/devices/devices.json"));
  if (catalog.devices.size() != wanted.size()) return load_device_catalog();
  if (overlay_json) {
    PF_TRY(ok, apply_device_overlay(catalog, *overlay_json, overlay));
    (void)ok;
  }
  // A card without a runtime total takes its memory class's rule, which the whole catalogue's measured cards decide.
  // Its inputs come from the index (issue 19: one record parsed, not the whole catalogue).
  if (std::any_of(catalog.devices.begin(), catalog.devices.end(), [](const DeviceSpec& d) { return !d.runtime_total_bytes; })) {
    if (auto indexed = indexed_runtime_totals(records)) {
      derive_class_runtime_totals(*indexed, catalog);
    } else {
      PF_TRY(builtin, load_builtin_device_catalog());
      derive_class_runtime_totals(builtin, catalog);
    }
  }
  return catalog;
}

Expected<DeviceSpec> find_device(const DeviceCatalog& catalog, const std::string& name) {
  if (const DeviceSpec* d = catalog.find(name)) return *d;
  std::string message = format("unknown device '%s'", one_line(name, 200).c_str());
  const auto near = nearest_names(name, catalog.names());
  if (!near.empty()) {
    message += "; did you mean ";
    for (size_t i = 0; i < near.size(); ++i) message += (i ? ", " : "") + near[i];
  }
  // ux32: a name outside the catalogue ("i7-12700H", a laptop) got only near names of other cards; say how to size it.
  message += " (preflight devices lists all; fit and plan size a device outside it from --device-memory SIZE --platform cuda|npu|rocm|cpu, "
             "and this host as --device cpu with --engine llama.cpp)";
  return make_error(ErrorKind::not_found, message, name);
}

namespace {

// Whether the words after a size read it as memory in use, not the card's ("1.8 GB in use", "3 GB used", "70 GB free"):
// a log or a person describing a card that way states how much of it is taken, not how much it has (issue 15, evid34:
// "Ascend 310P3 (... 1.8 GB in use ...)" named no card, as the 310P3's 24 GB disagreed with the only size stated).
bool usage_reading_follows(const std::string& text, size_t end) {
  while (end < text.size() && (text[end] == ' ' || text[end] == ')')) ++end;
  static const char* const k_words[] = {"in use", "used", "free", "allocated", "reserved", "occupied"};
  for (const char* w : k_words) {
    const size_t n = std::strlen(w);
    if (text.size() - end >= n && std::equal(w, w + n, text.begin() + static_cast<std::ptrdiff_t>(end),
                                             [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); }))
      return true;
  }
  return false;
}

// Memory sizes the text states ("40GB", "80 GB", "32G", "79.18 GiB"), in GiB; a size read as memory in use is not one.
std::vector<double> stated_memory_gib(const std::string& text) {
  if (text.size() > k_max_device_text) return {};  // std::regex recurses per character (issue 19)
  static const std::regex size_re(R"((^|[^\d.])(\d+(?:\.\d+)?)\s*Gi?B?\b)", std::regex::icase);
  std::vector<double> out;
  // strtod, not std::stod: 400 digits threw out_of_range (issue 19: validate aborted on such a case's device); a size
  // that is not finite states nothing.
  for (auto it = std::sregex_iterator(text.begin(), text.end(), size_re); it != std::sregex_iterator(); ++it) {
    const double gib = std::strtod((*it)[2].str().c_str(), nullptr);
    if (usage_reading_follows(text, static_cast<size_t>(it->position(0) + it->length(0)))) continue;
    if (std::isfinite(gib)) out.push_back(gib);
  }
  return out;
}

// A device a stated size contradicts is not the one meant: "NVIDIA A100 40GB" names the 40 GB card even though
// the 80 GB record's alias "NVIDIA A100" is a longer match. Within 15% (GB vs GiB, usable vs total).
bool size_agrees(const DeviceSpec& d, const std::vector<double>& stated_gib) {
  if (stated_gib.empty() || d.memory_bytes <= 0) return true;
  const double gib = d.memory_bytes / (1024.0 * 1024.0 * 1024.0);
  return std::any_of(stated_gib.begin(), stated_gib.end(), [&](double g) { return std::abs(g - gib) <= 0.15 * gib; });
}

}  // namespace

const DeviceSpec* match_device_text(const DeviceCatalog& catalog, const std::string& text) { return match_device(catalog, text).device; }

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

// The card an ambiguous name resolves to among the candidates a stated size leaves, and what is said about it.
DeviceMatch resolve_ambiguous(const DeviceCatalog& catalog, const AmbiguousName& a, const std::vector<double>& stated) {
  std::vector<std::string> agreeing;
  for (const auto& id : a.candidates) {
    if (size_agrees(*find_by_id(catalog, id), stated)) agreeing.push_back(id);
  }
  DeviceMatch m;
  if (agreeing.empty()) return m;
  const bool assumed_agrees = std::find(agreeing.begin(), agreeing.end(), a.assumed) != agreeing.end();
  m.device = find_by_id(catalog, assumed_agrees ? a.assumed : agreeing.front());
  if (agreeing.size() == 1 && a.candidates.size() > 1) {
    m.assumption = format("'%s' names %zu cards (%s); the stated size picks %s (%s)", a.name.c_str(), a.candidates.size(), joined(a.candidates).c_str(),
                          m.device->id.c_str(), m.device->name.c_str());
  } else {
    const std::string left = agreeing.size() < a.candidates.size() ? "; the stated size leaves " + joined(agreeing) : "";
    m.assumption = format("'%s' names %zu cards (%s)%s; assumed %s (%s): %s; name another to change it", a.name.c_str(), a.candidates.size(),
                          joined(a.candidates).c_str(), left.c_str(), m.device->id.c_str(), m.device->name.c_str(), a.reason.c_str());
  }
  return m;
}

}  // namespace

namespace {

// The ambiguous name match_device took for a text, and the sizes the text states (issue 15, acc28).
struct AmbiguousHit {
  const AmbiguousName* name = nullptr;
  std::vector<double> stated_gib;
};

DeviceMatch match_device_with(const DeviceCatalog& catalog, const std::string& text, AmbiguousHit& hit) {
  const std::string hay = squash(text);
  if (const DeviceSpec* exact = catalog.find(text)) {
    for (const auto& a : catalog.ambiguous_names) {
      if (squash(trim(a.name)) != hay) continue;
      hit = {&a, {}};
      return resolve_ambiguous(catalog, a, {});
    }
    return {exact, ""};
  }
  const auto stated = stated_memory_gib(text);  // after the exact name: its regex is compiled on first use (issue 19)
  DeviceMatch best;
  size_t best_len = 0;
  for (const auto& d : catalog.devices) {
    if (!size_agrees(d, stated)) continue;
    std::vector<std::string> names = d.aliases;
    names.push_back(d.id);
    for (const auto& n : names) {
      const std::string k = squash(n);
      if (k.size() >= 3 && k.size() > best_len && hay.find(k) != std::string::npos) {
        best = {&d, ""};
        best_len = k.size();
      }
    }
  }
  // An ambiguous name as long as the best catalogue name found is that name: say which card it stands for.
  for (const auto& a : catalog.ambiguous_names) {
    const std::string k = squash(trim(a.name));
    if (k.size() < 3 || k.size() < best_len || hay.find(k) == std::string::npos) continue;
    DeviceMatch m = resolve_ambiguous(catalog, a, stated);
    if (!m.device) continue;
    best = m;
    best_len = k.size();
    hit = {&a, stated};
  }
  return best;
}

}  // namespace

DeviceMatch match_device(const DeviceCatalog& catalog, const std::string& text) {
  AmbiguousHit hit;
  return match_device_with(catalog, text, hit);
}

std::vector<const DeviceSpec*> candidate_devices(const DeviceCatalog& catalog, const std::string& text) {
  AmbiguousHit hit;
  const DeviceMatch m = match_device_with(catalog, text, hit);
  std::vector<const DeviceSpec*> out;
  if (!m.device || !hit.name) return out;
  out.push_back(m.device);
  for (const auto& id : hit.name->candidates) {
    const DeviceSpec* d = find_by_id(catalog, id);
    if (d && d != m.device && size_agrees(*d, hit.stated_gib)) out.push_back(d);
  }
  if (out.size() < 2) out.clear();
  return out;
}

DeviceMatch match_device_total(const DeviceCatalog& catalog, double total_bytes, const std::string& platform) {
  // Logs print the total rounded to 0.01 GiB: within half a step (plus float slack) is the same reading.
  const double tolerance_gib = 0.006;
  std::vector<const DeviceSpec*> found;
  for (const auto& d : catalog.devices) {
    if (!d.runtime_total_bytes || (!platform.empty() && d.platform != platform)) continue;
    if (std::abs(bytes_to_gib(*d.runtime_total_bytes) - bytes_to_gib(total_bytes)) <= tolerance_gib) found.push_back(&d);
  }
  DeviceMatch m;
  if (found.empty()) return m;
  m.device = found.front();
  for (const auto& a : catalog.ambiguous_names) {
    auto it = std::find_if(found.begin(), found.end(), [&](const DeviceSpec* d) { return d->id == a.assumed; });
    if (it != found.end()) { m.device = *it; break; }
  }
  std::vector<std::string> others;
  for (const DeviceSpec* d : found) if (d != m.device) others.push_back(d->id);
  m.assumption = format("device identified by the %.2f GiB total the runtime reports: %s (%s)", bytes_to_gib(total_bytes), m.device->id.c_str(), m.device->name.c_str());
  if (!others.empty()) m.assumption += format("; %s report the same total (same memory answer, other bandwidth and compute): name the card to choose", joined(others).c_str());
  return m;
}

Expected<double> parse_memory_size(const std::string& text, const std::string& flag) {
  static const std::regex size_re(R"(^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]i?B|B)\s*$)", std::regex::icase);
  std::smatch m;
  const std::string t = trim(text);
  auto bad = [&](const std::string& why) {
    // Issue 19: cut by clip_text (a hand-cut at byte 40 split a UTF-8 character and did not say "in all").
    return make_error(ErrorKind::invalid_argument, format("%s: expected a size with its unit (24GiB, 24GB, 512MiB), found '%s'%s", flag.c_str(), one_line(text, 64).c_str(), why.c_str()), flag);
  };
  if (t.size() > 64 || !std::regex_match(t, m, size_re)) return bad("");  // no size is longer (and std::regex recurses per digit)
  const double value = std::stod(m[1]);
  const std::string unit = to_lower(m[2]);
  const bool binary = unit.size() == 3;
  double scale = 1;
  const char prefix = unit.size() > 1 ? unit[0] : 'b';
  const int power = prefix == 'k' ? 1 : prefix == 'm' ? 2 : prefix == 'g' ? 3 : prefix == 't' ? 4 : 0;
  for (int i = 0; i < power; ++i) scale *= binary ? 1024.0 : 1000.0;
  const double bytes = value * scale;
  if (!std::isfinite(bytes) || !(bytes > 0)) return bad(": the size must be positive");
  return bytes;
}

}  // namespace preflight::device
