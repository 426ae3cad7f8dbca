// Issue 15: plan considers DP+EP layouts for MoE models and keeps one as a row of its own where it is cheaper
// than the TP/PP layouts, with its start commands (one node: --data-parallel-size; two: --data-parallel-size-local,
// --data-parallel-address and --headless on the other node).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "model/model_source.hpp"
#include "plan/dp_ep.hpp"
#include "plan/launch.hpp"
#include "plan_catalogs.hpp"

using namespace preflight;

namespace {
using test::catalogs;
using test::dev;

model::ModelSpec resolved(const std::string& id) {
  auto m = model::resolve_model(id);
  EXPECT_TRUE(m.has_value()) << id;
  return m ? *m : model::ModelSpec{};
}

const plan::Candidate* dp_row(const plan::PlanResult& r) {
  const auto it = std::find_if(r.recommended.begin(), r.recommended.end(), [](const plan::Candidate& c) { return c.data_parallel_size > 1; });
  return it == r.recommended.end() ? nullptr : &*it;
}
}  // namespace

// TP 1, 2, 4, 8 with DP = n / TP >= 2; EP = n ranks at most the routed experts; query heads divisible by TP.
TEST(DpEp, Issue15_LayoutsOfADeviceCount) {
  using L = std::vector<std::tuple<int64_t, int64_t, int64_t>>;
  auto layouts = [](const std::string& model, int64_t n) {
    L out;
    for (const auto& l : plan::dp_ep_layouts(resolved(model), n, 8)) out.emplace_back(l.num_devices, l.data_parallel_size, l.tensor_parallel_size);
    return out;
  };
  // Qwen3-30B-A3B: 128 experts, 32 query heads.
  EXPECT_EQ(layouts("Qwen/Qwen3-30B-A3B", 8), (L{{8, 8, 1}, {8, 4, 2}, {8, 2, 4}}));
  EXPECT_EQ(layouts("Qwen/Qwen3-30B-A3B", 16), (L{{16, 16, 1}, {16, 8, 2}, {16, 4, 4}, {16, 2, 8}}));
  EXPECT_EQ(layouts("Qwen/Qwen3-30B-A3B", 2), (L{{2, 2, 1}}));
  // Mixtral-8x7B: 8 experts, so 16 ranks would leave ranks without an expert (vLLM refuses it).
  EXPECT_EQ(layouts("mistralai/Mixtral-8x7B-v0.1", 16), L{});
  EXPECT_EQ(layouts("mistralai/Mixtral-8x7B-v0.1", 8), (L{{8, 8, 1}, {8, 4, 2}, {8, 2, 4}}));
  // A dense model has no DP+EP layout.
  EXPECT_EQ(layouts("Qwen/Qwen3-8B", 8), L{});
}

// DeepSeek-V3 on H200 at 32k: MLA caches one latent per token that TP does not split, (kv_lora_rank 512 + rope 64)
// x 2 B x 61 layers = 70,272 B per token on every rank of TP 8 and of every DP replica alike. So 8 replicas hold
// 8 x one replica's requests, more than TP 8 on the same 8 cards: DP+EP is the cheaper row and comes first.
TEST(DpEp, Issue15_MlaMoeOnOneNodeIsCheaperAsDpEp) {
  const auto m = resolved("deepseek-ai/DeepSeek-V3");
  plan::PlanTargets t;
  t.context_tokens = 32768;
  t.concurrency = 16;
  const auto r = plan::plan_for_model(m, {dev("H200")}, catalogs().inputs(), t, 16);
  ASSERT_EQ(r.recommended.size(), 2u);
  const plan::Candidate& first = r.recommended[0];
  const plan::Candidate& tp = r.recommended[1];
  ASSERT_EQ(first.data_parallel_size, 8);
  EXPECT_EQ(first.num_devices, 8);
  EXPECT_EQ(first.tensor_parallel_size, 1);
  EXPECT_TRUE(first.expert_parallel);
  EXPECT_EQ(tp.data_parallel_size, 1);
  EXPECT_EQ(tp.num_devices, 8);
  EXPECT_EQ(first.fit.kv_bytes_per_token_rank, 70272);
  EXPECT_EQ(tp.fit.kv_bytes_per_token_rank, 70272);
  const double all_replicas = first.fit.max_concurrency * 8;
  EXPECT_GT(all_replicas, tp.fit.max_concurrency);
  EXPECT_EQ(first.cheaper.rfind("the same 8 devices serve", 0), 0u) << first.cheaper;
  // One node: the replica's serve line with the DP size and expert parallel, no per-node blocks.
  EXPECT_NE(first.launch->serve.find("--tensor-parallel-size 1"), std::string::npos) << first.launch->serve;
  EXPECT_NE(first.launch->serve.find("--data-parallel-size 8 --enable-expert-parallel"), std::string::npos) << first.launch->serve;
  EXPECT_TRUE(first.launch->nodes.empty());
}

