// estimate/speed_lines: the two provenance lines of a speed estimate that differ on nearly every deployment (the
// decode step at batch 1 and the prefill) held as the numbers they print, for a caller that keeps tens of thousands of
// estimates and writes the lines only when it writes one (issue 19, planfast5: a whole-catalogue plan's JSON form
// built ~43,000 of each, two text blocks and ~550 B per row, as it planned, and the writer copied them out again).
// Written by decode_line / prefill_line, they are the characters estimate_speed puts into SpeedEstimate::provenance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "estimate/speed.hpp"

namespace preflight::estimate {

struct SpeedLines {
  bool decode = false;   // the decode line was left out of the estimate's provenance: it goes at decode_at
  bool prefill = false;  // the prefill line was left out: it goes last
  uint8_t decode_at = 0;
  // The decode step at batch 1 (its StepTerms' numbers that the line prints); the context, the mode, the MoE layers
  // and the all-reduces per step are the estimate's own (context_tokens, mode, moe_layers, allreduces_per_step).
  double weight_bytes = 0, kv_bytes = 0, state_bytes = 0, memory_s = 0, overhead_s = 0, moe_s = 0, communication_s = 0;
  // The prefill of the estimate's input_tokens.
  double flops = 0, efficiency = 0, peak = 0, compute_s = 0, comm_s = 0;
  int64_t chunks = 0, chunk = 0;
};

// estimate_speed with deployment.explain set, except that the decode-step and prefill lines are not built: `lines`
// says where they go and holds what they print. Every other member equals estimate_speed's.
SpeedEstimate estimate_speed(const model::ModelSpec& model, const device::DeviceSpec& device, const engine::SpeedProfile& profile,
                             const engine::SpeedCatalog& catalog, const Deployment& deployment, const SpeedWorkload& workload, SpeedLines& lines);

// The lines estimate_speed would have put into the provenance (set only where lines.decode / lines.prefill).
std::string decode_line(const SpeedEstimate& s, const SpeedLines& lines);
std::string prefill_line(const SpeedEstimate& s, const SpeedLines& lines);

// `s.provenance` with the left-out lines in their places: estimate_speed's provenance for the same inputs.
std::vector<std::string> provenance_with(const SpeedEstimate& s, const SpeedLines& lines);

}  // namespace preflight::estimate
