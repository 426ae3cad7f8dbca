// Issue 19 (planfast8): under an estimate::HeldTexts a speed estimate takes the texts of one (card, profile, speed
// catalogue, layout) from a per-thread table keyed by those objects' addresses and the layout's numbers (speed.cpp,
// LayoutTexts), not from its text memos. What it returns must not change: every input such a text reads is in the key,
// so estimates that differ in one of them, interleaved under one epoch on one thread, each equal the estimate of the
// same inputs on a thread that holds no epoch.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "device/device_spec.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/held_texts.hpp"
#include "estimate/speed.hpp"
#include "model/model_source.hpp"

using namespace preflight;

namespace {

// Every text of an explained estimate, in order, and the band its bandwidth basis gives.
std::vector<std::string> all_texts(const estimate::SpeedEstimate& e) {
  std::vector<std::string> out(e.provenance.begin(), e.provenance.end());
  out.insert(out.end(), e.assumptions.begin(), e.assumptions.end());
  out.push_back(e.bandwidth_source);
  out.push_back(e.link);
  out.push_back(std::to_string(e.single_stream_low) + " " + std::to_string(e.single_stream_high));
  return out;
}

struct Case {
  const device::DeviceSpec* device;
  const engine::SpeedProfile* profile;
  const engine::SpeedCatalog* catalog;
  int64_t tp, pp, devices_per_node;
  std::optional<double> bandwidth_bytes_per_s;
  bool explain;
};

estimate::SpeedEstimate estimate_case(const model::ModelSpec& m, const Case& c) {
  estimate::Deployment d;
  d.tensor_parallel_size = c.tp;
  d.pipeline_parallel_size = c.pp;
  d.explain = c.explain;
  estimate::SpeedWorkload w;
  w.context_tokens = 8192;
  w.devices_per_node = c.devices_per_node;
  w.bandwidth_bytes_per_s = c.bandwidth_bytes_per_s;
  return estimate::estimate_speed(m, *c.device, *c.profile, *c.catalog, d, w);
}

}  // namespace

TEST(Speed, Issue19_LayoutTextsKeyOnEveryInputTheirTextsRead) {
  const auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value());
  const auto devices = device::load_device_catalog();
  const auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(devices && speeds);
  // A card whose basis is its datasheet (a prior: a text and an assumption) and that has no link bandwidth (the PCIe
  // assumption), and one with a measured copy bandwidth in the catalogue: every basis and link text comes up.
  const auto datasheet = std::find_if(devices->devices.begin(), devices->devices.end(), [&](const device::DeviceSpec& x) {
    return x.platform == "cuda" && !x.measured_copy_bandwidth_bytes_per_s && x.hbm_bandwidth_bytes_per_s && !x.interconnect_bandwidth_bytes_per_s &&
           !speeds->find_link_prior(x.family) && speeds->find("vllm", x.platform, x.id);
  });
  const auto measured = std::find_if(devices->devices.begin(), devices->devices.end(), [&](const device::DeviceSpec& x) {
    return x.platform == "cuda" && x.measured_copy_bandwidth_bytes_per_s && speeds->find("vllm", x.platform, x.id);
  });
  ASSERT_NE(datasheet, devices->devices.end());
  ASSERT_NE(measured, devices->devices.end());
  // A second profile and a second catalogue, each differing from the first in what its texts print, alive at other
  // addresses for the whole epoch.
  const engine::SpeedProfile* profile = speeds->find("vllm", datasheet->platform, datasheet->id);
  engine::SpeedProfile other_profile = *profile;
  other_profile.bandwidth_efficiency *= 0.9;
  other_profile.evidence += " (second profile)";
  other_profile.allreduce_latency_s *= 2;
  other_profile.pcie_allreduce_latency_s *= 2;
  engine::SpeedCatalog other_catalog = *speeds;
  other_catalog.cross_node_bandwidth_bytes_per_s *= 2;
  other_catalog.cross_node_source += " (second catalogue)";
  other_catalog.copy_fraction_of_peak *= 0.9;
  std::vector<Case> cases;
  for (const device::DeviceSpec* d : {&*datasheet, &*measured})
    for (const engine::SpeedProfile* p : {profile, static_cast<const engine::SpeedProfile*>(&other_profile)})
      for (const engine::SpeedCatalog* catalog : {&*speeds, static_cast<const engine::SpeedCatalog*>(&other_catalog)})
        for (const auto& [tp, pp] : {std::pair<int64_t, int64_t>{1, 1}, {2, 1}, {8, 1}, {16, 1}, {8, 2}, {1, 4}})
          for (const int64_t per_node : {8, 4})
            for (const std::optional<double> bandwidth : {std::optional<double>(), std::optional<double>(1.5e12)})
              for (const bool explain : {false, true}) cases.push_back({d, p, catalog, tp, pp, per_node, bandwidth, explain});
  const auto estimate_all = [&](bool held) {
    std::vector<std::vector<std::string>> out;
    std::thread worker([&] {  // a thread of its own: no earlier estimate filled its table or memos
      const uint64_t epoch = estimate::new_held_texts_epoch();
      for (int pass = 0; pass < 2; ++pass)  // the second pass finds every key the first kept
        for (const Case& c : cases) {
          if (held) {
            const estimate::HeldTexts scope(epoch);
            out.push_back(all_texts(estimate_case(*m, c)));
          } else {
            out.push_back(all_texts(estimate_case(*m, c)));
          }
        }
    });
    worker.join();
    return out;
  };
  const auto held = estimate_all(true), unheld = estimate_all(false);
  ASSERT_EQ(held.size(), unheld.size());
  for (size_t i = 0; i < held.size(); ++i) {
    const Case& c = cases[i % cases.size()];
    EXPECT_EQ(held[i], unheld[i]) << c.device->id << (c.profile == profile ? "" : ", second profile") << (c.catalog == &*speeds ? "" : ", second catalogue")
                                  << " TP " << c.tp << " PP " << c.pp << " per node " << c.devices_per_node << (c.bandwidth_bytes_per_s ? " --bandwidth" : "")
                                  << (c.explain ? " explained" : "");
  }
  // The inputs do change the texts: a key that left one out would hand a case another's texts.
  const auto texts_of = [&](Case c) { return all_texts(estimate_case(*m, c)); };
  const Case base{&*datasheet, profile, &*speeds, 8, 2, 8, std::nullopt, true};
  Case with_profile = base, with_catalog = base, with_node = base, with_bandwidth = base;
  with_profile.profile = &other_profile;
  with_catalog.catalog = &other_catalog;
  with_node.devices_per_node = 4;
  with_bandwidth.bandwidth_bytes_per_s = 1.5e12;
  for (const Case& c : {with_profile, with_catalog, with_node, with_bandwidth}) EXPECT_NE(texts_of(c), texts_of(base));
}

