// Issue 15/16 (nccl): the NCCL communicator buffers vLLM counts inside its KV budget before PR #25359, sized by the
// interconnect (docs/memory-model.md, "NCCL buffers before vLLM PR #25359"). The expected bytes are the doc's hand
// arithmetic from NCCL's source:
//  - one connected peer per channel, both directions: receive 9.1875 MiB rounded up to CUDA_IPC_MIN = 10 MiB, send
//    (ncclSendMem) 2 MiB: 12 MiB;
//  - a rank of a TP group of 2 holds 1 such connection per channel, a middle rank of 3 or more holds 2 (ring + tree
//    chain);
//  - channels: NVSwitch 24 (A100 and H100), NVLink without a switch 8, PCIe 2; H100 NVSwitch adds NVLS
//    16 x 2 x (128 KiB x 8) x 4 = 128 MiB + 2 MiB credit = 130 MiB per communicator at more than 2 GPUs;
//  - 2 communicators over the TP group (PyNccl and torch's ProcessGroupNCCL);
//  - issue 15/16 (tp): up to vLLM 0.10.1 (NCCL_CUMEM_ENABLE=0, so NCCL connects at init) each communicator also holds
//    its proxy's shared p2p buffer, p2p channels x 16 steps x chunk (NCCL init.cc / net.cc sharedNetBuffersInit):
//    NVSwitch 32 x 16 x 512 KiB = 256 MiB, NVLink without a switch 8 x 16 x 512 KiB = 64 MiB, PCIe 2 x 16 x 128 KiB =
//    4 MiB.
// Where the term applies it replaces the fixed multi-rank share of the non-torch term (0.5 x 64 MiB = 32 MiB).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "deploy/deployment.hpp"
#include "engine/nccl_buffers.hpp"
#include "estimate/fit.hpp"
#include "fit_setup.hpp"
#include "../validate/validate_support.hpp"

using namespace preflight;

namespace {

constexpr double k_mib = 1024.0 * 1024.0;

estimate::Deployment tp_layout(int64_t tp, engine::Interconnect ic) {
  estimate::Deployment d;
  d.tensor_parallel_size = tp;
  d.max_model_len = 8192;
  d.gpu_memory_utilization = 0.9;
  d.interconnect = ic;
  return d;
}

estimate::FitEstimate fit(const std::string& device, const std::string& version, int64_t tp, engine::Interconnect ic) {
  auto s = pftest::fit_setup("Qwen/Qwen3-8B", device, "vllm", version);
  return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, tp_layout(tp, ic));
}

const estimate::Term* find_term(const estimate::FitEstimate& e, const std::string& name) {
  for (const auto& t : e.terms)
    if (t.name == name) return &t;
  return nullptr;
}

deploy::Inputs inputs(const std::string& device, const std::string& engine, int64_t tp) {
  deploy::Inputs in;
  auto m = model::resolve_model("Qwen/Qwen3-8B");
  EXPECT_TRUE(m.has_value());
  if (m) in.model = *m;
  in.device = {device, "--device"};
  in.engine.engine = engine;
  in.engine.origin = "--engine";
  in.flags.tensor_parallel_size = deploy::Given<int64_t>{tp, "--tensor-parallel-size"};
  in.flags.max_model_len = deploy::Given<int64_t>{8192, "--max-model-len"};
  return in;
}

struct Catalogues {
  device::DeviceCatalog devices;
  engine::EngineCatalog engines;
};
const Catalogues& catalogues() {
  static const Catalogues c{*device::load_device_catalog(), *engine::load_engine_catalog()};
  return c;
}

double input_of(const estimate::Term& t, const std::string& name) {
  for (const auto& [key, value] : t.inputs)
    if (key == name) return value;
  ADD_FAILURE() << "no input " << name << " in " << t.name;
  return -1;
}

bool has_text(const std::vector<std::string>& lines, const std::string& fragment) {
  for (const auto& l : lines)
    if (l.find(fragment) != std::string::npos) return true;
  return false;
}

}  // namespace

