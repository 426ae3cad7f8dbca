#include "cli/cmd_calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>

#include "base/file.hpp"
#include "base/file_lock.hpp"
#include "base/json_keys.hpp"
#include "base/units.hpp"
#include "bench/store.hpp"
#include "cli/args.hpp"
#include "cli/help.hpp"
#include "cli/bench_compare.hpp"
#include "cli/common.hpp"
#include "device/device_spec.hpp"
#include "engine/speed_profile.hpp"
#include "report/render.hpp"

namespace preflight::cli {

namespace {

// Stores each fitted efficiency as the device's own speed profile in the user's overlay: the
// catalogue's bandwidth efficiency times the fitted factor (exact while decode is memory-bound).
// Entries for other devices and engines are kept; the file is replaced atomically.
Expected<std::vector<std::string>> save_calibration(const std::vector<EfficiencyFit>& fits, const std::string& db) {
  PF_TRY(speeds, engine::load_speed_catalog());
  PF_TRY(devices, device::load_device_catalog());
  const std::string overlay = engine::speed_overlay_path();
  // Issue 19: read, merged and replaced under the overlay's lock, as bw --save does: two saves at once each keep the
  // other's entries (without it the last rename won and the other's devices were lost).
  PF_TRY(lock, FileLock::acquire(overlay));
  (void)lock;
  Json root = {{"schema_version", 1}, {"profiles", Json::array()}};
  if (path_exists(overlay)) {
    PF_TRY(existing, load_owned_json_file(overlay));  // hard31: 4 MiB as load_speed_catalog reads it (was 64 MiB here)
    {
      // Refuse to rewrite a file that does not load: the user's entries are never lost.
      auto copy = speeds;
      PF_TRY(ok, engine::apply_speed_overlay(copy, existing, overlay));
      (void)ok;
    }
    root = existing;
  }
  std::vector<std::string> saved;
  for (const auto& f : fits) {
    const device::DeviceSpec* dev = devices.find(f.device);
    if (!dev) continue;
    const engine::SpeedProfile* base = speeds.find(f.engine, dev->platform);
    if (!base) continue;
    const double efficiency = std::clamp(base->bandwidth_efficiency * f.efficiency, 0.05, 1.2);
    Json entry = {{"engine", f.engine},
                  {"platform", dev->platform},
                  {"device", dev->id},
                  {"bandwidth_efficiency", efficiency},
                  {"evidence", fmt::format("preflight calibrate on {}: {} measured/predicted pairs, factor {:.3f}; median |error| {:.1f}% -> {:.1f}%", db,
                                      f.pairs, f.efficiency, f.median_abs_error_before_pct, f.median_abs_error_after_pct)}};
    auto& list = root["profiles"];
    bool replaced = false;
    for (auto& e : list) {
      if (e.value("engine", "") == f.engine && e.value("platform", "") == dev->platform && e.value("device", "") == dev->id) {
        e = entry;
        replaced = true;
      }
    }
    if (!replaced) list.push_back(entry);
    saved.push_back(fmt::format("{} on {}: bandwidth_efficiency {:.3f} -> {:.3f}", f.engine, dev->id, base->bandwidth_efficiency, efficiency));
  }
  if (!saved.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(overlay).parent_path(), ec);
    if (ec)  // issue 19: the throwing overload aborted the process when a parent was a file or could not be created
      return make_error(ErrorKind::environment, fmt::format("{}: cannot create its directory: {}", overlay, ec.message()), overlay);
    PF_TRY(ok, write_text_file_atomically(overlay, dump_json(root, 2) + "\n"));
    (void)ok;
  }
  return saved;
}

// What `preflight calibrate` takes.
struct CalibrateRequest {
  std::optional<std::string> db;
  bool save = false, json = false;
};

std::vector<Option> calibrate_options(CalibrateRequest& r) {
  return {text_flag("db", "FILE", r.db, "the bench database (default: the one bench --save writes)"),
          switch_flag("save", r.save, "write the profile to ~/.config/preflight/speed.json"), json_flag(r.json)};
}

const CommandText k_calibrate_text{
    "usage: preflight calibrate [--db FILE] [--save] [--json]",
    R"(Refits the speed model's decode efficiency per device and engine from stored bench runs and prints the error
before and after; --save writes the profile to ~/.config/preflight/speed.json, which fit, plan and bench use.)",
    "", "exit: 0, 1 when no stored run can be fitted, 2 bad input (a flag given twice included), 3 the --save overlay cannot be written"};

}  // namespace

