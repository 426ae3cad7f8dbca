// Issue 15: plan --speculative-config. Every candidate is sized with the drafter (the estimate's own drafter terms,
// as fit counts them), the start command carries the exact flag, and a method the model cannot use gets vLLM's
// message. Expected bytes are derived by hand from the configs in ../shared/models.
#include <gtest/gtest.h>

#include <string>

#include "base/json_util.hpp"
#include "deploy/deployment.hpp"
#include "model/model_source.hpp"
#include "plan/planner.hpp"
#include "plan/speculative.hpp"
#include "plan_catalogs.hpp"
#include "../test_support.hpp"

using namespace preflight;
using preflight::test::catalogs;
using preflight::test::dev;

namespace {

// The speculative config as plan parses it (deploy::deployment_from_flags, drafters found in `dirs`); "" = none.
estimate::SpeculativeConfig parsed(const std::string& json, const std::vector<std::string>& dirs = {}) {
  if (json.empty()) return {};
  deploy::Flags f;
  f.speculative_config = deploy::Given<std::string>{json, "--speculative-config"};
  f.drafter_model_dirs = dirs;
  auto d = deploy::deployment_from_flags(f);
  EXPECT_TRUE(d.has_value()) << (d ? "" : d.error().message);
  return d ? d->speculative : estimate::SpeculativeConfig{};
}

// The one row plan_for_model recommends on one H200 (one device, the checkpoint as published, 32,768 tokens).
plan::Candidate one_h200_row(const model::ModelSpec& m, const std::string& json, const std::vector<std::string>& dirs = {}) {
  plan::PlanTargets t;
  t.context_tokens = 32768;
  t.speculative = parsed(json, dirs);
  plan::PlanInputs in = catalogs().inputs();
  in.variant = "bf16";
  in.speculative_config = json;
  const auto r = plan::plan_for_model(m, {dev("H200")}, in, t, 1);
  EXPECT_EQ(r.recommended.size(), 1u);
  return r.recommended.empty() ? plan::Candidate{} : r.recommended.front();
}

}  // namespace

// Qwen3.5-27B's own MTP layer (mtp_num_hidden_layers 1; hidden 5120, 24 heads x 256 with the output gate, 4 KV heads
// x 256, MLP 17408), embedding and head shared with the target:
//   q_proj 5120 x (24 x 256 x 2) = 62,914,560; k, v 5120 x 1024 = 2 x 5,242,880; o_proj 6144 x 5120 = 31,457,280;
//   q/k norms 2 x 256 -> attention 104,858,112; MLP 3 x 5120 x 17408 = 267,386,880; 2 layer norms 10,240;
//   fc (eh_proj) 10240 x 5120 = 52,428,800; pre-fc norms 2 x 5120 = 10,240; final norm 5,120
//   -> 424,699,392 params x 2 B (bf16) = 849,398,784 B on one device.
// KV: the MTP layer is full attention, 4 KV heads x 256 x (K + V) x 2 B = 4,096 B per token more than the same
// speculative tokens drafted by ngram (which lengthens the recurrent states alike and loads nothing).
TEST(PlanSpeculative, Issue15_MtpDrafterCountedInEveryCandidate) {
  auto m = model::resolve_model("Qwen/Qwen3.5-27B");
  ASSERT_TRUE(m.has_value()) << m.error().describe();
  const auto mtp = one_h200_row(*m, R"({"method": "mtp", "num_speculative_tokens": 1})");
  const auto ngram = one_h200_row(*m, R"({"method": "ngram", "num_speculative_tokens": 1})");
  ASSERT_TRUE(mtp.meets) << mtp.reason;
  ASSERT_TRUE(ngram.meets) << ngram.reason;
  EXPECT_EQ(mtp.num_devices, 1);
  EXPECT_DOUBLE_EQ(mtp.fit.drafter_weights_bytes, 849398784.0);
  EXPECT_NEAR(mtp.fit.weights_bytes - ngram.fit.weights_bytes, 849398784.0, 1.0);
  EXPECT_EQ(mtp.fit.drafter_layers, 1);
  EXPECT_EQ(mtp.fit.kv_bytes_per_token_rank - ngram.fit.kv_bytes_per_token_rank, 4096);
  // The start command carries the flag exactly as given, single-quoted.
  EXPECT_NE(mtp.launch->serve.find(R"( --speculative-config '{"method": "mtp", "num_speculative_tokens": 1}')"), std::string::npos) << mtp.launch->serve;
  EXPECT_EQ(plan::drafter_counted(parsed(R"({"method": "mtp", "num_speculative_tokens": 1})"), mtp.fit),
            "the model's own 1 MTP layer(s), embedding and head shared with the target");
}

