#include "report/compare_report.hpp"

#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"
#include "report/render.hpp"
#include "report/svg_chart.hpp"

namespace preflight::report {

namespace {

std::string signed_number(double v) { return (v >= 0 ? "+" : "") + chart_number(v); }

std::string cell_text(const AbCell& c) {
  if (!c.present) return "-";
  std::string s = chart_number(c.p50);
  if (c.p90) s += " / " + chart_number(*c.p90);
  if (c.predicted) s += " (pred " + chart_number(*c.predicted) + ")";
  return s;
}

std::string delta_text(const AbCell& c) {
  if (!c.present || !c.delta) return "-";
  const AbDelta& d = *c.delta;
  std::string s = signed_number(d.diff) + format(" (%+.1f%%)", d.pct);
  if (d.ci_low && d.ci_high) s += " [" + signed_number(*d.ci_low) + ", " + signed_number(*d.ci_high) + "]";
  if (d.diff_p90) s += " p90 " + signed_number(*d.diff_p90);
  return s;
}

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

Json optional_number(const std::optional<double>& v) { return v ? Json(*v) : Json(); }

Json cell_json(const AbCell& c) {
  if (!c.present) return Json();
  Json j = {{"p50", c.p50}, {"p90", optional_number(c.p90)}, {"count", c.count}, {"predicted", optional_number(c.predicted)}};
  if (c.delta) {
    j["delta"] = {{"diff", c.delta->diff}, {"pct", c.delta->pct}, {"diff_p90", optional_number(c.delta->diff_p90)},
                  {"ci95_low", optional_number(c.delta->ci_low)}, {"ci95_high", optional_number(c.delta->ci_high)}};
  }
  return j;
}

// One chart per metric: a series per arm named by its letter (its p50, or its value), its p90 dashed
// in the same colour, its prediction dotted when it has one.
std::string metric_chart(const AbReport& r, const std::string& metric, const std::string& id, const std::string& title, const std::string& unit) {
  LineChart chart{id, title, unit};
  for (int64_t c : r.concurrencies) chart.x_labels.push_back(std::to_string(c));
  bool any = false;
  for (size_t a = 0; a < r.arms.size(); ++a) {
    const std::string& letter = r.arms[a].letter;
    Series p50{letter, {}, false, static_cast<int>(a)}, p90{letter + " p90", {}, true, static_cast<int>(a)};
    Series pred{letter + " predicted", {}, false, static_cast<int>(a), true};
    bool has_p90 = false, has_pred = false;
    for (int64_t c : r.concurrencies) {
      double v50 = std::nan(""), v90 = std::nan(""), vp = std::nan("");
      for (const auto& row : r.rows) {
        if (row.concurrency != c || row.metric != metric || a >= row.cells.size() || !row.cells[a].present) continue;
        const AbCell& cell = row.cells[a];
        v50 = cell.p50;
        if (cell.p90) v90 = *cell.p90, has_p90 = true;
        if (cell.predicted) vp = *cell.predicted, has_pred = true;
        any = true;
      }
      p50.values.push_back(v50);
      p90.values.push_back(v90);
      pred.values.push_back(vp);
    }
    chart.series.push_back(p50);
    if (has_p90) chart.series.push_back(p90);
    if (has_pred) chart.series.push_back(pred);
  }
  return any ? render_line_chart(chart) : "";
}

}  // namespace

std::string render_compare_text(const AbReport& r) {
  // Issue 19 (hard30): the arms' texts are the database's (report --db names any file): an escape sequence in a stored
  // model name retitled the terminal or cleared it.
  const auto shown = [](const std::string& text) { return strip_terminal_controls(text); };
  std::string o = shown(r.title) + "\n";
  for (size_t a = 0; a < r.arms.size(); ++a) {
    const AbArm& arm = r.arms[a];
    o += shown(format("  %s: %s, model %s, sweep %s%s", arm.label.c_str(), redact_url_credentials(arm.url).c_str(), arm.model.c_str(), arm.sweep_id.c_str(),
                      arm.prediction_source.empty() ? "" : (", prediction: " + arm.prediction_source).c_str())) +
         "\n";
  }
  o += "p50 / p90 per arm; differences are arm - " + (r.arms.empty() ? std::string("A") : r.arms.front().letter) +
       " of the p50 with the bootstrap 95% interval in brackets and the p90 difference\n";
  std::string head = pad("conc", 6) + pad("metric", 19) + pad("unit", 7);
  for (const auto& arm : r.arms) head += pad(arm.letter + " p50 / p90", 30);
  for (size_t a = 1; a < r.arms.size(); ++a) head += pad(r.arms[a].letter + " - " + r.arms[0].letter, 48);
  o += trim(head) + "\n";
  for (const auto& row : r.rows) {
    std::string line = pad(std::to_string(row.concurrency), 6) + pad(row.metric, 19) + pad(row.unit, 7);
    for (const auto& c : row.cells) line += pad(cell_text(c), 30);
    for (size_t a = 1; a < row.cells.size(); ++a) line += pad(delta_text(row.cells[a]), 48);
    o += trim(line) + "\n";
  }
  for (const auto& n : r.notes) o += "note: " + n + "\n";
  return o;
}

Json compare_to_json(const AbReport& r) {
  Json j = envelope("report");
  j["mode"] = "compare";
  j["arms"] = Json::array();
  for (const auto& a : r.arms) {
    j["arms"].push_back({{"label", a.label}, {"run_id", a.run_id}, {"sweep_id", a.sweep_id}, {"url", redact_url_credentials(a.url)}, {"model", a.model},
                         {"engine", a.engine}, {"device", a.device}, {"started_at", a.started_at}, {"prediction_source", a.prediction_source}});
  }
  j["concurrencies"] = r.concurrencies;
  j["rows"] = Json::array();
  for (const auto& row : r.rows) {
    Json cells = Json::array();
    for (const auto& c : row.cells) cells.push_back(cell_json(c));
    j["rows"].push_back({{"concurrency", row.concurrency}, {"metric", row.metric}, {"unit", row.unit}, {"lower_is_better", row.lower_is_better}, {"cells", cells}});
  }
  j["notes"] = r.notes;
  return j;
}

std::string render_compare_html(const AbReport& r) {
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html_escape(r.title) + "</title>\n";
  o += "<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;"
       "padding:3px 8px;text-align:right}th{background:#f3f3f3}figure{margin:16px 0;display:inline-block}figcaption{font-weight:bold;margin-bottom:4px}"
       ".note{color:#555}.better{color:#060}.worse{color:#b00}</style></head><body>\n";
  o += "<h1>" + html_escape(r.title) + "</h1>\n<table id=\"arms\"><tr><th>arm</th><th>run</th><th>server</th><th>model</th><th>engine</th><th>device</th>"
       "<th>sweep</th><th>started</th><th>prediction</th></tr>\n";
  for (const auto& a : r.arms) {
    o += format("<tr><td>%s</td><td>%lld</td><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", html_escape(a.label).c_str(),
                static_cast<long long>(a.run_id), html_escape(redact_url_credentials(a.url)).c_str(), html_escape(a.model).c_str(), html_escape(a.engine).c_str(),
                html_escape(a.device).c_str(), html_escape(a.sweep_id).c_str(), html_escape(a.started_at).c_str(),
                html_escape(a.prediction_source.empty() ? "-" : a.prediction_source).c_str());
  }
  o += "</table>\n<div>\n";
  o += metric_chart(r, "TTFT", "ab-ttft-chart", "TTFT by concurrency (ms; p50 solid, p90 dashed, prediction dotted)", "ms");
  o += metric_chart(r, "TPOT", "ab-tpot-chart", "TPOT by concurrency (ms; p50 solid, p90 dashed, prediction dotted)", "ms");
  o += metric_chart(r, "ITL", "ab-itl-chart", "ITL by concurrency (ms; p50 solid, p90 dashed)", "ms");
  o += metric_chart(r, "output throughput", "ab-throughput-chart", "Output throughput by concurrency (tokens/s)", "tokens/s");
  o += metric_chart(r, "steady decode", "ab-steady-chart", "Steady decode by concurrency (tokens/s; prediction dotted)", "tokens/s");
  o += metric_chart(r, "goodput", "ab-goodput-chart", "Goodput by concurrency (requests/s within the SLO)", "req/s");
  o += "</div>\n<h2>Side by side</h2>\n<table id=\"ab-table\"><tr><th>concurrency</th><th>metric</th><th>unit</th>";
  for (const auto& a : r.arms) o += "<th>" + html_escape(a.letter) + " p50 / p90</th>";
  for (size_t a = 1; a < r.arms.size(); ++a) o += "<th>" + html_escape(r.arms[a].letter + " - " + r.arms[0].letter) + "</th>";
  o += "</tr>\n";
  for (const auto& row : r.rows) {
    o += format("<tr data-metric=\"%s\" data-concurrency=\"%lld\"><td>%lld</td><td>%s</td><td>%s</td>", html_escape(row.metric).c_str(),
                static_cast<long long>(row.concurrency), static_cast<long long>(row.concurrency), html_escape(row.metric).c_str(), html_escape(row.unit).c_str());
    for (const auto& c : row.cells) o += "<td>" + html_escape(cell_text(c)) + "</td>";
    for (size_t a = 1; a < row.cells.size(); ++a) {
      const AbCell& c = row.cells[a];
      const char* cls = "";
      if (c.present && c.delta && c.delta->ci_low && c.delta->ci_high && (*c.delta->ci_low > 0 || *c.delta->ci_high < 0)) {
        cls = (*c.delta->ci_high < 0) == row.lower_is_better ? "better" : "worse";
      }
      o += format("<td class=\"%s\">%s</td>", cls, html_escape(delta_text(c)).c_str());
    }
    o += "</tr>\n";
  }
  o += "</table>\n<p class=\"note\">p50 / p90 per arm, the prediction in parentheses where the run stores one. Differences: arm minus " +
       html_escape(r.arms.empty() ? std::string("A") : r.arms.front().label) +
       " of the p50 (of the value for throughput and goodput), in percent of it, with the bootstrap 95% interval of the p50 difference in brackets "
       "(green or red when the interval excludes zero) and the p90 difference. TTFT: first token-bearing delta; TPOT: (E2E - TTFT)/(N - 1) per request; "
       "ITL: gaps between token-bearing events.</p>\n";
  std::string notes;
  for (const auto& n : r.notes) notes += "<li>" + html_escape(n) + "</li>";
  if (!notes.empty()) o += "<h2>Notes</h2><ul class=\"note\">" + notes + "</ul>\n";
  o += "<footer class=\"note\">" + html_escape(r.build) + "</footer>\n</body></html>\n";
  return o;
}

}  // namespace preflight::report
