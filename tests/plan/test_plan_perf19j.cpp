// Issue 19 (planfast9): a plan makes a card's refusals of its engine settings (deploy::npu_only_setting_refusal: an
// NPU-only setting on another platform's card; deploy::kv_cache_dtype_refusal: a KV cache dtype the engine takes but
// cannot run on the card's family) once per card of a platform run, not per row, and the rows of that card share the
// text. Every row must read what it reads planned alone (evaluate_candidate makes both refusals itself), the refusal
// texts as deploy writes them, and one block per card.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "model/model_source.hpp"
#include "plan/planner.hpp"
#include "plan_catalogs.hpp"
#include "plan_test_models.hpp"

using namespace preflight;
using preflight::test::catalogs;

namespace {

struct Refusal {
  std::string prefix;  // "" = the row is not refused by the setting
};

// Plans `models` on `devices` at 1-16 cards under `in` and `t`, and checks every row against evaluate_candidate and
// `expected` (per device id: the text its rows' reasons start with, "" for none), and that the rows of a refused card
// hold one block.
void expect_card_refusals(const std::vector<model::ModelSpec>& models, const std::vector<device::DeviceSpec>& devices, const plan::PlanInputs& in,
                          const plan::PlanTargets& t, const std::map<std::string, Refusal>& expected) {
  const std::vector<int64_t> counts = {1, 2, 4, 8, 16};
  const auto plans = plan::plan_for_devices(models, devices, counts, in, t, 2);
  std::map<std::string, const model::ModelSpec*> model_by_id;
  for (const auto& m : models) model_by_id[m.id] = &m;
  std::map<std::string, const device::DeviceSpec*> device_by_id;
  for (const auto& d : devices) device_by_id[d.id] = &d;
  std::map<std::string, const std::string*> block;  // per device: the refusal's text block its first refused row holds
  size_t rows = 0, refused = 0;
  for (const auto& p : plans)
    for (const auto* list : {&p.result.recommended, &p.result.rejected})
      for (const auto& c : *list) {
        const std::string at = c.model_id.str() + " [" + c.variant.str() + "] " + p.device_id + " x" + std::to_string(p.num_devices);
        const plan::Candidate alone = plan::evaluate_candidate(*model_by_id.at(c.model_id.str()), *device_by_id.at(p.device_id), in,
                                                               c.variant_id.str(), p.num_devices, t);
        EXPECT_EQ(c.reason.str(), alone.reason.str()) << at;
        ++rows;
        const std::string& prefix = expected.at(p.device_id).prefix;
        if (prefix.empty()) {
          EXPECT_EQ(c.reason.str().find("--kv-cache-dtype: "), std::string::npos) << at;
          EXPECT_EQ(c.reason.str().find("--hccl-buffsize: "), std::string::npos) << at;
          continue;
        }
        // Rows the variant or layout refuses earlier keep that reason (it is checked first, as fit orders them).
        if (c.reason.str().rfind(prefix, 0) != 0) continue;
        ++refused;
        const std::string*& first = block[p.device_id];
        if (!first) first = &c.reason.str();
        EXPECT_EQ(&c.reason.str(), first) << at << ": its own copy of the card's refusal";
      }
  EXPECT_GT(rows, 0u);
  size_t refusing = 0;
  for (const auto& [id, r] : expected) refusing += !r.prefix.empty();
  EXPECT_EQ(block.size(), refusing);
  EXPECT_GE(refused, refusing * counts.size());
}

}  // namespace

TEST(CardRefusals, Issue19_KvCacheDtypeRefusalMadeOncePerCardEqualsEachRowPlannedAlone) {
  const auto all = preflight::test::catalogue_model_specs();
  std::vector<model::ModelSpec> models;
  for (const auto& m : all)
    if (m.id == "Qwen/Qwen3-8B" || m.id == "Qwen/Qwen3-30B-A3B") models.push_back(m);
  ASSERT_EQ(models.size(), 2u);
  const std::vector<device::DeviceSpec> devices = {preflight::test::dev("910B4"), preflight::test::dev("910C"), preflight::test::dev("310P3"),
                                                   preflight::test::dev("950PR")};
  plan::PlanInputs in = catalogs().inputs();
  in.engine = "vllm-ascend@0.23";  // data/engines/kv_cache_dtypes.json vllm-ascend-fp8-kv: 0.7.0 - 0.26.99 on a2, a3 and 310P
  plan::PlanTargets t;
  t.context_tokens = 8192;
  t.engine_settings.kv_cache_dtype = "fp8";
  expect_card_refusals(models, devices, in, t,
                       {{"910B4", {"--kv-cache-dtype: fp8 on 910B4 (ascend-a2, vllm-ascend 0.23"}},
                        {"910C", {"--kv-cache-dtype: fp8 on 910C (ascend-a3, vllm-ascend 0.23"}},
                        {"310P3", {"--kv-cache-dtype: fp8 on 310P3 (ascend-310p, vllm-ascend 0.23"}},
                        {"950PR", {""}}});
}