CommandHelp calibrate_help() {
  static CalibrateRequest scratch;
  return {k_calibrate_text, calibrate_options(scratch)};
}

int cmd_calibrate(const std::vector<std::string>& argv) {
  CalibrateRequest req;
  auto positional = parse_options(argv, calibrate_options(req));
  auto fail = [](const Error& e) { return report_error(e); };
  if (!positional) return fail(positional.error());
  if (!positional->empty()) return fail(make_error(ErrorKind::invalid_argument, command_usage("calibrate")));
  const std::string path = req.db.value_or(bench::default_db_path());
  if (!path_exists(path)) return fail(make_error(ErrorKind::not_found, "no benchmark database (run preflight bench --save first)", path));
  auto store = bench::BenchStore::open(path);
  if (!store) return fail(store.error());
  auto runs = store->runs();
  if (!runs) return fail(runs.error());
  std::map<std::pair<std::string, std::string>, std::vector<ComparisonRow>> groups;
  int64_t used_runs = 0;
  for (const auto& r : *runs) {
    if (r.info.prediction.is_null() || r.info.mode != "concurrency") continue;
    auto level = load_level(*store, r);
    if (!level) return fail(level.error());
    auto rows = compare_level(*level->prediction, r.info.concurrency, level->stats);
    if (rows.empty()) continue;
    ++used_runs;
    auto& g = groups[{r.info.engine.empty() ? "unknown" : r.info.engine, r.info.device.empty() ? "unknown" : r.info.device}];
    g.insert(g.end(), rows.begin(), rows.end());
  }
  std::vector<EfficiencyFit> fits;
  for (const auto& [key, rows] : groups) fits.push_back(fit_efficiency(key.first, key.second, rows));
  std::vector<std::string> saved;
  if (req.save) {
    auto written = save_calibration(fits, path);
    if (!written) return fail(written.error());
    saved = *written;
  }
  if (req.json) {
    Json j = report::envelope("calibrate");
    j["database"] = path;
    j["runs_used"] = used_runs;
    Json list = Json::array();
    for (const auto& f : fits) {
      list.push_back({{"engine", f.engine}, {"device", f.device}, {"pairs", f.pairs}, {"efficiency", f.efficiency},
                      {"median_abs_error_before_pct", f.median_abs_error_before_pct}, {"median_abs_error_after_pct", f.median_abs_error_after_pct}});
    }
    j["fits"] = list;
    j["saved"] = saved;
    if (!saved.empty()) j["saved_to"] = engine::speed_overlay_path();
    j["method"] = "one multiplicative efficiency per (engine, device), least squares on log(measured/predicted) (times inverted)";
    print_json(j);
    return fits.empty() ? 1 : 0;
  }
  if (fits.empty()) {
    fmt::print("no stored runs with a prediction in {} (run preflight bench --save with --device/--spec or --prediction)\n", path);
    return 1;
  }
  fmt::print("speed-model efficiency refit from {} runs in {}\n", used_runs, path);
  fmt::print("{:<20} {:<16} {:>6} {:>11} {:>16} {:>15}\n", "engine", "device", "pairs", "efficiency", "median |err| now", "after refit");
  for (const auto& f : fits) {
    fmt::print("{:<20} {:<16} {:>6} {:>11.3f} {:>15.1f}% {:>14.1f}%\n", f.engine, f.device, f.pairs, f.efficiency,
                f.median_abs_error_before_pct, f.median_abs_error_after_pct);
  }
  fmt::print("efficiency multiplies predicted speeds and divides predicted times; fitted by least squares in log space\n");
  for (const auto& s : saved) fmt::print("saved to {}: {}\n", engine::speed_overlay_path(), s);
  if (!req.save) fmt::print("--save stores it in {}, where fit, plan and bench then use it\n", engine::speed_overlay_path());
  return 0;
}

}  // namespace preflight::cli