// H100 SXM on NVSwitch at TP 4, vLLM 0.10.1: 2 x (24 channels x 2 connections x 12 MiB + 130 MiB NVLS + 256 MiB proxy
// buffer) = 2 x 962 MiB = 1924 MiB, and the non-torch term loses its 32 MiB multi-rank share (64 MiB left). PCIe at TP 4:
// 2 x (2 x 2 x 12 MiB + 4 MiB) = 104 MiB. The budget moves by the term less the share: 1924 - 32 = 1892 MiB, 104 - 32 =
// 72 MiB.
TEST(NcclBuffers, Issue16_H100NvswitchTp4AgainstPcie) {
  const auto nvswitch = fit("H100-SXM", "0.10.1", 4, engine::Interconnect::nvswitch);
  const auto pcie = fit("H100-SXM", "0.10.1", 4, engine::Interconnect::pcie);
  const auto fixed = fit("H100-SXM", "0.10.1", 4, engine::Interconnect::unknown);
  EXPECT_DOUBLE_EQ(nvswitch.nccl_buffer_bytes, 1924.0 * k_mib);
  EXPECT_DOUBLE_EQ(pcie.nccl_buffer_bytes, 104.0 * k_mib);
  EXPECT_DOUBLE_EQ(fixed.nccl_buffer_bytes, 0.0);
  EXPECT_DOUBLE_EQ(nvswitch.non_torch_bytes, 64.0 * k_mib);
  EXPECT_DOUBLE_EQ(pcie.non_torch_bytes, 64.0 * k_mib);
  EXPECT_DOUBLE_EQ(fixed.non_torch_bytes, 96.0 * k_mib);
  EXPECT_NEAR(fixed.available_kv_bytes - nvswitch.available_kv_bytes, 1892.0 * k_mib, 2.0);
  EXPECT_NEAR(fixed.available_kv_bytes - pcie.available_kv_bytes, 72.0 * k_mib, 2.0);
  EXPECT_LT(nvswitch.kv_tokens, pcie.kv_tokens);
  // Its own memory term, with its provenance.
  const auto* term = find_term(nvswitch, "NCCL buffers");
  ASSERT_NE(term, nullptr);
  EXPECT_DOUBLE_EQ(term->bytes, 1924.0 * k_mib);
  EXPECT_NE(term->rule.find("PR #25359"), std::string::npos) << term->rule;
  EXPECT_NE(term->rule.find("nvswitch"), std::string::npos) << term->rule;
  EXPECT_EQ(find_term(fixed, "NCCL buffers"), nullptr);
}

// A100 SXM on NVSwitch (no NVLS on A100): TP 8 2 x (24 x 2 x 12 MiB + 256 MiB) = 1664 MiB; TP 2 2 x (24 x 1 x 12 MiB +
// 256 MiB) = 1088 MiB. H100 at TP 2 has no NVLS either (more than 2 GPUs): 1088 MiB. NVLink without a switch at TP 4:
// 2 x (8 x 2 x 12 MiB + 64 MiB) = 512 MiB.
TEST(NcclBuffers, Issue16_ChannelsByDomainFamilyAndRanks) {
  EXPECT_DOUBLE_EQ(fit("A100-40G-SXM", "0.10.1", 8, engine::Interconnect::nvswitch).nccl_buffer_bytes, 1664.0 * k_mib);
  EXPECT_DOUBLE_EQ(fit("A100-80G-SXM", "0.10.1", 2, engine::Interconnect::nvswitch).nccl_buffer_bytes, 1088.0 * k_mib);
  EXPECT_DOUBLE_EQ(fit("H100-SXM", "0.10.1", 2, engine::Interconnect::nvswitch).nccl_buffer_bytes, 1088.0 * k_mib);
  EXPECT_DOUBLE_EQ(fit("H100-SXM", "0.10.1", 4, engine::Interconnect::nvlink_direct).nccl_buffer_bytes, 512.0 * k_mib);
  // The network's channels are not derived: no term, the fixed share stays.
  const auto net = fit("H100-SXM", "0.10.1", 4, engine::Interconnect::network);
  EXPECT_DOUBLE_EQ(net.nccl_buffer_bytes, 0.0);
  EXPECT_DOUBLE_EQ(net.non_torch_bytes, 96.0 * k_mib);
  // One rank: no communicator.
  EXPECT_DOUBLE_EQ(fit("H100-SXM", "0.10.1", 1, engine::Interconnect::nvswitch).nccl_buffer_bytes, 0.0);
}

