// estimate/layout_texts: the speed estimate's per-thread table of the texts one (card, profile, speed catalogue,
// layout) gives (issue 19, planfast8). Private to src/estimate (speed.cpp and held_texts.cpp).
#pragma once

#include <cstdint>
#include <optional>

#include "base/shared_text.hpp"
#include "device/device_spec.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/speed.hpp"

namespace preflight::estimate {

// Issue 19 (planfast8): the texts a speed estimate takes from one (card, profile, speed catalogue, layout) alone: the
// bandwidth basis and its assumption, the efficiency line, the link and its line, and the no-link, cross-node and
// no-compute assumptions. Under a HeldTexts (the caller keeps those objects alive and unchanged: held_texts.hpp) they
// are kept per thread in a table keyed by the objects' addresses and the layout's numbers, so that a
// plan's row takes them with one lookup instead of building a TextMemo key and probing it for each (137,000 probes in
// the whole-catalogue JSON form, 2.7% of its instructions with their keys). Each text is kept when first made under
// the key (`has_*`); a key that takes another's slot empties it. Outside a HeldTexts: none (every text from its memo).
struct LayoutTexts {
  uint64_t epoch = 0;  // 0: empty
  const device::DeviceSpec* device = nullptr;
  const engine::SpeedProfile* profile = nullptr;
  const engine::SpeedCatalog* catalog = nullptr;
  int64_t tensor_parallel_size = 0, pipeline_parallel_size = 0, devices_per_node = 0;
  std::optional<double> bandwidth_bytes_per_s;  // the workload's measured bandwidth (--bandwidth), which the basis reads
  bool has_basis = false, has_efficiency = false, has_no_link = false, has_cross_node = false, has_link = false, has_no_peak = false;
  SharedText bandwidth_source, bandwidth_assumption;  // the basis's assumption: empty where it adds none
  SharedText efficiency_line;
  SharedText no_link_assumption, cross_node_assumption;
  SharedText link, link_line;
  SharedText no_peak_assumption;
  // Issue 19 (perfest37): the numbers the same key gives, kept beside its texts: a plan's rows computed the bandwidth
  // basis and the links (2 x 47,000 times in the whole-catalogue plan, 15 M instructions with the profile's two texts)
  // from the card, profile, catalogue and layout alone. `has_basis_numbers`: bandwidth_basis found a basis (a card with
  // none says so on each row, from its branch); `has_links`: interconnect's numbers but the model's all-reduce count.
  bool has_basis_numbers = false, has_links = false, has_profile_texts = false;
  double bandwidth = 0, bandwidth_low = 0, bandwidth_high = 0;
  bool bandwidth_is_prior = false;
  double ar_latency_s = 0, ar_bytes_per_s = 0, p2p_latency_s = 0, p2p_bytes_per_s = 0, allreduce_fixed_latency_s = 0;
  bool cross_node = false, tp_cross = false, no_link = false;  // no_link: the PCIe assumption applies (no link bandwidth known, TP > 1)
  SharedText engine, platform;  // the profile's engine and platform (SpeedEstimate::engine, platform)
};

// The calling thread's entry for the key (an open-addressed table, linear probing; an entry of another epoch is free,
// and at half the table's entries under one epoch it starts again empty); nullptr outside a HeldTexts.
LayoutTexts* layout_texts(const device::DeviceSpec& device, const engine::SpeedProfile& profile, const engine::SpeedCatalog& catalog, int64_t tp,
                          int64_t pp, const SpeedWorkload& w);

}  // namespace preflight::estimate