// DeepSeek-V3 planned on up to 16 H100s at 32,768 tokens and 16 streams, once for the tests that read its DP+EP row.
static const plan::PlanResult& deepseek_v3_on_16_h100() {
  static const plan::PlanResult r = [] {
    const auto m = resolved("deepseek-ai/DeepSeek-V3");
    plan::PlanTargets t;
    t.context_tokens = 32768;
    t.concurrency = 16;
    return plan::plan_for_model(m, {dev("H100-SXM")}, catalogs().inputs(), t, 16);
  }();
  return r;
}

// DeepSeek-V3 on H100 needs TP 8 x PP 2 (16 cards); DP 16 x TP 1 + EP on the same 16 serves more at once and starts as
// native data parallel over two nodes: 8 ranks per node, the head with the API, the other node --headless.
TEST(DpEp, Issue15_TwoNodesStartHeadAndHeadless) {
  const plan::PlanResult& r = deepseek_v3_on_16_h100();
  const plan::Candidate* c = dp_row(r);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->num_devices, 16);
  EXPECT_EQ(c->data_parallel_size * c->tensor_parallel_size, 16);
  ASSERT_EQ(c->launch->nodes.size(), 2u);
  const std::string local = "--data-parallel-size " + std::to_string(c->data_parallel_size) + " --data-parallel-size-local " +
                            std::to_string(8 / c->tensor_parallel_size);
  EXPECT_NE(c->launch->serve.find(local + " --data-parallel-address"), std::string::npos) << c->launch->serve;
  EXPECT_NE(c->launch->nodes[1].lines.back().find("--headless " + local), std::string::npos) << c->launch->nodes[1].lines.back();
  EXPECT_NE(c->launch->nodes[1].lines.back().find("--enable-expert-parallel"), std::string::npos);
}

// Issue 15 (ux28): native data parallel over two nodes exports each node's interface before vLLM starts, as the Ray layout
// over nodes does (data/engines/launch.json multi-node-nic-cuda: GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME; vLLM-Ascend's
// multi-node DP tutorials set GLOO / TP / HCCL_SOCKET_IFNAME on every node). Before, only a replica that itself spanned
// nodes got them: the DP+EP row on 16 cards started both nodes with no interface named. One node (8 x H200) names none.
TEST(DpEp, Issue15_DataParallelOverNodesExportsTheInterfaceOnEveryNode) {
  const plan::PlanResult& r = deepseek_v3_on_16_h100();
  const plan::Candidate* c = dp_row(r);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->launch->nodes.size(), 2u);
  for (const auto& node : c->launch->nodes) {
    SCOPED_TRACE(node.role);
    std::vector<std::string> lines = node.lines;
    if (node.role == "head") lines.push_back(c->launch->serve);  // the head's serve line follows its block
    const auto at = [&](const std::string& part) {
      for (size_t i = 0; i < lines.size(); ++i)
        if (lines[i].find(part) != std::string::npos) return static_cast<int>(i);
      return -1;
    };
    const int serve = at("vllm serve ");
    ASSERT_GE(serve, 0);
    for (const char* env : {"export GLOO_SOCKET_IFNAME=${NIC:?", "export NCCL_SOCKET_IFNAME=${NIC:?"}) {
      EXPECT_GE(at(env), 0) << env;
      EXPECT_LT(at(env), serve) << env;
    }
  }
  EXPECT_NE(c->launch->multi_node[1].find("NIC=<interface"), std::string::npos) << c->launch->multi_node[1];

  plan::PlanTargets t;
  t.context_tokens = 32768;
  t.concurrency = 16;
  const auto one = plan::plan_for_model(resolved("deepseek-ai/DeepSeek-V3"), {dev("H200")}, catalogs().inputs(), t, 16);
  const plan::Candidate* local = dp_row(one);
  ASSERT_NE(local, nullptr);
  EXPECT_TRUE(local->launch->nodes.empty());
  for (const auto& env : local->launch->env) EXPECT_EQ(env.find("SOCKET_IFNAME"), std::string::npos) << env;
}

