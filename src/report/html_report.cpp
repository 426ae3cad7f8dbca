#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::report {

namespace {

constexpr double k_width = 640, k_height = 320, k_left = 64, k_right = 150, k_top = 24, k_bottom = 48;
const char* const k_colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

std::string esc(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten.
double nice_max(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (v <= m * p) return m * p;
  }
  return 10 * p;
}

std::string num(double v) {
  if (std::abs(v) >= 100) return fixed(v, 0);
  if (std::abs(v) >= 10) return fixed(v, 1);
  return fixed(v, 2);
}

struct Series {
  std::string name;
  std::vector<double> values;  // one per x category; NaN = missing
  bool dashed = false;
};

std::string axes(const std::string& y_label, double y_max, const std::vector<std::string>& x_labels, const std::string& x_label) {
  const double plot_w = k_width - k_left - k_right, plot_h = k_height - k_top - k_bottom;
  std::string o;
  o += format("<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", k_left, k_top + plot_h, k_left + plot_w, k_top + plot_h);
  o += format("<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", k_left, k_top, k_left, k_top + plot_h);
  for (int i = 0; i <= 4; ++i) {
    const double y = k_top + plot_h - plot_h * i / 4.0;
    o += format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", k_left, y, k_left + plot_w, y);
    o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>", k_left - 4, y + 4, num(y_max * i / 4.0).c_str());
  }
  const double step = x_labels.empty() ? 0 : plot_w / static_cast<double>(x_labels.size());
  for (size_t i = 0; i < x_labels.size(); ++i) {
    o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>", k_left + step * (static_cast<double>(i) + 0.5),
                k_top + plot_h + 16, esc(x_labels[i]).c_str());
  }
  o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s</text>", k_left + plot_w / 2, k_height - 8, esc(x_label).c_str());
  o += format("<text x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">%s</text>", k_top + plot_h / 2,
              k_top + plot_h / 2, esc(y_label).c_str());
  return o;
}

std::string legend(const std::vector<std::string>& names) {
  std::string o;
  for (size_t i = 0; i < names.size(); ++i) {
    const double y = k_top + 14 + 18 * static_cast<double>(i);
    o += format("<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", k_width - k_right + 12, y - 10, k_colors[i % 8]);
    o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>", k_width - k_right + 30, y, esc(names[i]).c_str());
  }
  return o;
}

std::string line_chart(const std::string& id, const std::string& title, const std::string& y_label, const std::vector<std::string>& x_labels,
                       const std::vector<Series>& series) {
  double y_max = 0;
  for (const auto& s : series) {
    for (double v : s.values) {
      if (std::isfinite(v)) y_max = std::max(y_max, v);
    }
  }
  y_max = nice_max(y_max);
  const double plot_w = k_width - k_left - k_right, plot_h = k_height - k_top - k_bottom;
  const double step = x_labels.empty() ? 0 : plot_w / static_cast<double>(x_labels.size());
  std::string o = format("<figure><figcaption>%s</figcaption><svg class=\"chart\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                         "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"%s\">",
                         esc(title).c_str(), id.c_str(), k_width, k_height, k_width, k_height, esc(title).c_str());
  o += axes(y_label, y_max, x_labels, "concurrency");
  std::vector<std::string> names;
  for (size_t si = 0; si < series.size(); ++si) {
    const auto& s = series[si];
    names.push_back(s.name);
    std::string points;
    std::string dots;
    for (size_t i = 0; i < s.values.size(); ++i) {
      if (!std::isfinite(s.values[i])) continue;
      const double x = k_left + step * (static_cast<double>(i) + 0.5), y = k_top + plot_h - plot_h * s.values[i] / y_max;
      points += format("%s%.1f,%.1f", points.empty() ? "" : " ", x, y);
      dots += format("<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s: %s</title></circle>", x, y, k_colors[si % 8],
                     esc(s.name).c_str(), num(s.values[i]).c_str());
    }
    o += format("<polyline class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>", k_colors[si % 8],
                s.dashed ? " stroke-dasharray=\"6 4\"" : "", points.c_str());
    o += dots;
  }
  o += legend(names);
  o += "</svg></figure>\n";
  return o;
}

