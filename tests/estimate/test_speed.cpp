#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "base/json_util.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/speed.hpp"
#include "model/model_source.hpp"

using namespace preflight;

namespace {

struct SpeedSetup {
  model::ModelSpec model;
  device::DeviceSpec device;
  engine::SpeedCatalog speeds;
  const engine::SpeedProfile* profile = nullptr;
};

SpeedSetup setup(const std::string& model_id, const std::string& device_id, const std::string& engine) {
  SpeedSetup s;
  auto m = model::resolve_model(model_id);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().describe());
  s.model = *m;
  auto devices = device::load_device_catalog();
  s.device = *device::find_device(*devices, device_id);
  s.device.overrides.clear();
  auto speeds = engine::load_speed_catalog();
  EXPECT_TRUE(speeds.has_value()) << (speeds ? "" : speeds.error().describe());
  s.speeds = *speeds;
  s.profile = s.speeds.find(engine, s.device.platform);
  EXPECT_NE(s.profile, nullptr);
  return s;
}

estimate::SpeedEstimate run(const SpeedSetup& s, const estimate::Deployment& d, const estimate::SpeedWorkload& w) {
  return estimate::estimate_speed(s.model, s.device, *s.profile, s.speeds, d, w);
}

double seed_bandwidth() { return 1267e9; }  // seeds/001 section 1: torch_npu copy benchmark on the 910B3

}  // namespace

// n x (1 - (1 - k/n)^B): 128 experts, top-8. B=1: 8. B=2: 128 x (1 - (120/128)^2) = 15.5.
TEST(Speed, ExpectedDistinctExperts) {
  EXPECT_DOUBLE_EQ(estimate::expected_distinct_experts(128, 8, 1), 8.0);
  EXPECT_NEAR(estimate::expected_distinct_experts(128, 8, 2), 15.5, 1e-9);
  EXPECT_NEAR(estimate::expected_distinct_experts(128, 8, 10000), 128.0, 1e-6);
  EXPECT_EQ(estimate::expected_distinct_experts(0, 8, 4), 0.0);
}

// Qwen3-8B, TP 1: every weight but the input embedding is read per step.
// 8,190,735,360 params - embed_tokens 151,936 x 4,096 = 622,329,856 -> 7,568,405,504 x 2 B = 15,136,811,008 B.
// KV at context 1,024: 147,456 B/token x 1,024 = 150,994,944 B.
TEST(Speed, BytesReadPerStepFromTheModel) {
  auto s = setup("Qwen/Qwen3-8B", "910B3", "vllm-ascend");
  estimate::SpeedWorkload w;
  w.context_tokens = 1024;
  const auto e = run(s, {}, w);
  ASSERT_EQ(e.points.size(), 1u);
  EXPECT_DOUBLE_EQ(e.points[0].terms.weight_bytes, 15136811008.0);
  EXPECT_DOUBLE_EQ(e.points[0].terms.kv_bytes, 150994944.0);
  EXPECT_EQ(e.points[0].terms.state_bytes, 0.0);
  EXPECT_EQ(e.points[0].terms.bound, "memory");
  // TP 2: each rank reads half the column/row-split weights; 2 all-reduces per layer, 36 layers.
  estimate::Deployment tp2;
  tp2.tensor_parallel_size = 2;
  const auto e2 = run(s, tp2, w);
  EXPECT_NEAR(e2.points[0].terms.weight_bytes, 15136811008.0 / 2, 15136811008.0 * 0.01);
  EXPECT_EQ(e2.allreduces_per_step, 72);
  EXPECT_GT(e2.points[0].terms.communication_s, 0.0);
}

// The seed's three measurements (seeds/001 sections 5-6), with its measured bandwidth.
TEST(Speed, SeedDecodeSpeeds) {
  estimate::SpeedWorkload w;
  w.bandwidth_bytes_per_s = seed_bandwidth();
  auto vl = setup("Qwen/Qwen3-VL-8B-Instruct", "910B3", "vllm-ascend");
  const double graph = run(vl, {}, w).single_stream_tokens_per_s;
  EXPECT_NEAR(graph, 58.9, 58.9 * 0.10);
  estimate::Deployment eager;
  eager.mode = estimate::ExecutionMode::eager;
  const double slow = run(vl, eager, w).single_stream_tokens_per_s;
  EXPECT_NEAR(slow, 10.3, 10.3 * 0.25);
  EXPECT_GT(graph / slow, 4.0);
  auto hybrid = setup("Qwen/Qwen3.5-27B", "910B3", "vllm-ascend");
  const auto h = run(hybrid, {}, w);
  EXPECT_NEAR(h.single_stream_tokens_per_s, 19.3, 19.3 * 0.10);
  EXPECT_GT(h.points[0].terms.state_bytes, 0.0);  // 48 Gated DeltaNet layers read and write their state
  EXPECT_LT(h.single_stream_low, h.single_stream_tokens_per_s);
  EXPECT_GT(h.single_stream_high, h.single_stream_tokens_per_s);
}

// A measured bandwidth replaces the catalogue's, and speed scales with it while memory-bound.
TEST(Speed, MeasuredBandwidthReplacesTheCatalogue) {
  auto s = setup("Qwen/Qwen3-32B", "H100", "vllm");
  estimate::SpeedWorkload w;
  const auto catalogue = run(s, {}, w);
  EXPECT_NE(catalogue.bandwidth_source.find("datasheet"), std::string::npos);
  w.bandwidth_bytes_per_s = catalogue.bandwidth_bytes_per_s / 2;
  const auto halved = run(s, {}, w);
  EXPECT_NE(halved.bandwidth_source.find("measured"), std::string::npos);
  EXPECT_LT(halved.single_stream_tokens_per_s, catalogue.single_stream_tokens_per_s * 0.6);
}

// MoE: a batch touches more distinct experts than one token; never more than all of them.
TEST(Speed, MoeReadsGrowWithBatch) {
  auto s = setup("Qwen/Qwen3-30B-A3B", "H100", "vllm");
  estimate::SpeedWorkload w;
  w.concurrency = {1, 8, 256};
  const auto e = run(s, {}, w);
  ASSERT_EQ(e.points.size(), 3u);
  EXPECT_LT(e.points[0].terms.weight_bytes, e.points[1].terms.weight_bytes);
  EXPECT_LT(e.points[1].terms.weight_bytes, e.points[2].terms.weight_bytes);
  EXPECT_EQ(e.moe_layers, 48);
  EXPECT_GT(e.points[2].aggregate_tokens_per_s, e.points[0].aggregate_tokens_per_s * 10);
  EXPECT_LT(e.points[2].per_stream_tokens_per_s, e.points[0].per_stream_tokens_per_s);
}

// Cross-node: TP 16 sends every all-reduce over the NIC; TP 8 x PP 2 crosses it once per token.
TEST(Speed, CrossNodeTensorParallelIsSlowerThanPipelineAcrossNodes) {
  auto s = setup("Qwen/Qwen3-235B-A22B", "910B3", "vllm-ascend");
  estimate::SpeedWorkload w;
  estimate::Deployment tp16, tp8pp2;
  tp16.tensor_parallel_size = 16;
  tp8pp2.tensor_parallel_size = 8;
  tp8pp2.pipeline_parallel_size = 2;
  const auto a = run(s, tp16, w), b = run(s, tp8pp2, w);
  EXPECT_TRUE(a.cross_node);
  EXPECT_TRUE(b.cross_node);
  EXPECT_GT(a.points[0].terms.communication_s, b.points[0].terms.communication_s);
  bool explained = false;
  for (const auto& x : a.assumptions) explained |= x.find("spans nodes") != std::string::npos;
  EXPECT_TRUE(explained);
}

