// engine/scheduler_checks: vLLM's checks of the scheduler's batch sizes made before anything loads, and the default
// --max-num-seqs they are made against (data/engines/scheduler_checks.json, issue 19 hard35). The estimate applies them
// to the batch sizes it resolves (estimate/fit_checks.cpp: scheduler_batch_accepted).
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct SchedulerCheck {
  std::string id;
  std::string kind;  // "refuse": the engine stops with `message`; "cap_default": the default max_num_seqs is at most max_num_batched_tokens
  std::vector<std::string> engines;
  Version version_min, version_max;
  std::string message;  // the engine's words, {max_num_batched_tokens} and {max_num_seqs} to fill; empty for cap_default
  std::string source;
};

struct SchedulerChecks {
  std::vector<SchedulerCheck> records;
  std::string origin;
  // The record of `kind` that covers `engine` (its engine name at rule_version()), or nullptr.
  const SchedulerCheck* find(const EngineProfile& engine, const std::string& kind) const;
};

// corrupt naming `origin` and the record: an unknown key or kind, a duplicate id, a bad version range, an empty engine
// list or source, a refuse record without both placeholders in its message.
Expected<SchedulerChecks> parse_scheduler_checks(const Json& root, const std::string& origin);
// The embedded data/engines/scheduler_checks.json, parsed once per process (a plan fits every row through it).
const Expected<SchedulerChecks>& shipped_scheduler_checks();

}  // namespace preflight::engine