std::string comparison_chart(const std::vector<ComparisonPoint>& points) {
  // One group per point: predicted and measured as ratios of the predicted value (predicted = 1).
  std::vector<std::string> labels;
  double y_max = 1;
  for (const auto& p : points) {
    labels.push_back(p.metric + (p.concurrency > 0 ? " @" + std::to_string(p.concurrency) : ""));
    if (p.predicted > 0) y_max = std::max(y_max, p.measured / p.predicted);
  }
  y_max = nice_max(y_max);
  const double plot_w = k_width - k_left - k_right, plot_h = k_height - k_top - k_bottom;
  const double step = labels.empty() ? 0 : plot_w / static_cast<double>(labels.size());
  std::string o = format("<figure><figcaption>Predicted vs measured (measured / predicted)</figcaption><svg class=\"chart\" id=\"comparison-chart\" "
                         "xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">",
                         k_width, k_height, k_width, k_height);
  o += axes("measured / predicted", y_max, std::vector<std::string>(labels.size(), ""), "metric");
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const double x0 = k_left + step * static_cast<double>(i) + step * 0.15, bw = step * 0.35;
    const double ratio = p.predicted > 0 ? p.measured / p.predicted : 0;
    for (int k = 0; k < 2; ++k) {
      const double v = k == 0 ? 1.0 : ratio, h = plot_h * v / y_max;
      o += format("<rect class=\"bar %s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s %s: %s %s</title></rect>",
                  k == 0 ? "predicted" : "measured", x0 + bw * k, k_top + plot_h - h, bw, h, k_colors[k], esc(labels[i]).c_str(),
                  k == 0 ? "predicted" : "measured", num(k == 0 ? p.predicted : p.measured).c_str(), esc(p.unit).c_str());
    }
    o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">%s</text>", x0 + bw, k_top + plot_h + 14 + 12 * static_cast<double>(i % 2),
                esc(labels[i]).c_str());
  }
  o += legend({"predicted", "measured"});
  o += "</svg></figure>\n";
  return o;
}

std::string memory_chart(const HtmlReportData& d) {
  double total = 0;
  for (const auto& m : d.memory) total += std::max(0.0, m.gib);
  const double scale_total = std::max(total, d.memory_total_gib);
  const double bar_w = k_width - k_left - k_right;
  std::string o = format("<figure><figcaption>Memory per device: %s (GiB)</figcaption><svg class=\"chart\" id=\"memory-chart\" xmlns=\"http://www.w3.org/2000/svg\" "
                         "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">",
                         esc(d.memory_device).c_str(), k_width, 140.0, k_width, 140.0);
  double x = k_left;
  std::vector<std::string> names;
  for (size_t i = 0; i < d.memory.size(); ++i) {
    const double w = scale_total > 0 ? bar_w * std::max(0.0, d.memory[i].gib) / scale_total : 0;
    o += format("<rect class=\"bar memory\" x=\"%.1f\" y=\"30\" width=\"%.1f\" height=\"40\" fill=\"%s\"><title>%s: %s GiB</title></rect>", x, w, k_colors[i % 8],
                esc(d.memory[i].name).c_str(), fixed(d.memory[i].gib, 2).c_str());
    x += w;
    names.push_back(d.memory[i].name + " " + fixed(d.memory[i].gib, 2));
  }
  if (d.memory_total_gib > 0) {
    o += format("<rect x=\"%.1f\" y=\"26\" width=\"%.1f\" height=\"48\" fill=\"none\" stroke=\"#333\"/>", k_left, bar_w);
    o += format("<text x=\"%.1f\" y=\"92\" font-size=\"11\">device total %s GiB</text>", k_left, fixed(d.memory_total_gib, 2).c_str());
  }
  o += legend(names);
  o += "</svg></figure>\n";
  return o;
}

double nan() { return std::nan(""); }

}  // namespace