TEST(Speed, PrefillIsComputeBoundAndGrowsWithInput) {
  auto s = setup("Qwen/Qwen3-8B", "H100", "vllm");
  estimate::SpeedWorkload short_in, long_in;
  short_in.input_tokens = 512;
  long_in.input_tokens = 16384;
  const auto a = run(s, {}, short_in), b = run(s, {}, long_in);
  EXPECT_GT(a.ttft_s, 0.0);
  EXPECT_GT(b.ttft_s, a.ttft_s * 20);
  EXPECT_LT(b.ttft_low_s, b.ttft_s);
}

// A card with neither a datasheet, a measured nor a prior bandwidth (a test device: every catalogue card
// has at least a prior since issue 20) gets no speed, and the output says why.
TEST(Speed, NoBandwidthMeansNoEstimateAndSaysWhy) {
  auto s = setup("Qwen/Qwen3-8B", "910B4", "vllm-ascend");
  s.device.id = "test-card-without-bandwidth";
  s.device.hbm_bandwidth_bytes_per_s.reset();
  s.device.measured_copy_bandwidth_bytes_per_s.reset();
  const auto e = run(s, {}, {});
  EXPECT_TRUE(e.points.empty());
  ASSERT_FALSE(e.assumptions.empty());
  EXPECT_NE(e.assumptions.back().find("no bandwidth"), std::string::npos);
}

// Issue 20: the 910B4 has no datasheet or measured bandwidth; the catalogue prior (data/evidence/ascend-bandwidth.md)
// is 800 GB/s peak, 800 - 1600 GB/s possible. Copy bandwidth = 800 x 0.80 = 640 GB/s, range 640 - 1,280 GB/s.
// The band is one-sided: the fast end (twice the bandwidth, memory-bound model) is much further from the
// estimate than the slow end, which only carries the profile's +/- spread.
TEST(Speed, Issue20_910B4BandwidthPriorGivesSpeedWithOneSidedBand) {
  auto s = setup("Qwen/Qwen3-8B", "910B4", "vllm-ascend");
  ASSERT_FALSE(s.device.hbm_bandwidth_bytes_per_s.has_value());
  const auto e = run(s, {}, {});
  ASSERT_FALSE(e.points.empty());
  EXPECT_TRUE(e.bandwidth_is_prior);
  EXPECT_NEAR(e.bandwidth_bytes_per_s, 640e9, 1e6);
  EXPECT_NEAR(e.bandwidth_low_bytes_per_s, 640e9, 1e6);
  EXPECT_NEAR(e.bandwidth_high_bytes_per_s, 1280e9, 1e6);
  const double mid = e.single_stream_tokens_per_s;
  EXPECT_LT(e.single_stream_low, mid);
  EXPECT_GT(e.single_stream_high / mid, 1.5);  // up to ~2x faster when the card has 1.6 TB/s
  EXPECT_LT(mid / e.single_stream_low, 1.3);   // slower only by the profile's spread
  bool says_prior = false;
  for (const auto& a : e.assumptions) says_prior |= a.find("prior, until `preflight bw --save") != std::string::npos;
  EXPECT_TRUE(says_prior);
  EXPECT_NE(e.bandwidth_source.find("prior, until `preflight bw --save"), std::string::npos);
}

// Issue 19 (round 15): a catalogue prior's two texts are kept per thread and built again when the prior changes. The
// 910B4's prior is 800 GB/s peak (800 - 1600) x copy fraction 0.80 = 640 GB/s (band 640 - 1,280); with the peak and
// the range raised to 900 GB/s (900 - 1800) it is 900 x 0.80 = 720 GB/s (band 720 - 1,440), and the second
// estimate, made right after the first on the same thread, says so rather than repeating the first one's texts.
TEST(Speed, Issue19_BandwidthPriorTextsFollowThePrior) {
  auto s = setup("Qwen/Qwen3-8B", "910B4", "vllm-ascend");
  const std::string until = "prior, until `preflight bw --save --device 910B4` measures the card";
  const auto first = run(s, {}, {});
  ASSERT_FALSE(first.assumptions.empty());
  EXPECT_EQ(first.assumptions.front(), "no datasheet or measured bandwidth for 910B4: copy bandwidth 640 GB/s (band 640 - 1280 GB/s) from a " + until);
  EXPECT_EQ(first.bandwidth_source.str().rfind("catalogue prior: peak 800 GB/s (public figures allow 800 - 1600 GB/s) x copy fraction 0.80 (", 0), 0u);
  for (auto& prior : s.speeds.bandwidth_priors)
    if (prior.device == "910B4") {
      prior.peak_bytes_per_s = prior.low_bytes_per_s = 900e9;
      prior.high_bytes_per_s = 1800e9;
    }
  const auto second = run(s, {}, {});
  ASSERT_FALSE(second.assumptions.empty());
  EXPECT_NEAR(second.bandwidth_bytes_per_s, 720e9, 1e6);
  EXPECT_EQ(second.assumptions.front(), "no datasheet or measured bandwidth for 910B4: copy bandwidth 720 GB/s (band 720 - 1440 GB/s) from a " + until);
  EXPECT_EQ(second.bandwidth_source.str().rfind("catalogue prior: peak 900 GB/s (public figures allow 900 - 1800 GB/s) x copy fraction 0.80 (", 0), 0u);
  const std::string& source = second.bandwidth_source.str();
  EXPECT_EQ(source.substr(source.size() - until.size()), until);
}

// Issue 20: every catalogue card gets a speed; every card without a measured copy bandwidth says it is a prior.
TEST(Speed, Issue20_EveryCatalogueCardHasASpeedAndUnmeasuredOnesSayPrior) {
  auto devices = device::load_device_catalog();
  ASSERT_TRUE(devices.has_value());
  auto s = setup("Qwen/Qwen3-8B", "H100", "vllm");
  for (const auto& d : devices->devices) {
    s.device = d;
    const std::string engine = d.platform == "npu" ? "vllm-ascend" : (d.platform == "cuda" || d.platform == "rocm") ? "vllm" : "llama.cpp";
    const engine::SpeedProfile* p = s.speeds.find(engine, d.platform, d.id);
    ASSERT_NE(p, nullptr) << d.id;
    const auto e = estimate::estimate_speed(s.model, d, *p, s.speeds, {}, {});
    EXPECT_FALSE(e.points.empty()) << d.id;
    EXPECT_EQ(e.bandwidth_is_prior, !d.measured_copy_bandwidth_bytes_per_s.has_value()) << d.id;
    EXPECT_LE(e.single_stream_low, e.single_stream_tokens_per_s) << d.id;
    EXPECT_GE(e.single_stream_high, e.single_stream_tokens_per_s) << d.id;
  }
}