// From vLLM 0.11 (PR #25359) the buffers sit outside the budget: no term on any interconnect, the fixed share as before.
// The 0.9.2-0.11.0 profile decides by the version named: 0.10.2 counts (without the proxy buffer: 2 x 706 MiB),
// 0.11.0 does not. V0 0.7.1 connects at init: 2 x (24 x 2 x 12 MiB + 256 MiB) = 1664 MiB.
TEST(NcclBuffers, Issue16_NoTermAfterPr25359) {
  for (const char* version : {"0.11.0", "0.11.1", "0.12.0", "0.24.0"}) {
    const auto e = fit("H100-SXM", version, 4, engine::Interconnect::nvswitch);
    EXPECT_DOUBLE_EQ(e.nccl_buffer_bytes, 0.0) << version;
    EXPECT_DOUBLE_EQ(e.non_torch_bytes, 96.0 * k_mib) << version;
  }
  EXPECT_DOUBLE_EQ(fit("H100-SXM", "0.10.2", 4, engine::Interconnect::nvswitch).nccl_buffer_bytes, 1412.0 * k_mib);
  EXPECT_DOUBLE_EQ(fit("A100-40G-SXM", "0.7.1", 8, engine::Interconnect::nvswitch).nccl_buffer_bytes, 1664.0 * k_mib);
}

// Issue 15/16 (tp): the proxy's shared p2p buffer. vLLM 0.4.3-0.10.1 set NCCL_CUMEM_ENABLE=0, so NCCL connects at
// init and each communicator allocates p2pnChannels x NCCL_SHARED_STEPS x p2pChunkSize on the device (NCCL init.cc,
// transport/net.cc sharedNetBuffersInit): on NVSwitch pow2Up(24) = 32 p2p channels x 16 x 512 KiB (NVLink chunk) =
// 256 MiB, 512 MiB for the two communicators; on PCIe 2 x 16 x 128 KiB = 4 MiB each. From 0.10.2 (PR #24141 dropped
// the override) NCCL connects at run time and the profile issues no point-to-point operation: none.
TEST(NcclBuffers, Issue16_ProxySharedBufferWhileNcclConnectsAtInit) {
  const auto at_init = fit("H100-SXM", "0.10.1", 4, engine::Interconnect::nvswitch);
  const auto at_run = fit("H100-SXM", "0.10.2", 4, engine::Interconnect::nvswitch);
  EXPECT_DOUBLE_EQ(at_init.nccl_buffer_bytes - at_run.nccl_buffer_bytes, 512.0 * k_mib);
  EXPECT_NEAR(at_run.available_kv_bytes - at_init.available_kv_bytes, 512.0 * k_mib, 2.0);
  const auto* term = find_term(at_init, "NCCL buffers");
  ASSERT_NE(term, nullptr);
  EXPECT_DOUBLE_EQ(input_of(*term, "proxy_shared_bytes"), 256.0 * k_mib);
  EXPECT_NE(term->rule.find("32 p2p channels x 16 steps x 512 KiB proxy buffer = 256 MiB"), std::string::npos) << term->rule;
  EXPECT_NE(term->rule.find("PR #24141"), std::string::npos) << term->rule;
  const auto* later = find_term(at_run, "NCCL buffers");
  ASSERT_NE(later, nullptr);
  EXPECT_DOUBLE_EQ(input_of(*later, "proxy_shared_bytes"), 0.0);
  EXPECT_EQ(later->rule.find("proxy buffer"), std::string::npos) << later->rule;
  // PCIe at TP 2 on 0.9.2: 2 x (2 channels x 1 connection x 12 MiB + 4 MiB) = 56 MiB.
  EXPECT_DOUBLE_EQ(fit("L40S", "0.9.2", 2, engine::Interconnect::pcie).nccl_buffer_bytes, 56.0 * k_mib);
  EXPECT_DOUBLE_EQ(fit("L40S", "0.10.2", 2, engine::Interconnect::pcie).nccl_buffer_bytes, 48.0 * k_mib);
}

