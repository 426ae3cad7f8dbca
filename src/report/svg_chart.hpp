// report/svg_chart: the inline SVG pieces the HTML reports share: escaping, number labels, a line
// chart over categories (concurrency levels), optionally on a log axis, and a legend. Formatting
// only: the values drawn are the ones passed in.
#pragma once

#include <string>
#include <vector>

namespace preflight::report {

inline constexpr double k_chart_width = 640, k_chart_height = 320, k_chart_left = 64, k_chart_right = 150, k_chart_top = 24, k_chart_bottom = 48;

// HTML text and attribute escaping (& < > ").
std::string html_escape(const std::string& text);
// A label with 0, 1 or 2 decimals by magnitude.
std::string chart_number(double v);
// The colour of series i (a fixed palette of 8).
const char* chart_color(size_t i);

struct Series {
  std::string name;
  std::vector<double> values;  // one per x category; NaN = missing
  bool dashed = false;
  int color = -1;              // palette index; -1 = the series' position
  bool dotted = false;         // a prediction beside measured series of the same colour
};

// automatic: log when the largest positive value is over 20x the smallest, else linear.
enum class AxisScale { linear, log, automatic };

struct LineChart {
  std::string id, title, y_label, x_label = "concurrency";
  std::vector<std::string> x_labels;
  std::vector<Series> series;
  AxisScale scale = AxisScale::automatic;
};

// A figure with one SVG (class "chart", the given id): axes, one polyline per series (class
// "series", data-series="name") and a circle per point with a <title> tooltip.
std::string render_line_chart(const LineChart& chart);
// Legend entries drawn in the right margin of a chart of the standard size.
std::string chart_legend(const std::vector<std::string>& names, const std::vector<int>& colors = {});

}  // namespace preflight::report
