// engine/capture_rules: vLLM's graph capture rules the engine profile does not carry (issue 15, warmup33): the
// capture-size grid and default mode of the versions before 0.11, a model's own capture ceiling, the versions that
// capture after KV sizing, and the captured graphs' cost per graph and decoder layer. Read from engines.json (profiles[]
// cudagraph_piecewise_grid_of_8, cudagraph_model_capture_sizes, graph_captured_after_kv; overheads[]
// graph_captured_*), read by the catalogue loader with the rest of each record and held by the profile
// (EngineProfile::graph_capture_rules) and the platform's overheads (Overheads::captured_graph_cost), so a catalogue
// whose records carry them under other ids keeps them, and no fit parses the embedded catalogue again to find them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"
#include "engine/mm_profile_rules.hpp"

namespace preflight::engine {

struct CaptureRules {
  // Versions that capture PIECEWISE graphs only, of the sizes 1, 2, 4 and the multiples of 8 up to the ceiling (vLLM V1
  // before 0.11: no FULL decode graphs, no step of 16 above 256).
  std::optional<EngineProfile::VersionRule> piecewise_grid_of_8;
  // Versions whose V1 worker captures its graphs after KV sizing, outside the budget, with the V1 capture sizes: the
  // captured-graph cost applies (CapturedGraphCost). Unset: the platform's graph_bytes prior (V0, and from 0.21 the
  // pre-capture estimate inside the budget).
  std::optional<EngineProfile::VersionRule> graph_captured_after_kv;
  // Issue 15 (graph34): versions whose captured graphs' per-graph cost (CapturedGraphCost::per_graph_bytes, the part
  // that does not grow with the layers) is the rank's share: divided by the tensor parallel size. The FULL_AND_PIECEWISE
  // captures of 0.11 - 0.20 (the llm-d-planner vLLM 0.19 sweep: Llama-3.1-8B 0.91 / 0.76 / 0.67 GiB at TP 1 / 2 / 4);
  // before 0.11 a PIECEWISE-only capture at TP 2 printed more than at TP 1 (Qwen2-7B, A100, 0.10.1: 0.65 and 0.50).
  std::optional<EngineProfile::VersionRule> graph_captured_per_graph_by_tp;
  // Models whose vLLM config sets max_cudagraph_capture_size when the user sets neither it nor cudagraph_capture_sizes
  // (GptOssForCausalLMConfig: 1024); an explicit maximum, so max_num_seqs does not cap it.
  struct ModelCaptureSize {
    int64_t max_capture_size = 0;
    std::vector<std::string> architectures;  // config.json architectures[0]
    EngineProfile::VersionRule rule;
    bool operator==(const ModelCaptureSize&) const = default;
  };
  std::vector<ModelCaptureSize> model_capture_sizes;
  // Issue 15 (vlprof35): the record's multimodal profile-run rules (engine/mm_profile_rules.hpp), parsed here with the
  // rest so the profile carries them through graph_capture_rules without a field of EngineProfile's own.
  MmProfileRules mm_profile;
  bool operator==(const CaptureRules&) const = default;
};

// The captured graphs' own cost where the version captures after KV sizing, outside the budget ("Graph capturing
// finished in N secs, took X GiB"): per graph, a fixed part (divided by TP where CaptureRules::graph_captured_per_graph_by_tp
// applies), one per decoder layer on the rank and one more per MoE layer. All 0: not modelled (the platform's
// graph_bytes prior).
struct CapturedGraphCost {
  double per_graph_bytes = 0, per_layer_bytes = 0, per_moe_layer_bytes = 0;
  std::string source;
  bool modelled() const { return per_graph_bytes + per_layer_bytes + per_moe_layer_bytes > 0; }
  bool operator==(const CapturedGraphCost&) const = default;
};

// One profile record's rules / one overheads record's cost; corrupt errors name the file, the record and the key.
Expected<CaptureRules> parse_capture_rules(const JsonObject& profile, const std::string& origin, const std::string& id);
Expected<CapturedGraphCost> parse_captured_graph_cost(const JsonObject& overheads, const std::string& origin, const std::string& platform);
// The keys the two parsers read (for the loaders' schema lists).
const std::vector<std::string>& capture_rule_keys();
const std::vector<std::string>& captured_graph_cost_keys();

// The rules this profile's record carries (empty when none) and the cost its platform's overheads carry (0: none).
const CaptureRules& capture_rules(const EngineProfile& profile);
const CapturedGraphCost& captured_graph_cost(const Overheads& overheads);
// The model's own max_cudagraph_capture_size in this profile's version (nullopt when no record lists the architecture).
std::optional<int64_t> model_max_capture_size(const EngineProfile& profile, const std::string& architecture);

}  // namespace preflight::engine