// No --interconnect: the card's form factor and the TP size choose it, said as an assumption with its reason, and the
// band gives the other plausible domain. SXM at TP 4: nvswitch, band nvlink-direct (512 MiB: the budget 1412 MiB
// larger). PCIe cards: pcie, no band. A version that does not count the buffers says nothing.
TEST(NcclBuffers, Issue16_DefaultIsAnAssumptionWithABand) {
  const auto& c = catalogues();
  const deploy::Catalogs cats{&c.devices, &c.engines};
  const auto in = inputs("H100 SXM", "vllm@0.10.1", 4);  // a name that states the form factor (issue 15, acc28)
  auto r = deploy::resolve_deployment(in, cats);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->deployment.interconnect, engine::Interconnect::nvswitch);
  EXPECT_TRUE(has_text(r->assumptions, "assumed nvswitch: SXM GPUs at TP 2-4")) << ::testing::PrintToString(r->assumptions);
  EXPECT_TRUE(has_text(r->assumptions, "give --interconnect"));
  ASSERT_EQ(r->interconnect_alternatives.size(), 1u);
  EXPECT_EQ(r->interconnect_alternatives[0], engine::Interconnect::nvlink_direct);
  const auto band = deploy::across_interconnects(in, cats, *r);
  ASSERT_EQ(band.points.size(), 2u);
  EXPECT_EQ(band.points[0].interconnect, "nvswitch");
  EXPECT_TRUE(band.points[0].assumed);
  EXPECT_EQ(band.points[1].interconnect, "nvlink-direct");
  EXPECT_DOUBLE_EQ(band.points[0].nccl_buffer_bytes, 1924.0 * k_mib);
  EXPECT_DOUBLE_EQ(band.points[1].nccl_buffer_bytes, 512.0 * k_mib);
  EXPECT_NEAR(band.points[1].available_kv_bytes - band.points[0].available_kv_bytes, 1412.0 * k_mib, 2.0);
  EXPECT_EQ(band.kv_tokens_min, band.points[0].kv_tokens);
  EXPECT_EQ(band.kv_tokens_max, band.points[1].kv_tokens);

  auto l40s = deploy::resolve_deployment(inputs("L40S", "vllm@0.10.1", 2), cats);
  ASSERT_TRUE(l40s.has_value());
  EXPECT_EQ(l40s->deployment.interconnect, engine::Interconnect::pcie);
  EXPECT_TRUE(has_text(l40s->assumptions, "assumed pcie"));
  EXPECT_TRUE(l40s->interconnect_alternatives.empty());

  auto newer = deploy::resolve_deployment(inputs("H100", "vllm@0.12.0", 4), cats);
  ASSERT_TRUE(newer.has_value());
  EXPECT_FALSE(has_text(newer->assumptions, "assumed nvswitch"));
  EXPECT_TRUE(newer->interconnect_alternatives.empty());

  // Given: no assumption, no band, named in the provenance.
  auto given_in = inputs("H100", "vllm@0.10.1", 4);
  given_in.flags.interconnect = deploy::Given<std::string>{"PCIe", "--interconnect"};
  auto given = deploy::resolve_deployment(given_in, cats);
  ASSERT_TRUE(given.has_value());
  EXPECT_EQ(given->deployment.interconnect, engine::Interconnect::pcie);
  EXPECT_FALSE(has_text(given->assumptions, "assumed nvswitch"));
  EXPECT_FALSE(has_text(given->assumptions, "assumed pcie"));
  EXPECT_TRUE(has_text(given->provenance, "interconnect pcie from --interconnect"));
  EXPECT_TRUE(deploy::across_interconnects(given_in, cats, *given).points.empty());
}