// Issue 15 (ux28): `plan Qwen/Qwen3-30B-A3B --device 910B3 --data-parallel 16 --expert-parallel` (the README's example):
// 16 replicas of one card fill two nodes of 8, and each node's block now exports its interface (multi-node-nic-npu:
// GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME, HCCL_SOCKET_IFNAME) before its vllm serve; 8 replicas on one node export none.
TEST(DpEp, Issue15_DataParallelFlagOverNodesExportsTheInterface) {
  const auto m = resolved("Qwen/Qwen3-30B-A3B");
  plan::PlanTargets t;
  t.context_tokens = 32768;
  for (const int64_t replicas : {16, 8}) {
    SCOPED_TRACE(replicas);
    auto in = catalogs().inputs();
    in.data_parallel_replicas = replicas;
    const auto r = plan::plan_for_model(m, {dev("910B3")}, in, t, 16);
    const auto top = std::find_if(r.recommended.begin(), r.recommended.end(), [](const plan::Candidate& c) { return c.data_parallel_size == 1; });
    ASSERT_NE(top, r.recommended.end());
    const auto l = plan::with_data_parallel(*top, 8, {.size = replicas, .expert_parallel = true});
    ASSERT_TRUE(l.has_value()) << l.error().describe();
    int exports = 0;
    for (const auto& node : l->nodes)
      for (const auto& line : node.lines) exports += line.rfind("export HCCL_SOCKET_IFNAME=${NIC:?", 0) == 0 ? 1 : 0;
    for (const auto& env : l->env) exports += env.rfind("HCCL_SOCKET_IFNAME=", 0) == 0 && replicas == 8 ? 1 : 0;
    if (replicas == 16) {
      ASSERT_EQ(l->nodes.size(), 2u);
      EXPECT_EQ(exports, 2);  // the head's block and the headless node's
      const auto& worker = l->nodes[1].lines;
      const auto serve = std::find_if(worker.begin(), worker.end(), [](const std::string& x) { return x.rfind("vllm serve ", 0) == 0; });
      const auto nic = std::find_if(worker.begin(), worker.end(), [](const std::string& x) { return x.rfind("export GLOO_SOCKET_IFNAME=", 0) == 0; });
      EXPECT_LT(nic - worker.begin(), serve - worker.begin());
    } else {
      EXPECT_TRUE(l->nodes.empty());
      EXPECT_EQ(exports, 0);
    }
  }
}