// Issue 20: host work per decode step has a fixed part and a part per running sequence. With every other
// host term zeroed: overhead at batch B = 1 ms + B x 50 us -> B=1: 1.05 ms, B=16: 1.80 ms.
TEST(Speed, Issue20_SequenceOverheadGrowsWithTheBatch) {
  auto s = setup("Qwen/Qwen3-8B", "H100", "vllm");
  engine::SpeedProfile p = *s.profile;
  p.step_overhead_s = 1e-3;
  p.sequence_overhead_s = 50e-6;
  estimate::SpeedWorkload w;
  w.concurrency = {1, 16};
  const auto e = estimate::estimate_speed(s.model, s.device, p, s.speeds, {}, w);
  ASSERT_EQ(e.points.size(), 2u);
  EXPECT_NEAR(e.points[0].terms.overhead_s, 1.05e-3, 1e-12);
  EXPECT_NEAR(e.points[1].terms.overhead_s, 1.80e-3, 1e-12);
  p.sequence_overhead_s = 0;
  const auto none = estimate::estimate_speed(s.model, s.device, p, s.speeds, {}, w);
  EXPECT_NEAR(e.points[1].terms.step_s - none.points[1].terms.step_s, 16 * 50e-6, 1e-12);
}

// Issue 20: decode reads the KV cache at the context asked for. Qwen3-8B: 147,456 B of KV per token (36 layers x
// 8 KV heads x 128 x 2 (K, V) x 2 B) -> 150,994,944 B at 1,024 and 4,831,838,208 B at 32,768.
TEST(Speed, Issue20_KvBytesGrowWithTheRequestedContext) {
  auto s = setup("Qwen/Qwen3-8B", "H100", "vllm");
  estimate::SpeedWorkload short_ctx, long_ctx;
  long_ctx.context_tokens = 32768;
  const auto a = run(s, {}, short_ctx), b = run(s, {}, long_ctx);
  EXPECT_DOUBLE_EQ(a.points[0].terms.kv_bytes, 150994944.0);
  EXPECT_DOUBLE_EQ(b.points[0].terms.kv_bytes, 4831838208.0);
  EXPECT_EQ(b.context_tokens, 32768);
  EXPECT_LT(b.single_stream_tokens_per_s, a.single_stream_tokens_per_s * 0.85);
}

// Issue 20: the link a layout's collectives cross is named: the device's own link and figure, PCIe when the
// catalogue has no link bandwidth and no family prior (Atlas 350, a PCIe card), the A2 family's HCCS prior (910B4), the
// inter-node NIC when TP spans nodes.
TEST(Speed, Issue20_TheLinkAssumedIsNamed) {
  estimate::Deployment tp2, tp16;
  tp2.tensor_parallel_size = 2;
  tp16.tensor_parallel_size = 16;
  auto h100 = setup("Qwen/Qwen3-32B", "H100", "vllm");
  EXPECT_NE(run(h100, tp2, {}).link.find("NVLink4 (PCIe5 x16 to host), 900 GB/s (device catalogue)"), std::string::npos) << run(h100, tp2, {}).link;
  EXPECT_NE(run(h100, tp16, {}).link.find("all-reduces over the inter-node NIC, 25 GB/s + 20 us"), std::string::npos) << run(h100, tp16, {}).link;
  EXPECT_TRUE(run(h100, {}, {}).link.empty());
  auto b4 = setup("Qwen/Qwen3-32B", "910B4", "vllm-ascend");
  const auto hccs = run(b4, tp2, {});
  EXPECT_NE(hccs.link.find("HCCS within an A2 node, 50 GB/s (prior for the ascend-a2 family"), std::string::npos) << hccs.link;
  auto atlas = setup("Qwen/Qwen3-32B", "Atlas350", "vllm-ascend");
  const auto e = run(atlas, tp2, {});
  EXPECT_NE(e.link.find("PCIe 4 x16, 32 GB/s (assumed: no link bandwidth for Atlas350)"), std::string::npos) << e.link;
  bool in_provenance = false;
  for (const auto& p : e.provenance) in_provenance |= p.rfind("link: PCIe 4 x16", 0) == 0;
  EXPECT_TRUE(in_provenance);
}

// Issue 19: the link's name is text, built only where the estimate explains itself (a plan's table rows
// never show it; `plan --json` and `fit` do); every number is the same either way. TP 2 and TP 16 (across
// nodes) on H100, TP 2 on the PCIe Atlas 350.
TEST(Speed, Issue19_LinkNamedOnlyWhenExplained) {
  auto h100 = setup("Qwen/Qwen3-32B", "H100", "vllm");
  auto atlas = setup("Qwen/Qwen3-32B", "Atlas350", "vllm-ascend");
  for (auto* s : {&h100, &atlas}) {
    for (const int64_t tp : {2, 16}) {
      estimate::Deployment shown, silent;
      shown.tensor_parallel_size = silent.tensor_parallel_size = tp;
      silent.explain = false;
      const auto a = run(*s, shown, {}), b = run(*s, silent, {});
      EXPECT_FALSE(a.link.empty()) << tp;
      EXPECT_TRUE(b.link.empty()) << tp << ": " << b.link;
      EXPECT_TRUE(b.provenance.empty()) << tp;
      EXPECT_EQ(a.cross_node, b.cross_node) << tp;
      EXPECT_EQ(a.allreduces_per_step, b.allreduces_per_step) << tp;
      EXPECT_EQ(a.single_stream_tokens_per_s, b.single_stream_tokens_per_s) << tp;
      EXPECT_EQ(a.ttft_s, b.ttft_s) << tp;
      ASSERT_EQ(a.points.size(), b.points.size());
      for (size_t i = 0; i < a.points.size(); ++i) EXPECT_EQ(a.points[i].terms.step_s, b.points[i].terms.step_s) << tp;
    }
  }
}