// Issue 15 (acc28): "NVIDIA A100 80GB" (the device of the shared dl22 TP 2 case) states no form factor. The SXM4 card is
// assumed (nvswitch at TP 2, the estimate), and the PCIe card the name also names puts pcie in the band beside
// nvlink-direct. At vLLM 0.10.1, TP 2 (one connection per channel, two communicators, the proxy's shared buffer):
//   nvswitch      2 x (24 x 1 x 12 MiB + 256 MiB) = 1088 MiB
//   nvlink-direct 2 x ( 8 x 1 x 12 MiB +  64 MiB) =  320 MiB
//   pcie          2 x ( 2 x 1 x 12 MiB +   4 MiB) =   56 MiB
// so the PCIe point's budget is 1088 - 56 = 1032 MiB larger than the assumed one's. A name that states the form factor
// keeps the SXM band (nvlink-direct alone) or none (a PCIe card).
TEST(NcclBuffers, Issue15_NameWithoutFormFactorPutsPcieInTheBand) {
  const auto& c = catalogues();
  const deploy::Catalogs cats{&c.devices, &c.engines};
  const auto in = inputs("NVIDIA A100 80GB", "vllm@0.10.1", 2);
  auto r = deploy::resolve_deployment(in, cats);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->device.id, "A100-80G-SXM");
  EXPECT_EQ(r->deployment.interconnect, engine::Interconnect::nvswitch);
  EXPECT_TRUE(has_text(r->assumptions, "the device name also names A100-80G-PCIe (pcie: pcie)")) << ::testing::PrintToString(r->assumptions);
  EXPECT_TRUE(has_text(r->assumptions, "interconnect_band: the estimate under nvlink-direct, pcie too"));
  const std::vector<engine::Interconnect> alternatives = {engine::Interconnect::nvlink_direct, engine::Interconnect::pcie};
  EXPECT_EQ(r->interconnect_alternatives, alternatives);
  const auto band = deploy::across_interconnects(in, cats, *r);
  ASSERT_EQ(band.points.size(), 3u);
  EXPECT_EQ(band.points[0].interconnect, "nvswitch");
  EXPECT_EQ(band.points[2].interconnect, "pcie");
  EXPECT_DOUBLE_EQ(band.points[0].nccl_buffer_bytes, 1088.0 * k_mib);
  EXPECT_DOUBLE_EQ(band.points[1].nccl_buffer_bytes, 320.0 * k_mib);
  EXPECT_DOUBLE_EQ(band.points[2].nccl_buffer_bytes, 56.0 * k_mib);
  EXPECT_NEAR(band.points[2].available_kv_bytes - band.points[0].available_kv_bytes, 1032.0 * k_mib, 2.0);
  EXPECT_EQ(band.kv_tokens_max, band.points[2].kv_tokens);

  auto sxm = deploy::resolve_deployment(inputs("NVIDIA A100-SXM4-80GB", "vllm@0.10.1", 2), cats);
  ASSERT_TRUE(sxm.has_value());
  EXPECT_EQ(sxm->interconnect_alternatives, std::vector<engine::Interconnect>{engine::Interconnect::nvlink_direct});
  EXPECT_FALSE(has_text(sxm->assumptions, "the device name also names"));
  auto pcie = deploy::resolve_deployment(inputs("NVIDIA A100 80GB PCIe", "vllm@0.10.1", 2), cats);
  ASSERT_TRUE(pcie.has_value());
  EXPECT_EQ(pcie->deployment.interconnect, engine::Interconnect::pcie);
  EXPECT_TRUE(pcie->interconnect_alternatives.empty());
}

// A value outside the four: invalid_argument naming the flag and the choices.
TEST(NcclBuffers, Issue16_BadInterconnectNamesTheFlag) {
  deploy::Flags f;
  f.interconnect = deploy::Given<std::string>{"infiniband", "--interconnect"};
  const auto s = deploy::check_flags(f);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(s.error().message.find("--interconnect: expected one of nvswitch, nvlink-direct, pcie, network, found 'infiniband'"), std::string::npos)
      << s.error().message;
  EXPECT_EQ(engine::parse_interconnect("NVLink_Direct"), engine::Interconnect::nvlink_direct);
  EXPECT_FALSE(engine::parse_interconnect("unknown").has_value());
}

TEST(NcclBuffers, Issue16_CliBadValueExits2AndFitShowsTheTerm) {
  const auto bad = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.10.1 --tensor-parallel-size 4 --interconnect infiniband");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--interconnect"), std::string::npos) << bad.out;
  const auto ok = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.10.1 --tensor-parallel-size 4 --max-model-len 8192");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("NCCL buffers"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("assumed nvswitch"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("across interconnects"), std::string::npos) << ok.out;
  const auto json = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.10.1 --tensor-parallel-size 4 --max-model-len 8192 --json",
                                    {.with_stderr = false});
  EXPECT_NE(json.out.find("\"interconnect_band\""), std::string::npos);
  EXPECT_NE(json.out.find("\"NCCL buffers\""), std::string::npos);
  const auto given = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.10.1 --tensor-parallel-size 4 --max-model-len 8192 --interconnect pcie");
  EXPECT_EQ(given.out.find("across interconnects"), std::string::npos) << given.out;
  const auto plan_bad = pftest::run_cli("plan --device H100 --interconnect infiniband");
  EXPECT_EQ(plan_bad.code, 2) << plan_bad.out;
  EXPECT_NE(plan_bad.out.find("--interconnect"), std::string::npos) << plan_bad.out;
}

