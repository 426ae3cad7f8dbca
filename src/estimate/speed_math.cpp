// The expert-routing expectations and version comparisons the speed model uses (speed.hpp).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "estimate/speed.hpp"

namespace preflight::estimate {

double expected_distinct_experts(int64_t n, int64_t k, int64_t batch) {
  if (n <= 0 || k <= 0) return 0;
  const double p = std::min(1.0, static_cast<double>(k) / static_cast<double>(n));
  return static_cast<double>(n) * (1.0 - std::pow(1.0 - p, static_cast<double>(std::max<int64_t>(1, batch))));
}

namespace {

// C(g, 0..g) in long double: C(512, 256) ~ 5e152 is far inside its range.
std::vector<long double> binomial_row(int64_t g) {
  std::vector<long double> row(static_cast<size_t>(g) + 1, 1.0L);
  for (int64_t j = 1; j <= g; ++j) row[j] = row[j - 1] * static_cast<long double>(g - j + 1) / static_cast<long double>(j);
  return row;
}

// Ways to draw d experts (without replacement) so that no rank holds more than m: the x^d coefficient of
// prod over ranks of sum_{j <= m} C(size, j) x^j.
long double ways_at_most(const std::vector<std::vector<long double>>& rows, int64_t d, int64_t m) {
  std::vector<long double> poly(static_cast<size_t>(d) + 1, 0.0L), next;
  poly[0] = 1.0L;
  for (const auto& row : rows) {
    next.assign(poly.size(), 0.0L);
    const int64_t top = std::min<int64_t>(m, static_cast<int64_t>(row.size()) - 1);
    for (int64_t i = 0; i <= d; ++i) {
      if (poly[i] == 0.0L) continue;
      for (int64_t j = 0; j <= top && i + j <= d; ++j) next[i + j] += poly[i] * row[j];
    }
    poly.swap(next);
  }
  return poly[d];
}

// E[max over ranks of the experts it holds] for exactly d distinct experts: sum over m of P(max > m).
double busiest_rank_experts(int64_t n, int64_t ranks, int64_t d) {
  if (d <= 0) return 0;
  d = std::min(d, n);
  std::vector<std::vector<long double>> rows;
  int64_t largest = 0;
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t size = n / ranks + (r < n % ranks ? 1 : 0);
    rows.push_back(binomial_row(size));
    largest = std::max(largest, size);
  }
  const long double total = binomial_row(n)[d];
  const int64_t floor_max = (d + ranks - 1) / ranks;  // pigeonhole: the busiest rank holds at least this many
  double expected = static_cast<double>(floor_max);
  for (int64_t m = floor_max; m < std::min(d, largest); ++m) expected += static_cast<double>(1.0L - ways_at_most(rows, d, m) / total);
  return expected;
}

}  // namespace

double expected_busiest_rank_experts(int64_t n, int64_t ranks, double distinct) {
  if (n <= 0 || ranks <= 0) return 0;
  const double d = std::clamp(distinct, 0.0, static_cast<double>(n));
  const auto lo = static_cast<int64_t>(std::floor(d));
  const double low = busiest_rank_experts(n, ranks, lo);
  if (static_cast<double>(lo) == d) return low;
  return low + (d - static_cast<double>(lo)) * (busiest_rank_experts(n, ranks, lo + 1) - low);
}

std::optional<std::vector<int>> first_version(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i])) || (i > 0 && std::isdigit(static_cast<unsigned char>(text[i - 1])))) continue;
    std::vector<int> parts;
    size_t j = i;
    while (j < text.size() && parts.size() < 3) {
      size_t k = j;
      while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
      if (k == j || k - j > 6) break;
      parts.push_back(std::stoi(text.substr(j, k - j)));
      if (k + 1 < text.size() && text[k] == '.' && std::isdigit(static_cast<unsigned char>(text[k + 1]))) {
        j = k + 1;
      } else {
        j = k;
        break;
      }
    }
    // A date (2025-07-03) or a bare number is not a version: at least major.minor.
    if (parts.size() >= 2) {
      parts.resize(3, 0);
      return parts;
    }
    i = j;
  }
  return std::nullopt;
}

bool version_before(const std::string& version_text, const std::string& since) {
  // Round 15: `since` is read only when the text names a version (a plan's rows state none: one parse, not two, per row).
  const auto v = first_version(version_text);
  if (!v) return false;
  const auto s = first_version(since);
  return s && *v < *s;
}

}  // namespace preflight::estimate