TEST(CardRefusals, Issue19_NpuOnlySettingRefusalMadeOncePerCardEqualsEachRowPlannedAlone) {
  const auto all = preflight::test::catalogue_model_specs();
  std::vector<model::ModelSpec> models;
  for (const auto& m : all)
    if (m.id == "Qwen/Qwen3-8B" || m.id == "meta-llama/Llama-3.1-8B-Instruct") models.push_back(m);
  ASSERT_EQ(models.size(), 2u);
  const std::vector<device::DeviceSpec> devices = {preflight::test::dev("H100-SXM"), preflight::test::dev("RTX4090"), preflight::test::dev("910B4")};
  plan::PlanInputs in = catalogs().inputs();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  t.engine_settings.hccl_buffsize_bytes = 400.0 * 1024 * 1024;
  const std::string why = "--hccl-buffsize: HCCL_BUFFSIZE sizes the buffers of CANN's HCCL, which only an Ascend NPU's engine reads; ";
  expect_card_refusals(models, devices, in, t, {{"H100-SXM", {why + "H100-SXM is a cuda device"}}, {"RTX4090", {why + "RTX4090 is a cuda device"}}, {"910B4", {""}}});
}

namespace {

// Issue 19 (planidx36): plans `models` on `devices` at 1-16 cards under `engine` and checks every row against the same
// candidate planned alone (evaluate_candidate computes its own fit): the fit a plan copies from another card of its
// run must be the fit this card computes. Returns the rows compared.
size_t expect_rows_as_planned_alone(const std::vector<model::ModelSpec>& models, const std::vector<device::DeviceSpec>& devices, const std::string& engine,
                                    plan::PlanTargets t = {}) {
  plan::PlanInputs in = catalogs().inputs();
  in.engine = engine;
  t.context_tokens = 8192;
  std::map<std::string, const model::ModelSpec*> model_by_id;
  for (const auto& m : models) model_by_id[m.id] = &m;
  std::map<std::string, const device::DeviceSpec*> device_by_id;
  for (const auto& d : devices) device_by_id[d.id] = &d;
  size_t rows = 0, own_interconnect = 0;
  for (const auto& p : plan::plan_for_devices(models, devices, {1, 2, 4, 8, 16}, in, t, 2))
    for (const auto* list : {&p.result.recommended, &p.result.rejected})
      for (const auto& c : *list) {
        const std::string at = engine + " " + c.model_id.str() + " [" + c.variant.str() + "] " + p.device_id + " x" + std::to_string(p.num_devices);
        const plan::Candidate alone =
            plan::evaluate_candidate(*model_by_id.at(c.model_id.str()), *device_by_id.at(p.device_id), in, c.variant_id.str(), p.num_devices, t);
        EXPECT_EQ(c.fit.fits, alone.fit.fits) << at;
        EXPECT_EQ(c.fit.available_kv_bytes, alone.fit.available_kv_bytes) << at;
        EXPECT_EQ(c.fit.kv_tokens, alone.fit.kv_tokens) << at;
        EXPECT_EQ(c.fit.nccl_buffer_bytes, alone.fit.nccl_buffer_bytes) << at;
        EXPECT_EQ(c.reason.str(), alone.reason.str()) << at;
        EXPECT_EQ(c.interconnect.str(), alone.interconnect.str()) << at;
        // Planidx36: a plan sizes a row with Interconnect::unknown where no term of the version reads it
        // (plan/fit_copy.hpp fit_interconnect); the fit with the card's own interconnect is the same. Rows as published.
        if (c.variant_id.empty() && !c.engine_id.empty() && !c.fit.engine_id.empty()) {
          const auto eng = plan::plan_engine(in, *device_by_id.at(p.device_id));
          const engine::Overheads* oh = eng ? in.engines->overheads_for(*eng, eng->platform) : nullptr;
          if (oh) {
            estimate::Deployment d = plan::candidate_deployment(c, nullptr, t);
            d.interconnect = plan::candidate_interconnect(t, *oh, *device_by_id.at(p.device_id), c.tensor_parallel_size);
            const estimate::FitEstimate f = estimate::estimate_fit(*model_by_id.at(c.model_id.str()), *device_by_id.at(p.device_id), *eng, *oh, d);
            EXPECT_EQ(c.fit.available_kv_bytes, f.available_kv_bytes) << at << " (the card's own interconnect)";
            EXPECT_EQ(c.fit.nccl_buffer_bytes, f.nccl_buffer_bytes) << at << " (the card's own interconnect)";
            ++own_interconnect;
          }
        }
        ++rows;
      }
  EXPECT_GT(own_interconnect, 0u) << engine;
  return rows;
}

}  // namespace

