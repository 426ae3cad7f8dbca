// Issue 15 (tpws): the FlashInfer all-reduce fusion workspace vLLM 0.19 allocates inside its profile window at TP > 1 on
// an NVSwitch group of SM 9.0 / 10.0 cards (docs/memory-model.md, "The FlashInfer all-reduce workspace"). Expected
// bytes are worked by hand from FlashInfer v0.6.6 (trtllm_ar.py trtllm_create_ipc_workspace_for_all_reduce_fusion,
// mnnvl.py SymmDeviceMemory) and vLLM's AllReduceFusionPass, with the configs in ../shared/models:
//  - max_token_num = min(max input / (hidden_size x dtype bytes), max_num_batched_tokens); the maximum input on
//    SM 9.0 is 64 MiB at TP 2, 2 MiB at TP 4 (vLLM FI_ALLREDUCE_FUSION_MAX_SIZE_MB);
//  - buffer = tp x max_token_num x hidden x 2; flag = tp x 256 x 4; lamport = 3 x tp x max_token_num x hidden x 2
//    (x 4 for an fp32 model);
//  - each rounded up to 2 MiB, + 2048 bytes of signal pad, rounded up to the multicast granularity (512 MiB).
// Meta-Llama-3.1-8B: hidden_size 4096, bfloat16 (2 bytes). Llama-3.3-70B-Instruct: hidden_size 8192, bfloat16.
#include <gtest/gtest.h>

#include "engine/allreduce_workspace.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"
#include "fit_setup.hpp"
#include "test_support.hpp"

#include <set>
#include <sstream>

using namespace preflight;

namespace {

constexpr double k_mib = 1024.0 * 1024.0;
const char* const k_llama8b = "meta-llama/Meta-Llama-3.1-8B";

estimate::Deployment layout(int64_t tp, engine::Interconnect ic, int64_t pp = 1) {
  estimate::Deployment d;
  d.tensor_parallel_size = tp;
  d.pipeline_parallel_size = pp;
  d.max_model_len = 8192;
  d.max_num_batched_tokens = 8192;
  d.gpu_memory_utilization = 0.95;
  d.interconnect = ic;
  return d;
}

estimate::FitEstimate fit(const std::string& model, const std::string& device, const std::string& version, int64_t tp, engine::Interconnect ic,
                          int64_t pp = 1) {
  auto s = pftest::fit_setup(model, device, "vllm", version);
  return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, layout(tp, ic, pp));
}

const engine::AllreduceFusionWorkspace& record() {
  static const engine::AllreduceFusionWorkspace w = [] {
    auto s = pftest::fit_setup(k_llama8b, "H100-SXM", "vllm", "0.19.0");
    EXPECT_NE(s.overheads.allreduce_fusion_workspace, nullptr) << "engines.json overheads[cuda].allreduce_fusion_workspace";
    return s.overheads.allreduce_fusion_workspace ? *s.overheads.allreduce_fusion_workspace : engine::AllreduceFusionWorkspace{};
  }();
  return w;
}

}  // namespace

// The shipped record: vLLM 0.19, NVSwitch only, PP 1 / DP 1, the SM 9.0 table, FlashInfer's constants.
TEST(AllreduceWorkspace, CatalogueRecord) {
  const auto& w = record();
  EXPECT_EQ(w.engine, "vllm");
  EXPECT_DOUBLE_EQ(w.max_input_bytes("H100-SXM", 2), 64.0 * k_mib);
  EXPECT_DOUBLE_EQ(w.max_input_bytes("H100-SXM", 4), 2.0 * k_mib);
  EXPECT_DOUBLE_EQ(w.max_input_bytes("H100-SXM", 8), 0.5 * k_mib);
  EXPECT_DOUBLE_EQ(w.max_input_bytes("B200", 4), 32.0 * k_mib);
  EXPECT_DOUBLE_EQ(w.max_input_bytes("H100-SXM", 3), 0.0);  // no TP 3 entry: no workspace
  EXPECT_DOUBLE_EQ(w.max_input_bytes("L40S", 2), 0.0);
  EXPECT_DOUBLE_EQ(w.granularity_bytes, 512.0 * k_mib);
  EXPECT_DOUBLE_EQ(w.signal_pad_bytes, 2048.0);
  EXPECT_EQ(w.lamport_copies, 3);
  EXPECT_EQ(w.flag_bytes_per_rank, 256 * 4);
}