// Issue 15/16 (nccl, misc21): a plan row that carries the NCCL term names the interconnect it was sized for, in text
// and in --json, as fit states it. Qwen3-8B on 4 x H100 (SXM) with vLLM 0.10.2 at TP 4 (after 0.10.1, so without the NCCL proxy buffer): NVSwitch by default, 1412 MiB
// per card (above); --interconnect pcie: 96 MiB, so the KV budget is 1316 MiB larger. Qwen3-8B keeps 36 layers x 8 KV
// heads x 128 x 2 (K and V) x 2 B = 147,456 B a token, 36,864 B a rank at TP 4: 1316 x 1,048,576 / 36,864 = 37,432.9
// tokens more, less one 16-token block of rounding.
TEST(NcclBuffers, Misc21_PlanRowNamesItsInterconnect) {
  const std::string plan = "plan --device H100 --num-devices 4 --model Qwen/Qwen3-8B --engine vllm@0.10.2 --context 8192 --json";
  auto row_at_tp4 = [](const std::string& out) {
    const auto j = nlohmann::json::parse(out, nullptr, false);
    for (const auto& r : j.value("recommended", nlohmann::json::array()))
      if (r["tensor_parallel_size"] == 4 && r["model"] == "Qwen/Qwen3-8B" && r["quantization"] == "") return r;
    return nlohmann::json();
  };
  const auto assumed = pftest::run_cli(plan, {.with_stderr = false});
  ASSERT_EQ(assumed.code, 0) << assumed.out.substr(0, 400);
  const auto a = row_at_tp4(assumed.out);
  ASSERT_TRUE(a.is_object()) << assumed.out.substr(0, 800);
  EXPECT_EQ(a["interconnect"]["name"], "nvswitch");
  EXPECT_NE(a["interconnect"]["basis"].get<std::string>().find("assumed nvswitch: SXM GPUs at TP 2-4"), std::string::npos) << a["interconnect"].dump();
  EXPECT_NE(a["interconnect"]["basis"].get<std::string>().find("give --interconnect"), std::string::npos);
  EXPECT_DOUBLE_EQ(a["interconnect"]["nccl_buffer_gib_per_device"].get<double>(), 1412.0 / 1024.0);
  const auto given = pftest::run_cli(plan + " --interconnect pcie", {.with_stderr = false});
  const auto p = row_at_tp4(given.out);
  ASSERT_TRUE(p.is_object()) << given.out.substr(0, 800);
  EXPECT_EQ(p["interconnect"]["name"], "pcie");
  EXPECT_EQ(p["interconnect"]["basis"], "--interconnect pcie");
  EXPECT_DOUBLE_EQ(p["interconnect"]["nccl_buffer_gib_per_device"].get<double>(), 96.0 / 1024.0);
  const int64_t more = p["kv_cache_tokens"].get<int64_t>() - a["kv_cache_tokens"].get<int64_t>();
  EXPECT_GE(more, 37432 - 16);
  EXPECT_LE(more, 37433 + 16);
  // A row of one card, or a version that does not count the buffers (0.11.0, PR #25359), names none.
  const auto assumed_json = nlohmann::json::parse(assumed.out);  // named: a range-for over parse(...)["recommended"] reads a destroyed temporary
  for (const auto& r : assumed_json["recommended"])
    if (r["tensor_parallel_size"] == 1) EXPECT_FALSE(r.contains("interconnect")) << r.dump().substr(0, 200);
  const auto newer = pftest::run_cli("plan --device H100 --num-devices 4 --model Qwen/Qwen3-8B --engine vllm@0.11.0 --context 8192 --json", {.with_stderr = false});
  EXPECT_EQ(newer.out.find("\"interconnect\""), std::string::npos);
  // The table says it under the row, and fit's assumption once among the plan's.
  const auto text = pftest::run_cli("plan --device H100 --num-devices 4 --model Qwen/Qwen3-8B --engine vllm@0.10.2 --context 8192");
  EXPECT_NE(text.out.find("    interconnect: nvswitch, NCCL buffers 1.38 GiB per device (assumed, see below; give --interconnect)"), std::string::npos)
      << text.out.substr(0, 1500);
  EXPECT_NE(text.out.find("assumed: assumed nvswitch: SXM GPUs at TP 2-4"), std::string::npos) << text.out;
  const auto text_pcie = pftest::run_cli("plan --device H100 --num-devices 4 --model Qwen/Qwen3-8B --engine vllm@0.10.2 --context 8192 --interconnect pcie");
  EXPECT_NE(text_pcie.out.find("    interconnect: pcie, NCCL buffers 0.09 GiB per device (--interconnect pcie)"), std::string::npos) << text_pcie.out.substr(0, 1500);
  EXPECT_EQ(text_pcie.out.find("assumed nvswitch"), std::string::npos);
}

