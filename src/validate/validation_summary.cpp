#include "validate/validation_summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/units.hpp"
#include "estimate/fit.hpp"

namespace preflight::validate {

void summarise_validation(ValidationReport& report) {
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, std::pair<int, int>> coverage;  // banded, inside
  for (const auto& r : report.rows) {
    for (const auto& f : r.fields) {
      errors[f.field].push_back(f.abs_pct);
      if (f.low && f.high) {
        ++coverage[f.field].first;
        if (f.in_band()) ++coverage[f.field].second;
      }
    }
    if (!r.skipped && r.observed_fits && r.predicted_fits && !r.verdict_depends_on.empty()) {
      ++report.verdicts_undecided;
    } else if (!r.skipped && r.observed_fits && r.predicted_fits) {
      ++report.verdicts_n;
      bool correct = *r.observed_fits == *r.predicted_fits;
      if (correct && !*r.observed_fits && !r.observed_failure.empty() && r.observed_failure != r.predicted_failure) correct = false;
      if (correct) ++report.verdicts_correct;
    }
  }
  for (auto& [field, v] : errors) {
    std::sort(v.begin(), v.end());
    FieldSummary s;
    s.n = static_cast<int>(v.size());
    s.median_abs_pct = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2.0;
    s.p90_abs_pct = v[std::min(v.size() - 1, static_cast<size_t>(std::ceil(0.9 * static_cast<double>(v.size())) - 1))];
    s.max_abs_pct = v.back();
    if (const auto c = coverage.find(field); c != coverage.end()) {
      s.banded = c->second.first;
      s.in_band = c->second.second;
    }
    report.fields[field] = s;
  }
}

Json validation_to_json(const ValidationReport& report) {
  Json out;
  out["cases"] = report.cases;
  out["evaluated"] = report.evaluated;
  out["unreadable"] = report.unreadable;
  Json skipped = Json::array();
  for (const auto& r : report.rows) if (r.skipped) skipped.push_back({{"id", r.id}, {"reason", r.skip_reason}});
  out["skipped"] = skipped;
  Json fields = Json::object();
  for (const auto& [name, s] : report.fields) {
    fields[name] = {{"n", s.n}, {"median_abs_pct", s.median_abs_pct}, {"p90_abs_pct", s.p90_abs_pct}, {"max_abs_pct", s.max_abs_pct}};
    if (s.banded > 0) fields[name]["band"] = {{"n", s.banded}, {"observed_inside", s.in_band}};
  }
  out["fields"] = fields;
  out["verdicts"] = {{"n", report.verdicts_n}, {"correct", report.verdicts_correct}, {"undecided", report.verdicts_undecided}};
  Json rows = Json::array();
  for (const auto& r : report.rows) {
    if (r.skipped) continue;
    Json row = {{"id", r.id}, {"file", r.file}, {"engine", r.engine}, {"model", r.model}, {"device", r.device}};
    Json f = Json::object();
    for (const auto& c : r.fields) {
      f[c.field] = {{"observed", c.observed}, {"predicted", c.predicted}, {"abs_pct", c.abs_pct}};
      if (c.low && c.high) f[c.field]["band"] = {*c.low, *c.high};
    }
    row["fields"] = f;
    if (r.observed_fits) row["observed_fits"] = *r.observed_fits;
    if (r.predicted_fits) row["predicted_fits"] = *r.predicted_fits;
    row["observed_failure"] = r.observed_failure;
    row["predicted_failure"] = r.predicted_failure;
    if (!r.predicted_failure_message.empty()) row["predicted_failure_message"] = r.predicted_failure_message;
    if (!r.verdict_depends_on.empty()) row["verdict_depends_on"] = r.verdict_depends_on;
    row["assumptions"] = r.assumptions;
    if (!r.memory_terms.empty()) {
      row["platform"] = r.platform;
      row["memory_terms"] = r.memory_terms;
    }
    if (!r.speed_terms.empty()) {
      row["speed_profile"] = r.speed_profile;
      row["speed_terms"] = r.speed_terms;
    }
    if (!r.version_band.points.empty()) {  // the shape of fit --json's version_band
      Json points = Json::array();
      for (const auto& p : r.version_band.points)
        points.push_back({{"engine", p.engine_id}, {"fits", p.fits}, {"failure", failure_name(p.failure)}, {"kv_tokens", p.kv_tokens},
                          {"available_kv_gib", bytes_to_gib(p.available_kv_bytes)}, {"max_concurrency", p.max_concurrency}});
      row["version_band"] = {{"kv_tokens_min", r.version_band.kv_tokens_min}, {"kv_tokens_max", r.version_band.kv_tokens_max},
                             {"fitting", r.version_band.fitting}, {"versions", points}};
    }
    rows.push_back(row);
  }
  out["rows"] = rows;
  return out;
}

}  // namespace preflight::validate