// FlashInfer's sizes before the granularity, with a 2 MiB granularity so each buffer shows:
//  - 8B TP 2: tokens min(64 MiB / 8192, 8192) = 8192; buffer 2 x 8192 x 4096 x 2 = 128 MiB -> +2 KiB -> 130 MiB;
//    flag 2 x 1024 = 2 KiB -> 2 MiB + 2 KiB -> 4 MiB; lamport 3 x 128 = 384 MiB -> 386 MiB; 520 MiB.
//  - 8B TP 4: tokens 2 MiB / 8192 = 256; buffer 4 x 256 x 4096 x 2 = 8 MiB -> 10; flag -> 4; lamport 24 -> 26; 40 MiB.
//  - 70B TP 2: tokens 64 MiB / 16384 = 4096; buffer 2 x 4096 x 8192 x 2 = 128 MiB: 520 MiB as 8B.
//  - 8B TP 2, max_num_batched_tokens 2048: buffer 2 x 2048 x 4096 x 2 = 32 MiB -> 34; flag 4; lamport 96 -> 98; 136 MiB.
//  - an fp32 8B at TP 2: tokens 64 MiB / 16384 = 4096; buffer 2 x 4096 x 4096 x 2 = 64 MiB -> 66; flag 4;
//    lamport 3 x (2 x 4096 x 4096 x 4 = 128 MiB) = 384 -> 386; 456 MiB.
TEST(AllreduceWorkspace, FlashInferSizes) {
  engine::AllreduceFusionWorkspace w = record();
  w.granularity_bytes = 2.0 * k_mib;
  struct Row {
    double max_input_mib;
    int64_t tp, hidden, dtype_bytes, batched;
    int64_t tokens;
    double buffer_mib, lamport_mib, allocated_mib;
  };
  const Row rows[] = {
      {64, 2, 4096, 2, 8192, 8192, 128, 384, 520},
      {2, 4, 4096, 2, 8192, 256, 8, 24, 40},
      {64, 2, 8192, 2, 8192, 4096, 128, 384, 520},
      {64, 2, 4096, 2, 2048, 2048, 32, 96, 136},
      {64, 2, 4096, 4, 8192, 4096, 64, 384, 456},
  };
  for (const auto& r : rows) {
    const auto s = estimate::terms::allreduce_workspace_sizes(w, r.max_input_mib * k_mib, r.tp, r.hidden, r.dtype_bytes, r.batched);
    EXPECT_EQ(s.max_token_num, r.tokens) << r.tp << " " << r.hidden;
    EXPECT_DOUBLE_EQ(s.buffer_bytes, r.buffer_mib * k_mib) << r.tp << " " << r.hidden;
    EXPECT_DOUBLE_EQ(s.flag_bytes, static_cast<double>(r.tp) * 1024.0);
    EXPECT_DOUBLE_EQ(s.lamport_bytes, r.lamport_mib * k_mib) << r.tp << " " << r.hidden;
    EXPECT_DOUBLE_EQ(s.allocated_bytes, r.allocated_mib * k_mib) << r.tp << " " << r.hidden;
  }
}