// Qwen3-0.6B as the draft model of Qwen3-8B, its config found like MODEL (--models ../shared/models). vLLM loads the
// whole drafter: per layer q 1024 x 2048 = 2,097,152; k, v 1024 x 1024 = 2 x 1,048,576; o 2048 x 1024 = 2,097,152;
// q/k norms 2 x 128; MLP 3 x 1024 x 3072 = 9,437,184; 2 norms x 1024 -> 15,730,944; x 28 layers = 440,466,432;
// + final norm 1,024 + embedding 151,936 x 1,024 = 155,582,464 (tied head) -> 596,049,920 params x 2 B = 1,192,099,840 B.
// KV: 28 drafter layers of 8 KV heads x 128 x (K + V) x 2 B = 4,096 B each: 114,688 B per token more.
TEST(PlanSpeculative, Issue15_DraftModelSizedFromItsOwnConfig) {
  auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value()) << m.error().describe();
  const std::string json = R"({"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 3})";
  const auto with = one_h200_row(*m, json, {pftest::shared_path("models")});
  const auto without = one_h200_row(*m, "");
  ASSERT_TRUE(with.meets) << with.reason;
  EXPECT_DOUBLE_EQ(with.fit.drafter_weights_bytes, 1192099840.0);
  EXPECT_NEAR(with.fit.weights_bytes - without.fit.weights_bytes, 1192099840.0, 1.0);
  EXPECT_EQ(with.fit.drafter_layers, 28);
  EXPECT_EQ(with.fit.kv_bytes_per_token_rank - without.fit.kv_bytes_per_token_rank, 114688);
  EXPECT_EQ(without.launch->serve.find("--speculative-config"), std::string::npos) << without.launch->serve;
  const Json row = plan::speculative_row_json(with, parsed(json, {pftest::shared_path("models")}), json);
  EXPECT_EQ(row["model"].get<std::string>(), "Qwen/Qwen3-0.6B");
  EXPECT_EQ(row["drafter_kv_layers"].get<int64_t>(), 28);
  EXPECT_NE(row["drafter"].get<std::string>().find("Qwen/Qwen3-0.6B, sized from its config"), std::string::npos) << row.dump();
}

// vLLM's SpeculativeConfig raises "Unsupported speculative method: 'mtp'" when the target has no MTP layers, and
// renames the deprecated *_mtp aliases to mtp first; drafters of other methods are not the target's to refuse.
TEST(PlanSpeculative, Issue15_MtpOnAModelWithoutMtpLayersIsRefused) {
  auto qwen3 = model::resolve_model("Qwen/Qwen3-8B");
  auto qwen35 = model::resolve_model("Qwen/Qwen3.5-27B");
  ASSERT_TRUE(qwen3.has_value() && qwen35.has_value());
  ASSERT_EQ(qwen3->mtp_layers, 0);
  const struct {
    const model::ModelSpec* model;
    std::string json;
    bool refused;
  } cases[] = {
      {&*qwen3, R"({"method": "mtp", "num_speculative_tokens": 1})", true},
      {&*qwen3, R"({"method": "qwen3_5_mtp", "num_speculative_tokens": 1})", true},
      {&*qwen3, R"({"method": "ngram", "num_speculative_tokens": 3})", false},
      {&*qwen35, R"({"method": "mtp", "num_speculative_tokens": 2})", false},
  };
  for (const auto& c : cases) {
    const std::string why = plan::speculative_rejection(*c.model, parsed(c.json));
    EXPECT_EQ(!why.empty(), c.refused) << c.json << ": " << why;
    if (c.refused) EXPECT_NE(why.find("NotImplementedError: Unsupported speculative method: 'mtp'"), std::string::npos) << why;
  }
}

