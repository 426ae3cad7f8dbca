// Session 33's user journeys (issues 15, 16, 19): the seeds' engineer with 910B4 / 910B3 cards checks plan's own start
// lines with fit, and pastes the seeds' `vllm serve` lines. Each test runs the real binary.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "../test_support.hpp"

namespace {

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// The first recommended row of a plan --json.
nlohmann::json first_row(const std::string& args) {
  const auto r = pftest::run_cli(args + " --json", {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 300);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["recommended"].empty()) << r.out.substr(0, 300);
  return j["recommended"][0];
}

}  // namespace

// Issue 16: plan's start line for a published checkpoint (`vllm serve vllm-ascend/Qwen3-32B-W8A8 ... --quantization ascend
// ... --default-chat-template-kwargs '{...}'`), pasted into fit, was refused twice over: the checkpoint's hub id "is not in
// the catalogue" and --default-chat-template-kwargs was an unknown flag (exit 2). fit now takes the line whole and sizes
// the checkpoint as the variant it is published in, with plan's own numbers for that row.
TEST(Ux33, Issue16_FitTakesPlansOwnStartLine) {
  const auto row = first_row("plan Qwen/Qwen3-32B --devices 910B4 --variant w8a8");
  const std::string serve = row["launch"]["serve"].get<std::string>();
  ASSERT_EQ(serve.rfind("vllm serve vllm-ascend/Qwen3-32B-W8A8 ", 0), 0u) << serve;
  ASSERT_NE(serve.find("--default-chat-template-kwargs"), std::string::npos) << serve;
  const auto fit = pftest::run_cli("fit" + serve.substr(std::string("vllm serve").size()) + " --device 910B4 --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 0) << fit.out.substr(0, 400);
  const auto j = nlohmann::json::parse(fit.out);
  EXPECT_EQ(j["kv_cache"]["tokens"], row["kv_cache_tokens"]);
  EXPECT_EQ(j["layout"]["tensor_parallel_size"], row["tensor_parallel_size"]);
  const std::string notes = j["assumptions"].dump();
  EXPECT_NE(notes.find("vllm-ascend/Qwen3-32B-W8A8: not on this machine; sized as the checkpoint it is, msModelSlim W8A8 of Qwen/Qwen3-32B"), std::string::npos)
      << notes;
  EXPECT_NE(notes.find("--default-chat-template-kwargs: as vLLM takes them"), std::string::npos) << notes;
  // The same deployment written as the base model and the variant: the same weights and KV cache.
  const auto by_variant = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B4 --variant w8a8 --tensor-parallel-size 2 --max-model-len 32768 --json",
                                          {.with_stderr = false});
  ASSERT_EQ(by_variant.code, 0) << by_variant.out.substr(0, 300);
  const auto v = nlohmann::json::parse(by_variant.out);
  EXPECT_EQ(v["kv_cache"]["tokens"], j["kv_cache"]["tokens"]);
  EXPECT_EQ(v["memory_per_device"]["terms"][0]["gib"], j["memory_per_device"]["terms"][0]["gib"]);
}

