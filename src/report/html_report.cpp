#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"
#include "report/svg_chart.hpp"

namespace preflight::report {

namespace {

constexpr double k_width = k_chart_width, k_left = k_chart_left, k_right = k_chart_right;

std::string esc(const std::string& text) { return html_escape(text); }
std::string num(double v) { return chart_number(v); }
const char* color(size_t i) { return chart_color(i); }

// The ratio axis of the predicted-vs-measured chart: measured / predicted, 1 = the prediction.
// Log when the ratios (bands included) span 10x or more, so one 14x miss does not flatten the rest.
struct RatioAxis {
  bool log = false;
  double lo = 0, hi = 2, x0 = 0, width = 1;
  double x(double ratio) const {
    const double f = log ? (std::log10(ratio) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (ratio - lo) / (hi - lo);
    return x0 + width * std::clamp(f, 0.0, 1.0);
  }
};

RatioAxis ratio_axis(const std::vector<ComparisonPoint>& points, double x0, double width) {
  double lo = 1, hi = 1;
  auto widen = [&](double r) {
    if (r > 0 && std::isfinite(r)) lo = std::min(lo, r), hi = std::max(hi, r);
  };
  for (const auto& p : points) {
    if (!(p.predicted > 0)) continue;
    widen(p.measured / p.predicted);
    if (p.predicted_low) widen(*p.predicted_low / p.predicted);
    if (p.predicted_high) widen(*p.predicted_high / p.predicted);
  }
  RatioAxis a;
  a.x0 = x0;
  a.width = width;
  a.log = hi / lo >= 10;
  if (a.log) {
    a.lo = lo / 1.25;  // a quarter of margin each side, not whole decades: ratios near 1 keep their width
    a.hi = hi * 1.25;
  } else {
    a.lo = std::max(0.0, std::floor(lo * 5 - 1) / 5);  // steps of 0.2 with a step of margin
    a.hi = std::ceil(hi * 5 + 1) / 5;
  }
  return a;
}

std::vector<double> ratio_ticks(const RatioAxis& a) {
  std::vector<double> t;
  if (a.log) {
    for (double d = std::pow(10.0, std::floor(std::log10(a.lo))); d <= a.hi; d *= 10) {
      for (double m : {1.0, 2.0, 5.0})
        if (d * m >= a.lo && d * m <= a.hi) t.push_back(d * m);
    }
  } else {
    const double step = a.hi - a.lo > 2 ? 0.5 : 0.2;
    for (double v = a.lo; v <= a.hi + 1e-9; v += step) t.push_back(v);
  }
  return t;
}

std::string ratio_label(double r) { return r >= 10 ? fixed(r, 0) + "x" : r >= 1 ? fixed(r, 1) + "x" : fixed(r, 2) + "x"; }

// One row per metric and level: the prediction at 1 (its band shaded when the prediction has one),
// the measurement as a dot at measured / predicted, and both values in the metric's unit.
std::string comparison_chart(const std::vector<ComparisonPoint>& points) {
  constexpr double label_w = 170, value_w = 190, row_h = 26, top = 30, bottom = 40;
  const double height = top + row_h * static_cast<double>(points.size()) + bottom;
  const RatioAxis a = ratio_axis(points, label_w, k_width - label_w - value_w);
  std::string o = format("<figure><figcaption>Predicted vs measured: measured / predicted per metric (1 = the prediction%s)</figcaption>"
                         "<svg class=\"chart\" id=\"comparison-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                         "role=\"img\" data-scale=\"%s\">",
                         a.log ? ", log scale" : "", k_width, height, k_width, height, a.log ? "log" : "linear");
  const double plot_bottom = top + row_h * static_cast<double>(points.size());
  for (double t : ratio_ticks(a)) {
    o += format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", a.x(t), top - 6, a.x(t), plot_bottom);
    o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">%s</text>", a.x(t), plot_bottom + 14, ratio_label(t).c_str());
  }
  o += format("<line class=\"predicted-line\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>", a.x(1), top - 10, a.x(1),
              plot_bottom);
  o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">predicted</text>", a.x(1), top - 14);
  o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">measured / predicted%s</text>", a.x0 + a.width / 2, height - 8,
              a.log ? " (log scale)" : "");
  for (size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    const double y = top + row_h * (static_cast<double>(i) + 0.5);
    const std::string label = p.metric + (p.concurrency > 0 ? " @" + std::to_string(p.concurrency) : "");
    o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>", label_w - 8, y + 4, esc(label).c_str());
    if (!(p.predicted > 0)) continue;
    if (p.predicted_low && p.predicted_high) {
      const double x1 = a.x(*p.predicted_low / p.predicted), x2 = a.x(*p.predicted_high / p.predicted);
      o += format("<rect class=\"band\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.25\"><title>%s predicted band: %s to %s %s</title></rect>",
                  std::min(x1, x2), y - 8, std::abs(x2 - x1), 16.0, color(0), esc(label).c_str(), num(*p.predicted_low).c_str(), num(*p.predicted_high).c_str(),
                  esc(p.unit).c_str());
    }
    o += format("<path class=\"predicted\" d=\"M%.1f %.1f l5 5 l-5 5 l-5 -5 z\" fill=\"%s\"><title>%s predicted: %s %s</title></path>", a.x(1), y - 5, color(0),
                esc(label).c_str(), num(p.predicted).c_str(), esc(p.unit).c_str());
    const double ratio = p.measured / p.predicted;
    o += format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1\"/>", a.x(1), y, a.x(ratio), y, color(1));
    o += format("<circle class=\"measured\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"><title>%s measured: %s %s</title></circle>", a.x(ratio), y, color(1),
                esc(label).c_str(), num(p.measured).c_str(), esc(p.unit).c_str());
    o += format("<text class=\"ratio\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s vs %s %s (%s)</text>", k_width - value_w + 8, y + 4, num(p.measured).c_str(),
                num(p.predicted).c_str(), esc(p.unit).c_str(), ratio_label(ratio).c_str());
  }
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
    o += format("<rect class=\"bar memory\" x=\"%.1f\" y=\"30\" width=\"%.1f\" height=\"40\" fill=\"%s\"><title>%s: %s GiB</title></rect>", x, w, color(i),
                esc(d.memory[i].name).c_str(), fixed(d.memory[i].gib, 2).c_str());
    x += w;
    names.push_back(d.memory[i].name + " " + fixed(d.memory[i].gib, 2));
  }
  if (d.memory_total_gib > 0) {
    o += format("<rect x=\"%.1f\" y=\"26\" width=\"%.1f\" height=\"48\" fill=\"none\" stroke=\"#333\"/>", k_left, bar_w);
    o += format("<text x=\"%.1f\" y=\"92\" font-size=\"11\">device total %s GiB</text>", k_left, fixed(d.memory_total_gib, 2).c_str());
  }
  o += chart_legend(names);
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
    o += render_line_chart({"latency-chart", "Latency vs concurrency (ms)", "ms", "concurrency", x, {ttft, ttft99, tpot, itl99}});
    std::vector<Series> tp = {out, steady};
    if (any_prediction) tp.push_back(predicted);
    o += render_line_chart({"throughput-chart", "Throughput vs concurrency (tokens/s)", "tokens/s", "concurrency", x, tp});
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
