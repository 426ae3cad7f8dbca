// plan/row_reasons: the texts a plan's rows give as their reason, computed by the planner (plan/planner.cpp): why a
// row that does not fit fails (from its RowFit) and what a row that fits says about its model's architecture (its facts
// computed once per model). Moved out of planner.cpp (issue 19, planfast6) to keep that file's size; the texts are as before.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

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

// Issue 19 (planfast7): the reasons of one work item's rows (a model and variant over every card and count), each
// distinct one made once and its block shared by the rows that give it. A whole-catalogue plan's 77,710 rows held
// 24,125 reason blocks for 6,554 distinct texts (8,166 blocks for the recurrent models' 20 facts texts, 10,103 for
// 5,556 weight failures, 1,662 that copied the fit's one failure message), and its caller frees every block on its own
// thread once both workers are done. Each entry is keyed by every value its text reads; the texts are those of
// failure_reason and architecture_facts.
class RowReasonMemo {
 public:
  // failure_reason(f, context, largest). Where that is the fit's own failure message (an invalid layout, an
  // out-of-memory after the KV cache, an MC2 transport refusal), that message, and `f.failure_message` is made to hold
  // the block of an equal message kept before (the same text).
  SharedText failure(RowFit& f, int64_t context, int64_t largest);
  // `text` in the block of an equal text this call kept before (a reason the item's counts and cards repeat as it is: the
  // context the model cannot reach, a layout rule's refusal, the engine's refusal of a quantization), else in a block of
  // its own, kept.
  SharedText text(std::string text);
  // architecture_facts(m, facts, fit) for one model: a call with another model or facts empties the memo first.
  SharedText facts(const model::ModelSpec& m, const ModelFacts& facts, const RowFit& fit);

 private:
  struct FailureKey {
    estimate::Failure failure = estimate::Failure::none;
    double weights_bytes = 0, requested_bytes = 0, gpu_memory_utilization = 0, total_bytes = 0, available_kv_bytes = 0;
    int64_t context = 0, largest = 0;
    bool operator==(const FailureKey&) const = default;
  };
  std::vector<std::pair<FailureKey, SharedText>> m_failures;
  std::vector<SharedText> m_messages;  // the fits' failure messages that are reasons
  std::vector<SharedText> m_texts;
  const model::ModelSpec* m_model = nullptr;
  const ModelFacts* m_facts = nullptr;
  std::vector<std::pair<int64_t, SharedText>> m_facts_texts;  // by kv_bytes_per_token_rank
};

}  // namespace preflight::plan