namespace {

// Every number of an estimate that the bandwidth basis or the links decide, and those they lead to (perfest37).
std::vector<double> all_numbers(const estimate::SpeedEstimate& e) {
  std::vector<double> out = {e.bandwidth_bytes_per_s, e.bandwidth_low_bytes_per_s, e.bandwidth_high_bytes_per_s, static_cast<double>(e.bandwidth_is_prior),
                             e.effective_bandwidth_bytes_per_s, static_cast<double>(e.cross_node), static_cast<double>(e.allreduces_per_step),
                             e.allreduce_latency_units, e.allreduce_fixed_latency_s, e.single_stream_tokens_per_s, e.single_stream_low,
                             e.single_stream_high, e.prefill_tokens_per_s, e.ttft_s, e.ttft_low_s, e.ttft_high_s};
  for (const auto& p : e.points)
    out.insert(out.end(), {p.per_stream_tokens_per_s, p.per_stream_low, p.per_stream_high, p.terms.communication_s, p.terms.communication_bandwidth_s, p.terms.step_s});
  return out;
}

}  // namespace

// Issue 19 (perfest37): under a HeldTexts the (card, profile, speed catalogue, layout) key also keeps the numbers its
// bandwidth basis and links give (LayoutTexts::has_basis_numbers, has_links) and the profile's engine and platform
// texts. Each reads the card (its bandwidths, link and family), the catalogue (copy fraction, cross-node link, priors),
// the profile (all-reduce latencies), TP, PP, the node size and --bandwidth: all in the key. The all-reduce count is
// the model's (2 x its layers), not the key's. Over cases that differ in each, and two models of other layer counts and
// widths, interleaved under one epoch, every number equals the estimate's on a thread that holds no epoch; and each
// input changes a number, so a key that left it out would hand a case another's.
TEST(Speed, Issue19_LayoutNumbersKeyOnEveryInputTheyRead) {
  const auto small = model::resolve_model("Qwen/Qwen3-0.6B");
  const auto large = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(small.has_value() && large.has_value());
  ASSERT_NE(small->num_hidden_layers, large->num_hidden_layers);
  const auto devices = device::load_device_catalog();
  const auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(devices && speeds);
  const auto find = [&](auto pred) {
    const auto it = std::find_if(devices->devices.begin(), devices->devices.end(), pred);
    EXPECT_NE(it, devices->devices.end());
    return it == devices->devices.end() ? nullptr : &*it;
  };
  // A datasheet basis with no link (the PCIe assumption), a measured basis with a catalogue link, a prior basis with a
  // range (an NPU's), and one whose link comes from its family's prior.
  const device::DeviceSpec* datasheet = find([&](const device::DeviceSpec& x) {
    return x.platform == "cuda" && !x.measured_copy_bandwidth_bytes_per_s && x.hbm_bandwidth_bytes_per_s && !x.interconnect_bandwidth_bytes_per_s &&
           !speeds->find_link_prior(x.family) && speeds->find("vllm", x.platform, x.id);
  });
  const device::DeviceSpec* measured = find([&](const device::DeviceSpec& x) {
    return x.platform == "cuda" && x.measured_copy_bandwidth_bytes_per_s && x.interconnect_bandwidth_bytes_per_s && speeds->find("vllm", x.platform, x.id);
  });
  const device::DeviceSpec* prior = find([&](const device::DeviceSpec& x) {
    const auto* p = speeds->find_bandwidth_prior(x.id);
    return !x.measured_copy_bandwidth_bytes_per_s && !x.hbm_bandwidth_bytes_per_s && p && p->low_bytes_per_s != p->high_bytes_per_s;
  });
  const device::DeviceSpec* family_link = find([&](const device::DeviceSpec& x) { return !x.interconnect_bandwidth_bytes_per_s && speeds->find_link_prior(x.family); });
  ASSERT_TRUE(datasheet && measured && prior && family_link);
  const engine::SpeedProfile* profile = speeds->find("vllm", datasheet->platform, datasheet->id);
  ASSERT_NE(profile, nullptr);
  engine::SpeedProfile other_profile = *profile;  // other latencies: the links' numbers differ
  other_profile.allreduce_latency_s *= 2;
  other_profile.pcie_allreduce_latency_s *= 3;
  engine::SpeedCatalog other_catalog = *speeds;  // another copy fraction and cross-node link
  other_catalog.cross_node_bandwidth_bytes_per_s *= 2;
  other_catalog.cross_node_latency_s *= 2;
  other_catalog.copy_fraction_of_peak *= 0.9;
  struct NumberCase {
    const model::ModelSpec* model;
    Case c;
  };
  std::vector<NumberCase> cases;
  for (const device::DeviceSpec* d : {datasheet, measured, prior, family_link})
    for (const engine::SpeedProfile* p : {profile, static_cast<const engine::SpeedProfile*>(&other_profile)})
      for (const engine::SpeedCatalog* catalog : {&*speeds, static_cast<const engine::SpeedCatalog*>(&other_catalog)})
        for (const auto& [tp, pp] : {std::pair<int64_t, int64_t>{1, 1}, {2, 1}, {8, 1}, {16, 1}, {8, 2}, {1, 4}})
          for (const int64_t per_node : {8, 4})
            for (const std::optional<double> bandwidth : {std::optional<double>(), std::optional<double>(1.5e12)})
              for (const bool explain : {false, true})
                for (const model::ModelSpec* m : {&*large, &*small}) cases.push_back({m, {d, p, catalog, tp, pp, per_node, bandwidth, explain}});
  const auto estimate_all = [&](bool held) {
    std::vector<std::pair<std::vector<double>, std::vector<std::string>>> out;
    std::thread worker([&] {  // a thread of its own: no earlier estimate filled its table
      const uint64_t epoch = estimate::new_held_texts_epoch();
      for (int pass = 0; pass < 2; ++pass)
        for (const NumberCase& n : cases) {
          std::optional<estimate::HeldTexts> scope;
          if (held) scope.emplace(epoch);
          const auto e = estimate_case(*n.model, n.c);
          auto texts = all_texts(e);
          texts.push_back(e.engine.str() + " " + e.platform.str() + " " + e.mode.str());
          out.emplace_back(all_numbers(e), std::move(texts));
        }
    });
    worker.join();
    return out;
  };
  const auto held = estimate_all(true), unheld = estimate_all(false);
  ASSERT_EQ(held.size(), unheld.size());
  for (size_t i = 0; i < held.size(); ++i) {
    const NumberCase& n = cases[i % cases.size()];
    const Case& c = n.c;
    EXPECT_EQ(held[i], unheld[i]) << n.model->num_hidden_layers << " layers on " << c.device->id << (c.profile == profile ? "" : ", second profile")
                                  << (c.catalog == &*speeds ? "" : ", second catalogue") << " TP " << c.tp << " PP " << c.pp << " per node "
                                  << c.devices_per_node << (c.bandwidth_bytes_per_s ? " --bandwidth" : "") << (c.explain ? " explained" : "");
  }
  // Each input changes the numbers (held by a key that left it out, a case would take another's).
  const auto numbers_of = [&](const model::ModelSpec& m, Case c) { return all_numbers(estimate_case(m, c)); };
  const Case base{datasheet, profile, &*speeds, 8, 2, 8, std::nullopt, false};
  Case with_device = base, with_profile = base, with_catalog = base, with_tp = base, with_pp = base, with_node = base, with_bandwidth = base;
  with_device.device = measured;
  with_profile.profile = &other_profile;
  with_catalog.catalog = &other_catalog;
  with_tp.tp = 4;
  with_pp.pp = 1;
  with_node.devices_per_node = 4;
  with_bandwidth.bandwidth_bytes_per_s = 1.5e12;
  for (const Case& c : {with_device, with_profile, with_catalog, with_tp, with_pp, with_node, with_bandwidth})
    EXPECT_NE(numbers_of(*large, c), numbers_of(*large, base));
  EXPECT_NE(numbers_of(*small, base)[6], numbers_of(*large, base)[6]);  // allreduces_per_step: 2 x the model's layers
}
