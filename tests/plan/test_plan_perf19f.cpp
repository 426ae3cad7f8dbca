// Issue 19 (planfast6): build_launch keeps the layout-free parts of a start command (the launch rules' part, the
// checkpoint choice) in a plan::LaunchMemo between its calls for one (model, variant) and launch class, keyed by the
// candidate's fields each part read. The property: every start command of a whole-catalogue plan --json (every card,
// 1/2/4/8/16 cards, every variant) equals build_launch of its row with no memo; and one memo shared by every row of a
// model, across its variants, counts, card families and engines (far more than the planner hands one memo), gives
// each row what no memo gives. A key that misses a field the parts read (the family a rule names, the TP size of a
// refused published checkpoint, the card count of msModelSlim's --device list, the multi-node switch) fails here or in
// the next test.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "deploy/deployment.hpp"
#include "plan/launch.hpp"
#include "plan/planner.hpp"
#include "plan_catalogs.hpp"
#include "plan_test_models.hpp"

using namespace preflight;
using preflight::test::catalogs;

namespace {

void expect_same_launch(const plan::Launch& a, const plan::Launch& b, const std::string& at) {
  EXPECT_EQ(a.prepare, b.prepare) << at;
  EXPECT_EQ(a.shell, b.shell) << at;
  EXPECT_EQ(a.env, b.env) << at;
  EXPECT_EQ(a.checkpoint, b.checkpoint) << at;
  EXPECT_EQ(a.serve, b.serve) << at;
  EXPECT_EQ(a.multi_node, b.multi_node) << at;
  ASSERT_EQ(a.nodes.size(), b.nodes.size()) << at;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i].role, b.nodes[i].role) << at;
    EXPECT_EQ(a.nodes[i].lines, b.nodes[i].lines) << at;
  }
  EXPECT_EQ(a.notes, b.notes) << at;
}

}  // namespace

TEST(Launch, Issue19_MemoizedStartCommandsEqualFreshOnes) {
  const auto models = preflight::test::catalogue_model_specs();
  const auto& devices = catalogs().devices.devices;
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  in.detail = plan::RowDetail::every_row;
  const auto plans = plan::plan_for_devices(models, devices, {1, 2, 4, 8, 16}, in, t, 2);
  // One engine object per platform, so that a memo shared across cards keeps its entries (it keys on the engine object).
  std::map<std::string, engine::EngineProfile> engines;
  std::map<std::string, const device::DeviceSpec*> by_id;
  for (const auto& d : devices) {
    by_id[d.id] = &d;
    if (engines.count(d.platform)) continue;
    std::vector<std::string> assumed;
    auto e = deploy::resolve_engine(plan::plan_engine_input(in), catalogs().engines, d.platform, assumed);
    if (e) engines.emplace(d.platform, std::move(*e));
  }
  // Per model, its recommended rows over the whole plan (every card and count), in the plan's order.
  std::map<std::string, std::vector<std::pair<const device::DeviceSpec*, const plan::Candidate*>>> rows;
  for (const auto& p : plans)
    for (const auto& c : p.result.recommended) rows[c.model_id.str()].push_back({by_id.at(p.device_id), &c});
  size_t compared = 0, with_devices = 0, multi_node = 0, family_rule = 0;
  for (const auto& m : models) {
    const auto at_model = rows.find(m.id);
    if (at_model == rows.end()) continue;
    plan::LaunchMemo shared;  // one memo for every row of the model
    for (const auto& [d, c] : at_model->second) {
      const auto e = engines.find(d->platform);
      ASSERT_NE(e, engines.end()) << d->platform;
      // ux29: the card's node size and half precision, as the planner passes them (a 910C node holds 16 dies; a 310P has no bf16).
      const plan::LaunchOptions options{.workload = in.workload,
                                        .device_family = d->family,
                                        .half_precision = d->supports_dtype("bf16") ? plan::CardHalfPrecision::bf16_and_fp16 : plan::CardHalfPrecision::fp16_only,
                                        .device_platform = d->platform};
      const plan::Launch fresh = plan::build_launch(m, *c, e->second, catalogs().rules, d->node_devices(), options);
      const plan::Launch memoized = plan::build_launch(m, *c, e->second, catalogs().rules, d->node_devices(), options, &shared);
      const std::string at = m.id + " [" + c->variant.str() + "] " + d->id + " x" + std::to_string(c->num_devices);
      expect_same_launch(*c->launch, fresh, at + " (the plan's row)");
      expect_same_launch(memoized, fresh, at + " (one memo for the model)");
      ++compared;
      const std::string prepared = [&] {
        std::string all;
        for (const auto& line : fresh.prepare) all += line + "\n";
        return all;
      }();
      with_devices += prepared.find("--device npu:0,") != std::string::npos;
      multi_node += !fresh.nodes.empty();
      for (const auto& n : fresh.notes) family_rule += n.rfind("qknorm-rope-fusion-a2: ", 0) == 0;
    }
  }
  // The cases the key's fields are there for are in the catalogue's plan (the TP size: the next test).
  EXPECT_GT(compared, 30000u);
  EXPECT_GT(with_devices, 0u);
  EXPECT_GT(multi_node, 0u);
  EXPECT_GT(family_rule, 0u);
}