std::string render_bench_html(const HtmlReportData& d) {
  std::string o;
  o += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + esc(d.title) + "</title>\n";
  o += "<style>body{font-family:sans-serif;margin:24px;color:#222}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;"
       "padding:3px 8px;text-align:right}th{background:#f3f3f3}figure{margin:16px 0}figcaption{font-weight:bold;margin-bottom:4px}.note{color:#555}"
       ".fail{color:#b00}</style></head><body>\n";
  o += "<h1>" + esc(d.title) + "</h1>\n";
  o += "<p>server <code>" + esc(redact_url_credentials(d.url)) + "</code>, model <code>" + esc(d.model) + "</code>, sweep <code>" + esc(d.sweep_id) + "</code>, started " +
       esc(d.started_at) + "</p>\n";
  std::vector<std::string> x;
  Series ttft{"TTFT mean", {}}, ttft99{"TTFT p99", {}}, tpot{"TPOT mean", {}}, itl99{"ITL p99", {}};
  Series out{"output tok/s", {}}, steady{"steady decode tok/s", {}}, predicted{"predicted tok/s", {}, true};
  bool any_prediction = false;
  for (const auto& l : d.levels) {
    x.push_back(l.concurrency > 0 ? std::to_string(l.concurrency) : format("%.3g req/s", l.request_rate));
    const bool has = l.stats.succeeded > 0;
    ttft.values.push_back(has ? l.stats.ttft_ms.mean : nan());
    ttft99.values.push_back(has ? l.stats.ttft_ms.p99 : nan());
    tpot.values.push_back(has && l.stats.tpot_ms.count > 0 ? l.stats.tpot_ms.mean : nan());
    itl99.values.push_back(has && l.stats.itl_ms.count > 0 ? l.stats.itl_ms.p99 : nan());
    out.values.push_back(has ? l.stats.output_throughput_tok_s : nan());
    steady.values.push_back(l.stats.steady_decode_tok_s ? *l.stats.steady_decode_tok_s : nan());
    double p = nan();
    for (const auto& c : d.comparison) {
      if (c.metric == "throughput tok/s" && c.concurrency == l.concurrency) p = c.predicted, any_prediction = true;
    }
    predicted.values.push_back(p);
  }
  if (!d.levels.empty()) {
    o += line_chart("latency-chart", "Latency vs concurrency (ms)", "ms", x, {ttft, ttft99, tpot, itl99});
    std::vector<Series> tp = {out, steady};
    if (any_prediction) tp.push_back(predicted);
    o += line_chart("throughput-chart", "Throughput vs concurrency (tokens/s)", "tokens/s", x, tp);
  }
  if (!d.comparison.empty()) o += comparison_chart(d.comparison);
  if (!d.memory.empty()) o += memory_chart(d);

  o += "<h2>Levels</h2>\n<table id=\"levels\"><tr><th>concurrency</th><th>ok</th><th>failed</th><th>TTFT mean</th><th>TTFT p50</th><th>TTFT p99</th>"
       "<th>TPOT mean</th><th>ITL p50</th><th>ITL p99</th><th>E2E mean</th><th>output tok/s</th><th>steady decode tok/s</th><th>tokens from</th></tr>\n";
  for (size_t i = 0; i < d.levels.size(); ++i) {
    const auto& s = d.levels[i].stats;
    o += format("<tr><td>%s%s</td><td>%lld</td><td>%lld</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
                esc(x[i]).c_str(), d.levels[i].interrupted ? " (interrupted)" : "", static_cast<long long>(s.succeeded), static_cast<long long>(s.failed),
                fixed(s.ttft_ms.mean, 2).c_str(), fixed(s.ttft_ms.p50, 2).c_str(), fixed(s.ttft_ms.p99, 2).c_str(), fixed(s.tpot_ms.mean, 3).c_str(),
                fixed(s.itl_ms.p50, 3).c_str(), fixed(s.itl_ms.p99, 3).c_str(), fixed(s.e2e_ms.mean, 1).c_str(), fixed(s.output_throughput_tok_s, 1).c_str(),
                s.steady_decode_tok_s ? fixed(*s.steady_decode_tok_s, 1).c_str() : "-", esc(s.tokens_source).c_str());
  }
  o += "</table>\n<p class=\"note\">TTFT, TPOT, ITL and E2E in ms. TTFT: first content, reasoning or tool-call delta; TPOT: (E2E - TTFT)/(N - 1) per request; "
       "ITL: gaps between token-bearing events; percentiles interpolated linearly.</p>\n";
  if (!d.comparison.empty()) {
    o += "<h2>Predicted vs measured</h2>\n<table id=\"comparison\"><tr><th>metric</th><th>concurrency</th><th>predicted</th><th>measured</th><th>error</th></tr>\n";
    for (const auto& c : d.comparison) {
      const double err = c.measured != 0 ? (c.predicted - c.measured) / c.measured * 100 : 0;
      o += format("<tr><td>%s</td><td>%lld</td><td>%s %s</td><td>%s %s</td><td>%+.1f%%</td></tr>\n", esc(c.metric).c_str(), static_cast<long long>(c.concurrency),
                  num(c.predicted).c_str(), esc(c.unit).c_str(), num(c.measured).c_str(), esc(c.unit).c_str(), err);
    }
    o += "</table>\n";
  }
  std::string failures;
  for (const auto& l : d.levels) {
    for (const auto& [name, count] : l.stats.failures) failures += format("<li>%s: %s x %lld</li>", esc(x.empty() ? "" : std::to_string(l.concurrency)).c_str(), esc(name).c_str(), static_cast<long long>(count));
    for (const auto& e : l.stats.failure_examples) failures += "<li class=\"fail\">" + esc(e) + "</li>";
  }
  if (!failures.empty()) o += "<h2>Failures</h2><ul>" + failures + "</ul>\n";
  std::string notes;
  for (const auto& n : d.notes) notes += "<li>" + esc(n) + "</li>";
  for (const auto& l : d.levels) {
    for (const auto& n : l.stats.notes) notes += "<li>" + esc(n) + "</li>";
  }
  if (!notes.empty()) o += "<h2>Notes</h2><ul class=\"note\">" + notes + "</ul>\n";
  o += "<footer class=\"note\">" + esc(d.build) + "</footer>\n</body></html>\n";
  return o;
}

}  // namespace preflight::report
