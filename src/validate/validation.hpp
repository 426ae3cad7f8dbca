// validate/validation: runs recorded deployments (shared/validation/*.jsonl schema) through the
// estimator and compares every observed field with the prediction. Sits above estimate; never
// inside it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "deploy/deployment.hpp"
#include "estimate/fit.hpp"

namespace preflight::validate {

struct FieldComparison {
  std::string field;
  double observed = 0;
  double predicted = 0;
  double abs_pct = 0;
  std::optional<double> low, high;  // the prediction's band, where the estimate carries one
  bool in_band() const { return low && high && observed >= *low && observed <= *high; }
};

struct CaseResult {
  std::string id;
  std::string file;
  bool skipped = false;
  std::string skip_reason;
  std::string model, device, engine;
  std::vector<FieldComparison> fields;
  std::optional<bool> observed_fits;
  std::optional<bool> predicted_fits;
  std::string observed_failure, predicted_failure;
  std::string predicted_failure_message;  // the engine's own words for the predicted failure ("" when it fits)
  // Issue 15 (mc2): what the predicted verdict depends on that the case does not state (FitEstimate::verdict_depends_on);
  // such a verdict is counted undecided, neither right nor wrong.
  std::string verdict_depends_on;
  std::vector<std::string> assumptions;
  // Speed cases: the decode-step decomposition at the case's concurrency (what tools/fit_speed.py
  // refits the speed constants from).
  std::map<std::string, double> speed_terms;
  // Memory cases: the predicted budget terms in bytes and the quantities they scale with (what
  // tools/fit_overheads.py refits the per-platform overheads from).
  std::map<std::string, double> memory_terms;
  std::string platform;
  std::string speed_profile;  // engine/platform of the speed constants used
  // Issue 15: a case whose version nothing states or dates is scored on the newest profile; this is its prediction
  // under every profile of the engine (empty when the version is stated or dated).
  deploy::VersionBand version_band;
};

struct FieldSummary {
  int n = 0;
  double median_abs_pct = 0, p90_abs_pct = 0, max_abs_pct = 0;
  int banded = 0, in_band = 0;  // cases with a predicted band, and those whose observation lies inside it
};

struct ValidationReport {
  std::vector<CaseResult> rows;
  int cases = 0, evaluated = 0, skipped = 0;
  // Issue 16 (quant26): skipped cases whose recorded `quantization` names no variant of the list (bad input: exit 2
  // after the report, every other case evaluated).
  int unreadable = 0;
  std::map<std::string, FieldSummary> fields;
  int verdicts_n = 0, verdicts_correct = 0;
  int verdicts_undecided = 0;  // observed verdicts whose prediction depends on an unstated input (not in n)
};

struct ValidateOptions {
  std::vector<std::string> model_dirs;
  int64_t decode_context_tokens = 1024;  // context assumed for speed cases (the files do not state one)
};

Expected<ValidationReport> run_validation(const std::vector<std::string>& files, const ValidateOptions& options);
Json validation_to_json(const ValidationReport& report);

}  // namespace preflight::validate