// A case's `interconnect` is read by validate: pcie at TP 4 (104 MiB) against the default nvswitch (1924 MiB).
TEST(NcclBuffers, Issue16_CaseFieldReadByValidate) {
  const std::string dir = pftest::scratch_dir("nccl-case");
  const std::string path = dir + "/cases.jsonl";
  const std::string head =
      R"J({"engine":"vllm","engine_version":"0.10.1","device":"NVIDIA H100 80GB","num_devices":4,"tensor_parallel_size":4,"model":"Qwen/Qwen3-8B","max_model_len":8192,"available_kv_gib":50.0,)J";
  std::ofstream(path) << head << R"J("id":"default"})J" "\n" << head << R"J("id":"pcie","interconnect":"pcie"})J" "\n";
  auto r = pftest::validate_with_models({path});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 2u);
  for (const auto& row : r->rows) ASSERT_TRUE(row.skip_reason.empty()) << row.skip_reason;
  EXPECT_DOUBLE_EQ(r->rows[0].memory_terms.at("nccl_buffers"), 1924.0 * k_mib);
  EXPECT_DOUBLE_EQ(r->rows[1].memory_terms.at("nccl_buffers"), 104.0 * k_mib);
  EXPECT_DOUBLE_EQ(r->rows[0].memory_terms.at("multi_rank"), 0.0);
  EXPECT_TRUE(has_text(r->rows[0].assumptions, "assumed nvswitch"));
  EXPECT_FALSE(has_text(r->rows[1].assumptions, "assumed nvswitch"));
}

// Issue 15 (acc28): validate's bands take in the interconnects a case leaves open. "NVIDIA A100 80GB" at TP 2 on vLLM
// 0.10.1 without an interconnect: nvswitch is the estimate and pcie the far end of the band (1088 - 56 = 1032 MiB of NCCL
// buffers less, worked in Issue15_NameWithoutFormFactorPutsPcieInTheBand); the same case recording nvswitch has no band
// beyond the estimate's own. So the prediction and the low end agree, and the high ends differ by 1032 MiB.
TEST(NcclBuffers, Issue15_ValidateBandSpansTheInterconnects) {
  const std::string dir = pftest::scratch_dir("nccl-band");
  const std::string path = dir + "/cases.jsonl";
  const std::string head =
      R"J({"engine":"vllm","engine_version":"0.10.1","device":"NVIDIA A100 80GB","num_devices":2,"tensor_parallel_size":2,"model":"Qwen/Qwen3-8B","max_model_len":8192,"available_kv_gib":60.0,"kv_cache_tokens":800000,)J";
  std::ofstream(path) << head << R"J("id":"unstated"})J" "\n" << head << R"J("id":"nvswitch","interconnect":"nvswitch"})J" "\n";
  auto r = pftest::validate_with_models({path});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 2u);
  const auto field = [](const validate::CaseResult& row, const std::string& name) -> const validate::FieldComparison* {
    for (const auto& f : row.fields)
      if (f.field == name) return &f;
    return nullptr;
  };
  const auto* open = field(r->rows[0], "available_kv_gib");
  const auto* stated = field(r->rows[1], "available_kv_gib");
  ASSERT_TRUE(open && stated && open->low && open->high && stated->low && stated->high);
  EXPECT_DOUBLE_EQ(open->predicted, stated->predicted);
  EXPECT_NEAR(*open->low, *stated->low, 1e-9);
  EXPECT_NEAR(*open->high - *stated->high, 1032.0 / 1024.0, 1e-6);
  const auto* open_tokens = field(r->rows[0], "kv_cache_tokens");
  const auto* stated_tokens = field(r->rows[1], "kv_cache_tokens");
  ASSERT_TRUE(open_tokens && stated_tokens && open_tokens->high && stated_tokens->high);
  EXPECT_GT(*open_tokens->high, *stated_tokens->high);
  EXPECT_TRUE(has_text(r->rows[0].assumptions, "the available-KV and token bands also span the interconnect band"));
  EXPECT_FALSE(has_text(r->rows[1].assumptions, "the available-KV and token bands also span the interconnect band"));
}

