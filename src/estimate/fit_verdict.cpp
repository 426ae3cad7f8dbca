// The fit's verdict and the lines the engine prints (vLLM's KV checks, get_kv_cache_configs and its messages,
// kv_cache_utils.py's size and concurrency lines), given the budget fit.cpp sized. Split out of fit.cpp.
#include "estimate/fit_verdict.hpp"

#include <algorithm>
#include <cmath>

#include "base/checked.hpp"
#include "base/fixed_text.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "estimate/printed_stage.hpp"

namespace preflight::estimate::verdict {

using model::ModelSpec;

namespace {

// Issue 15: vLLM 0.14-0.15 get_kv_cache_configs merges every PP worker's KV specs and checks one request at
// max_model_len over the whole model's layers against min(available memory) (vllm#29431; fixed by vllm#33698,
// which projects the groups onto each worker). Bytes of one request at length len over the whole model's
// layers: per kind, its layers x blocks x page (vLLM _max_memory_usage_bytes_from_groups, unpadded).
double whole_model_kv_bytes(const FitEstimate& e, int64_t len) {
  double bytes = 0;
  for (const auto& g : e.groups) {
    int64_t blocks = g.blocks_per_request;  // state: fixed per request
    if (g.kind != "state") {
      const int64_t full = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(len), static_cast<uint64_t>(std::max<int64_t>(1, e.block_size))));
      blocks = g.kind == "sliding_attention" ? std::min(g.blocks_per_request, full + 1) : full;
    }
    bytes += static_cast<double>(g.whole_layers) * static_cast<double>(blocks) * static_cast<double>(g.page_bytes);
  }
  return bytes;
}

}  // namespace

// The check itself and the engine's estimated maximum model length (its binary search: the largest length
// whose whole-model KV fits the smallest stage's budget), recorded on the estimate.
void pp_whole_model_check(FitEstimate& e, const engine::EngineProfile& engine, double available, int64_t L) {
  if (engine.pp_max_model_len_check != "whole_model" || e.pipeline_parallel_size <= 1 || e.groups.empty() || available <= 0) return;
  e.pp_whole_model_check = true;
  e.pp_whole_model_kv_bytes = whole_model_kv_bytes(e, L);
  int64_t lo = 0, hi = std::max<int64_t>(L, 1);
  if (whole_model_kv_bytes(e, hi) <= available) {
    // Longer than max_model_len fits too: search up to where the fixed-size groups alone stop growing.
    while (hi < (int64_t{1} << 40) && whole_model_kv_bytes(e, hi * 2) <= available) hi *= 2;
    hi *= 2;
  }
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (whole_model_kv_bytes(e, mid) <= available) lo = mid;
    else hi = mid - 1;
  }
  e.pp_whole_model_max_len = lo;
}

namespace {

// vLLM's error when one request at max_model_len `L` needs `needed` bytes of KV and `available` are left, with the
// longest length that fits (kv_cache_utils.py check_enough_kv_cache_memory), written as printf writes it.
std::string max_model_len_message(int64_t L, double needed, double available, int64_t largest) {
  FixedText t;
  t << "ValueError: To serve at least one request with the models's max seq len (" << L << "), (";
  t.fixed(bytes_to_gib(needed), 2) << " GiB KV cache is needed, which is larger than the available KV cache memory (";
  t.fixed(bytes_to_gib(available), 2) << " GiB). Based on the available memory, the estimated maximum model length is " << largest
                                       << ". Try increasing gpu_memory_utilization or decreasing max_model_len when initializing the engine.";
  return t.take();
}

// Issue 15 (v0eng30): the V0 worker's checks after the executor has logged the blocks (vllm/worker/worker.py
// raise_if_cache_size_invalid, called from initialize_cache; backticks as vLLM writes them).
constexpr const char* k_v0_no_blocks_message =
    "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.";

std::string v0_max_seq_len_message(int64_t L, int64_t max_seq_len) {
  return format("ValueError: The model's max seq len (%lld) is larger than the maximum number of tokens that can be stored in KV cache (%lld). Try increasing "
                "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
                static_cast<long long>(L), static_cast<long long>(max_seq_len));
}

}  // namespace