// Qwen3-30B-A3B: 4 KV heads, which TP 2 splits, so DP 2 x TP 1 holds about as many requests as TP 2 on the same two
// cards and is not kept: it is listed among the rejected rows with the comparison. The target (12 requests) is one
// both layouts meet on 910B3, so the comparison, not the target, rejects it (on NPU each DP+EP rank also loses the
// HCCL communicators expert parallel opens, so DP 2 holds fewer than TP 2's ~17).
TEST(DpEp, Issue15_NotCheaperIsRejectedWithTheComparison) {
  const auto m = resolved("Qwen/Qwen3-30B-A3B");
  plan::PlanTargets t;
  t.context_tokens = 32768;
  t.concurrency = 12;
  plan::PlanInputs in = catalogs().inputs();
  in.variant = "bf16";
  const auto r = plan::plan_for_model(m, {dev("910B3")}, in, t, 16);
  EXPECT_EQ(dp_row(r), nullptr);
  const auto it = std::find_if(r.rejected.begin(), r.rejected.end(), [](const plan::Candidate& c) { return c.data_parallel_size > 1 && c.fit.fits; });
  ASSERT_NE(it, r.rejected.end());
  EXPECT_NE(it->reason.find("not cheaper than TP 2 on 2 devices"), std::string::npos) << it->reason;
}

// plan --device H200 --num-devices 8: DeepSeek-V3's TP 8 row gets a DP+EP row of the same 8 cards just before it (MLA:
// 8 replicas x one replica's requests against TP 8's, the per-token latent being 70,272 B on every rank of both).
TEST(DpEp, Issue15_WhatEightCardsRunGetsTheDpEpRow) {
  const std::vector<model::ModelSpec> models = {resolved("deepseek-ai/DeepSeek-V3"), resolved("Qwen/Qwen3-8B")};
  plan::PlanTargets t;
  t.context_tokens = 32768;
  auto r = plan::plan_for_device(models, dev("H200"), 8, catalogs().inputs(), t);
  const size_t before = r.recommended.size();
  plan::add_dp_ep_rows_for_device(r, models, dev("H200"), catalogs().inputs(), t);
  ASSERT_EQ(r.recommended.size(), before + 1);  // Qwen3-8B is dense: no row for it
  const auto dp = std::find_if(r.recommended.begin(), r.recommended.end(), [](const plan::Candidate& c) { return c.data_parallel_size > 1; });
  ASSERT_NE(dp, r.recommended.end());
  ASSERT_NE(dp + 1, r.recommended.end());
  EXPECT_EQ(dp->model_id, "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ((dp + 1)->model_id, "deepseek-ai/DeepSeek-V3");
  EXPECT_EQ((dp + 1)->data_parallel_size, 1);
  EXPECT_EQ(dp->num_devices, 8);
  EXPECT_EQ(dp->fit.kv_bytes_per_token_rank, 70272);
  EXPECT_GT(dp->fit.max_concurrency * static_cast<double>(dp->data_parallel_size), (dp + 1)->fit.max_concurrency);
  EXPECT_NE(dp->launch->serve.find("--enable-expert-parallel"), std::string::npos);
}

// Issue 16 ("never lower a context target silently"), for the DP+EP rows too: Qwen3-30B-A3B's maximum is 40,960
// tokens (max_position_embeddings), so at a 65,536-token target no row is recommended, and the DP+EP layouts are
// rejected with that reason at the target's context, not sized at 40,960.
TEST(DpEp, Issue16_ContextAboveTheModelsMaximumIsNotLowered) {
  const auto m = resolved("Qwen/Qwen3-30B-A3B");
  plan::PlanTargets t;
  t.context_tokens = 65536;
  plan::PlanInputs in = catalogs().inputs();
  in.variant = "bf16";
  const auto r = plan::plan_for_model(m, {dev("H100")}, in, t, 8);
  EXPECT_TRUE(r.recommended.empty());
  const auto it = std::find_if(r.rejected.begin(), r.rejected.end(), [](const plan::Candidate& c) { return c.data_parallel_size > 1; });
  ASSERT_NE(it, r.rejected.end());
  EXPECT_EQ(it->context_tokens, 65536);
  EXPECT_NE(it->reason.find("is greater than the derived max_model_len (max_position_embeddings=40960"), std::string::npos) << it->reason;
}