// Issue 19 (planidx36): a whole-catalogue plan computes a count's fit once per set of cards with the same fit and copies
// it to the others. H100-SXM and H100-PCIe (and A100-80G-SXM / -PCIe) have the same family and memory
// (estimate::same_fit_device) but not the same interconnect at TP > 1 (engines.json nccl_buffers.defaults: sxm ->
// nvswitch, pcie -> pcie), which two terms read: the NCCL buffers (vLLM 0.4.3 - 0.10.99) and FlashInfer's all-reduce
// workspace (vLLM 0.19.x, nvswitch only, its maximum input per listed card). A copy key without the interconnect gave the
// PCIe card the SXM card's workspace on 0.19 (its KV budget smaller by the workspace); the card's listing in max_inputs
// is part of the key too. Each row is also checked against estimate_fit with the card's own interconnect: a plan sizes
// with Interconnect::unknown where no term reads it (fit_interconnect), so that the cores of SXM and PCIe cards are shared.
TEST(FitCopyKey, Issue19_CardsOfOneFitSetButAnotherInterconnectAreNotCopied) {
  const auto all = preflight::test::catalogue_model_specs();
  std::vector<model::ModelSpec> models;
  for (const auto& m : all)
    if (m.id == "Qwen/Qwen3-8B" || m.id == "meta-llama/Llama-3.1-8B-Instruct") models.push_back(m);
  ASSERT_EQ(models.size(), 2u);
  const std::vector<device::DeviceSpec> devices = {preflight::test::dev("H100-SXM"), preflight::test::dev("H100-PCIe"), preflight::test::dev("A100-80G-SXM"),
                                                   preflight::test::dev("A100-80G-PCIe")};
  size_t rows = 0;
  for (const std::string engine : {"vllm@0.19.0", "vllm@0.10.0", "vllm"}) rows += expect_rows_as_planned_alone(models, devices, engine);
  EXPECT_GT(rows, 3u * 4u * 5u * 2u);
}

// Issue 19 (planidx36): each further part of the fit-copy key (plan/fit_copy.hpp same_fit_copy), with a card that
// differs from a catalogue card in it alone, planned beside that card: every row equals the row planned alone. Each
// pair falls in one set of estimate::same_fit_device, so a key without that part copies the catalogue card's fit.
// - the all-reduce workspace's card list (engines.json allreduce_fusion_workspace.max_inputs names H100-SXM at TP 2, 4
//   and 8; vLLM 0.19.x on NVSwitch): an H100-SXM under an id the list does not name has no workspace (and the fit class
//   a plan gives the FitCoreMemo, plan_fit_class, keeps the listed card where the version allocates it);
// - the node size: 4 cards a node make 8 cards TP 4 x PP 2, not TP 8 (each stage holds half the layers; an A100-80G-SXM,
//   which no all-reduce list names);
// - the memory kind: vLLM's large-device batch defaults (>= 70 GiB, not Ampere) never apply to a unified-memory CUDA
//   card (estimate/fit.cpp large_batch_device): an H100-SXM whose memory is unified has the smaller batch;
// - the MoE backend workspace's card list (--moe-backend flashinfer_b12x, vLLM 0.25.x, names RTXPRO6000): a card the list
//   does not name, with an NVFP4 MoE checkpoint.
TEST(FitCopyKey, Issue19_EachPartOfTheKeyKeepsItsCardsApart) {
  const auto all = preflight::test::catalogue_model_specs();
  std::vector<model::ModelSpec> models;
  for (const auto& m : all)
    if (m.id == "Qwen/Qwen3-8B" || m.id == "Qwen/Qwen3-30B-A3B") models.push_back(m);
  ASSERT_EQ(models.size(), 2u);
  device::DeviceSpec h100 = preflight::test::dev("H100-SXM");
  device::DeviceSpec unlisted = h100;
  unlisted.id = "H100-SXM-unlisted";
  unlisted.aliases.clear();
  const device::DeviceSpec a100 = preflight::test::dev("A100-80G-SXM");  // on no all-reduce list, which fit_class reads
  device::DeviceSpec half_node = a100;
  half_node.id = "A100-80G-SXM-4";
  half_node.aliases.clear();
  half_node.devices_per_node = 4;
  device::DeviceSpec unified = h100;
  unified.id = "H100-SXM-unified";
  unified.aliases.clear();
  unified.memory_kind = "unified";
  const device::DeviceSpec rtx = preflight::test::dev("RTXPRO6000");
  device::DeviceSpec rtx_unlisted = rtx;
  rtx_unlisted.id = "RTXPRO6000-unlisted";
  rtx_unlisted.aliases.clear();
  const auto nvfp4 = model::resolve_model("nvidia/Qwen3-30B-A3B-NVFP4");  // the backend takes NVFP4 experts (weight_format)
  ASSERT_TRUE(nvfp4.has_value());
  plan::PlanTargets b12x;
  b12x.engine_settings.moe_backend = "flashinfer_b12x";
  size_t rows = expect_rows_as_planned_alone(models, {h100, unlisted}, "vllm@0.19.0");
  rows += expect_rows_as_planned_alone(models, {a100, half_node}, "vllm");
  rows += expect_rows_as_planned_alone(models, {h100, unified}, "vllm");
  rows += expect_rows_as_planned_alone({*nvfp4}, {rtx, rtx_unlisted}, "vllm@0.25.0", b12x);
  EXPECT_GT(rows, 4u * 2u * 5u * 2u);
}

