#include "plan/plan_notes.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::plan {

namespace {

// Issue 20: one line per device whose tok/s rests on a bandwidth prior (datasheet x copy fraction, or a catalogue
// prior), naming the figure and its band, until a measurement replaces it.
void note_bandwidth_priors(PlanResult& r) {
  std::vector<std::string> seen;
  for (const auto* list : {&r.recommended, &r.rejected})
    for (const auto& c : *list) {
      if (!c.speed.bandwidth_is_prior || std::find(seen.begin(), seen.end(), c.device_id) != seen.end()) continue;
      seen.push_back(c.device_id);
      const auto& s = c.speed;
      const std::string basis = s.bandwidth_low_bytes_per_s < s.bandwidth_high_bytes_per_s
                                    ? format("%.0f GB/s copy, band %.0f - %.0f GB/s", s.bandwidth_bytes_per_s / 1e9, s.bandwidth_low_bytes_per_s / 1e9, s.bandwidth_high_bytes_per_s / 1e9)
                                    : format("%.0f GB/s copy = datasheet peak x copy fraction", s.bandwidth_bytes_per_s / 1e9);
      r.assumptions.push_back(format("tok/s on %s from a bandwidth prior (%s), until `preflight bw --save --device %s` measures the card", c.device_id.c_str(),
                                     basis.c_str(), c.device_id.c_str()));
    }
}

// Issue 15/16 (nccl, misc21): each interconnect assumption the rows carry (Candidate::interconnect_basis, fit's words),
// once among the plan's assumptions; the rows' text names the interconnect and points here.
void note_interconnects(PlanResult& r) {
  for (const auto* list : {&r.recommended, &r.rejected})
    for (const auto& c : *list) {
      if (c.interconnect.empty() || starts_with(c.interconnect_basis, "--interconnect")) continue;
      if (std::find(r.assumptions.begin(), r.assumptions.end(), c.interconnect_basis) == r.assumptions.end()) r.assumptions.push_back(c.interconnect_basis);
    }
}

}  // namespace

void note_row_assumptions(PlanResult& r) {
  note_bandwidth_priors(r);
  note_interconnects(r);
}

}  // namespace preflight::plan
