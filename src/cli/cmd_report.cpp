#include "cli/cmd_report.hpp"

#include <fmt/format.h>

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

namespace {

// What `preflight report` takes.
struct ReportRequest {
  std::optional<std::string> html, from_db, fit_json;
  std::optional<int64_t> run;
  bool json = false;
};

std::vector<Option> report_options(ReportRequest& r) {
  return {text_flag("html", "FILE", r.html, "the report to write"),
          text_flag("from-db", "FILE", r.from_db, "the bench database (default: the one bench --save writes)"),
          int_flag("run", "ID", r.run, {1, INT64_MAX}, "a run of the sweep to report (default: the latest sweep)"),
          text_flag("fit-json", "FIT.json", r.fit_json, "`preflight fit --json` output shown alongside"), json_flag(r.json)};
}

const CommandText k_report_text{"usage: preflight report --html FILE [--from-db FILE] [--run ID] [--fit-json FIT.json] [--json]",
                                "Writes one self-contained HTML report (no network) of a stored bench sweep, with the prediction alongside.", "",
                                "exit: 0, 2 bad input (a missing database or run)"};

}  // namespace

CommandHelp report_help() {
  static ReportRequest scratch;
  return {k_report_text, report_options(scratch)};
}

int cmd_report(const std::vector<std::string>& argv) {
  ReportRequest req;
  auto positional = parse_options(argv, report_options(req));
  auto fail = [](const Error& e) { return report_error(e); };
  if (!positional) return fail(positional.error());
  if (!req.html || !positional->empty()) {
    return fail(make_error(ErrorKind::invalid_argument, command_usage("report")));
  }
  const std::string path = req.from_db.value_or(bench::default_db_path());
  if (!path_exists(path)) return fail(make_error(ErrorKind::not_found, "no benchmark database", path));
  auto store = bench::BenchStore::open(path);
  if (!store) return fail(store.error());
  auto sweep = load_sweep(*store, req.run.value_or(0));
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
    if (l.run.finished_at.empty()) d.notes.push_back(fmt::format("run {} did not finish; its statistics come from the requests stored before it stopped", l.run.id));
    if (l.prediction && l.run.info.mode == "concurrency") {
      for (const auto& c : compare_level(*l.prediction, l.run.info.concurrency, l.stats)) d.comparison.push_back({c.metric, c.concurrency, c.predicted, c.measured, c.unit});
    }
  }
  if (auto fit = req.fit_json) {
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
  const std::string out = *req.html;
  std::ofstream f(out, std::ios::binary);
  if (!(f << html)) return fail(make_error(ErrorKind::io, "cannot write the report", out));
  f.close();
  if (req.json) {
    Json j = report::envelope("report");
    j["html"] = out;
    j["bytes"] = html.size();
    j["sweep_id"] = d.sweep_id;
    j["runs"] = Json::array();
    for (const auto& l : d.levels) j["runs"].push_back(l.run_id);
    std::cout << j.dump(2) << "\n";
  } else {
    fmt::print("wrote {} ({} bytes, {} levels, sweep {})\n", out, html.size(), d.levels.size(), d.sweep_id);
  }
  return 0;
}

}  // namespace preflight::cli