// The verdict, in the order the engine fails.
void decide(FitEstimate& e, const engine::EngineProfile& engine, const engine::Overheads& oh, const KvGeometry& kv, double available, int64_t L,
            const Deployment& dep, const terms::Mc2TransportVerdict& mc2) {
  // Each pipeline stage loads its own weights on its own card (issue 15); the first that does not hold them fails.
  double weights = e.weights_bytes, total = e.total_bytes;
  for (const auto& st : e.stages)
    if (st.weights_bytes + e.non_torch_bytes > st.total_bytes) {
      weights = st.weights_bytes;
      total = st.total_bytes;
      break;
    }
  // Issue 15 (v0eng30): the V0 engine prints and checks its own figure, num_gpu_blocks x block_size / max_model_len.
  const bool v0 = engine.v0_lines.has_value();
  if (v0 && L > 0) e.max_concurrency = static_cast<double>(std::max<int64_t>(0, e.num_blocks)) * static_cast<double>(e.block_size) / static_cast<double>(L);
  if (weights + e.non_torch_bytes > total) {
    e.failure = Failure::weights_oom;
    FixedText t;  // issue 19 (round 13): printf's "%.2f" without printf's cost, on every plan row that fails here
    t << "RuntimeError: " << (engine.platform == "npu" ? "NPU" : "CUDA") << " out of memory while loading weights: ";
    t.fixed(bytes_to_gib(weights), 2) << " GiB of weights per device, ";
    t.fixed(bytes_to_gib(total), 2) << " GiB total capacity";
    e.failure_message = t.take();
    e.verdict_depends_on = {};  // the weights load before the profile run's MC2 pass: decided whatever the driver
  } else if (mc2.state == terms::Mc2Transport::fails) {
    // The MC2 pass is the profile run's first (model_runner_v1.py profile_run: _dummy_run(mc2_tokens_capacity)), before any budget.
    e.failure = Failure::mc2_transport;
    e.failure_message = mc2.text;
  } else if (available <= 0 || e.num_blocks <= 0) {
    e.failure = Failure::kv_negative;
    e.failure_message = v0 ? k_v0_no_blocks_message
                           : "ValueError: No available memory for the cache blocks. Try increasing gpu_memory_utilization when initializing the engine.";
  } else if (e.pp_whole_model_check && e.pp_whole_model_kv_bytes > available) {
    // Issue 15: the whole model's KV against the smallest stage's budget (the engine's message and numbers).
    e.failure = Failure::max_model_len_too_large;
    e.failure_message = max_model_len_message(L, e.pp_whole_model_kv_bytes, available, e.pp_whole_model_max_len);
    if (dep.explain)
      e.assumptions.push_back(format("pipeline parallel %lld on %s: the engine checks max_model_len against the whole model's KV (every stage's layers, "
                                     "%.2f GiB) in the smallest stage's %.2f GiB, not each stage's own layers (engines.json pp_max_model_len_check; "
                                     "https://github.com/vllm-project/vllm/issues/32105, fixed by https://github.com/vllm-project/vllm/pull/33698); "
                                     "each stage's own layers would hold %.2fx",
                                     static_cast<long long>(e.pipeline_parallel_size), engine.id.c_str(), bytes_to_gib(e.pp_whole_model_kv_bytes),
                                     bytes_to_gib(available), e.max_concurrency));
  } else if (v0 && e.num_blocks * e.block_size < L) {
    e.failure = Failure::max_model_len_too_large;
    e.failure_message = v0_max_seq_len_message(L, e.num_blocks * e.block_size);
  } else if (!v0 && e.max_concurrency < 1.0) {
    e.failure = Failure::max_model_len_too_large;
    const double needed = static_cast<double>(kv.demand_blocks) * static_cast<double>(kv.page_bytes) * static_cast<double>(kv.group_size);
    e.failure_message = max_model_len_message(L, needed, available, kv_capacity_tokens(e));
  } else {
    e.fits = true;
  }
  terms::decide_after_kv(e, engine, oh, dep);
}

