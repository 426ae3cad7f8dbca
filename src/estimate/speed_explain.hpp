// estimate/speed_explain: the speed estimate's two per-deployment provenance lines (the decode step at batch 1 and the
// prefill), as speed.cpp adds them to an explained estimate. Private to src/estimate (speed.cpp, speed_lines.cpp).
#pragma once

#include <cstdint>

#include "estimate/speed.hpp"
#include "estimate/speed_lines.hpp"

namespace preflight::estimate {

// An explained estimate's decode-step line (s.context_tokens, s.moe_layers and s.allreduces_per_step set): into its
// provenance, or, with `lines` (speed_lines.hpp), its numbers and place into `lines`.
void explain_decode(SpeedEstimate& s, SpeedLines* lines, const StepTerms& one, bool eager);

// The same for the prefill line of s.input_tokens.
void explain_prefill(SpeedEstimate& s, SpeedLines* lines, double flops, double efficiency, double peak, double compute_s, int64_t chunks, int64_t chunk,
                     double comm_s);

}  // namespace preflight::estimate