// The checkpoint choice reads the TP size only where a published checkpoint of the variant is one vLLM refuses under TP
// (bitsandbytes 4-bit: the BF16 original quantized at load instead, and a note naming the TP size): one memo over the
// counts 1, 2, 4, 1, 8 of such a row gives each count what no memo gives, the published checkpoint at TP 1 only.
TEST(Launch, Issue19_MemoizedCheckpointKeysOnTheTensorParallelSizeWhereItIsRead) {
  const auto models = preflight::test::catalogue_model_specs();
  const auto m = std::find_if(models.begin(), models.end(), [](const auto& x) { return x.id == "meta-llama/Llama-3.1-8B-Instruct"; });
  ASSERT_NE(m, models.end());
  const device::DeviceSpec d = preflight::test::dev("H100-SXM");
  plan::PlanInputs in = catalogs().inputs();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  std::vector<std::string> assumed;
  const auto e = deploy::resolve_engine(plan::plan_engine_input(in), catalogs().engines, d.platform, assumed);
  ASSERT_TRUE(e.has_value());
  plan::LaunchMemo memo;
  const plan::LaunchOptions options{.device_family = d.family};
  for (const int64_t n : {1, 2, 4, 1, 8}) {
    const plan::Candidate c = plan::evaluate_candidate(*m, d, in, "bnb_4bit", n, t);
    ASSERT_EQ(c.variant_id.str(), "bnb_4bit");
    const plan::Launch fresh = plan::build_launch(*m, c, *e, catalogs().rules, 8, options);
    expect_same_launch(plan::build_launch(*m, c, *e, catalogs().rules, 8, options, &memo), fresh, "x" + std::to_string(n));
    const bool refused = std::any_of(fresh.notes.begin(), fresh.notes.end(), [&](const std::string& note) {
      return note.find(" at TP " + std::to_string(n) + ": vLLM raises") != std::string::npos;
    });
    EXPECT_EQ(refused, n > 1) << n;
    EXPECT_EQ(fresh.checkpoint == "unsloth/meta-llama-3.1-8b-instruct-bnb-4bit", n == 1) << n << ": " << fresh.checkpoint;
  }
}

// Planfast9: the planner hands one memo to every launch class of a (model, variant): cards of another node size, half
// precision or rule family. The node size is no key of the memo (a call with another one kept emptying it): the one part
// that reads it, a conversion's msModelSlim --device list, is keyed by the card count it wrote (min(count, node size)).
// One memo over 910C (16 dies a node, family ascend-a3) and 910B4 (8 a node, ascend-a2) at 16, 16, 4, 4 and 16 cards
// gives each call what no memo gives, and keeps three checkpoint parts (--device lists of 16, 8 and 4 cards); emptied at
// every change of node size it kept one.
TEST(Launch, Issue19_OneMemoServesCardsOfOtherNodeSizes) {
  const auto models = preflight::test::catalogue_model_specs();
  const auto m = std::find_if(models.begin(), models.end(), [](const auto& x) { return x.id == "Qwen/Qwen3-8B"; });
  ASSERT_NE(m, models.end());
  const device::DeviceSpec a3 = preflight::test::dev("910C"), a2 = preflight::test::dev("910B4");
  ASSERT_EQ(a3.node_devices(), 16);
  ASSERT_EQ(a2.node_devices(), 8);
  plan::PlanInputs in = catalogs().inputs();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  std::vector<std::string> assumed;
  const auto e = deploy::resolve_engine(plan::plan_engine_input(in), catalogs().engines, a3.platform, assumed);
  ASSERT_TRUE(e.has_value());
  plan::LaunchMemo memo;
  const std::vector<std::pair<const device::DeviceSpec*, int64_t>> calls = {{&a3, 16}, {&a2, 16}, {&a3, 4}, {&a2, 4}, {&a3, 16}};
  const std::vector<std::string> device_lists = {"npu:0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 ", "npu:0,1,2,3,4,5,6,7 ", "npu:0,1,2,3 ", "npu:0,1,2,3 ",
                                                 "npu:0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 "};
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto& [d, n] = calls[i];
    const plan::Candidate c = plan::evaluate_candidate(*m, *d, in, "w8a8", n, t);
    ASSERT_EQ(c.variant_id.str(), "w8a8");
    const plan::LaunchOptions options{.device_family = d->family, .device_platform = d->platform};
    const plan::Launch fresh = plan::build_launch(*m, c, *e, catalogs().rules, d->node_devices(), options);
    const std::string at = d->id + " x" + std::to_string(n);
    expect_same_launch(plan::build_launch(*m, c, *e, catalogs().rules, d->node_devices(), options, &memo), fresh, at);
    const bool listed = std::any_of(fresh.prepare.begin(), fresh.prepare.end(), [&](const std::string& line) {
      return line.find("--device " + device_lists[i]) != std::string::npos;
    });
    EXPECT_TRUE(listed) << at;
  }
  EXPECT_EQ(memo.checkpoints.size(), 3u);
  // The rule parts by launch family and by whether the layout spans nodes: the shipped rules treat ascend-a2 and ascend-a3
  // alike (qknorm-rope-fusion-a2 names both), so one part within a node (910C x16, both x4) and one over two (910B4 x16).
  EXPECT_EQ(memo.rule_parts.size(), 2u);
}

