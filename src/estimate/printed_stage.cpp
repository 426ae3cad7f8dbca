#include "estimate/printed_stage.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/printed_ranks.hpp"

namespace preflight::estimate {

namespace {

PrintedAvailableKv at_stage(const FitEstimate& e, const PipelineStageFit& st, std::string rule) {
  // The band is the estimate's: the same fitted terms (activation, non-torch, graph) on every stage.
  const double shift = st.available_kv_bytes - e.available_kv_bytes;
  return {st.available_kv_bytes, e.available_kv_low_bytes() + shift, e.available_kv_high_bytes() + shift, st.stage, std::move(rule)};
}

}  // namespace

Expected<PrintedAvailableKv> printed_available_kv(const FitEstimate& e, const engine::EngineProfile& engine, std::optional<int64_t> stated_stage,
                                                  const std::string& what) {
  const int64_t pp = std::max<int64_t>(1, e.pipeline_parallel_size);
  if (stated_stage && (*stated_stage < 0 || *stated_stage >= pp))
    return make_error(ErrorKind::invalid_argument, format("%s: PP stage %lld: expected 0 to %lld (pipeline parallel size %lld)", what.c_str(),
                                                          static_cast<long long>(*stated_stage), static_cast<long long>(pp - 1), static_cast<long long>(pp)));
  const PrintedAvailableKv smallest{e.available_kv_bytes, e.available_kv_low_bytes(), e.available_kv_high_bytes(), -1, ""};
  if (e.stages.empty()) return smallest;  // one stage, or a budget given (--kv-cache-memory-bytes): one figure
  if (stated_stage) {
    const auto& st = e.stages[static_cast<size_t>(*stated_stage)];
    return at_stage(e, st, format("the printed available KV is PP stage %lld's line (%s), compared with that stage's budget %.2f GiB", static_cast<long long>(st.stage),
                                  what.c_str(), bytes_to_gib(st.available_kv_bytes)));
  }
  const auto& table = engine::shipped_printed_ranks();
  const engine::PrintedRanksRecord* rec = table ? table->record_for(engine, "available_kv") : nullptr;
  if (rec && rec->ranks == engine::PrintingRanks::local_first_rank)
    return at_stage(e, e.stages.front(),
                    format("%s prints 'Available KV cache memory' from the first local rank only (data/engines/printed_ranks.json %s): on one node PP "
                           "stage 0's budget, %.2f GiB (the tightest stage's, which sets the blocks: %.2f GiB); a line of another node's first rank "
                           "names its stage by its (Worker_PPn) prefix",
                           engine.id.c_str(), rec->id.c_str(), bytes_to_gib(e.stages.front().available_kv_bytes), bytes_to_gib(e.available_kv_bytes)));
  PrintedAvailableKv out = smallest;
  out.rule = rec ? format("%s prints 'Available KV cache memory' on every worker (data/engines/printed_ranks.json %s): the smallest line, the tightest "
                          "stage's %.2f GiB",
                          engine.id.c_str(), rec->id.c_str(), bytes_to_gib(e.available_kv_bytes))
                 : format("%s: which workers print 'Available KV cache memory' is not recorded (data/engines/printed_ranks.json): compared with the "
                          "smallest stage's budget, %.2f GiB",
                          engine.id.c_str(), bytes_to_gib(e.available_kv_bytes));
  return out;
}

}  // namespace preflight::estimate
