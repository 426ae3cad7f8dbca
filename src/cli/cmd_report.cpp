#include "base/build_info.hpp"
#include "cli/cmd_report.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <sstream>

#include "base/file.hpp"
#include "base/json_keys.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "bench/store.hpp"
#include "cli/args.hpp"
#include "cli/help.hpp"
#include "cli/bench_compare.hpp"
#include "cli/cmd_bench.hpp"
#include "cli/cmd_report_compare.hpp"
#include "cli/common.hpp"
#include "report/compare_report.hpp"
#include "report/html_report.hpp"
#include "report/render.hpp"

namespace preflight::cli {

namespace {

// What `preflight report` takes.
struct ReportRequest {
  std::optional<std::string> html, from_db, fit_json;
  std::optional<int64_t> run;
  bool json = false;
  bool compare = false;
  std::optional<std::string> urls, model, concurrency, api_key_env;  // --compare --urls: bench live servers first
  std::optional<int64_t> num_prompts, input_len, output_len;
};

std::vector<Option> report_options(ReportRequest& r) {
  return {text_flag("html", "FILE", r.html, "the report to write"),
          text_flag("from-db", "FILE", r.from_db, "the bench database (default: the one bench --save writes)"),
          // ux29: bench and calibrate name the database --db; `report --db` answered "unknown flag --db; did you mean --run".
          text_flag("db", "FILE", r.from_db, "the same as --from-db, as bench --db and calibrate --db name it"),
          int_flag("run", "ID", r.run, {1, INT64_MAX}, "a run of the sweep to report (default: the latest sweep)"),
          text_flag("fit-json", "FIT.json", r.fit_json, "`preflight fit --json` output shown alongside"),
          switch_flag("compare", r.compare, "A/B: the sweeps of the runs given as arguments side by side (the first is the baseline)"),
          text_flag("urls", "URL_A,URL_B", r.urls, "with --compare: bench these live servers first, with the same prompts, into the database"),
          text_flag("model", "NAME[,NAME]", r.model, "with --urls: the served model name (one, or one per URL)"),
          text_flag("concurrency", "1,4,16", r.concurrency, "with --urls: bench's closed-loop levels"),
          text_flag("api-key-env", "VAR", r.api_key_env, "with --urls: the environment variable holding the servers' API key"),
          int_flag("num-prompts", "N", r.num_prompts, {1, 1000000}, "with --urls: requests per level"),
          int_flag("input-len", "I", r.input_len, {1, 1 << 20}, "with --urls: synthetic prompt tokens"),
          int_flag("output-len", "O", r.output_len, {1, 1 << 20}, "with --urls: tokens to generate"), json_flag(r.json)};
}

const CommandText k_report_text{"usage: preflight report --html FILE [--from-db FILE] [--run ID] [--fit-json FIT.json] [--json]\n"
                                "       preflight report --json [--from-db FILE] [--run ID]\n"
                                "       preflight report --compare RUN_A RUN_B [RUN ...] [--html FILE] [--from-db FILE] [--json]\n"
                                "       preflight report --compare --urls URL_A,URL_B --model NAME [--concurrency 1,4] [--num-prompts N] [--api-key-env VAR]\n"
                                "                        [--html FILE]",
                                "Writes one self-contained HTML report (no network) of a stored bench sweep, with the prediction alongside; --json "
                                "without --html prints the stored sweep instead (its levels' statistics and predicted-vs-measured rows, as bench --json "
                                "gives them). With --compare: "
                                "the stored sweeps of two or more runs side by side by concurrency (TTFT / TPOT / ITL p50 and p90, throughput, goodput), "
                                "each against the first with a bootstrap 95% interval, each arm's prediction beside its measurement; a text table (or JSON) "
                                "and, with --html, one page with charts.", "",
                                "exit: 0, 2 bad input (a missing database or run, a FIFO or directory named by --html, a flag given twice), 3 a --urls server that stored\n"
                                "      no run, or an --html file that cannot be written"};

}  // namespace

CommandHelp report_help() {
  static ReportRequest scratch;
  return {k_report_text, report_options(scratch)};
}

namespace {

Expected<std::vector<int64_t>> run_ids(const std::vector<std::string>& args) {
  std::vector<int64_t> ids;
  for (const auto& a : args) {
    char* end = nullptr;
    const long long id = std::strtoll(a.c_str(), &end, 10);
    if (a.empty() || !end || *end || id < 1) return make_error(ErrorKind::invalid_argument, "report --compare: expected run ids (positive integers), found \"" + a + "\"");
    ids.push_back(id);
  }
  if (ids.size() < 2 || ids.size() > 8) {
    return make_error(ErrorKind::invalid_argument, fmt::format("report --compare: expected 2 to 8 run ids, found {}", ids.size()));
  }
  return ids;
}

// --urls: `preflight bench` against each server with the same seed (so the same synthetic prompts),
// saved to `db`; the first run id of each sweep. Bench's own JSON is read from its stdout.
Expected<std::vector<int64_t>> bench_urls(const ReportRequest& req, const std::string& db) {
  const auto urls = split(*req.urls, ',');
  const auto models = req.model ? split(*req.model, ',') : std::vector<std::string>{};
  if (urls.size() < 2 || urls.size() > 8) return make_error(ErrorKind::invalid_argument, fmt::format("--urls: expected 2 to 8 URLs, found {}", urls.size()));
  if (models.size() != 1 && models.size() != urls.size()) {
    return make_error(ErrorKind::invalid_argument, fmt::format("--model: expected one name or one per URL ({}), found {}", urls.size(), models.size()));
  }
  // A missing or unsafe key is bad input (exit 2) before any server is benched, as in bench.
  if (req.api_key_env) {
    if (auto key = api_key_from_env(*req.api_key_env); !key) return key.error();
  }
  std::vector<int64_t> ids;
  for (size_t i = 0; i < urls.size(); ++i) {
    std::vector<std::string> argv = {"--url", trim(urls[i]), "--model", trim(models[models.size() == 1 ? 0 : i]), "--seed", "1", "--db", db, "--json"};
    if (req.concurrency) argv.insert(argv.end(), {"--concurrency", *req.concurrency});
    if (req.num_prompts) argv.insert(argv.end(), {"--num-prompts", std::to_string(*req.num_prompts)});
    if (req.input_len) argv.insert(argv.end(), {"--input-len", std::to_string(*req.input_len)});
    if (req.output_len) argv.insert(argv.end(), {"--output-len", std::to_string(*req.output_len)});
    if (req.api_key_env) argv.insert(argv.end(), {"--api-key-env", *req.api_key_env});  // the name: bench reads the key
    std::ostringstream captured;
    std::streambuf* const out = std::cout.rdbuf(captured.rdbuf());
    const int rc = cmd_bench(argv);
    std::cout.rdbuf(out);
    Json j;
    try {
      j = Json::parse(captured.str());
    } catch (const std::exception&) {
      return make_error(ErrorKind::network, fmt::format("report --compare: bench of {} ended with exit {} and no result", redact_url_credentials(trim(urls[i])), rc));
    }
    if (!j.contains("levels") || j["levels"].empty() || !j["levels"][0]["run_id"].is_number_integer()) {
      return make_error(ErrorKind::network, fmt::format("report --compare: bench of {} stored no run (exit {})", redact_url_credentials(trim(urls[i])), rc));
    }
    ids.push_back(j["levels"][0]["run_id"].get<int64_t>());
  }
  return ids;
}

// Issue 16 (--json on every command): `report --json` without --html, the stored sweep as bench --json gives its levels.
int print_sweep_json(const report::HtmlReportData& d, const std::vector<StoredLevel>& sweep) {
  Json j = report::envelope("report");
  j["sweep_id"] = d.sweep_id;
  j["url"] = d.url;
  j["model"] = d.model;
  j["started_at"] = d.started_at;
  j["build"] = d.build;
  Json levels = Json::array();
  for (const auto& l : sweep) {
    const bool rate = l.run.info.mode != "concurrency";
    const Json cmp = comparison_rows_to_json(l.prediction && !rate ? compare_level(*l.prediction, l.run.info.concurrency, l.stats) : std::vector<ComparisonRow>{});
    levels.push_back({{"run_id", l.run.id}, {"concurrency", rate ? Json() : Json(l.run.info.concurrency)}, {"request_rate", rate ? Json(l.run.info.request_rate) : Json()},
                      {"finished", !l.run.finished_at.empty()}, {"stats", bench::run_stats_to_json(l.stats)}, {"comparison", cmp},
                      {"prediction", l.prediction ? prediction_to_json(*l.prediction) : Json()}});
  }
  j["levels"] = levels;
  j["notes"] = d.notes;
  print_json(j);
  return 0;
}

int cmd_report_ab(const ReportRequest& req, const std::vector<std::string>& positional) {
  auto fail = [](const Error& e) { return report_error(e); };
  const std::string path = req.from_db.value_or(bench::default_db_path());
  if (req.urls && !positional.empty()) return fail(make_error(ErrorKind::invalid_argument, "report --compare: run ids or --urls, not both"));
  if (req.urls && !req.model) return fail(make_error(ErrorKind::invalid_argument, "report --compare --urls: --model names the served model"));
  auto ids = req.urls ? bench_urls(req, path) : run_ids(positional);
  if (!ids) return fail(ids.error());
  if (!path_exists(path)) return fail(make_error(ErrorKind::not_found, "no benchmark database", path));
  auto store = bench::BenchStore::open(path);
  if (!store) return fail(store.error());
  std::vector<AbArmInput> arms;
  int64_t skipped = 0;
  for (size_t i = 0; i < ids->size(); ++i) {
    auto arm = load_ab_arm(*store, (*ids)[i], std::string(1, static_cast<char>('A' + i)), skipped);
    if (!arm) return fail(arm.error());
    arms.push_back(std::move(*arm));
  }
  report::AbReport r = build_ab_report(arms);
  r.title = "preflight A/B: " + arms.front().arm.model;
  r.build = std::string("report by preflight ") + PREFLIGHT_VERSION + " (" + build_commit() + ")";
  if (skipped > 0) r.notes.push_back(fmt::format("{} request-rate level(s) left out: only fixed-concurrency levels are matched", skipped));
  if (req.html) {
    if (auto w = write_text_file_atomically(*req.html, report::render_compare_html(r)); !w) return fail(w.error());
  }
  if (req.json) {
    Json j = report::compare_to_json(r);
    j["html"] = req.html ? Json(*req.html) : Json();
    print_json(j);
  } else {
    std::cout << report::render_compare_text(r);
    if (req.html) fmt::print("wrote {}\n", *req.html);
  }
  return 0;
}

}  // namespace

int cmd_report(const std::vector<std::string>& argv) {
  ReportRequest req;
  auto positional = parse_options(argv, report_options(req));
  auto fail = [](const Error& e) { return report_error(e); };
  if (!positional) return fail(positional.error());
  if (!req.compare && (req.urls || req.model || req.concurrency || req.num_prompts || req.input_len || req.output_len || req.api_key_env)) {
    return fail(make_error(ErrorKind::invalid_argument,
                           "report: --urls, --model, --concurrency, --num-prompts, --input-len, --output-len and --api-key-env go with --compare"));
  }
  if (req.compare) {
    if (req.run || req.fit_json) return fail(make_error(ErrorKind::invalid_argument, "report --compare takes run ids as arguments, not --run or --fit-json"));
    return cmd_report_ab(req, *positional);
  }
  if ((!req.html && !req.json) || !positional->empty()) {
    return fail(make_error(ErrorKind::invalid_argument, command_usage("report")));
  }
  if (!req.html && req.fit_json) return fail(make_error(ErrorKind::invalid_argument, "report: --fit-json is drawn in the --html page; give --html FILE"));
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
  d.build = first.info.build + "; report by preflight " + PREFLIGHT_VERSION + " (" + build_commit() + ")";
  for (const auto& l : *sweep) {
    d.levels.push_back({l.run.id, l.run.info.mode == "concurrency" ? l.run.info.concurrency : 0, l.run.info.request_rate, l.run.finished_at.empty(), l.stats});
    if (l.run.finished_at.empty()) d.notes.push_back(fmt::format("run {} did not finish; its statistics come from the requests stored before it stopped", l.run.id));
    if (l.prediction && l.run.info.mode == "concurrency") {
      for (const auto& c : compare_level(*l.prediction, l.run.info.concurrency, l.stats)) {
        d.comparison.push_back({c.metric, c.concurrency, c.predicted, c.measured, c.unit});
        if (c.band) d.comparison.back().predicted_low = c.band->low, d.comparison.back().predicted_high = c.band->high;  // shaded by the chart
      }
    }
  }
  if (!req.html) return print_sweep_json(d, *sweep);  // issue 16: a script reads the stored sweep without an HTML file
  if (auto fit = req.fit_json) {
    // Issue 19 (hard31): fit --json's output, which writes each key once: a repeated key is a hand edit, refused.
    auto j = load_owned_json_file(*fit);
    if (!j) return fail(j.error());
    // Issue 19 (hard30): the file is the user's; nlohmann's operator[] and value() throw on a document of another shape
    // ('[1]', a number for "device"), which ended the report with std::terminate (exit 134).
    const Json* m = j->is_object() && j->contains("memory_per_device") ? &j->at("memory_per_device") : nullptr;
    if (!m || !m->is_object() || !m->contains("terms") || !m->at("terms").is_array()) {
      return fail(make_error(ErrorKind::corrupt, "expected the output of preflight fit --json (memory_per_device.terms)", *fit));
    }
    const auto text_of = [&](const char* key, const std::string& fallback) -> Expected<std::string> {
      if (!j->contains(key)) return fallback;
      if (!j->at(key).is_string()) return make_error(ErrorKind::corrupt, fmt::format("{}: expected a string, found {}", key, json_type_name(j->at(key))), *fit);
      return j->at(key).get<std::string>();
    };
    auto device = text_of("device", "device");
    if (!device) return fail(device.error());
    auto model = text_of("model", "");
    if (!model) return fail(model.error());
    d.memory_device = *device + " (" + *model + ")";
    if (m->contains("total_gib") && !m->at("total_gib").is_number()) {
      return fail(make_error(ErrorKind::corrupt, fmt::format("memory_per_device.total_gib: expected a number, found {}", json_type_name(m->at("total_gib"))), *fit));
    }
    d.memory_total_gib = m->contains("total_gib") ? m->at("total_gib").get<double>() : 0.0;
    for (const auto& t : m->at("terms")) {
      if (t.is_object() && t.contains("name") && t["name"].is_string() && t.contains("gib") && t["gib"].is_number()) d.memory.push_back({t["name"], t["gib"]});
    }
  }
  const std::string html = report::render_bench_html(d);
  const std::string out = *req.html;
  if (auto w = write_text_file_atomically(out, html); !w) return fail(w.error());  // issue 19: never through a FIFO, never half-written
  if (req.json) {
    Json j = report::envelope("report");
    j["html"] = out;
    j["bytes"] = html.size();
    j["sweep_id"] = d.sweep_id;
    j["runs"] = Json::array();
    for (const auto& l : d.levels) j["runs"].push_back(l.run_id);
    print_json(j);
  } else {
    fmt::print("wrote {} ({} bytes, {} levels, sweep {})\n", out, html.size(), d.levels.size(), d.sweep_id);
  }
  return 0;
}

}  // namespace preflight::cli
