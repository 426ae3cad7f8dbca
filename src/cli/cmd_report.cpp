#include "cli/cmd_report.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "base/file.hpp"
#include "base/units.hpp"
#include "bench/store.hpp"
#include "cli/args.hpp"
#include "cli/help.hpp"
#include "cli/bench_compare.hpp"
#include "cli/common.hpp"
#include "report/html_report.hpp"
#include "report/render.hpp"

namespace preflight::cli {

int cmd_report(const std::vector<std::string>& argv) {
  auto args = parse_args(argv, command_flags("report"));
  auto fail = [](const Error& e) { return report_error(e); };
  if (!args) return fail(args.error());
  if (!args->has("html") || !args->positional.empty()) {
    return fail(make_error(ErrorKind::invalid_argument, command_usage("report")));
  }
  const std::string path = args->get("from-db").value_or(bench::default_db_path());
  if (!path_exists(path)) return fail(make_error(ErrorKind::not_found, "no benchmark database", path));
  auto run_id = args->get_int("run");
  if (!run_id) return fail(run_id.error());
  auto store = bench::BenchStore::open(path);
  if (!store) return fail(store.error());
  auto sweep = load_sweep(*store, run_id->value_or(0));
  if (!sweep) return fail(sweep.error());
  report::HtmlReportData d;
  const auto& first = sweep->front().run;
  d.title = "preflight bench: " + first.info.model;
  d.url = first.info.url;
  d.model = first.info.model;
  d.sweep_id = first.info.sweep_id;
  d.started_at = first.info.started_at;
  d.build = first.info.build + "; report by preflight " + PREFLIGHT_VERSION + " (" + PREFLIGHT_COMMIT + ")";
  for (const auto& l : *sweep) {
    d.levels.push_back({l.run.id, l.run.info.mode == "concurrency" ? l.run.info.concurrency : 0, l.run.info.request_rate, l.run.finished_at.empty(), l.stats});
    if (l.run.finished_at.empty()) d.notes.push_back(format("run %lld did not finish; its statistics come from the requests stored before it stopped", static_cast<long long>(l.run.id)));
    if (l.prediction && l.run.info.mode == "concurrency") {
      for (const auto& c : compare_level(*l.prediction, l.run.info.concurrency, l.stats)) d.comparison.push_back({c.metric, c.concurrency, c.predicted, c.measured, c.unit});
    }
  }
  if (auto fit = args->get("fit-json")) {
    auto j = load_json_file(*fit);
    if (!j) return fail(j.error());
    const Json& m = (*j)["memory_per_device"];
    if (!m.is_object() || !m.contains("terms") || !m["terms"].is_array()) {
      return fail(make_error(ErrorKind::corrupt, "expected the output of preflight fit --json (memory_per_device.terms)", *fit));
    }
    d.memory_device = j->value("device", std::string("device")) + " (" + j->value("model", std::string("")) + ")";
    d.memory_total_gib = m.value("total_gib", 0.0);
    for (const auto& t : m["terms"]) {
      if (t.is_object() && t.contains("name") && t["name"].is_string() && t.contains("gib") && t["gib"].is_number()) d.memory.push_back({t["name"], t["gib"]});
    }
  }
  const std::string html = report::render_bench_html(d);
  const std::string out = *args->get("html");
  std::ofstream f(out, std::ios::binary);
  if (!(f << html)) return fail(make_error(ErrorKind::io, "cannot write the report", out));
  f.close();
  if (args->has("json")) {
    Json j = report::envelope("report");
    j["html"] = out;
    j["bytes"] = html.size();
    j["sweep_id"] = d.sweep_id;
    j["runs"] = Json::array();
    for (const auto& l : d.levels) j["runs"].push_back(l.run_id);
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("wrote %s (%zu bytes, %zu levels, sweep %s)\n", out.c_str(), html.size(), d.levels.size(), d.sweep_id.c_str());
  }
  return 0;
}

}  // namespace preflight::cli
