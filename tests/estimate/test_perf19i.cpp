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
