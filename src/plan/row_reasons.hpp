// plan/row_reasons: the texts a plan's rows give as their reason, computed by the planner (plan/planner.cpp): why a
// row that does not fit fails (from its RowFit) and what a row that fits says about its model's architecture (its facts
// computed once per model). Moved out of planner.cpp (issue 19, planfast6) to keep that file's size; the texts are as before.
#pragma once

#include <cstdint>
#include <string>

#include "base/shared_text.hpp"
#include "model/model_spec.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

// What a plan says about a model on every row that fits, computed once per model (not per row): its
// parameter count, its cache layers, and the facts that no layout changes (sliding window, MLA, MoE).
struct ModelFacts {
  double params = 0;  // total parameters
  int64_t kv_layers = 0, state_layers = 0;
  SharedText layout_free;  // the sliding-window, MLA and MoE facts, "; "-joined (one block for every row of the model)
};

ModelFacts model_facts(const model::ModelSpec& m);

// The architecture facts of a row that fits: the recurrent layers' fixed state (with this layout's KV per
// token) first, then the model's layout-free facts.
SharedText architecture_facts(const model::ModelSpec& m, const ModelFacts& f, const RowFit& fit);

// Why a row with fit `f` at `context` tokens does not fit; `largest` is the most tokens its KV budget holds per request
// (read for Failure::max_model_len_too_large).
std::string failure_reason(const RowFit& f, int64_t context, int64_t largest);

}  // namespace preflight::plan