// Issue 19: the texts a plan repeats on every row of a device (bandwidth basis, effective bandwidth, link, the
// cross-node assumption) are built once per thread and reused while their inputs repeat. Reused only then:
// the same device object, changed in place between two estimates (datasheet 3350 -> 2000 GB/s, link
// NVLink4 900 -> "TestLink" 100 GB/s, NIC 25 -> 50 GB/s), gives the texts of the new figures, and
// changed back, the first ones again. Expected figures by hand: 2000 x copy fraction 0.80 = 1600 GB/s.
TEST(Speed, Issue19_RepeatedTextsFollowTheirInputs) {
  auto h100 = setup("Qwen/Qwen3-32B", "H100", "vllm");
  estimate::Deployment tp2, tp16;
  tp2.tensor_parallel_size = 2;
  tp16.tensor_parallel_size = 16;
  const auto first = run(h100, tp2, {}), first16 = run(h100, tp16, {});
  ASSERT_EQ(first.bandwidth_source.rfind("datasheet peak 3350 GB/s x copy fraction 0.80 (", 0), 0u) << first.bandwidth_source;
  auto joined = [](const auto& v) {  // a speed estimate's InlineVector of texts
    std::string all;
    for (const auto& x : v) all += x.str() + "\n";
    return all;
  };
  ASSERT_NE(joined(first16.assumptions).find("crosses the 25 GB/s NIC"), std::string::npos) << joined(first16.assumptions);

  const auto hbm = h100.device.hbm_bandwidth_bytes_per_s;
  const auto link_bw = h100.device.interconnect_bandwidth_bytes_per_s;
  const std::string link = h100.device.interconnect;
  const double nic = h100.speeds.cross_node_bandwidth_bytes_per_s;
  h100.device.hbm_bandwidth_bytes_per_s = 2000e9;
  h100.device.interconnect = "TestLink";
  h100.device.interconnect_bandwidth_bytes_per_s = 100e9;
  h100.speeds.cross_node_bandwidth_bytes_per_s = 50e9;
  const auto changed = run(h100, tp2, {}), changed16 = run(h100, tp16, {});
  EXPECT_EQ(changed.bandwidth_source.rfind("datasheet peak 2000 GB/s x copy fraction 0.80 (", 0), 0u) << changed.bandwidth_source;
  EXPECT_NE(joined(changed.assumptions).find("bandwidth 1600 GB/s = datasheet peak x 0.80"), std::string::npos) << joined(changed.assumptions);
  EXPECT_NE(joined(changed.provenance).find("= 1600 GB/s x decode efficiency"), std::string::npos) << joined(changed.provenance);
  EXPECT_EQ(changed.link.rfind("TestLink, 100 GB/s (device catalogue)", 0), 0u) << changed.link;
  EXPECT_NE(joined(changed.provenance).find("link: TestLink, 100 GB/s"), std::string::npos) << joined(changed.provenance);
  EXPECT_NE(joined(changed16.assumptions).find("crosses the 50 GB/s NIC"), std::string::npos) << joined(changed16.assumptions);
  EXPECT_NE(changed16.link.find("inter-node NIC, 50 GB/s"), std::string::npos) << changed16.link;

  h100.device.hbm_bandwidth_bytes_per_s = hbm;
  h100.device.interconnect = link;
  h100.device.interconnect_bandwidth_bytes_per_s = link_bw;
  h100.speeds.cross_node_bandwidth_bytes_per_s = nic;
  const auto again = run(h100, tp2, {}), again16 = run(h100, tp16, {});
  EXPECT_EQ(again.bandwidth_source, first.bandwidth_source);
  EXPECT_EQ(again.link, first.link);
  EXPECT_EQ(again.provenance, first.provenance);
  EXPECT_EQ(again.assumptions, first.assumptions);
  EXPECT_EQ(again16.assumptions, first16.assumptions);
  EXPECT_EQ(again16.link, first16.link);
}

// Issue 19 (round 12): the repeated texts' memo names a source text in its key by address and length, not by its
// characters; a text changed in place to other characters of the same length (same buffer, same address: the case
// of a freed catalogue whose memory a later one reuses) must still give the texts of its new characters. The card's
// id, the copy fraction's evidence and the NIC's source each get their first character changed in place; the texts
// that quote them (bandwidth basis "... --device ID` measures the card", "(EVIDENCE)", the link's "inter-node NIC,
// ... (SOURCE)") must quote the new ones, and changed back, the first texts again.
TEST(Speed, Issue19_RepeatedTextsFollowTheirCharactersAtOneAddress) {
  auto h100 = setup("Qwen/Qwen3-32B", "H100", "vllm");
  estimate::Deployment tp2, tp16;
  tp2.tensor_parallel_size = 2;
  tp16.tensor_parallel_size = 16;
  const auto first = run(h100, tp2, {}), first16 = run(h100, tp16, {});
  std::string& id = h100.device.id;
  std::string& evidence = h100.speeds.copy_fraction_evidence;
  std::string& nic = h100.speeds.cross_node_source;
  ASSERT_FALSE(id.empty());
  ASSERT_FALSE(evidence.empty());
  ASSERT_FALSE(nic.empty());
  ASSERT_NE(first.bandwidth_source.find("--device " + id + "` measures the card"), std::string::npos) << first.bandwidth_source;
  ASSERT_NE(first.bandwidth_source.find("(" + evidence + ")"), std::string::npos) << first.bandwidth_source;
  ASSERT_NE(first16.link.find("(" + nic + ")"), std::string::npos) << first16.link;
  const char *id_at = id.data(), *evidence_at = evidence.data(), *nic_at = nic.data();
  const std::string id0 = id, evidence0 = evidence, nic0 = nic;
  id[0] = id[0] == 'Q' ? 'Z' : 'Q';
  evidence[0] = evidence[0] == 'Q' ? 'Z' : 'Q';
  nic[0] = nic[0] == 'Q' ? 'Z' : 'Q';
  ASSERT_EQ(id.data(), id_at);  // the same addresses and lengths: only the characters differ
  ASSERT_EQ(evidence.data(), evidence_at);
  ASSERT_EQ(nic.data(), nic_at);
  const auto changed = run(h100, tp2, {}), changed16 = run(h100, tp16, {});
  EXPECT_NE(changed.bandwidth_source.find("--device " + id + "` measures the card"), std::string::npos) << changed.bandwidth_source;
  EXPECT_NE(changed.bandwidth_source.find("(" + evidence + ")"), std::string::npos) << changed.bandwidth_source;
  EXPECT_NE(changed16.link.find("(" + nic + ")"), std::string::npos) << changed16.link;
  EXPECT_EQ(changed16.link.find("(" + nic0 + ")"), std::string::npos) << changed16.link;

  id = id0;
  evidence = evidence0;
  nic = nic0;
  const auto again = run(h100, tp2, {}), again16 = run(h100, tp16, {});
  EXPECT_EQ(again.bandwidth_source, first.bandwidth_source);
  EXPECT_EQ(again.assumptions, first.assumptions);
  EXPECT_EQ(again.provenance, first.provenance);
  EXPECT_EQ(again16.link, first16.link);
  EXPECT_EQ(again16.assumptions, first16.assumptions);
}