namespace {

// Issue 15: vLLM 0.21+ logs its pre-capture CUDA graph estimate before the KV line (gpu_model_runner.profile_cudagraph_memory):
// "Profiling CUDA graph memory: PIECEWISE=n (largest=a), FULL=m (largest=b)" and "Estimated CUDA graph memory: X GiB total",
// from the graph term when it is that estimate (its inputs name the graph counts).
void graph_estimate_lines(FitEstimate& e) {
  for (const auto& t : e.terms) {
    if (t.name != "graph capture") continue;
    double pw = 0, full = 0, largest = 0, largest_full = 0;
    for (const auto& [k, v] : t.inputs) {
      if (k == "piecewise_graphs") pw = v;
      if (k == "full_graphs") full = v;
      if (k == "largest_capture_tokens") largest = v;
      if (k == "largest_full_tokens") largest_full = v;
    }
    if (pw <= 0 && full <= 0) return;
    std::string profiling = "Profiling CUDA graph memory: ";
    if (pw > 0) profiling += format("PIECEWISE=%.0f (largest=%.0f)", pw, largest);
    if (full > 0) profiling += format("%sFULL=%.0f (largest=%.0f)", pw > 0 ? ", " : "", full, largest_full);
    e.lines.push_back(profiling);
    e.lines.push_back(format("Estimated CUDA graph memory: %.2f GiB total", bytes_to_gib(t.bytes)));
    return;
  }
}

// Issue 15 (v0eng30): vLLM's V0 executor after the workers sized the cache (vllm/executor/executor_base.py initialize_cache,
// gpu_executor.py before 0.7): "# %s blocks: %d, # CPU blocks: %d" with the platform's word, then, where the version has
// it, "Maximum concurrency for %s tokens per request: %.2fx" of num_gpu_blocks x block_size / max_model_len (the length
// without separators). Logged before the worker checks the blocks, so at 0 blocks too. CPU blocks: the swap space over the
// bytes of one block over every attention layer of the rank (worker.py determine_num_available_blocks, CacheEngine
// get_cache_block_size), page x layers of the group here.
void v0_block_lines(FitEstimate& e, const engine::EngineProfile::V0Lines& v0, int64_t L) {
  if (v0.device_name.empty()) return;
  const int64_t blocks = std::max<int64_t>(0, e.num_blocks);
  const double block_bytes = static_cast<double>(e.page_bytes) * static_cast<double>(e.group_size);
  const int64_t cpu_blocks = block_bytes > 0 ? static_cast<int64_t>(std::floor(v0.swap_space_bytes / block_bytes)) : 0;
  e.lines.push_back(format("# %s blocks: %lld, # CPU blocks: %lld", v0.device_name.c_str(), static_cast<long long>(blocks), static_cast<long long>(cpu_blocks)));
  if (v0.concurrency_line && L > 0)
    e.lines.push_back(format("Maximum concurrency for %lld tokens per request: %.2fx", static_cast<long long>(L), e.max_concurrency));
}

}  // namespace