// Issue 16: seeds/000 section 4.3.1 downloads Eco-Tech/Qwen3.6-27B-w8a8 and serves it with --quantization ascend on one
// 910B4, where the weights ran out of memory while loading (RowParallelLinear, 28.79 GiB already allocated of 29.49).
// Its hub id is fit's MODEL now; a --variant or --quantization that is not the checkpoint's is refused (exit 2), and a
// catalogue model that is also a published checkpoint (Qwen/Qwen3-8B-FP8) is still read from its own config.
TEST(Ux33, Issue16_PublishedCheckpointIdIsTheModel) {
  const auto seed = pftest::run_cli(
      "fit Eco-Tech/Qwen3.6-27B-w8a8 --device 910B4 --engine vllm-ascend@0.18.0 --quantization ascend --dtype bfloat16 --max-model-len 4096 "
      "--gpu-memory-utilization 0.92",
      {.with_stderr = false});
  EXPECT_EQ(seed.code, 1) << seed.out;
  EXPECT_NE(seed.out.find("does not fit (weights_oom)"), std::string::npos) << seed.out;
  EXPECT_NE(seed.out.find("weights stored   msModelSlim W8A8"), std::string::npos) << seed.out;
  const auto other_variant = pftest::run_cli("fit Eco-Tech/Qwen3.6-27B-w8a8 --device 910B4 --variant awq");
  EXPECT_EQ(other_variant.code, 2) << other_variant.out;
  EXPECT_NE(other_variant.out.find("is published as --variant w8a8"), std::string::npos) << other_variant.out;
  const auto other_method = pftest::run_cli("fit Eco-Tech/Qwen3.6-27B-w8a8 --device 910B4 --quantization fp8");
  EXPECT_EQ(other_method.code, 2) << other_method.out;
  EXPECT_NE(other_method.out.find("served with --quantization ascend"), std::string::npos) << other_method.out;
  const auto catalogue = pftest::run_cli("fit Qwen/Qwen3-8B-FP8 --device H100 --max-model-len 4096", {.with_stderr = false});
  EXPECT_EQ(catalogue.code, 0) << catalogue.out;
  EXPECT_EQ(catalogue.out.find("not on this machine"), std::string::npos) << catalogue.out;
  const auto unknown = pftest::run_cli("fit Some-Org/Not-A-Checkpoint-W8A8 --device 910B4");
  EXPECT_EQ(unknown.code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("not in the catalogue"), std::string::npos) << unknown.out;
}

// Issue 16: vLLM >= 0.14 takes --default-chat-template-kwargs JSON (vLLM PR #31343; seeds/001 section 8 turns thinking
// off with it); an older version's argparse stops with "unrecognized arguments" (exit 2), and text json.loads refuses is
// refused. It changes no number.
TEST(Ux33, Issue16_DefaultChatTemplateKwargs) {
  const std::string base = "fit Qwen/Qwen3-8B --device H100 --max-model-len 4096";
  const std::string flag = " --default-chat-template-kwargs '{\"enable_thinking\": false}'";
  const auto plain = pftest::run_cli(base + " --engine vllm@0.14.0 --json", {.with_stderr = false});
  const auto given = pftest::run_cli(base + " --engine vllm@0.14.0" + flag + " --json", {.with_stderr = false});
  ASSERT_EQ(given.code, 0) << given.out.substr(0, 300);
  EXPECT_EQ(nlohmann::json::parse(plain.out)["kv_cache"], nlohmann::json::parse(given.out)["kv_cache"]);
  const auto old = pftest::run_cli(base + " --engine vllm@0.13.0" + flag);
  EXPECT_EQ(old.code, 2) << old.out;
  EXPECT_NE(old.out.find("vllm serve: error: unrecognized arguments: --default-chat-template-kwargs '{\"enable_thinking\": false}'"), std::string::npos)
      << old.out;
  const auto plan_old = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100 --engine vllm@0.13.0" + flag);
  EXPECT_EQ(plan_old.code, 2) << plan_old.out;
  EXPECT_NE(plan_old.out.find("unrecognized arguments: --default-chat-template-kwargs"), std::string::npos) << plan_old.out;
  const auto ascend_old = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --max-model-len 4096 --engine vllm-ascend@0.13.0" + flag);
  EXPECT_EQ(ascend_old.code, 2) << ascend_old.out;
  const auto bad = pftest::run_cli(base + " --default-chat-template-kwargs enable_thinking=false");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--default-chat-template-kwargs: expected a JSON object"), std::string::npos) << bad.out;
  // plan carries the user's JSON in place of its own thinking-off rule: one such flag per start (vLLM keeps the last).
  const auto row = first_row("plan Qwen/Qwen3-8B --devices 910B3 --default-chat-template-kwargs '{\"enable_thinking\": true}'");
  const std::string serve = row["launch"]["serve"].get<std::string>();
  EXPECT_EQ(occurrences(serve, "--default-chat-template-kwargs"), 1u) << serve;
  EXPECT_NE(serve.find("--default-chat-template-kwargs '{\"enable_thinking\": true}'"), std::string::npos) << serve;
}