// Issue 19: the decode-step line of the speed provenance is written without printf (std::to_chars, on every
// row of plan --json); it reads as printf writes it from the concurrency-1 point's terms: Qwen3-32B (dense) and
// Qwen3-30B-A3B (MoE), on H100 TP 1/2/16 (graph) and on 910B3 TP 1/8 eager and graph.
TEST(Speed, Issue19_DecodeLineAsPrintfWritesIt) {
  auto line_of = [](const estimate::SpeedEstimate& e) {
    for (const auto& p : e.provenance)
      if (p.rfind("decode step at batch 1:", 0) == 0) return p.str();
    return std::string();
  };
  int checked = 0;
  for (const char* model : {"Qwen/Qwen3-32B", "Qwen/Qwen3-30B-A3B"}) {
    for (const auto& [device, engine] : {std::pair<const char*, const char*>{"H100", "vllm"}, {"910B3", "vllm-ascend"}}) {
      auto s = setup(model, device, engine);
      for (const int64_t tp : {1, 2, 8, 16}) {
        for (const auto mode : {estimate::ExecutionMode::graph, estimate::ExecutionMode::eager}) {
          estimate::Deployment d;
          d.tensor_parallel_size = tp;
          d.mode = mode;
          estimate::SpeedWorkload w;
          w.concurrency = {1};
          w.context_tokens = 3000 + tp;
          const auto e = run(s, d, w);
          ASSERT_EQ(e.points.size(), 1u);
          const auto& t = e.points[0].terms;
          char expected[1024];
          std::snprintf(expected, sizeof expected,
                        "decode step at batch 1: weights %.2f GB + KV %.3f GB + state %.3f GB per rank at context %lld -> memory %.2f ms; %s overhead %.2f ms; "
                        "MoE routing %.2f ms (%lld layers); communication %.2f ms (%lld all-reduces)",
                        t.weight_bytes / 1e9, t.kv_bytes / 1e9, t.state_bytes / 1e9, static_cast<long long>(w.context_tokens), t.memory_s * 1e3,
                        e.mode == "eager" ? "eager dispatch" : "graph step", t.overhead_s * 1e3, t.moe_s * 1e3, static_cast<long long>(e.moe_layers),
                        t.communication_s * 1e3, static_cast<long long>(e.allreduces_per_step));
          EXPECT_EQ(line_of(e), expected) << model << " " << device << " TP" << tp;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 32);
}

// Issue 19 (round 17): the texts' memo is a table that empties at half its slots and probes past its neighbours. Over
// 5,000 contexts (more keys than the decode and prefill lines' table keeps: it empties and refills) and again in
// another order (hits, and keys built afresh after the table emptied), every row's decode line is what printf writes
// from that row's own terms, and its prefill line names that row's input tokens: a stale or a neighbour's entry would not.
TEST(Speed, Issue19_TextMemoTableRefillsWithoutStaleLines) {
  auto s = setup("Qwen/Qwen3-32B", "H100", "vllm");
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  const int64_t n = 5000;
  int checked = 0;
  for (const int pass : {0, 1}) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = pass == 0 ? i : (i * 7919) % n;  // 7919 is prime, so the second pass visits every context once
      estimate::SpeedWorkload w;
      w.concurrency = {1};
      w.context_tokens = 1000 + k;
      w.input_tokens = 1000 + k;
      const auto e = run(s, d, w);
      ASSERT_EQ(e.points.size(), 1u);
      const auto& t = e.points[0].terms;
      char decode[1024];
      std::snprintf(decode, sizeof decode,
                    "decode step at batch 1: weights %.2f GB + KV %.3f GB + state %.3f GB per rank at context %lld -> memory %.2f ms; %s overhead %.2f ms; "
                    "MoE routing %.2f ms (%lld layers); communication %.2f ms (%lld all-reduces)",
                    t.weight_bytes / 1e9, t.kv_bytes / 1e9, t.state_bytes / 1e9, static_cast<long long>(w.context_tokens), t.memory_s * 1e3,
                    e.mode == "eager" ? "eager dispatch" : "graph step", t.overhead_s * 1e3, t.moe_s * 1e3, static_cast<long long>(e.moe_layers),
                    t.communication_s * 1e3, static_cast<long long>(e.allreduces_per_step));
      const std::string prefill = "prefill " + std::to_string(w.input_tokens) + " tokens: ";
      int found = 0;
      for (const auto& p : e.provenance) {
        if (p.rfind("decode step at batch 1:", 0) == 0) found += (p == decode) ? 1 : 100;
        if (p.rfind("prefill ", 0) == 0) found += p.rfind(prefill, 0) == 0 ? 1 : 100;
      }
      ASSERT_EQ(found, 2) << "pass " << pass << ", context " << w.context_tokens;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2 * n);
}

// Issue 19 (round 17): the link text's memo key holds only the texts the chosen branch reads, after the flags that
// choose it. Changed in place (same address and length, one character), the text each branch reads shows in the link:
// the catalogue link's name (H100 TP 2), the card's id where no link is known and PCIe is assumed (H100 with its link
// bandwidth and family taken away), the family prior's source (910B4 TP 2, HCCS of the ascend-a2 family); changed
// back, the first text again.
TEST(Speed, Issue19_LinkTextFollowsWhatItsBranchReads) {
  estimate::Deployment tp2;
  tp2.tensor_parallel_size = 2;
  auto flip = [](std::string& text) { text[0] = text[0] == 'Q' ? 'Z' : 'Q'; };
  auto check = [&](SpeedSetup& s, std::string& text, const std::string& where) {
    ASSERT_FALSE(text.empty()) << where;
    const auto first = run(s, tp2, {});
    ASSERT_NE(first.link.find(text), std::string::npos) << where << ": " << first.link;
    const std::string before = text;
    const char* at = text.data();
    flip(text);
    ASSERT_EQ(text.data(), at) << where;
    const auto changed = run(s, tp2, {});
    EXPECT_NE(changed.link.find(text), std::string::npos) << where << ": " << changed.link;
    EXPECT_EQ(changed.link.find(before), std::string::npos) << where << ": " << changed.link;
    text = before;
    EXPECT_EQ(run(s, tp2, {}).link, first.link) << where;
  };
  auto h100 = setup("Qwen/Qwen3-32B", "H100", "vllm");
  check(h100, h100.device.interconnect, "H100 link name");
  auto pcie = setup("Qwen/Qwen3-32B", "H100", "vllm");
  pcie.device.interconnect_bandwidth_bytes_per_s.reset();
  pcie.device.family = "no-such-family";
  ASSERT_EQ(pcie.speeds.find_link_prior(pcie.device.family), nullptr);
  ASSERT_NE(run(pcie, tp2, {}).link.find("(assumed: no link bandwidth for " + pcie.device.id + ")"), std::string::npos) << run(pcie, tp2, {}).link;
  check(pcie, pcie.device.id, "PCIe assumed, card id");
  auto b4 = setup("Qwen/Qwen3-32B", "910B4", "vllm-ascend");
  const engine::LinkPrior* prior = b4.speeds.find_link_prior(b4.device.family);
  ASSERT_NE(prior, nullptr);
  ASSERT_FALSE(b4.device.interconnect_bandwidth_bytes_per_s.has_value());
  check(b4, const_cast<engine::LinkPrior*>(prior)->source, "910B4 family prior source");
}

TEST(SpeedCatalog, RejectsBadRecords) {
  auto base = [] {
    return Json::parse(R"({"schema_version":1,"copy_fraction_of_peak":{"value":0.8,"evidence":"x"},
      "cross_node":{"bandwidth_bytes_per_s":25e9,"latency_s":2e-5,"source":"x"},
      "profiles":[{"engine":"vllm","platform":"cuda","bandwidth_efficiency":0.9,"step_overhead_s":0.001,"eager_op_dispatch_s":1e-5,
        "ops_per_layer":{"full_attention":30},"moe_layer_overhead_s":5e-5,"allreduce_latency_s":2e-5,"prefill_compute_efficiency":0.5,
        "band_fraction":0.2,"evidence":"x"}]})");
  };
  EXPECT_TRUE(engine::parse_speed_catalog(base(), "speed.json").has_value());
  struct Case {
    const char* name;
    std::function<void(Json&)> mutate;
    const char* fragment;
  };
  const std::vector<Case> cases = {
      {"unknown key", [](Json& j) { j["profiles"][0]["bandwith_efficiency"] = 1; }, "bandwith_efficiency"},
      {"efficiency out of range", [](Json& j) { j["profiles"][0]["bandwidth_efficiency"] = 3.0; }, "bandwidth_efficiency"},
      {"missing evidence", [](Json& j) { j["profiles"][0].erase("evidence"); }, "evidence"},
      {"duplicate profile", [](Json& j) { j["profiles"].push_back(j["profiles"][0]); }, "duplicate"},
      {"negative op count", [](Json& j) { j["profiles"][0]["ops_per_layer"]["full_attention"] = -1; }, "ops_per_layer"},
      {"future schema", [](Json& j) { j["schema_version"] = 2; }, "schema_version"},
      {"Issue20 sequence overhead out of range", [](Json& j) { j["profiles"][0]["sequence_overhead_s"] = 0.5; }, "sequence_overhead_s"},
      {"Issue20 duplicate link prior", [](Json& j) { j["link_priors"] = Json::parse(R"([{"family":"f","name":"n","bandwidth_bytes_per_s":5e10,"source":"s"},
        {"family":"F","name":"n","bandwidth_bytes_per_s":5e10,"source":"s"}])"); }, "link_priors[F]: duplicate"},
      {"Issue20 link prior out of range", [](Json& j) { j["link_priors"] = Json::parse(R"([{"family":"f","name":"n","bandwidth_bytes_per_s":0,"source":"s"}])"); },
       "bandwidth_bytes_per_s"},
      {"Issue20 prior below its low end", [](Json& j) { j["bandwidth_priors"] = Json::parse(R"([{"device":"X1","peak_bytes_per_s":1e11,"low_bytes_per_s":2e11,
        "high_bytes_per_s":3e11,"source":"s"}])"); }, "bandwidth_priors[X1]: expected low_bytes_per_s <= peak_bytes_per_s"},
      {"Issue20 prior without source", [](Json& j) { j["bandwidth_priors"] = Json::parse(R"([{"device":"X1","peak_bytes_per_s":1e11,"low_bytes_per_s":1e11,
        "high_bytes_per_s":3e11}])"); }, "source"},
      {"Issue20 duplicate prior", [](Json& j) { j["bandwidth_priors"] = Json::parse(R"([{"device":"X1","peak_bytes_per_s":1e11,"low_bytes_per_s":1e11,
        "high_bytes_per_s":3e11,"source":"s"},{"device":"x1","peak_bytes_per_s":1e11,"low_bytes_per_s":1e11,"high_bytes_per_s":3e11,"source":"s"}])"); }, "duplicate"},
      {"Issue20 PCIe latency without its measurement", [](Json& j) { j["profiles"][0]["pcie_allreduce_latency_s"] = 1.8e-5; },
       "pcie_allreduce_latency_s needs pcie_allreduce_source"},
      {"Issue20 PCIe latency out of range", [](Json& j) {
         j["profiles"][0]["pcie_allreduce_latency_s"] = 0.5;
         j["profiles"][0]["pcie_allreduce_source"] = "s";
       }, "pcie_allreduce_latency_s"},
  };
  for (const auto& c : cases) {
    Json j = base();
    c.mutate(j);
    auto r = engine::parse_speed_catalog(j, "speed.json");
    ASSERT_FALSE(r.has_value()) << c.name;
    EXPECT_NE(r.error().describe().find(c.fragment), std::string::npos) << c.name << ": " << r.error().describe();
    EXPECT_NE(r.error().describe().find("speed.json"), std::string::npos) << c.name;
  }
}

// A user's calibration for one device replaces the catalogue's constants for that device only.
TEST(SpeedCatalog, UserOverlayCalibratesOneDevice) {
  auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(speeds.has_value());
  auto cat = *speeds;
  const double before = cat.find("vllm-ascend", "npu")->bandwidth_efficiency;
  const auto overlay = Json::parse(R"({"schema_version":1,"profiles":[{"engine":"vllm-ascend","platform":"npu","device":"910B3",
      "bandwidth_efficiency":0.5,"evidence":"preflight calibrate, 3 runs"}]})");
  ASSERT_TRUE(engine::apply_speed_overlay(cat, overlay, "/home/u/.config/preflight/speed.json").has_value());
  EXPECT_DOUBLE_EQ(cat.find("vllm-ascend", "npu", "910B3")->bandwidth_efficiency, 0.5);
  EXPECT_EQ(cat.find("vllm-ascend", "npu", "910B3")->origin, "/home/u/.config/preflight/speed.json");
  EXPECT_DOUBLE_EQ(cat.find("vllm-ascend", "npu", "910B2")->bandwidth_efficiency, before);
  EXPECT_DOUBLE_EQ(cat.find("vllm-ascend", "npu")->bandwidth_efficiency, before);
  // Same device again: replaced, not duplicated.
  const size_t n = cat.profiles.size();
  ASSERT_TRUE(engine::apply_speed_overlay(cat, overlay, "again.json").has_value());
  EXPECT_EQ(cat.profiles.size(), n);

  for (const char* bad : {R"({"schema_version":1,"profiles":[{"engine":"vllm-ascend","platform":"npu","bandwidth_efficiency":0.5}]})",
                          R"({"schema_version":1,"profiles":[{"engine":"sglang","platform":"npu","evidence":"x"}]})",
                          R"({"schema_version":1,"profiles":[{"engine":"vllm","platform":"cuda","bandwidth_efficiency":9,"evidence":"x"}]})",
                          R"({"schema_version":1,"profiles":[{"engine":"vllm","platform":"cuda","efficiency":0.5,"evidence":"x"}]})"}) {
    auto c2 = *speeds;
    auto r = engine::apply_speed_overlay(c2, Json::parse(bad), "user-speed.json");
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().describe().find("user-speed.json"), std::string::npos) << r.error().describe();
  }
}

