#include "cli/cmd_calibrate.hpp"

#include <cstdio>
#include <iostream>
#include <map>

#include "base/file.hpp"
#include "base/units.hpp"
#include "bench/store.hpp"
#include "cli/args.hpp"
#include "cli/bench_compare.hpp"
#include "report/render.hpp"

namespace preflight::cli {

int cmd_calibrate(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, {{"json", false}, {"db", true}});
  auto fail = [](const Error& e) {
    std::fprintf(stderr, "preflight: %s\n", e.describe().c_str());
    return 2;
  };
  if (!args) return fail(args.error());
  if (!args->positional.empty()) return fail(make_error(ErrorKind::invalid_argument, "usage: preflight calibrate [--db FILE] [--json]"));
  const std::string path = args->get("db").value_or(bench::default_db_path());
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
  if (args->has("json")) {
    Json j = report::envelope("calibrate");
    j["database"] = path;
    j["runs_used"] = used_runs;
    Json list = Json::array();
    for (const auto& f : fits) {
      list.push_back({{"engine", f.engine}, {"device", f.device}, {"pairs", f.pairs}, {"efficiency", f.efficiency},
                      {"median_abs_error_before_pct", f.median_abs_error_before_pct}, {"median_abs_error_after_pct", f.median_abs_error_after_pct}});
    }
    j["fits"] = list;
    j["method"] = "one multiplicative efficiency per (engine, device), least squares on log(measured/predicted) (times inverted)";
    std::cout << j.dump(2) << "\n";
    return fits.empty() ? 1 : 0;
  }
  if (fits.empty()) {
    std::printf("no stored runs with a prediction in %s (run preflight bench --save with --device/--spec or --prediction)\n", path.c_str());
    return 1;
  }
  std::printf("speed-model efficiency refit from %lld runs in %s\n", static_cast<long long>(used_runs), path.c_str());
  std::printf("%-20s %-16s %6s %11s %16s %15s\n", "engine", "device", "pairs", "efficiency", "median |err| now", "after refit");
  for (const auto& f : fits) {
    std::printf("%-20s %-16s %6lld %11.3f %15.1f%% %14.1f%%\n", f.engine.c_str(), f.device.c_str(), static_cast<long long>(f.pairs), f.efficiency,
                f.median_abs_error_before_pct, f.median_abs_error_after_pct);
  }
  std::printf("efficiency multiplies predicted speeds and divides predicted times; fitted by least squares in log space\n");
  return 0;
}

}  // namespace preflight::cli