// The lines the engine prints, from the version's templates (engines.json weights_line, kv_line). None when the
// weights do not load: the worker raises inside load_model, before it logs "Loading model weights took" / "Model
// loading took", and never reaches the profile run or the KV line (ux28: a 27B W8A8 on one 910B4 was shown to print
// "Loading model weights took 33.6129 GB" and "Available KV cache memory: -11.01 GiB", lines the seed's runs never had).
void printed_lines(FitEstimate& e, const engine::EngineProfile& engine, double available, int64_t L) {
  if (e.failure == Failure::weights_oom) return;
  // `stage`: the pipeline stage whose worker prints the line (its own requested memory and activation peak), else the first.
  auto fill = [&](std::string text, double weights, double kv, double total, const PipelineStageFit* stage = nullptr) {
    auto replace = [&](const std::string& key, const std::string& value) {
      const auto pos = text.find(key);
      if (pos != std::string::npos) text.replace(pos, key.size(), value);
    };
    replace("{weights_gib:.4f}", fixed(bytes_to_gib(weights), 4));
    replace("{weights_gib:g}", format("%g", std::round(bytes_to_gib(weights) * 100) / 100));
    replace("{kv_gib:.2f}", fixed(bytes_to_gib(kv), 2));
    replace("{kv_gib:g}", format("%g", std::round(bytes_to_gib(kv) * 100) / 100));
    replace("{kv_bytes}", format("%.0f", std::max(0.0, kv)));
    // Issue 15 (v0eng30): the V0 worker's memory summary (engine_cores.json printed_lines memory_lines).
    replace("{total_gib:.2f}", fixed(bytes_to_gib(total), 2));
    replace("{util:.2f}", fixed(e.gpu_memory_utilization, 2));
    replace("{requested_gib:.2f}", fixed(bytes_to_gib(stage ? stage->requested_bytes : e.requested_bytes), 2));
    replace("{weights_gib:.2f}", fixed(bytes_to_gib(weights), 2));
    replace("{non_torch_gib:.2f}", fixed(bytes_to_gib(e.non_torch_bytes), 2));
    replace("{activation_gib:.2f}", fixed(bytes_to_gib(stage ? stage->activation_bytes : e.activation_bytes), 2));
    replace("{total_bytes}", format("%.0f", total));
    // vLLM's "Model loading took X GiB memory and Y seconds" (gpu_model_runner.py load_model) ends with the time
    // the weights took to read, which depends on the disk or the hub and is not predicted: the figure is elided
    // and the line says so, rather than printing a made-up 0 seconds.
    if (text.find("{load_seconds}") != std::string::npos) {
      replace("{load_seconds}", "...");
      text += " (load time not predicted)";
    }
    return text;
  };
  const auto& v0 = engine.v0_lines;
  // Issue 15 (pp35): under PP the KV line without a stage is the one a log shows: stage 0's where the version prints it
  // from the first local rank only, else the smallest stage's (estimate/printed_stage).
  double shown = available;
  bool first_rank_only = false;
  if (!e.stages.empty())
    if (auto p = printed_available_kv(e, engine, std::nullopt, "fit"); p && p->stage == 0) {
      shown = p->bytes;
      first_rank_only = true;
    }
  if (v0 && !v0->fallback_warning.empty()) e.lines.push_back(v0->fallback_warning);  // logged while the engine arguments are read
  if (!engine.weights_line.empty()) e.lines.push_back(fill(engine.weights_line, e.weights_bytes, shown, e.total_bytes));
  graph_estimate_lines(e);
  if (!engine.kv_line.empty()) e.lines.push_back(fill(engine.kv_line, e.weights_bytes, shown, e.total_bytes));
  if (v0)
    for (const auto& t : v0->memory_lines) e.lines.push_back(fill(t, e.weights_bytes, available, e.total_bytes));
  // Issue 15: each pipeline stage's workers print their own load and KV lines (the first above stands for stage 0
  // and the lowest budget); one pair per stage, named by stage, card and layers.
  for (const auto& st : e.stages) {
    const std::string who = format("(PP stage %lld, %s, layers %lld-%lld) ", static_cast<long long>(st.stage), st.device_id.c_str(),
                                   static_cast<long long>(st.first_layer), static_cast<long long>(st.first_layer + st.layers - 1));
    if (!engine.weights_line.empty()) e.lines.push_back(who + fill(engine.weights_line, st.weights_bytes, st.available_kv_bytes, st.total_bytes));
    if (!engine.kv_line.empty())
      e.lines.push_back(who + fill(engine.kv_line, st.weights_bytes, st.available_kv_bytes, st.total_bytes) +
                        (first_rank_only && st.stage > 0 ? " (not logged where this stage shares stage 0's node: the version logs it from each node's "
                                                           "first local rank only, data/engines/printed_ranks.json)"
                                                         : ""));
    // Issue 15 (eng31): V0's worker logs its memory summary on every rank (vllm/worker/worker.py
    // determine_num_available_blocks: logger.info(msg), run on each worker by the executor's _run_workers).
    if (v0)
      for (const auto& t : v0->memory_lines) e.lines.push_back(who + fill(t, st.weights_bytes, st.available_kv_bytes, st.total_bytes, &st));
  }
  if (v0) {
    v0_block_lines(e, *v0, L);
    return;
  }
  if (e.num_blocks > 0) {
    // vllm/v1/core/kv_cache_utils.py _report_kv_cache_config (45f526d65 = vLLM 0.18.0; prefill context parallel 1 here).
    if (const int64_t dcp = e.decode_context_parallel_size; dcp > 1)
      e.lines.push_back(format("Multiplying the GPU KV cache size by the cp_world_size %lld (pcp_world_size 1 * dcp_world_size %lld).", static_cast<long long>(dcp),
                               static_cast<long long>(dcp)));
    const std::string size_line = "GPU KV cache size: " + with_thousands(e.kv_tokens) + " tokens";
    const std::string conc_line = "Maximum concurrency for " + with_thousands(L) + " tokens per request: " + fixed(e.max_concurrency, 2) + "x";
    if (engine.merged_token_line) e.lines.push_back(size_line + ", " + conc_line);
    else { e.lines.push_back(size_line); e.lines.push_back(conc_line); }
  }
}

}  // namespace preflight::estimate::verdict