// Issue 14 (B): `fit --input-len 32768` on vllm-ascend printed "max_num_batched_tokens 2048" from the fit and
// "4 chunk(s) of 8192" from the speed estimate. vllm-ascend's default is 2048 on every NPU (engines.json, reference
// sec 7), so a 32,768-token prompt is 32768 / 2048 = 16 chunks, each re-reading the weights.
TEST(Speed, Issue14_SpeedReadsTheFitResolvedBatchedTokens) {
  auto s = setup("Qwen/Qwen3-8B", "910B3", "vllm-ascend");
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  const auto eng = engine::select_engine(*engines, "vllm-ascend", "0.23.0");
  ASSERT_TRUE(eng.has_value());
  estimate::Deployment d;
  d.max_model_len = 32768;
  const auto fit = estimate::estimate_fit(s.model, s.device, *eng, *engines->overheads_for(eng->platform), d);
  ASSERT_EQ(fit.max_num_batched_tokens, 2048);
  estimate::SpeedWorkload w;
  w.input_tokens = 32768;
  w.bandwidth_bytes_per_s = seed_bandwidth();
  const auto e = estimate::estimate_speed(s.model, s.device, *s.profile, s.speeds, d, fit, w);
  bool found = false;
  for (const auto& p : e.provenance) found = found || p.find("16 chunk(s) of 2048") != std::string::npos;
  EXPECT_TRUE(found);
  // The same prompt with a flag of 8192 resolved by the fit: 4 chunks, and a shorter time to first token (fewer
  // weight re-reads and step overheads).
  estimate::FitEstimate wide = fit;
  wide.max_num_batched_tokens = 8192;
  const auto e8 = estimate::estimate_speed(s.model, s.device, *s.profile, s.speeds, d, wide, w);
  found = false;
  for (const auto& p : e8.provenance) found = found || p.find("4 chunk(s) of 8192") != std::string::npos;
  EXPECT_TRUE(found);
  EXPECT_LT(e8.ttft_s, e.ttft_s);
}

