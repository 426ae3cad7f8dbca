// cli/logs_case: what `preflight logs` shares between its command (cmd_logs.cpp) and the case `--emit-case` writes
// (logs_case.cpp): the prediction for the logged deployment, the version lines the log states, and the case line in
// the validation schema (../shared/validation/README.md). Internal to cli; split out of cmd_logs.cpp (date37).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "cli/logs_dating.hpp"
#include "deploy/deployment.hpp"
#include "deploy/version_band.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/printed_stage.hpp"
#include "logs/engine_log.hpp"

namespace preflight::cli {

// The prediction for the logged deployment, or why there is none.
struct FitOutcome {
  std::optional<estimate::FitEstimate> fit;
  std::vector<std::string> fixes;
  std::string model_id, device_id, engine_id;
  std::vector<std::string> notes;
  std::optional<Error> bad_input;  // an engine argument in the log that no deployment accepts
  // Issue 15 (misc950): how the engine was resolved: the version and build used, the lines they came from, and the
  // profile's rules with a build boundary as the build decided them.
  deploy::EngineInput engine_input;
  std::vector<engine::EngineProfile::BuildRule> build_rules;
  // Issue 15 (pp35): the predicted "Available KV cache memory" of the stage whose line the log kept (its worker prefix),
  // else of the stage the engine's version prints from (estimate/printed_stage).
  std::optional<estimate::PrintedAvailableKv> printed_kv;
  // user36 (issue 15, "the engine version from the evidence"): nothing in the log states or dates the version, so the
  // newest profile is predicted and this band spans every version the log could be from (deploy::across_versions).
  deploy::VersionBand version_band;
  std::string versions_left_out;
  // date37 (issue 15, "the format of the printed lines"): the version window of the log's lines and what it decided;
  // where it dated the log, version_band is the band over the profiles inside it.
  LineDating dating;
};

// The version and build the log's version lines state (issue 15, misc950): on vLLM-Ascend the vLLM and vllm-ascend
// lines go through deploy::take_printed_versions, as a case's engine_version / engine_build and fit's --engine
// vllm-ascend@V --engine-build B do; vllm-ascend releases track vLLM's numbering (reference section 6), so a log that
// names only vLLM still selects the matching vllm-ascend profile.
deploy::EngineInput printed_engine_versions(const logs::EngineLog& log);

// Issue 15 (evid29): the line of the failure's first evidence (root-cause line, else the first symptom line); 0 when none.
int64_t failure_line(const logs::Diagnosis& d);
// Issue 15 (evid29): the log's failure comes after the server came up ("Application startup complete"): a runtime
// failure, not a start-up one.
bool failed_after_start_up(const logs::EngineLog& log);
// The notes of the case --emit-case writes (validate reads them as a version hint, as logs does).
std::string case_notes(const logs::EngineLog& log, const std::string& path);

// The log as one validation case (--emit-case): its engine, version and build as deploy takes them, the logged
// arguments and environment in the fields validate reads, the printed lines, and the outcome.
Json case_line(const logs::EngineLog& log, const FitOutcome& f, const std::string& path);

}  // namespace preflight::cli