// Issue 16: `fit MODEL --variant w8a8 --quantization ascend` (plan's start line for the variant, with fit's --variant)
// was "give one of the two" although both say the same; the same method is taken, another still refused.
TEST(Ux33, Issue16_VariantTakesItsOwnQuantization) {
  const std::string base = "fit Qwen/Qwen3-8B --device 910B3 --max-model-len 4096 --variant w8a8";
  const auto alone = pftest::run_cli(base + " --json", {.with_stderr = false});
  const auto both = pftest::run_cli(base + " --quantization ascend --json", {.with_stderr = false});
  ASSERT_EQ(both.code, 0) << both.out.substr(0, 300);
  EXPECT_EQ(nlohmann::json::parse(alone.out)["kv_cache"], nlohmann::json::parse(both.out)["kv_cache"]);
  const auto other = pftest::run_cli(base + " --quantization fp8");
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_NE(other.out.find("--variant w8a8 sets --quantization ascend; give one of the two"), std::string::npos) << other.out;
}

// Issue 16: plan --workload agent's start line carries --enable-auto-tool-choice --tool-call-parser hermes
// --reasoning-parser qwen3 (data/engines/launch.json agent-*); pasted into fit it was "unknown flag
// --enable-auto-tool-choice" (exit 2). fit takes them (no number changes); plan carries a parser the user gave in place
// of its rule's.
TEST(Ux33, Issue16_FitTakesAgentStartLine) {
  const auto row = first_row("plan Qwen/Qwen3-8B --devices 910B3 --workload agent");
  const std::string serve = row["launch"]["serve"].get<std::string>();
  ASSERT_NE(serve.find("--enable-auto-tool-choice --tool-call-parser hermes --reasoning-parser qwen3"), std::string::npos) << serve;
  const auto fit = pftest::run_cli("fit" + serve.substr(std::string("vllm serve").size()) + " --device 910B3 --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 0) << fit.out.substr(0, 300);
  EXPECT_EQ(nlohmann::json::parse(fit.out)["kv_cache"]["tokens"], row["kv_cache_tokens"]);
  const auto own = first_row("plan Qwen/Qwen3-8B --devices 910B3 --workload agent --tool-call-parser qwen3_xml");
  const std::string line = own["launch"]["serve"].get<std::string>();
  EXPECT_EQ(occurrences(line, "--tool-call-parser"), 1u) << line;
  EXPECT_NE(line.find("--tool-call-parser qwen3_xml"), std::string::npos) << line;
}

// Issue 16: seeds/000 section 4.3.1's start log (the checkpoint downloaded to /data/models/Qwen3.6-27B-w8a8, served with
// --quantization ascend on one 910B4, OOM while loading) had no prediction in `logs`: the folder is not on this machine
// and its name is no catalogue id. A folder named as one published checkpoint (and the hub id plan's own start serves)
// is that checkpoint's base model in its variant, with fit's numbers for the same deployment.
TEST(Ux33, Issue16_LogsSizesThePublishedCheckpointTheSeedServed) {
  const std::string dir = pftest::scratch_dir("ux33-seed-log");
  const std::string oom =
      "(APIServer pid=1) INFO 05-18 10:00:00 [api_server.py:1] vLLM API server version 0.18.0\n"
      "(APIServer pid=1) INFO 05-18 10:00:00 [utils.py:1] non-default args: {'model': 'MODEL', 'dtype': 'bfloat16', 'max_model_len': 4096, "
      "'quantization': 'ascend', 'gpu_memory_utilization': 0.92}\n"
      "(EngineCore_DP0 pid=2) ERROR 05-18 10:01:00 [core.py:1] RuntimeError: NPU out of memory. Tried to allocate 172.00 MiB (NPU 0; 29.49 GiB total "
      "capacity; 28.79 GiB already allocated; 118.31 MiB free)\n";
  const auto log_with = [&](const std::string& model, const std::string& file) {
    std::string text = oom;
    text.replace(text.find("MODEL"), 5, model);
    std::ofstream(dir + "/" + file) << text;
    return pftest::run_cli("logs " + dir + "/" + file, {.with_stderr = false});
  };
  const auto fit = pftest::run_cli(
      "fit Eco-Tech/Qwen3.6-27B-w8a8 --device 910B4 --engine vllm-ascend@0.18.0 --quantization ascend --dtype bfloat16 --max-model-len 4096 "
      "--gpu-memory-utilization 0.92 --json",
      {.with_stderr = false});
  ASSERT_EQ(fit.code, 1) << fit.out.substr(0, 300);
  const double weights_gib = nlohmann::json::parse(fit.out)["memory_per_device"]["terms"][0]["gib"].get<double>();
  char weights[32];
  std::snprintf(weights, sizeof weights, "%.2f", weights_gib);
  for (const std::string model : {"/data/models/Qwen3.6-27B-w8a8", "Eco-Tech/Qwen3.6-27B-w8a8"}) {
    const auto r = log_with(model, "seed.log");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("printed vs predicted (preflight fit: Qwen/Qwen3.6-27B on 910B4, vllm-ascend@0.18-0.20)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("preflight predicts it does not fit (weights_oom)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(std::string("weights per device (GiB)                    -            ") + weights), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("sized as the checkpoint it is, msModelSlim W8A8 of Qwen/Qwen3.6-27B"), std::string::npos) << r.out;
  }
  const auto other = log_with("/data/models/My-Own-Export-w8a8", "other.log");
  EXPECT_NE(other.out.find("cannot be resolved"), std::string::npos) << other.out;
}

// Issue 16: seeds/000 section 4.3.4's Qwen3.6-35B-A3B start (vLLM-Ascend 0.18.0, --max-model-len 2048, util 0.92) on one
// 910B4: fit's variant fix named `preflight plan ... --variant w4a8_dynamic --commands`, which planned the newest engine
// at 32,768 tokens: another deployment than the fix's figures. The command now carries the fix's context, the named
// version and the utilization, and its row holds the fix's KV tokens.
TEST(Ux33, Issue16_FitFixPlanCommandIsTheSameDeployment) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3.6-35B-A3B --device 910B4 --trust-remote-code --dtype bfloat16 --max-model-len 2048 "
                                   "--gpu-memory-utilization 0.92 --engine vllm-ascend@0.18.0 --json",
                                   {.with_stderr = false});
  ASSERT_EQ(fit.code, 1) << fit.out.substr(0, 300);
  std::string fix;
  const auto fit_json = nlohmann::json::parse(fit.out);
  for (const auto& f : fit_json["fixes"])
    if (f.get<std::string>().rfind("--variant w4a8_dynamic (", 0) == 0) fix = f.get<std::string>();
  ASSERT_FALSE(fix.empty()) << fit.out.substr(0, 600);
  const size_t open = fix.find("`preflight plan "), close = fix.find('`', open + 1);
  ASSERT_NE(open, std::string::npos) << fix;
  const std::string command = fix.substr(open + std::string("`preflight ").size(), close - open - std::string("`preflight ").size());
  EXPECT_NE(command.find("--context 2048 --engine vllm-ascend@0.18.0 --gpu-memory-utilization 0.92"), std::string::npos) << command;
  const size_t tokens_at = fix.find(" KV tokens");
  ASSERT_NE(tokens_at, std::string::npos) << fix;
  std::string tokens = fix.substr(fix.rfind(' ', tokens_at - 1) + 1, tokens_at - fix.rfind(' ', tokens_at - 1) - 1);
  std::erase(tokens, ',');
  const auto row = first_row(command.substr(0, command.find(" --commands")));
  EXPECT_EQ(row["kv_cache_tokens"].get<int64_t>(), std::stoll(tokens)) << fix;
  EXPECT_EQ(row["num_devices"].get<int64_t>(), 1);
}

// Issue 19: `preflight --help` listed "server unreachable" under exit 3, while bench (its own --help, and what it does)
// counts an unreachable server's requests as failed: exit 1. The top-level help now says what bench does.
TEST(Ux33, Issue19_TopHelpExitCodesMatchBench) {
  const auto help = pftest::run_cli("--help", {.with_stderr = false});
  EXPECT_NE(help.out.find("bench:\n  requests failed, an unreachable server included"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("hub or server unreachable"), std::string::npos) << help.out;
  // Port 1 on loopback: nothing listens there (tcpmux, privileged, never started here).
  const auto bench = pftest::run_cli("bench --url http://127.0.0.1:1 --model m --concurrency 1 --num-prompts 1 --output-len 4 --input-len 4");
  EXPECT_EQ(bench.code, 1) << bench.out;
}