// perfcmd37: the planner's items of one model's variants share that model's launch rule parts (plan::SharedRuleParts,
// keyed by the first memo that uses it: the model, engine, rules and options). A part reads no variant; it reads the
// model (its id and model_type: Qwen3-8B's agent rules are agent-tools-qwen and agent-reasoning-qwen3, Llama-3.1's
// agent-tools-llama3), the engine (vllm-ascend's cann-toolkit-env on 910B4), the workload (no agent rule at chat) and
// whether the layout spans nodes (multi-node-nic-cuda at 16 H100s, 8 a node). One store, each call with a fresh memo on
// it, gives each call what no memo gives; the calls of another model, engine or workload than its key's keep their parts
// in their own memo, and the store holds two parts, Qwen3-8B's
// agent rules within a node (shared by its as-published and fp8_tensor rows at 1 and 2 cards) and over two nodes.
// Without the model in the key, Llama's parts join the store (a third part: checked); without the workload, Qwen3-8B's chat
// call takes the agent part (its notes differ); without the engine, the 910B4 call's part joins the store (a third part).
TEST(Launch, Issue19_SharedRulePartsKeyOnModelEngineAndWorkload) {
  const auto models = preflight::test::catalogue_model_specs();
  const auto find = [&](const std::string& id) {
    const auto m = std::find_if(models.begin(), models.end(), [&](const auto& x) { return x.id == id; });
    EXPECT_NE(m, models.end()) << id;
    return &*m;
  };
  const model::ModelSpec* qwen = find("Qwen/Qwen3-8B");
  const model::ModelSpec* llama = find("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_TRUE(qwen && llama);
  const device::DeviceSpec h100 = preflight::test::dev("H100-SXM"), b4 = preflight::test::dev("910B4");
  ASSERT_EQ(h100.node_devices(), 8);
  plan::PlanInputs in = catalogs().inputs();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  std::vector<std::string> assumed;
  const auto cuda = deploy::resolve_engine(plan::plan_engine_input(in), catalogs().engines, h100.platform, assumed);
  const auto npu = deploy::resolve_engine(plan::plan_engine_input(in), catalogs().engines, b4.platform, assumed);
  ASSERT_TRUE(cuda.has_value() && npu.has_value());
  struct Call {
    const model::ModelSpec* m;
    const device::DeviceSpec* d;
    const engine::EngineProfile* e;
    int64_t n;
    plan::Workload w;
    std::string variant;
  };
  const auto agent = plan::Workload::agent, chat = plan::Workload::chat;
  const std::vector<Call> calls = {{qwen, &h100, &*cuda, 1, agent, ""},    {llama, &h100, &*cuda, 1, agent, ""}, {qwen, &h100, &*cuda, 1, chat, ""},
                                   {qwen, &b4, &*npu, 1, agent, ""},       {qwen, &h100, &*cuda, 16, agent, ""}, {qwen, &h100, &*cuda, 2, agent, "fp8_tensor"},
                                   {llama, &h100, &*cuda, 1, agent, "fp8_tensor"}, {qwen, &h100, &*cuda, 1, agent, "fp8_tensor"}};
  plan::SharedRuleParts shared;
  std::vector<std::vector<std::string>> notes;
  for (const auto& call : calls) {
    const plan::Candidate c = plan::evaluate_candidate(*call.m, *call.d, in, call.variant, call.n, t);
    ASSERT_EQ(c.variant_id.str(), call.variant);
    const plan::LaunchOptions options{.workload = call.w, .device_family = call.d->family, .device_platform = call.d->platform};
    const plan::Launch fresh = plan::build_launch(*call.m, c, *call.e, catalogs().rules, call.d->node_devices(), options);
    plan::LaunchMemo memo;
    memo.shared = &shared;
    const std::string at = call.m->id + " " + call.d->id + " x" + std::to_string(call.n) + " " + plan::workload_name(call.w) + " " + call.variant;
    expect_same_launch(plan::build_launch(*call.m, c, *call.e, catalogs().rules, call.d->node_devices(), options, &memo), fresh, at);
    notes.push_back(fresh.notes);
  }
  // Each call of another key than the first's starts with rule notes of its own (else the test could not fail).
  for (const size_t i : {0, 1, 2, 3, 4}) ASSERT_FALSE(notes[i].empty()) << i;
  for (const size_t i : {1, 2, 3, 4}) EXPECT_NE(notes[i].front(), notes[0].front()) << i;
  EXPECT_EQ(shared.model, qwen);
  EXPECT_EQ(shared.parts.size(), 2u);
}
