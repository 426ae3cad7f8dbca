// model/architecture_traits: facts the model code fixes but config.json does not state (biases,
// q/k norms, gated output, vision tower kind), loaded from data/architectures/traits.json.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::model {

enum class MlpKind { gated, plain };  // gated: gate+up+down (SwiGLU); plain: up+down (relu2)
enum class VisionKind { none, qwen3_vl, qwen2_5_vl, generic_vit };

struct ArchitectureTraits {
  std::string id;
  MlpKind mlp = MlpKind::gated;
  bool qkv_bias = false;
  bool qk_norm = false;
  bool attention_bias_covers_o = true;
  bool attn_output_gate = false;
  bool shared_expert_gate = false;
  bool attention_sinks = false;
  bool expert_bias = false;
  bool router_bias = false;
  int64_t sliding_window_pattern_default = 0;
  std::string mamba_ssm_dtype_default;
  VisionKind vision = VisionKind::none;
  // Issue 15 (hyb): a speculative-decoding drafter head (DFlash): served only beside a target through
  // --speculative-config, never as a model of its own, so `plan --device` leaves its catalogue records out.
  bool speculative_drafter = false;
  std::string source;
  bool operator==(const ArchitectureTraits&) const = default;
};

struct TraitsCatalog {
  std::vector<ArchitectureTraits> entries;
  const ArchitectureTraits* find(const std::string& architecture) const;
};

Expected<TraitsCatalog> parse_traits_catalog(const Json& root, const std::string& origin);
// The catalogue embedded at build time (data/architectures/traits.json), parsed whole.
const TraitsCatalog& builtin_traits();
// The traits of one architecture in the embedded catalogue, parsed from its record alone (build-time index,
// cmake/catalog_index.cpp; issue 19: a fit reads one record, not the file) by parse_traits_catalog, and kept: each
// record is parsed once per process; safe from several threads. nullptr when traits.json has no such id. Falls back
// to builtin_traits() where the index does not locate the record.
const ArchitectureTraits* find_builtin_traits(const std::string& architecture);

}  // namespace preflight::model