// Issue 19 (perfrank37): a plan takes each row's fit interconnect (plan/fit_copy.hpp fit_interconnect) from a table made
// once per card and count of its platform run, not per row. vLLM 0.10.0 counts the NCCL buffers of a TP group
// (engines.json nccl_buffers, 0.4.3 - 0.10.99) on the card's form-factor default: sxm -> nvswitch, pcie -> pcie (TP > 1;
// at TP 1 none is counted). H100-SXM and H100-PCIe, planned together at 1, 2 and 8 cards, so must differ in the NCCL
// term at TP 2 and 8 and agree at TP 1 (a table keyed on the count alone, or read at the run's first card, gives the PCIe
// card the SXM card's buffers), and each row equals the row planned alone.
TEST(FitCopyKey, Issue19_TheInterconnectTableHoldsEachCardAtEachCount) {
  const auto all = preflight::test::catalogue_model_specs();
  std::vector<model::ModelSpec> models;
  for (const auto& m : all)
    if (m.id == "Qwen/Qwen3-8B") models.push_back(m);
  ASSERT_EQ(models.size(), 1u);
  const std::vector<device::DeviceSpec> devices = {preflight::test::dev("H100-SXM"), preflight::test::dev("H100-PCIe")};
  plan::PlanInputs in = catalogs().inputs();
  in.engine = "vllm@0.10.0";
  in.variant = "bf16";
  plan::PlanTargets t;
  t.context_tokens = 8192;
  std::map<std::pair<std::string, int64_t>, double> nccl;  // (card, count) -> the row's NCCL buffer bytes
  for (const auto& p : plan::plan_for_devices(models, devices, {1, 2, 8}, in, t, 2))
    for (const auto* list : {&p.result.recommended, &p.result.rejected})
      for (const auto& c : *list) {
        const std::string at = p.device_id + " x" + std::to_string(p.num_devices);
        const auto& dev = p.device_id == "H100-SXM" ? devices[0] : devices[1];
        const plan::Candidate alone = plan::evaluate_candidate(models[0], dev, in, c.variant_id.str(), p.num_devices, t);
        EXPECT_EQ(c.fit.nccl_buffer_bytes, alone.fit.nccl_buffer_bytes) << at;
        EXPECT_EQ(c.fit.available_kv_bytes, alone.fit.available_kv_bytes) << at;
        EXPECT_EQ(c.interconnect.str(), alone.interconnect.str()) << at;
        nccl[{p.device_id, p.num_devices}] = c.fit.nccl_buffer_bytes;
      }
  ASSERT_EQ(nccl.size(), 6u);
  EXPECT_EQ(nccl.at({"H100-SXM", 1}), 0.0);
  EXPECT_EQ(nccl.at({"H100-PCIe", 1}), 0.0);
  for (const int64_t n : {2, 8}) {
    EXPECT_GT(nccl.at({"H100-SXM", n}), 0.0) << n;
    EXPECT_GT(nccl.at({"H100-PCIe", n}), 0.0) << n;
    EXPECT_NE(nccl.at({"H100-SXM", n}), nccl.at({"H100-PCIe", n})) << n << " cards: nvswitch and pcie channels differ";
  }
}