// The catalogue record: an interconnect outside the four, or a default without its source, is corrupt and names the
// key; the shipped record parses, and every CUDA card but the superchips and single units states its form factor.
TEST(NcclBuffers, Issue16_CatalogueRecordChecked) {
  const auto record = [](const std::string& domain_ic, const std::string& default_source) {
    return Json::parse(R"({"engine": "vllm", "version_min": "0.4.3", "version_max": "0.10.99", "version_source": "v", "communicators": 2,
      "communicators_source": "c", "connection_bytes": 12582912, "connection_source": "b",
      "domains": [{"interconnect": ")" + domain_ic + R"(", "channels": 2, "source": "s"}],
      "defaults": [{"form_factor": "pcie", "ranks_min": 2, "ranks_max": 8, "interconnect": "pcie", "reason": "r", "source": ")" +
                       default_source + R"("}]})");
  };
  const Json good = record("pcie", "s");
  auto ok = engine::parse_nccl_buffers(JsonObject(good, "engines.json", "overheads[cuda].nccl_buffers"), "engines.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  EXPECT_EQ(ok->domains.size(), 1u);
  const Json bad_ic = record("infiniband", "s");
  auto e1 = engine::parse_nccl_buffers(JsonObject(bad_ic, "engines.json", "overheads[cuda].nccl_buffers"), "engines.json");
  ASSERT_FALSE(e1.has_value());
  EXPECT_EQ(e1.error().kind, ErrorKind::corrupt);
  EXPECT_NE(e1.error().message.find("interconnect: expected one of nvswitch, nvlink-direct, pcie, network, found 'infiniband'"), std::string::npos)
      << e1.error().message;
  const Json no_source = record("pcie", " ");
  auto e2 = engine::parse_nccl_buffers(JsonObject(no_source, "engines.json", "overheads[cuda].nccl_buffers"), "engines.json");
  ASSERT_FALSE(e2.has_value());
  EXPECT_NE(e2.error().message.find("reason and source"), std::string::npos) << e2.error().message;

  // The p2p fields: a channel count that is not a power of two, or the proxy fields without their source, are corrupt.
  const Json bad_p2p = Json::parse(R"({"engine": "vllm", "version_min": "0.4.3", "version_max": "0.10.99", "version_source": "v", "communicators": 2,
      "communicators_source": "c", "connection_bytes": 12582912, "connection_source": "b",
      "domains": [{"interconnect": "pcie", "channels": 2, "p2p_channels": 3, "p2p_chunk_bytes": 131072, "source": "s"}], "defaults": []})");
  auto e3 = engine::parse_nccl_buffers(JsonObject(bad_p2p, "engines.json", "overheads[cuda].nccl_buffers"), "engines.json");
  ASSERT_FALSE(e3.has_value());
  EXPECT_NE(e3.error().message.find("p2p_channels"), std::string::npos) << e3.error().message;
  const Json proxy_no_source = Json::parse(R"({"engine": "vllm", "version_min": "0.4.3", "version_max": "0.10.99", "version_source": "v", "communicators": 2,
      "communicators_source": "c", "connection_bytes": 12582912, "connection_source": "b", "proxy_shared_steps": 16, "proxy_version_max": "0.10.1",
      "domains": [], "defaults": []})");
  auto e4 = engine::parse_nccl_buffers(JsonObject(proxy_no_source, "engines.json", "overheads[cuda].nccl_buffers"), "engines.json");
  ASSERT_FALSE(e4.has_value());
  EXPECT_NE(e4.error().message.find("proxy_source"), std::string::npos) << e4.error().message;

  const auto& c = catalogues();
  const auto* cuda = c.engines.overheads_for("cuda");
  ASSERT_NE(cuda, nullptr);
  ASSERT_TRUE(cuda->nccl_buffers);
  EXPECT_EQ(cuda->nccl_buffers->communicators, 2);
  EXPECT_DOUBLE_EQ(cuda->nccl_buffers->connection_bytes, 12.0 * k_mib);
  EXPECT_EQ(cuda->nccl_buffers->proxy_shared_steps, 16);
  for (const auto& d : c.devices.devices) {
    if (d.platform != "cuda" || d.id == "GH200" || d.id == "GH200-144G" || d.id == "GB10") continue;
    EXPECT_TRUE(d.form_factor == "sxm" || d.form_factor == "pcie") << d.id;
    EXPECT_FALSE(d.source_form_factor.empty()) << d.id;
  }
}
