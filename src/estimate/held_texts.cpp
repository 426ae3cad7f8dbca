// estimate/held_texts and estimate/layout_texts: the calling thread's HeldTexts epoch, and the table of the texts one
// (card, profile, speed catalogue, layout) gives under it (issue 19, planfast6 and planfast8).
#include "estimate/held_texts.hpp"

#include <atomic>
#include <vector>

#include "estimate/layout_texts.hpp"

namespace preflight::estimate {

namespace {

// The epoch the calling thread's HeldTexts holds; 0: none (estimate/held_texts.hpp).
thread_local uint64_t t_held_epoch = 0;
std::atomic<uint64_t> g_held_epochs{0};

}  // namespace

uint64_t new_held_texts_epoch() { return g_held_epochs.fetch_add(1, std::memory_order_relaxed) + 1; }

uint64_t held_texts_epoch() { return t_held_epoch; }

HeldTexts::HeldTexts(uint64_t epoch) : m_previous(t_held_epoch) { t_held_epoch = epoch; }
HeldTexts::~HeldTexts() { t_held_epoch = m_previous; }

LayoutTexts* layout_texts(const device::DeviceSpec& device, const engine::SpeedProfile& profile, const engine::SpeedCatalog& catalog, int64_t tp,
                          int64_t pp, const SpeedWorkload& w) {
  const uint64_t epoch = t_held_epoch;
  if (epoch == 0) return nullptr;
  constexpr size_t k_entries = 2048;  // a whole-catalogue plan has 460 (card, count) keys
  thread_local std::vector<LayoutTexts> table;
  thread_local size_t filled = 0;
  thread_local uint64_t filled_epoch = 0;
  if (table.empty()) table.resize(k_entries);
  if (filled_epoch != epoch) {
    filled_epoch = epoch;
    filled = 0;
  }
  // Hashed by the card and layout (a plan's card has one profile and catalogue); the whole key is compared.
  uint64_t h = reinterpret_cast<uintptr_t>(&device) ^ static_cast<uint64_t>(tp) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(pp) * 0xC2B2AE3D27D4EB4Full;
  h = (h ^ (h >> 29)) * 0xFF51AFD7ED558CCDull;
  for (size_t i = (h ^ (h >> 32)) & (k_entries - 1);; i = (i + 1) & (k_entries - 1)) {
    LayoutTexts& e = table[i];
    if (e.epoch == epoch) {
      if (e.device == &device && e.profile == &profile && e.catalog == &catalog && e.tensor_parallel_size == tp && e.pipeline_parallel_size == pp &&
          e.devices_per_node == w.devices_per_node && e.bandwidth_bytes_per_s == w.bandwidth_bytes_per_s)
        return &e;
      continue;
    }
    if (filled >= k_entries / 2) {  // full: start again empty, and take the key's first slot
      for (LayoutTexts& x : table) x.epoch = 0;
      filled = 0;
      return layout_texts(device, profile, catalog, tp, pp, w);
    }
    ++filled;
    e = LayoutTexts{.epoch = epoch, .device = &device, .profile = &profile, .catalog = &catalog, .tensor_parallel_size = tp,
                    .pipeline_parallel_size = pp, .devices_per_node = w.devices_per_node, .bandwidth_bytes_per_s = w.bandwidth_bytes_per_s};
    return &e;
  }
}

}  // namespace preflight::estimate