// With the 512 MiB multicast granularity every buffer below 512 MiB - 2 KiB takes one granule: 3 x 512 = 1536 MiB
// per rank at TP 2 and TP 4 alike, which is what the llm-d-planner H100 sweep shows (2.07-2.21 GiB at TP 2 and 4).
TEST(AllreduceWorkspace, Issue15_Tpws_H100Tp2AndTp4) {
  const auto tp2 = fit(k_llama8b, "H100-SXM", "0.19.0", 2, engine::Interconnect::nvswitch);
  const auto tp4 = fit(k_llama8b, "H100-SXM", "0.19.0", 4, engine::Interconnect::nvswitch);
  const auto big = fit("meta-llama/Llama-3.3-70B-Instruct", "H100-SXM", "0.19.0", 2, engine::Interconnect::nvswitch);
  EXPECT_DOUBLE_EQ(tp2.allreduce_workspace_bytes, 1536.0 * k_mib);
  EXPECT_DOUBLE_EQ(tp4.allreduce_workspace_bytes, 1536.0 * k_mib);
  EXPECT_DOUBLE_EQ(big.allreduce_workspace_bytes, 1536.0 * k_mib);
  // B200 TP 4: 32 MiB input, buffer 4 x 32 = 128 MiB, lamport 384 MiB: still one granule each.
  EXPECT_DOUBLE_EQ(fit(k_llama8b, "B200", "0.19.0", 4, engine::Interconnect::nvswitch).allreduce_workspace_bytes, 1536.0 * k_mib);
  // Subtracted from the budget: the same deployment without NVSwitch multicast has 1536 MiB more available KV.
  const auto direct = fit(k_llama8b, "H100-SXM", "0.19.0", 2, engine::Interconnect::nvlink_direct);
  EXPECT_DOUBLE_EQ(direct.allreduce_workspace_bytes, 0.0);
  EXPECT_NEAR(direct.available_kv_bytes - tp2.available_kv_bytes, 1536.0 * k_mib, 1.0);
  bool named = false;
  for (const auto& t : tp2.terms) named = named || (t.name == "all-reduce workspace" && t.bytes == tp2.allreduce_workspace_bytes);
  EXPECT_TRUE(named) << "the term is listed with its bytes";
}

// Where vLLM does not allocate it: versions outside 0.19 (0.18 before, 0.20 after the range, 0.10 with the NCCL
// rule), TP 1, PP > 1 (the fusion is off with PP in 0.19), PCIe / NVLink without a switch, a TP size or card with no
// maximum input (TP 3, L40S, an RTX PRO 6000 on SM 12.0).
TEST(AllreduceWorkspace, NotAllocated) {
  for (const char* version : {"0.18.0", "0.20.0", "0.10.1"})
    EXPECT_DOUBLE_EQ(fit(k_llama8b, "H100-SXM", version, 2, engine::Interconnect::nvswitch).allreduce_workspace_bytes, 0.0) << version;
  EXPECT_DOUBLE_EQ(fit(k_llama8b, "H100-SXM", "0.19.0", 1, engine::Interconnect::nvswitch).allreduce_workspace_bytes, 0.0);
  EXPECT_DOUBLE_EQ(fit(k_llama8b, "H100-SXM", "0.19.0", 2, engine::Interconnect::nvswitch, 2).allreduce_workspace_bytes, 0.0);
  EXPECT_DOUBLE_EQ(fit(k_llama8b, "H100-SXM", "0.19.0", 2, engine::Interconnect::pcie).allreduce_workspace_bytes, 0.0);
  EXPECT_DOUBLE_EQ(fit(k_llama8b, "H100-SXM", "0.19.0", 3, engine::Interconnect::nvswitch).allreduce_workspace_bytes, 0.0);
  EXPECT_DOUBLE_EQ(fit(k_llama8b, "L40S", "0.19.0", 2, engine::Interconnect::nvswitch).allreduce_workspace_bytes, 0.0);
  EXPECT_DOUBLE_EQ(fit(k_llama8b, "RTXPRO6000", "0.19.0", 2, engine::Interconnect::nvswitch).allreduce_workspace_bytes, 0.0);
}

// Review fix: "all-reduce workspace" is longer than the 17-column label field of fit's memory block, and its value was
// printed one space after the name, out of line with the others. Every value in the block starts in one column.
TEST(AllreduceWorkspace, FitTextKeepsTheValueColumnAligned) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-32B --device H100-SXM --engine vllm@0.19 --tensor-parallel-size 2", {"NO_COLOR=1", false});
  ASSERT_EQ(r.code, 0) << r.out;
  const auto begin = r.out.find("memory per device");
  const auto end = r.out.find("the engine will print");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::istringstream block(r.out.substr(begin, end - begin));
  std::string line;
  std::getline(block, line);  // the heading
  std::set<size_t> columns;
  bool workspace = false;
  while (std::getline(block, line)) {
    if (line.find_first_not_of(' ') == std::string::npos) continue;  // the indent before "the engine will print"
    workspace = workspace || line.find("all-reduce workspace") != std::string::npos;
    const auto value = line.find_first_of("0123456789");
    ASSERT_NE(value, std::string::npos) << line;
    columns.insert(value);
  }
  EXPECT_TRUE(workspace) << r.out;
  EXPECT_EQ(columns.size(), 1U) << r.out;
}
