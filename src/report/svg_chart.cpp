#include "report/svg_chart.hpp"

#include <algorithm>
#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::report {

namespace {

const char* const k_colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

// A "nice" upper bound for an axis: 1, 2 or 5 times a power of ten.
double nice_max(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (v <= m * p) return m * p;
  }
  return 10 * p;
}

// Maps a value to a y pixel: linear from 0 to y_max, or log between two decades.
struct YAxis {
  AxisScale scale = AxisScale::linear;
  double lo = 0, hi = 1;  // linear: 0..y_max; log: log10 bounds
  double plot_top = 0, plot_h = 0;
  double y(double v) const {
    const double f = scale == AxisScale::log ? (std::log10(v) - lo) / (hi - lo) : v / hi;
    return plot_top + plot_h - plot_h * f;
  }
};

YAxis make_axis(const std::vector<Series>& series, AxisScale scale) {
  double lo = 0, hi = 0;
  for (const auto& s : series) {
    for (double v : s.values) {
      if (!std::isfinite(v) || v <= 0) continue;
      lo = lo > 0 ? std::min(lo, v) : v;
      hi = std::max(hi, v);
    }
  }
  YAxis a;
  a.plot_top = k_chart_top;
  a.plot_h = k_chart_height - k_chart_top - k_chart_bottom;
  if (scale == AxisScale::automatic) scale = lo > 0 && hi / lo > 20 ? AxisScale::log : AxisScale::linear;
  a.scale = scale;
  if (scale == AxisScale::log && lo > 0) {
    a.lo = std::floor(std::log10(lo));
    a.hi = std::max(a.lo + 1, std::ceil(std::log10(hi)));
  } else {
    a.scale = AxisScale::linear;
    a.hi = nice_max(hi);
  }
  return a;
}

std::string axes(const YAxis& a, const std::string& y_label, const std::vector<std::string>& x_labels, const std::string& x_label) {
  const double plot_w = k_chart_width - k_chart_left - k_chart_right, bottom = a.plot_top + a.plot_h;
  std::string o;
  o += format("<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", k_chart_left, bottom, k_chart_left + plot_w, bottom);
  o += format("<line class=\"axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", k_chart_left, a.plot_top, k_chart_left, bottom);
  std::vector<double> ticks;
  if (a.scale == AxisScale::log) {
    for (double e = a.lo; e <= a.hi + 1e-9; e += 1) ticks.push_back(std::pow(10.0, e));
  } else {
    for (int i = 0; i <= 4; ++i) ticks.push_back(a.hi * i / 4.0);
  }
  for (double t : ticks) {
    const double y = a.scale == AxisScale::log ? a.y(t) : bottom - a.plot_h * t / a.hi;
    o += format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", k_chart_left, y, k_chart_left + plot_w, y);
    o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>", k_chart_left - 4, y + 4, chart_number(t).c_str());
  }
  const double step = x_labels.empty() ? 0 : plot_w / static_cast<double>(x_labels.size());
  for (size_t i = 0; i < x_labels.size(); ++i) {
    o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s</text>", k_chart_left + step * (static_cast<double>(i) + 0.5),
                bottom + 16, html_escape(x_labels[i]).c_str());
  }
  o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s</text>", k_chart_left + plot_w / 2, k_chart_height - 8, html_escape(x_label).c_str());
  const std::string y_text = y_label + (a.scale == AxisScale::log ? " (log scale)" : "");
  o += format("<text x=\"14\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 14 %.1f)\">%s</text>", a.plot_top + a.plot_h / 2,
              a.plot_top + a.plot_h / 2, html_escape(y_text).c_str());
  return o;
}

}  // namespace

std::string html_escape(const std::string& text) {
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

std::string chart_number(double v) {
  if (std::abs(v) >= 100) return fixed(v, 0);
  if (std::abs(v) >= 10) return fixed(v, 1);
  return fixed(v, 2);
}

const char* chart_color(size_t i) { return k_colors[i % 8]; }

std::string chart_legend(const std::vector<std::string>& names, const std::vector<int>& colors) {
  std::string o;
  for (size_t i = 0; i < names.size(); ++i) {
    const double y = k_chart_top + 14 + 18 * static_cast<double>(i);
    const size_t c = i < colors.size() && colors[i] >= 0 ? static_cast<size_t>(colors[i]) : i;
    o += format("<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>", k_chart_width - k_chart_right + 12, y - 10, chart_color(c));
    o += format("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text>", k_chart_width - k_chart_right + 30, y, html_escape(names[i]).c_str());
  }
  return o;
}

std::string render_line_chart(const LineChart& c) {
  const YAxis a = make_axis(c.series, c.scale);
  const double plot_w = k_chart_width - k_chart_left - k_chart_right;
  const double step = c.x_labels.empty() ? 0 : plot_w / static_cast<double>(c.x_labels.size());
  std::string o = format("<figure><figcaption>%s</figcaption><svg class=\"chart\" id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                         "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"%s\" data-scale=\"%s\">",
                         html_escape(c.title).c_str(), c.id.c_str(), k_chart_width, k_chart_height, k_chart_width, k_chart_height, html_escape(c.title).c_str(),
                         a.scale == AxisScale::log ? "log" : "linear");
  o += axes(a, c.y_label, c.x_labels, c.x_label);
  std::vector<std::string> names;
  std::vector<int> colors;
  for (size_t si = 0; si < c.series.size(); ++si) {
    const auto& s = c.series[si];
    const size_t color = s.color >= 0 ? static_cast<size_t>(s.color) : si;
    names.push_back(s.name);
    colors.push_back(static_cast<int>(color));
    std::string points, dots;
    for (size_t i = 0; i < s.values.size(); ++i) {
      const double v = s.values[i];
      if (!std::isfinite(v) || (a.scale == AxisScale::log && v <= 0)) continue;
      const double x = k_chart_left + step * (static_cast<double>(i) + 0.5), y = a.y(v);
      points += format("%s%.1f,%.1f", points.empty() ? "" : " ", x, y);
      dots += format("<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s: %s</title></circle>", x, y, chart_color(color),
                     html_escape(s.name).c_str(), chart_number(v).c_str());
    }
    o += format("<polyline class=\"series\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>", html_escape(s.name).c_str(),
                chart_color(color), s.dotted ? " stroke-dasharray=\"2 3\"" : s.dashed ? " stroke-dasharray=\"6 4\"" : "", points.c_str());
    o += dots;
  }
  o += chart_legend(names, colors);
  o += "</svg></figure>\n";
  return o;
}

}  // namespace preflight::report