// Through the real binary: the MODEL form refuses mtp on a model without MTP layers (exit 2, vLLM's words); the
// --device form refuses a drafter checkpoint when --model does not select one target; --json rows name the drafter.
TEST(PlanSpeculative, Issue15_CliMessagesAndJsonRows) {
  auto r = pftest::run_cli(R"(plan Qwen/Qwen3-8B --device H200 --speculative-config '{"method": "mtp", "num_speculative_tokens": 1}')");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("Unsupported speculative method: 'mtp'"), std::string::npos) << r.out;
  r = pftest::run_cli(R"(plan --device H200 --model 'Qwen/Qwen3-*' --speculative-config '{"method": "eagle3", "model": "org/some-EAGLE3", "num_speculative_tokens": 2}')");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("belongs to one target model"), std::string::npos) << r.out;
  r = pftest::run_cli(R"(plan Qwen/Qwen3-8B --device H200 --engine llama.cpp --speculative-config '{"method": "ngram", "num_speculative_tokens": 3}')");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--speculative-config: vLLM's flag"), std::string::npos) << r.out;
  const std::string json = R"({"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 3})";
  r = pftest::run_cli("plan Qwen/Qwen3-8B --devices H200 --max-devices 1 --variant bf16 --context 32768 --models " + pftest::shared_path("models") +
                          " --speculative-config '" + json + "' --json",
                      {"", false});
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = parse_json(r.out, "plan --json");
  ASSERT_TRUE(j.has_value());
  const Json& row = (*j)["recommended"][0];
  EXPECT_DOUBLE_EQ(row["speculative"]["drafter_weights_bytes_per_device"].get<double>(), 1192099840.0);
  EXPECT_EQ(row["speculative"]["drafter_kv_layers"].get<int64_t>(), 28);
  EXPECT_EQ(row["speculative"]["config"].get<std::string>(), json);
  EXPECT_NE(row["launch"]["serve"].get<std::string>().find(" --speculative-config '" + json + "'"), std::string::npos) << row["launch"].dump();
}

// The --device form with mtp: a model without MTP layers (Qwen3-8B) is a rejected row with vLLM's message, one with
// them (Qwen3.5-9B, mtp_num_hidden_layers 1) is planned with its MTP layer counted on every row.
TEST(PlanSpeculative, Issue15_DeviceSweepRejectsModelsWithoutMtp) {
  const auto r = pftest::run_cli(R"(plan --device H200 --model 'Qwen/Qwen3*-[89]B' --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}' --json)",
                                 {"", false});
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = parse_json(r.out, "plan --json");
  ASSERT_TRUE(j.has_value());
  int refused = 0, planned = 0;
  for (const auto& row : (*j)["rejected"]) {
    if (row["model"].get<std::string>() != "Qwen/Qwen3-8B") continue;
    ++refused;
    EXPECT_NE(row["reason"].get<std::string>().find("engine rejects it: NotImplementedError: Unsupported speculative method: 'mtp'"), std::string::npos)
        << row["reason"];
  }
  for (const auto& row : (*j)["recommended"]) {
    EXPECT_EQ(row["model"].get<std::string>(), "Qwen/Qwen3.5-9B");
    ++planned;
    EXPECT_EQ(row["speculative"]["drafter_kv_layers"].get<int64_t>(), 1);
    EXPECT_GT(row["speculative"]["drafter_weights_bytes_per_device"].get<double>(), 0.0);
  }
  EXPECT_EQ(refused, 1);
  EXPECT_GT(planned, 0);
}