// Issue 19 item 5 (speed side): ssm_state_size 2^62 wrapped the 64-bit state product (undefined behaviour, a
// plausible speed). Per sequence the state is then at least 2^62 x 4 B = 1.8e19 B per layer, so a decode step at
// 1,267 GB/s takes over 1e7 s: the speed must be ~0 tokens/s, not a wrapped figure.
TEST(Speed, Issue19_HugeStateSizeDoesNotWrap) {
  auto s = setup("nvidia/Nemotron-H-56B-Base-8K", "910B3", "vllm-ascend");
  int changed = 0;
  for (auto& l : s.model.layers)
    if (l.kind == model::LayerKind::mamba) { l.ssm_state_dim = int64_t{1} << 62; ++changed; }
  ASSERT_GT(changed, 0);
  estimate::SpeedWorkload w;
  w.bandwidth_bytes_per_s = seed_bandwidth();
  const auto e = run(s, estimate::Deployment{}, w);
  EXPECT_LT(e.single_stream_tokens_per_s, 1e-6);
}

// Issue 20: the version text a case or a user states is read for its first major.minor[.patch].
TEST(Speed, Issue20_FirstVersionInAText) {
  EXPECT_EQ(estimate::first_version("vllm-ascend v0.8.4rc2"), (std::vector<int>{0, 8, 4}));
  EXPECT_EQ(estimate::first_version("vllm-ascend v0.7.x (early 2025)"), (std::vector<int>{0, 7, 0}));
  EXPECT_EQ(estimate::first_version("vllm 0.11.0 on CANN 8.3rc1"), (std::vector<int>{0, 11, 0}));
  EXPECT_FALSE(estimate::first_version("vllm main + vllm-ascend main (2025-07-03)"));  // a date is not a version
  EXPECT_FALSE(estimate::first_version(""));
  EXPECT_TRUE(estimate::version_before("0.8.4rc2", "0.9.0"));
  EXPECT_TRUE(estimate::version_before("v0.7.3", "0.9.0"));
  EXPECT_FALSE(estimate::version_before("0.9.0rc1", "0.9.0"));  // the rc of the release that made graphs the default
  EXPECT_FALSE(estimate::version_before("0.11.0", "0.9.0"));
  EXPECT_FALSE(estimate::version_before("", "0.9.0"));  // not stated: the current engine
}

// Issue 20: vllm-ascend before 0.9.0 had no graph mode by default (vllm-ascend docs, graph_mode guide), so a run
// stated at 0.8.4rc2 decodes eager: its step is the eager operator dispatch (ops x eager_op_dispatch_s), not the graph
// step, and it says so. Qwen3-8B on a 910B3, TP1, with the catalogue's vllm-ascend profile; zeroing the memory side
// leaves dispatch alone: step = operators x 70 us + 1 ms step overhead + 1 x 50 us per sequence.
TEST(Speed, Issue20_OldVllmAscendVersionDecodesEager) {
  auto s = setup("Qwen/Qwen3-8B", "910B3", "vllm-ascend");
  ASSERT_EQ(s.profile->graph_default_since, "0.9.0");
  engine::SpeedProfile p = *s.profile;
  p.eager_op_dispatch_s = 70e-6;
  p.step_overhead_s = 1e-3;
  p.sequence_overhead_s = 50e-6;
  estimate::SpeedWorkload w;
  w.bandwidth_bytes_per_s = 1e18;  // memory time ~0: the dispatch term alone bounds the eager step
  w.engine_version = "0.8.4rc2";
  const auto old = estimate::estimate_speed(s.model, s.device, p, s.speeds, {}, w);
  EXPECT_EQ(old.mode, "eager");
  ASSERT_FALSE(old.points.empty());
  // Qwen3-8B: 36 full-attention layers x 38 operators (ops_per_layer.full_attention, MLP included) = 1,368
  // -> 1,368 x 70 us + 1 ms + 50 us = 96.81 ms.
  EXPECT_DOUBLE_EQ(old.dispatch_ops_per_step, 1368.0);
  EXPECT_NEAR(old.points[0].terms.step_s, 96.81e-3, 1e-6);
  bool said = false;
  for (const auto& a : old.assumptions) said = said || a.find("predates graph mode by default") != std::string::npos;
  EXPECT_TRUE(said);
  w.engine_version = "0.9.1rc1";
  const auto now = estimate::estimate_speed(s.model, s.device, p, s.speeds, {}, w);
  EXPECT_EQ(now.mode, "graph");
  EXPECT_LT(now.points[0].terms.step_s, 5e-3);  // graph: ~1 ms step overhead, no per-operator cost
  w.engine_version.clear();
  EXPECT_EQ(estimate::estimate_speed(s.model, s.device, p, s.speeds, {}, w).mode, "graph");
}

// Issue 20: llama.cpp over 4 GPUs is a layer split (--split-mode layer): the layers run one GPU after another, so
// a step reads every weight once at one GPU's bandwidth (not a quarter of them at the sum) and adds a hand-off
// per GPU boundary; there is no all-reduce and the whole batch passes each GPU in one go. By hand, Qwen3-8B in
// bf16 on RTX 4090s (the catalogue's link: PCIe4 x16, 64 GB/s), llama.cpp profile (all-reduce latency 30 us,
// a hand-off half of it):
//   weights 15,136,811,008 B and KV 147,456 B x 1,024 = 150,994,944 B per step, as on one GPU;
//   hand-offs 3 x (15 us + 4,096 x 2 B / 64 GB/s = 0.128 us) = 45.384 us;
//   at batch 8 the KV read is 8 x 150,994,944 B (one pass, not micro-batches of 8 / 4).
TEST(Speed, Issue20_LlamaCppMultiGpuIsASequentialLayerSplit) {
  auto s = setup("Qwen/Qwen3-8B", "RTX4090", "llama.cpp");
  ASSERT_EQ(s.profile->engine, "llama.cpp");
  ASSERT_DOUBLE_EQ(s.profile->allreduce_latency_s, 30e-6);
  estimate::Deployment one, four;
  four.tensor_parallel_size = 4;
  four.explain = true;
  estimate::SpeedWorkload w;
  w.concurrency = {1, 8};
  const auto a = run(s, one, w), b = run(s, four, w);
  ASSERT_EQ(b.points.size(), 2u);
  EXPECT_DOUBLE_EQ(b.points[0].terms.weight_bytes, 15136811008.0);
  EXPECT_DOUBLE_EQ(b.points[0].terms.kv_bytes, 150994944.0);
  EXPECT_DOUBLE_EQ(b.points[0].terms.memory_s, a.points[0].terms.memory_s);
  EXPECT_EQ(b.allreduces_per_step, 0);
  EXPECT_NEAR(b.points[0].terms.communication_s, 3 * (15e-6 + 8192.0 / 64e9), 1e-12);
  EXPECT_NEAR(b.points[0].terms.step_s - a.points[0].terms.step_s, 3 * (15e-6 + 8192.0 / 64e9), 1e-12);
  EXPECT_DOUBLE_EQ(b.points[1].terms.kv_bytes, 8 * 150994944.0);
  EXPECT_EQ(b.tensor_parallel_size, 1);
  EXPECT_EQ(b.pipeline_parallel_size, 4);
  bool said = false;
  for (const auto& x : b.assumptions) said |= x.find("--split-mode layer") != std::string::npos;
  EXPECT_TRUE(said);
}

