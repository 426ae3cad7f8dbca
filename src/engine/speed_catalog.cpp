// Loader for data/engines/speed.json: every record validated (unknown keys, missing evidence,
// impossible values are errors naming the file and record).
#include "base/case_fold.hpp"
#include "base/embedded.hpp"
#include "base/file.hpp"
#include "base/json_keys.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/speed_profile.hpp"

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <unordered_map>

namespace preflight::engine {

namespace {

Status check_range(double value, double lo, double hi, const std::string& origin, const std::string& what) {
  if (!(value >= lo && value <= hi))
    return make_error(ErrorKind::corrupt, format("%s: %s = %g is outside [%g, %g]", origin.c_str(), what.c_str(), value, lo, hi), origin);
  return Ok{};
}

// "bandwidth_priors": [{"device", "peak_bytes_per_s", "low_bytes_per_s", "high_bytes_per_s", "source"}]:
// low <= peak <= high, every figure in [1 GB/s, 100 TB/s], one record per device.
Status parse_bandwidth_priors(const JsonObject& top, SpeedCatalog& cat, const std::string& origin) {
  const Json* priors = top.find("bandwidth_priors");
  if (!priors) return Ok{};
  if (!priors->is_array()) return make_error(ErrorKind::corrupt, origin + ": bandwidth_priors: expected an array", origin);
  for (const auto& item : *priors) {
    JsonObject pre(item, origin, "bandwidth_priors[]");
    PF_TRY(device, pre.string("device"));
    const std::string where = origin + ": bandwidth_priors[" + device + "]";
    JsonObject r(item, origin, "bandwidth_priors[" + device + "]");
    PF_TRY(keys, r.only_keys({"device", "peak_bytes_per_s", "low_bytes_per_s", "high_bytes_per_s", "source"}));
    (void)keys;
    BandwidthPrior b;
    b.device = device;
    PF_TRY(peak, r.number("peak_bytes_per_s"));
    PF_TRY(low, r.number("low_bytes_per_s"));
    PF_TRY(high, r.number("high_bytes_per_s"));
    PF_TRY(source, r.string("source"));
    for (const auto& [v, what] : std::vector<std::pair<double, std::string>>{{peak, "peak_bytes_per_s"}, {low, "low_bytes_per_s"}, {high, "high_bytes_per_s"}}) {
      PF_TRY(ok, check_range(v, 1e9, 1e14, where, what));
      (void)ok;
    }
    if (!(low <= peak && peak <= high))
      return make_error(ErrorKind::corrupt, format("%s: expected low_bytes_per_s <= peak_bytes_per_s <= high_bytes_per_s, found %g, %g, %g", where.c_str(), low, peak, high), origin);
    if (source.empty()) return make_error(ErrorKind::corrupt, where + ": source is empty", origin);
    if (cat.find_bandwidth_prior(device)) return make_error(ErrorKind::corrupt, where + ": duplicate bandwidth prior", origin);
    b.peak_bytes_per_s = peak;
    b.low_bytes_per_s = low;
    b.high_bytes_per_s = high;
    b.source = source;
    cat.bandwidth_priors.push_back(b);
  }
  return Ok{};
}

// "link_priors": [{"family", "name", "bandwidth_bytes_per_s", "source"}]: one record per family, bandwidth in
// [100 MB/s, 10 TB/s].
Status parse_link_priors(const JsonObject& top, SpeedCatalog& cat, const std::string& origin) {
  const Json* links = top.find("link_priors");
  if (!links) return Ok{};
  if (!links->is_array()) return make_error(ErrorKind::corrupt, origin + ": link_priors: expected an array", origin);
  for (const auto& item : *links) {
    JsonObject pre(item, origin, "link_priors[]");
    PF_TRY(family, pre.string("family"));
    const std::string where = origin + ": link_priors[" + family + "]";
    JsonObject r(item, origin, "link_priors[" + family + "]");
    PF_TRY(keys, r.only_keys({"family", "name", "bandwidth_bytes_per_s", "source"}));
    (void)keys;
    PF_TRY(name, r.string("name"));
    PF_TRY(bw, r.number("bandwidth_bytes_per_s"));
    PF_TRY(source, r.string("source"));
    PF_TRY(ok, check_range(bw, 1e8, 1e13, where, "bandwidth_bytes_per_s"));
    (void)ok;
    if (source.empty() || name.empty()) return make_error(ErrorKind::corrupt, where + ": name and source must not be empty", origin);
    if (cat.find_link_prior(family)) return make_error(ErrorKind::corrupt, where + ": duplicate link prior", origin);
    cat.link_priors.push_back({family, name, bw, source});
  }
  return Ok{};
}

}  // namespace

const SpeedProfile* SpeedCatalog::find(const std::string& engine, const std::string& platform, const std::string& device) const {
  if (!device.empty())
    for (const auto& p : profiles) if (p.engine == engine && p.platform == platform && to_lower(p.device) == to_lower(device)) return &p;
  for (const auto& p : profiles) if (p.engine == engine && p.platform == platform && p.device.empty()) return &p;
  for (const auto& p : profiles) if (p.engine == engine && p.platform == "cuda" && p.device.empty()) return &p;
  return nullptr;
}

const BandwidthPrior* SpeedCatalog::find_bandwidth_prior(const std::string& device) const {
  for (const auto& p : bandwidth_priors) if (equal_lowered(p.device, device)) return &p;
  return nullptr;
}

const LinkPrior* SpeedCatalog::find_link_prior(const std::string& family) const {
  for (const auto& p : link_priors) if (equal_lowered(p.family, family)) return &p;
  return nullptr;
}

const GgufPreset* SpeedCatalog::find_preset(const std::string& name) const {
  const std::string n = to_lower(name);
  for (const auto& p : gguf_presets) if (to_lower(p.name) == n) return &p;
  return nullptr;
}

Expected<SpeedCatalog> parse_speed_catalog(const Json& root, const std::string& origin) {
  SpeedCatalog cat;
  cat.origin = origin;
  JsonObject top(root, origin);
  PF_TRY(keys, top.only_keys({"schema_version", "note", "copy_fraction_of_peak", "cross_node", "profiles", "gguf_presets", "bandwidth_priors", "link_priors"}));
  (void)keys;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;

  const Json* copy = top.find("copy_fraction_of_peak");
  if (!copy) return make_error(ErrorKind::corrupt, origin + ": copy_fraction_of_peak missing", origin);
  JsonObject c(*copy, origin, "copy_fraction_of_peak");
  PF_TRY(cf, c.number("value"));
  PF_TRY(cfe, c.string("evidence"));
  PF_TRY(cf_ok, check_range(cf, 0.3, 1.0, origin, "copy_fraction_of_peak.value"));
  (void)cf_ok;
  cat.copy_fraction_of_peak = cf;
  cat.copy_fraction_evidence = cfe;

  const Json* cross = top.find("cross_node");
  if (!cross) return make_error(ErrorKind::corrupt, origin + ": cross_node missing", origin);
  JsonObject x(*cross, origin, "cross_node");
  PF_TRY(xb, x.number("bandwidth_bytes_per_s"));
  PF_TRY(xl, x.number("latency_s"));
  PF_TRY(xs, x.string("source"));
  PF_TRY(xb_ok, check_range(xb, 1e8, 1e13, origin, "cross_node.bandwidth_bytes_per_s"));
  (void)xb_ok;
  cat.cross_node_bandwidth_bytes_per_s = xb;
  cat.cross_node_latency_s = xl;
  cat.cross_node_source = xs;

  PF_TRY(list, top.array("profiles"));
  for (const auto& item : *list) {
    JsonObject pre(item, origin, "profiles[]");
    PF_TRY(engine, pre.string("engine"));
    PF_TRY(platform, pre.string("platform"));
    const std::string id = engine + "/" + platform;
    JsonObject r(item, origin, "profiles[" + id + "]");
    PF_TRY(pk, r.only_keys({"engine", "platform", "bandwidth_efficiency", "step_overhead_s", "eager_op_dispatch_s", "always_eager", "ops_per_layer",
                            "sequence_overhead_s", "moe_layer_overhead_s", "allreduce_latency_s", "prefill_compute_efficiency", "band_fraction", "evidence",
                            "graph_default_since", "graph_default_source", "pcie_allreduce_latency_s", "pcie_allreduce_source"}));
    (void)pk;
    if (cat.find(engine, platform) && cat.find(engine, platform)->platform == platform)
      return make_error(ErrorKind::corrupt, format("%s: duplicate speed profile %s", origin.c_str(), id.c_str()), origin);
    SpeedProfile p;
    p.engine = engine;
    p.platform = platform;
    p.origin = origin;
    PF_TRY(be, r.number("bandwidth_efficiency"));
    PF_TRY(so, r.number("step_overhead_s"));
    PF_TRY(ed, r.number("eager_op_dispatch_s"));
    PF_TRY(ae, r.opt_bool("always_eager"));
    PF_TRY(sq, r.opt_number("sequence_overhead_s"));
    PF_TRY(mo, r.number("moe_layer_overhead_s"));
    PF_TRY(ar, r.number("allreduce_latency_s"));
    PF_TRY(pe, r.number("prefill_compute_efficiency"));
    PF_TRY(bf, r.number("band_fraction"));
    PF_TRY(ev, r.string("evidence"));
    PF_TRY(gds, r.opt_string("graph_default_since"));
    PF_TRY(gdsrc, r.opt_string("graph_default_source"));
    PF_TRY(pcie, r.opt_number("pcie_allreduce_latency_s"));
    PF_TRY(pcie_src, r.opt_string("pcie_allreduce_source"));
    const std::string where = origin + ": " + id;
    if (gds && !gdsrc) return make_error(ErrorKind::corrupt, where + ": graph_default_since needs graph_default_source (where the version is stated)", origin);
    if (pcie && (!pcie_src || pcie_src->empty()))
      return make_error(ErrorKind::corrupt, where + ": pcie_allreduce_latency_s needs pcie_allreduce_source (the measurement)", origin);
    for (const auto& [v, lo, hi, what] : std::vector<std::tuple<double, double, double, std::string>>{
             {be, 0.05, 1.2, "bandwidth_efficiency"}, {so, 0, 0.1, "step_overhead_s"}, {ed, 0, 0.01, "eager_op_dispatch_s"},
             {mo, 0, 0.01, "moe_layer_overhead_s"}, {sq.value_or(0), 0, 0.01, "sequence_overhead_s"}, {ar, 0, 0.01, "allreduce_latency_s"}, {pe, 0.01, 1.0, "prefill_compute_efficiency"},
             {bf, 0, 1.0, "band_fraction"}, {pcie.value_or(0), 0, 0.01, "pcie_allreduce_latency_s"}}) {
      PF_TRY(ok, check_range(v, lo, hi, where, what));
      (void)ok;
    }
    p.bandwidth_efficiency = be;
    p.step_overhead_s = so;
    p.sequence_overhead_s = sq.value_or(0);
    p.eager_op_dispatch_s = ed;
    p.always_eager = ae.value_or(false);
    p.moe_layer_overhead_s = mo;
    p.allreduce_latency_s = ar;
    p.prefill_compute_efficiency = pe;
    p.band_fraction = bf;
    p.evidence = ev;
    p.graph_default_since = gds.value_or("");
    p.graph_default_source = gdsrc.value_or("");
    p.pcie_allreduce_latency_s = pcie.value_or(0);
    p.pcie_allreduce_source = pcie_src.value_or("");
    const Json* ops = r.find("ops_per_layer");
    if (!ops || !ops->is_object()) return make_error(ErrorKind::corrupt, where + ": ops_per_layer: expected an object", origin);
    for (const auto& [kind, value] : ops->items()) {
      if (!value.is_number() || value.get<double>() < 0 || value.get<double>() > 10000)
        return make_error(ErrorKind::corrupt, where + ": ops_per_layer." + kind + ": expected a count in [0, 10000]", origin);
      p.ops_per_layer[kind] = value.get<double>();
    }
    cat.profiles.push_back(std::move(p));
  }
  PF_TRY(priors_ok, parse_bandwidth_priors(top, cat, origin));
  (void)priors_ok;
  PF_TRY(links_ok, parse_link_priors(top, cat, origin));
  (void)links_ok;
  if (const Json* presets = top.find("gguf_presets"); presets && presets->is_array()) {
    for (const auto& item : *presets) {
      JsonObject r(item, origin, "gguf_presets[]");
      PF_TRY(pk, r.only_keys({"name", "bits_per_weight", "source"}));
      (void)pk;
      GgufPreset g;
      PF_TRY(name, r.string("name"));
      PF_TRY(bits, r.number("bits_per_weight"));
      PF_TRY(source, r.string("source"));
      PF_TRY(ok, check_range(bits, 1.0, 32.0, origin + ": gguf_presets[" + name + "]", "bits_per_weight"));
      (void)ok;
      g.name = name;
      g.bits_per_weight = bits;
      g.source = source;
      cat.gguf_presets.push_back(g);
    }
  }
  return cat;
}

Status apply_speed_overlay(SpeedCatalog& catalog, const Json& root, const std::string& origin) {
  JsonObject top(root, origin);
  PF_TRY(tk, top.only_keys({"schema_version", "note", "profiles"}));
  (void)tk;
  PF_TRY(schema_ok, top.schema_v1());
  (void)schema_ok;
  PF_TRY(list, top.array("profiles"));
  // Issue 19 (hard30): each record was matched against every profile before it (lowercasing both device names each
  // time): a 2 MB overlay of 20,000 device profiles took 45 s. One index, keyed as `same` compares, kept as records add.
  const auto key_of = [](const SpeedProfile& q) { return q.engine + '\n' + q.platform + '\n' + to_lower(q.device); };
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < catalog.profiles.size(); ++i) index.emplace(key_of(catalog.profiles[i]), i);
  for (const auto& item : *list) {
    JsonObject r(item, origin, "profiles[]");
    PF_TRY(keys, r.only_keys({"engine", "platform", "device", "bandwidth_efficiency", "step_overhead_s", "eager_op_dispatch_s", "moe_layer_overhead_s",
                              "sequence_overhead_s", "allreduce_latency_s", "prefill_compute_efficiency", "band_fraction", "evidence"}));
    (void)keys;
    PF_TRY(engine, r.string("engine"));
    PF_TRY(platform, r.string("platform"));
    PF_TRY(device, r.opt_string("device"));
    PF_TRY(evidence, r.string("evidence"));
    const std::string where = origin + ": " + engine + "/" + platform + (device ? "/" + *device : "");
    if (evidence.empty()) return make_error(ErrorKind::corrupt, where + ": evidence is empty", origin);
    const SpeedProfile* base = catalog.find(engine, platform);
    // corrupt, not not_found: the record is the overlay's fault, and fit leaves the speed out on not_found (no profile
    // for a deployment's engine), which hid this error (issue 19).
    if (!base || base->platform != platform) return make_error(ErrorKind::corrupt, where + ": no catalogue profile for this engine and platform", origin);
    SpeedProfile p = *base;
    p.device = device.value_or("");
    p.origin = origin;
    p.evidence = evidence;
    const std::vector<std::tuple<const char*, double*, double, double>> fields = {
        {"bandwidth_efficiency", &p.bandwidth_efficiency, 0.05, 1.2}, {"step_overhead_s", &p.step_overhead_s, 0, 0.1},
        {"eager_op_dispatch_s", &p.eager_op_dispatch_s, 0, 0.01},     {"moe_layer_overhead_s", &p.moe_layer_overhead_s, 0, 0.01},
        {"sequence_overhead_s", &p.sequence_overhead_s, 0, 0.01},
        {"allreduce_latency_s", &p.allreduce_latency_s, 0, 0.01},     {"prefill_compute_efficiency", &p.prefill_compute_efficiency, 0.01, 1.0},
        {"band_fraction", &p.band_fraction, 0, 1.0}};
    for (const auto& [key, target, lo, hi] : fields) {
      PF_TRY(v, r.opt_number(key));
      if (!v) continue;
      PF_TRY(ok, check_range(*v, lo, hi, where, key));
      (void)ok;
      *target = *v;
    }
    const auto [at, added] = index.emplace(key_of(p), catalog.profiles.size());
    if (added) catalog.profiles.push_back(std::move(p));
    else catalog.profiles[at->second] = std::move(p);
  }
  return Ok{};
}

std::string speed_overlay_path() {
  if (const char* p = std::getenv("PREFLIGHT_SPEED_OVERRIDES"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/preflight/speed.json";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.config/preflight/speed.json";
}

Expected<SpeedCatalog> load_speed_catalog() {
  PF_TRY(json, parse_json(std::string(embedded_data("engines/speed.json")), "data/engines/speed.json"));
  PF_TRY(catalog, parse_speed_catalog(json, "data/engines/speed.json"));
  const std::string overlay = speed_overlay_path();
  if (path_exists(overlay)) {
    // Issue 19 (hard30): read up to 4 MiB, as the devices overlay (base/json_keys load_owned_json_file): a 40 MB overlay was
    // read whole and parsed to a tree of about 18 times its size; a repeated key is not the last one silently.
    // calibrate --save writes a few hundred bytes a profile.
    PF_TRY(overlay_json, load_owned_json_file(overlay));
    PF_TRY(ok, apply_speed_overlay(catalog, overlay_json, overlay));
    (void)ok;
  }
  return catalog;
}

}  // namespace preflight::engine
