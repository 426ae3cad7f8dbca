// estimate/printed_stage: the "Available KV cache memory" line a log shows, as the stage that printed it (issue 15,
// pp35). Under pipeline parallelism every stage's workers size their own KV budget (FitEstimate::stages) and print their
// own line where the engine's version has every worker print it; from vLLM 0.12 and vLLM-Ascend 0.15 only the first local
// rank prints it (data/engines/printed_ranks.json), PP stage 0 on one node. The engine's blocks come from the tightest
// stage whichever line is printed, so only the compared available-KV figure depends on this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"

namespace preflight::estimate {

struct PrintedAvailableKv {
  double bytes = 0;             // the predicted figure of the line
  double low_bytes = 0, high_bytes = 0;  // its band (the estimate's available-KV band around that stage's budget)
  int64_t stage = -1;           // the PP stage whose line it is; -1: one stage (PP 1), or the smallest of every stage's
  std::string rule;             // which stage and why, for the assumptions (empty at PP 1)
};

// The predicted "Available KV cache memory" line of `e` as `engine` prints it. `stated_stage`: the PP rank of the worker
// whose line was read (a log line's (Worker_PPn...) prefix, a case's available_kv_stage); without one, the stage the
// engine's printing rule names: local_first_rank -> stage 0, every_rank or no record -> the smallest stage's (what a
// reader keeping the smallest line sees: e.available_kv_bytes). invalid_argument when `stated_stage` is not a stage of
// `e` (below 0, or at or past its pipeline parallel size), naming `what` (the field or line it came from).
Expected<PrintedAvailableKv> printed_available_kv(const FitEstimate& e, const engine::EngineProfile& engine, std::optional<int64_t> stated_stage,
                                                  const std::string& what);

}  // namespace preflight::estimate