// Issue 20: with --enable-expert-parallel vLLM deals whole experts over the ranks (determine_expert_map: n / ranks
// each, the first n % ranks one more), and the step waits for the rank holding the most of the experts it touches.
// Counted by hand:
//   4 experts over 2 ranks {0,1} {2,3}, 2 drawn: 6 pairs, 2 of them on one rank (max 2), 4 split (max 1): 8/6.
//   5 experts over 2 ranks {0,1,2} {3,4}, 2 drawn: 10 pairs, C(3,2) + C(2,2) = 4 on one rank: (4 x 2 + 6 x 1) / 10 = 1.4.
//   128 over 8 (16 each), 2 drawn: the second lands on the first's rank with 15/127: 1 + 15/127.
//   One drawn: 1. All drawn: the largest rank (5 over 2: 3).
//   1.5 drawn (a batch's expected distinct experts) lies halfway between 1 and 2 drawn.
TEST(Speed, Issue20_BusiestRankExperts) {
  EXPECT_NEAR(estimate::expected_busiest_rank_experts(4, 2, 2), 8.0 / 6.0, 1e-12);
  EXPECT_NEAR(estimate::expected_busiest_rank_experts(5, 2, 2), 1.4, 1e-12);
  EXPECT_NEAR(estimate::expected_busiest_rank_experts(128, 8, 2), 1.0 + 15.0 / 127.0, 1e-12);
  EXPECT_NEAR(estimate::expected_busiest_rank_experts(128, 8, 1), 1.0, 1e-12);
  EXPECT_NEAR(estimate::expected_busiest_rank_experts(5, 2, 5), 3.0, 1e-12);
  EXPECT_NEAR(estimate::expected_busiest_rank_experts(128, 8, 1.5), (1.0 + 1.0 + 15.0 / 127.0) / 2, 1e-12);
  EXPECT_EQ(estimate::expected_busiest_rank_experts(128, 8, 0), 0.0);
  EXPECT_EQ(estimate::expected_busiest_rank_experts(0, 8, 2), 0.0);
  EXPECT_NEAR(estimate::expected_busiest_rank_experts(4, 2, 9), 2.0, 1e-12);  // more than n: clamped to all of them
}

// Issue 20: Qwen3-30B-A3B (48 MoE layers, 128 experts, top-8, hidden 2,048, moe_intermediate 768, bf16) at TP2, one
// sequence. One expert of one layer is gate + up + down = 3 x 2,048 x 768 x 2 B = 9,437,184 B.
// As a TP share a rank reads half of each of the 8 experts: 4 whole-expert equivalents per layer.
// Expert parallel over 2 ranks of 64: the rank-0 count X of the 8 is hypergeometric (128, 64, 8), the step waits for
// max(X, 8 - X); E[max] = sum_x C(64,x) C(64,8-x) / C(128,8) x max(x, 8 - x) (written out below, not the code's DP).
// So EP reads 48 x 9,437,184 x (E[max] - 4) B more per step, and everything else is the same.
TEST(Speed, Issue20_ExpertParallelWaitsForTheBusiestRank) {
  auto s = setup("Qwen/Qwen3-30B-A3B", "H100", "vllm");
  auto choose = [](int n, int k) { return std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0)); };
  double busiest = 0;
  for (int x = 0; x <= 8; ++x) busiest += choose(64, x) * choose(64, 8 - x) / choose(128, 8) * std::max(x, 8 - x);
  EXPECT_GT(busiest, 4.0);
  estimate::Deployment tp2, ep2;
  tp2.tensor_parallel_size = ep2.tensor_parallel_size = 2;
  ep2.enable_expert_parallel = true;
  estimate::SpeedWorkload w;
  const auto a = run(s, tp2, w), b = run(s, ep2, w);
  ASSERT_EQ(a.points.size(), 1u);
  ASSERT_EQ(b.points.size(), 1u);
  const double expert_layer_bytes = 3.0 * 2048 * 768 * 2;
  EXPECT_NEAR(b.points[0].terms.weight_bytes - a.points[0].terms.weight_bytes, 48 * expert_layer_bytes * (busiest - 4.0), 1.0);
  EXPECT_EQ(b.points[0].terms.kv_bytes, a.points[0].terms.kv_bytes);
  EXPECT_EQ(b.allreduces_per_step, a.allreduces_per_step);
  EXPECT_LT(b.single_stream_tokens_per_s, a.single_stream_tokens_per_s);
  bool said = false;
  for (const auto& x : b.assumptions) said |= x.find("expert parallel over 2 ranks") != std::string::npos;
  EXPECT_TRUE(said);
  // TP1 or no flag: nothing changes; data parallel: not modelled, said so, read as a TP share.
  estimate::Deployment ep1;
  ep1.enable_expert_parallel = true;
  EXPECT_EQ(run(s, ep1, w).points[0].terms.weight_bytes, run(s, {}, w).points[0].terms.weight_bytes);
  estimate::Deployment dp2 = ep2;
  dp2.data_parallel_size = 2;
  const auto c = run(s, dp2, w);
  EXPECT_EQ(c.points[0].terms.weight_bytes, a.points[0].terms.weight_bytes);
  said = false;
  for (const auto& x : c.assumptions) said |= x.find("all-to-all is not modelled") != std::string::npos;
  EXPECT_TRUE(said);
}

// Issue 20: between PCIe-only cards vLLM turns its custom all-reduce off (more than two PCIe-only GPUs) and NCCL carries
// every decode all-reduce; its small-message round is a measured figure (nccl-tests, 8 x RTX 3090 PCIe, 8 B: 54.18 us
// over ceil(log2 8) = 3 rounds = 18.06 us), not the profile's fitted NVLink one. Qwen3-8B (36 layers) at TP4: 72
// all-reduces x 2 rounds = 144 rounds x 18.06 us = 2.60064 ms of latency on L40S (catalogue link "PCIe4 x16"); the
// A100-80G-SXM (NVLink3) keeps the fitted latency; a card with no link at all is taken as PCIe too.
TEST(Speed, Issue20_PcieOnlyCardsUseTheMeasuredNcclLatency) {
  estimate::Deployment tp4;
  tp4.tensor_parallel_size = 4;
  estimate::SpeedWorkload w;
  auto pcie = setup("Qwen/Qwen3-8B", "L40S", "vllm");
  const auto a = run(pcie, tp4, w);
  ASSERT_EQ(a.points.size(), 1u);
  EXPECT_EQ(a.allreduce_latency_units, 144.0);
  EXPECT_NEAR(a.allreduce_fixed_latency_s, 54.18e-6 / 3, 1e-9);
  EXPECT_NEAR(a.points[0].terms.communication_s - a.points[0].terms.communication_bandwidth_s, 144 * 54.18e-6 / 3, 1e-7);
  EXPECT_NE(a.link.find("NCCL all-reduce 18 us per round over PCIe"), std::string::npos) << a.link;
  EXPECT_NE(a.link.find("nccl/issues/1439"), std::string::npos) << a.link;
  auto nvlink = setup("Qwen/Qwen3-8B", "A100-80G-SXM", "vllm");
  const auto b = run(nvlink, tp4, w);
  EXPECT_EQ(b.allreduce_fixed_latency_s, 0.0);
  EXPECT_NEAR(b.points[0].terms.communication_s - b.points[0].terms.communication_bandwidth_s, 144 * nvlink.profile->allreduce_latency_s, 1e-9);
  EXPECT_EQ(b.link.find("NCCL"), std::string::npos) << b.link;
  pcie.device.interconnect.clear();
  pcie.device.interconnect_bandwidth_bytes_per_s.reset();
  EXPECT_NEAR(run(pcie, tp4, w).allreduce_fixed_latency_s, 54.18e-6 / 3, 1e-9);
}
