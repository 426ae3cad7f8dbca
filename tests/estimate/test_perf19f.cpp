// Issue 19 (planfast6): under an estimate::HeldTexts the speed estimate's text memos compare an entry's source texts once
// per epoch, not on every hit (estimate/held_texts.hpp). What the estimate returns must not change: an explained estimate
// under a held epoch equals one computed on a thread that holds none (its own memos, every hit compared), and a source
// text changed in place between two epochs (same address, same length, other characters) gives the new text in the next
// epoch and outside any, as it does without HeldTexts.
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
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

std::vector<std::string> texts(std::span<const SharedText> v) { return {v.begin(), v.end()}; }  // a std::vector or InlineVector

// Every text of an explained estimate, in order.
std::vector<std::string> all_texts(const estimate::SpeedEstimate& e) {
  std::vector<std::string> out = texts(e.provenance);
  for (const auto& a : e.assumptions) out.push_back(a);
  out.push_back(e.bandwidth_source);
  out.push_back(e.link);
  return out;
}

}  // namespace

TEST(Speed, Issue19_HeldTextsGiveWhatUnheldEstimatesGive) {
  const auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value());
  const auto devices = device::load_device_catalog();
  const auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(devices && speeds);
  // Every catalogue card with a vLLM or vLLM-Ascend profile, at TP 1, 2 and 8 and at TP 8 x PP 2 (across nodes): the
  // bandwidth basis, efficiency, link, PCIe and cross-node texts each come up, most of them on many cards.
  struct Case {
    const device::DeviceSpec* device;
    const engine::SpeedProfile* profile;
    int64_t tp, pp;
  };
  std::vector<Case> cases;
  for (const auto& d : devices->devices) {
    const engine::SpeedProfile* p = speeds->find(d.platform == "npu" ? "vllm-ascend" : "vllm", d.platform, d.id);
    if (!p) continue;
    for (const auto& [tp, pp] : {std::pair<int64_t, int64_t>{1, 1}, {2, 1}, {8, 1}, {8, 2}}) cases.push_back({&d, p, tp, pp});
  }
  ASSERT_GT(cases.size(), 200u);
  const auto estimate_all = [&](bool held) {
    std::vector<std::vector<std::string>> out;
    std::thread worker([&] {  // a thread of its own: memos no earlier estimate filled
      const uint64_t epoch = estimate::new_held_texts_epoch();
      for (int pass = 0; pass < 2; ++pass)  // the second pass hits every entry the first built
        for (const Case& c : cases) {
          estimate::Deployment d;
          d.tensor_parallel_size = c.tp;
          d.pipeline_parallel_size = c.pp;
          d.explain = true;
          estimate::SpeedWorkload w;
          w.context_tokens = 8192;
          if (held) {
            const estimate::HeldTexts scope(epoch);
            out.push_back(all_texts(estimate::estimate_speed(*m, *c.device, *c.profile, *speeds, d, w)));
          } else {
            out.push_back(all_texts(estimate::estimate_speed(*m, *c.device, *c.profile, *speeds, d, w)));
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
    EXPECT_EQ(held[i], unheld[i]) << c.device->id << " TP " << c.tp << " PP " << c.pp;
  }
}

TEST(Speed, Issue19_HeldTextsCompareASourceChangedBetweenEpochs) {
  const auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value());
  const auto devices = device::load_device_catalog();
  const auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(devices && speeds);
  // A card whose bandwidth basis names its source_bandwidth (a measured copy bandwidth), a text on the heap: changed in
  // place, it keeps its address.
  const auto measured = std::find_if(devices->devices.begin(), devices->devices.end(), [](const device::DeviceSpec& x) {
    return x.platform == "cuda" && x.measured_copy_bandwidth_bytes_per_s && x.source_bandwidth.size() > 20;
  });
  ASSERT_NE(measured, devices->devices.end());
  device::DeviceSpec d = *measured;
  const engine::SpeedProfile* p = speeds->find("vllm", d.platform, d.id);
  ASSERT_NE(p, nullptr);
  estimate::Deployment dep;
  dep.explain = true;
  estimate::SpeedWorkload w;
  w.context_tokens = 8192;
  const std::string original = d.source_bandwidth;
  std::string changed = original;
  changed[0] = changed[0] == 'X' ? 'Y' : 'X';
  const auto basis = [&] { return estimate::estimate_speed(*m, d, *p, *speeds, dep, w).bandwidth_source.str(); };
  std::vector<std::string> seen;
  std::thread worker([&] {
    {
      const estimate::HeldTexts scope(estimate::new_held_texts_epoch());
      seen.push_back(basis());
      seen.push_back(basis());  // a hit under the epoch that built it
    }
    const char* before = d.source_bandwidth.data();
    d.source_bandwidth.replace(0, d.source_bandwidth.size(), changed);  // same length: the same block
    EXPECT_EQ(d.source_bandwidth.data(), before);
    {
      const estimate::HeldTexts scope(estimate::new_held_texts_epoch());  // a new epoch compares the kept characters again
      seen.push_back(basis());
    }
    d.source_bandwidth.replace(0, d.source_bandwidth.size(), original);
    seen.push_back(basis());  // no epoch: compared on every hit
  });
  worker.join();
  ASSERT_EQ(seen.size(), 4u);
  const std::string expect_original = "measured copy bandwidth in the device catalogue (" + original + ")";
  const std::string expect_changed = "measured copy bandwidth in the device catalogue (" + changed + ")";
  EXPECT_EQ(seen[0], expect_original);
  EXPECT_EQ(seen[1], expect_original);
  EXPECT_EQ(seen[2], expect_changed);
  EXPECT_EQ(seen[3], expect_original);
}
