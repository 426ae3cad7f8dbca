// Issue 15, parallel layouts end to end: bad layouts exit 2 with the engine's own message, heterogeneous pipeline
// stages print one line pair per stage and a "stages" array in fit --json, plan --json marks a DP+EP row.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "base/json_util.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {
pftest::CliRun run(const std::string& args) { return pftest::run_cli(args); }
}  // namespace

// One bad layout per row: exit 2 and the engine's wording (vLLM's own messages, see deploy/deployment.cpp).
TEST(ParallelLayouts, Issue15_BadLayoutsExitTwoWithTheEnginesMessage) {
  const std::pair<const char*, const char*> rows[] = {
      // DP 4 x TP 2 = 8 ranks on 6 cards: DP rank 3 asks for devices [6, 8).
      {"fit Qwen/Qwen3-30B-A3B --device H100 --num-devices 6 --tensor-parallel-size 2 --data-parallel-size 4",
       "local range: [6, 8) base value: \"0,1,2,3,4,5\""},
      // EP = 32 x 8 = 256 ranks for 128 experts.
      {"fit Qwen/Qwen3-30B-A3B --device H100 --tensor-parallel-size 8 --data-parallel-size 32 --enable-expert-parallel",
       "ValueError: expert parallel size (256 = data_parallel_size 32 x tensor_parallel_size 8) is larger than the number of experts (128)"},
      {"fit Qwen/Qwen3-30B-A3B --device H100 --speculative-config '{\"method\": \"lookahead\"}'",
       "1 validation error for SpeculativeConfig\nmethod\n  Input should be 'ngram'"},
      // Qwen3-8B has 36 layers: stages of 12 and 20 leave 4 unplaced.
      {"fit Qwen/Qwen3-8B --device H100 --pipeline-parallel-size 2 --pp-layer-partition 12,20",
       "--pp-layer-partition: ValueError: sum(partitions)=32 does not match num_hidden_layers=36."},
      {"fit Qwen/Qwen3-8B --device H100 --pipeline-parallel-size 2 --pp-layer-partition 36",
       "--pp-layer-partition: ValueError: len(partitions)=1 does not match pp_size=2."},
      {"fit Qwen/Qwen3-8B --device A100-80G,L40S,L40S --pipeline-parallel-size 2",
       "--device: 3 devices named for pipeline parallel size 2: expected one per stage"},
  };
  for (const auto& [args, message] : rows) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
  }
  // validate reads them from a case (stage_devices, pp_layer_partition): a partition that misses layers is refused with
  // vLLM's message (the case is skipped with it), a whole one is evaluated.
  const std::string dir = pftest::scratch_dir("issue15_layouts");
  const std::string file = dir + "/stages.jsonl";
  const std::string head = R"({"engine":"vllm","engine_version":"0.11.0","device":"A100","stage_devices":["A100-80G","L40S"],"model":"Qwen/Qwen3-8B",)"
                           R"("pipeline_parallel_size":2,"kv_cache_tokens":100000,)";
  std::ofstream(file) << head << R"("id":"bad","pp_layer_partition":"12,20"})" << "\n" << head << R"("id":"good","pp_layer_partition":"12,24"})" << "\n";
  const auto v = run("validate " + file);
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_NE(v.out.find("(case bad): pp_layer_partition: ValueError: sum(partitions)=32 does not match num_hidden_layers=36."), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("summary: 2 cases, 1 evaluated, 1 skipped"), std::string::npos) << v.out;
}

// A100-80G + L40S, PP 2, Qwen3-8B: stage 1 on the L40S has the smaller budget and sets the blocks; fit --json lists
// both stages with their cards and layers, and the text names both cards.
TEST(ParallelLayouts, Issue15_HeterogeneousStagesInFitOutput) {
  const std::string args = "fit Qwen/Qwen3-8B --device A100-80G,L40S --pipeline-parallel-size 2 --max-model-len 8192 --engine vllm@0.11";
  const auto text = run(args);
  EXPECT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("on 1 x A100-80G-SXM + 1 x L40S with"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(PP stage 1, L40S, layers 18-35) Available KV cache memory:"), std::string::npos) << text.out;
  const auto json = pftest::run_cli(args + " --json", {.with_stderr = false});
  ASSERT_EQ(json.code, 0) << json.out;
  const Json j = Json::parse(json.out);
  ASSERT_EQ(j["stages"].size(), 2u);
  EXPECT_EQ(j["stages"][0]["device"], "A100-80G-SXM");
  EXPECT_EQ(j["stages"][1]["device"], "L40S");
  EXPECT_EQ(j["stages"][1]["first_layer"], 18);
  EXPECT_EQ(j["stages"][1]["tightest"], true);
  EXPECT_EQ(j["kv_cache"]["num_blocks"], j["stages"][1]["num_blocks"]);
  // The L40S's total is below the A100's, everything else per stage the same: its budget is the lower one.
  EXPECT_LT(j["stages"][1]["available_kv_gib"].get<double>(), j["stages"][0]["available_kv_gib"].get<double>());
}

// plan --json: the DP+EP row of DeepSeek-V3 on 8 x H200 carries its DP size, expert parallel and why it is cheaper.
TEST(ParallelLayouts, Issue15_PlanJsonMarksTheDpEpRow) {
  const auto r = pftest::run_cli("plan deepseek-ai/DeepSeek-V3 --devices H200 --context 32768 --concurrency 16 --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  const Json& first = j["recommended"][0];
  EXPECT_EQ(first["data_parallel_size"], 8);
  EXPECT_EQ(first["expert_parallel"], true);
  EXPECT_NE(first["cheaper"].get<std::string>().find("the same 8 devices serve"), std::string::npos);
  EXPECT_NE(first["launch"]["serve"].get<std::string>().find("--data-parallel-size 8 --enable-expert-parallel"), std::string::npos);
  EXPECT_FALSE(j["recommended"][1].contains("data_parallel_size"));
}

// logs --device A,B: a log of a PP 2 start gives its stages their cards; the L40S stage has less memory than an
// A100's, so the predicted KV budget (the lowest stage's) is below the one with both stages on A100s.
TEST(ParallelLayouts, Issue15_LogsGiveTheStagesTheirCards) {
  const std::string dir = pftest::scratch_dir("issue15_logs");
  const std::string log = dir + "/pp.log";
  std::ofstream(log) << "INFO 05-01 10:00:00 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B', 'pipeline_parallel_size': 2, 'max_model_len': 8192}\n"
                     << "INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.11.0\n"
                     << "INFO 05-01 10:00:05 [gpu_worker.py:1] Available KV cache memory: 20.50 GiB\n";
  auto predicted_kv = [&](const std::string& device) {
    const auto r = pftest::run_cli("logs " + log + " --device " + device + " --json", {.with_stderr = false});
    EXPECT_EQ(r.code, 0) << r.out;
    const Json j = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    if (j.is_discarded()) return 0.0;
    for (const auto& row : j["printed_vs_predicted"])
      if (row["what"] == "available KV cache (GiB)") return row["predicted"].get<double>();
    ADD_FAILURE() << "no available KV row: " << r.out;
    return 0.0;
  };
  const double mixed = predicted_kv("A100-80G,L40S");
  const double same = predicted_kv("A100-80G");
  EXPECT_GT(mixed, 0.0);
  EXPECT_LT(mixed, same);
  // The same deployment through fit: logs resolves it the same way.
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device A100-80G,L40S --pipeline-parallel-size 2 --max-model-len 8192 --engine vllm@0.11.0 --json",
                                   {.with_stderr = false});
  const Json f = Json::parse(fit.out, nullptr, false);
  ASSERT_FALSE(f.is_discarded()) << fit.out;
  EXPECT_NEAR(mixed, f["memory_per_device"]["available_kv_gib"].get<double>(), 1e-9);
}

// Issue 15 (pp35): logs compares the printed "Available KV cache memory" with the stage whose worker printed it. vLLM
// 0.19 prints it from the first local rank only ((Worker_PP0 ...), data/engines/printed_ranks.json); a log whose kept
// line is (Worker_PP1 ...) is stage 1's. With the stages on an A100 80 GB and an L40S (48 GB), the two budgets differ by
// tens of GiB, so each line is compared with its own card's stage as fit --json lists it (stages[].available_kv_gib).
TEST(ParallelLayouts, Issue15_LogsCompareTheLineWithTheStageThatPrintedIt) {
  const std::string dir = pftest::scratch_dir("pp35_logs");
  const std::string log = dir + "/pp.log";
  auto predicted_kv = [&](const std::string& kv_line) {
    std::ofstream(log) << "INFO 05-01 10:00:00 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B', 'pipeline_parallel_size': 2, 'max_model_len': 8192}\n"
                       << "INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.19.0\n"
                       << kv_line << "\n";
    const auto r = pftest::run_cli("logs " + log + " --device A100-80G,L40S --json", {.with_stderr = false});
    EXPECT_EQ(r.code, 0) << r.out;
    const Json j = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    if (j.is_discarded()) return 0.0;
    for (const auto& row : j["printed_vs_predicted"])
      if (row["what"] == "available KV cache (GiB)") return row["predicted"].get<double>();
    ADD_FAILURE() << "no available KV row: " << r.out;
    return 0.0;
  };
  const double pp0 = predicted_kv("(Worker_PP0 pid=11) INFO 05-01 10:00:05 [gpu_worker.py:436] Available KV cache memory: 60.00 GiB");
  const double pp1 = predicted_kv("(Worker_PP1 pid=12) INFO 05-01 10:00:05 [gpu_worker.py:436] Available KV cache memory: 30.00 GiB");
  const double unnamed = predicted_kv("INFO 05-01 10:00:05 [gpu_worker.py:436] Available KV cache memory: 60.00 GiB");
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device A100-80G,L40S --pipeline-parallel-size 2 --max-model-len 8192 --engine vllm@0.19.0 --json",
                                   {.with_stderr = false});
  const Json f = Json::parse(fit.out, nullptr, false);
  ASSERT_FALSE(f.is_discarded()) << fit.out;
  ASSERT_EQ(f["stages"].size(), 2u);
  EXPECT_NEAR(pp0, f["stages"][0]["available_kv_gib"].get<double>(), 1e-9);
  EXPECT_NEAR(pp1, f["stages"][1]["available_kv_gib"].get<double>(), 1e-9);
  EXPECT_NEAR(unnamed, pp0, 1e-9);  // no prefix: the rank 0.19 prints from
  // The L40S stage's 48 GB against the A100's 80 GB: at least 20 GiB apart, whatever the terms.
  EXPECT_GT(pp0 - pp1, 20.0);
}

// Issue 15 (pp35): plan's rows put every rank on one kind of card; a --device list (fit's stages on different cards) is
// refused as such with where it is taken (exit 2), where it was "unknown device 'A100-80G,L40S'".
TEST(ParallelLayouts, Issue15_PlanSaysWhereStagesOnDifferentCardsAreSized) {
  for (const std::string args : {"plan --device A100-80G,L40S", "plan Qwen/Qwen3-8B --device A100-80G,L40S"}) {
    const auto r = pftest::run_cli(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.out;
    EXPECT_NE(r.out.find("--device: 'A100-80G,L40S' names 2 cards; plan sizes every layout on one kind of card"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("preflight fit MODEL --device A100-80G,L40S --pipeline-parallel-size 2"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("unknown device"), std::string::npos) << r.out;
  }
}

// plan --data-parallel N starts N replicas of the first TP/PP row: plan's own DP+EP rows step aside. Issue 15 (dpep33):
// the row is the layout started, DP 2 x TP 8 on 16 cards (it was the one TP 8 replica on 8).
TEST(ParallelLayouts, Issue15_DataParallelFlagKeepsTheTpRowFirst) {
  const auto r = pftest::run_cli("plan deepseek-ai/DeepSeek-V3 --devices H200 --context 32768 --data-parallel 2 --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j["recommended"].size(), 1u);
  EXPECT_EQ(j["recommended"][0]["data_parallel_size"], 2);
  EXPECT_EQ(j["recommended"][0]["num_devices"], 16);
  EXPECT_EQ(j["recommended"][0]["expert_parallel"], false);
  const std::string serve = j["recommended"][0]["launch"]["serve"].get<std::string>();
  EXPECT_NE(serve.find("--tensor-parallel-size 8"), std::string::npos) << serve;
  EXPECT_NE(serve.find("--data-parallel-size 2"), std::string::npos) << serve;
}

// plan --kubernetes with a DP+EP first row: one pod of the 8 cards the 8 replicas of 1 card take, running the DP start.
TEST(ParallelLayouts, Issue15_KubernetesOfTheDpEpRow) {
  const std::string file = pftest::scratch_dir("issue15_k8s") + "/dsv3.yaml";
  const auto r = run("plan deepseek-ai/DeepSeek-V3 --devices H200 --context 32768 --concurrency 16 --kubernetes " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(file);
  const std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(yaml.find("kind: Deployment"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("nvidia.com/gpu: \"8\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("--tensor-parallel-size 1"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("--data-parallel-size 8 --enable-expert-parallel"), std::string::npos) << yaml;
}

// Issue 15 (dcp): --decode-context-parallel-size / -dcp. Layouts vLLM refuses exit 2 with the engine's message after the
// flag's name (vllm/config/parallel.py, vllm/config/model.py at 45f526d65); an accepted one prints the engine's
// "Multiplying the GPU KV cache size" line; validate reads a case's decode_context_parallel_size and skips a bad one with
// the message; plan starts every row with the flag and rejects the TP sizes the engine refuses it at.
TEST(ParallelLayouts, Issue15_DecodeContextParallel) {
  const std::pair<const char*, const char*> rows[] = {
      {"fit Qwen/Qwen3-32B --device H100 --tensor-parallel-size 16 -dcp 3", "ValueError: tp_size=16 must be divisible bydcp_size=3."},
      // Qwen3-32B has 8 KV heads: TP 8 replicates none, so DCP has nothing to take back.
      {"fit Qwen/Qwen3-32B --device H100 --tensor-parallel-size 8 --decode-context-parallel-size 2",
       "--decode-context-parallel-size: AssertionError: tensor parallel size 8 must be greater than total num kv heads 8"},
      {"fit Qwen/Qwen3-32B --device H100 --tensor-parallel-size 16 --decode-context-parallel-size 0", "--decode-context-parallel-size"},
  };
  for (const auto& [args, message] : rows) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
  }
  const auto good = run("fit Qwen/Qwen3-32B --device H100 --tensor-parallel-size 16 -dcp 2 --max-model-len 32768 --engine vllm@0.18.0");
  EXPECT_NE(good.code, 2) << good.out;
  EXPECT_NE(good.out.find("Multiplying the GPU KV cache size by the cp_world_size 2 (pcp_world_size 1 * dcp_world_size 2)."), std::string::npos) << good.out;

  const std::string dir = pftest::scratch_dir("issue15_dcp");
  const std::string file = dir + "/dcp.jsonl";
  const std::string head = R"({"engine":"vllm","engine_version":"0.18.0","device":"H100","model":"Qwen/Qwen3-32B","kv_cache_tokens":100000,)";
  std::ofstream(file) << head << R"("id":"bad","tensor_parallel_size":16,"decode_context_parallel_size":3})" << "\n"
                      << head << R"("id":"good","tensor_parallel_size":16,"decode_context_parallel_size":2})" << "\n";
  const auto v = run("validate " + file);
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_NE(v.out.find("(case bad): decode_context_parallel_size: ValueError: tp_size=16 must be divisible bydcp_size=3."), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("summary: 2 cases, 1 evaluated, 1 skipped"), std::string::npos) << v.out;

  // Qwen3.5-35B-A3B (2 KV heads, 16 query heads): DCP 2 needs TP above 2, so TP 1 and 2 are rejected with the engine's message.
  const auto p = run("plan Qwen/Qwen3.5-35B-A3B --devices H100 -dcp 2 --all --json");
  EXPECT_NE(p.out.find("--decode-context-parallel-size 2"), std::string::npos) << p.out.substr(0, 4000);
  EXPECT_NE(p.out.find("must be greater than total num kv heads 2"), std::string::npos) << p.out.substr(0, 4000);
}

// Issue 15: chunked prefill as vLLM's flag and as a log states it. Off (--no-enable-chunked-prefill, V0's config line
// 'chunked_prefill_enabled=False'), with no --max-num-batched-tokens, the profile run forwards max(max_model_len, 2048)
// tokens at once. Qwen3-8B on an H100, vllm@0.11.0, max_model_len 32768: the peak is the sampler run, which holds the
// forward's [T, hidden] output, so the budget falls by (32768 - 8192 default batched tokens) x 4096 hidden x 2 B =
// 201,326,592 B = 0.1875 GiB; --enable-chunked-prefill is the default and moves nothing.
TEST(ParallelLayouts, Issue15_ChunkedPrefillOffFlagAndLogLine) {
  const auto kv = [](const std::string& extra) {
    const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.11.0 --max-model-len 32768 --json " + extra, {.with_stderr = false});
    EXPECT_EQ(r.code, 0) << r.out.substr(0, 300);
    return Json::parse(r.out)["memory_per_device"]["available_kv_gib"].get<double>();
  };
  const double on = kv(""), off = kv("--no-enable-chunked-prefill");
  EXPECT_NEAR(on - off, 0.1875, 0.005) << on << " " << off;
  EXPECT_DOUBLE_EQ(kv("--enable-chunked-prefill"), on);

  const std::string dir = pftest::scratch_dir("chunked-prefill");
  std::ofstream(dir + "/v0.log") << "INFO 06-01 12:00:00 [llm_engine.py:240] Initializing a V0 LLM engine (v0.9.2) with config: model='Qwen/Qwen3-8B', "
                                    "max_seq_len=32768, chunked_prefill_enabled=False, use_async_output_proc=True\n";
  std::ofstream(dir + "/cmd.log") << "vllm serve Qwen/Qwen3-8B --no-enable-chunked-prefill --max-model-len 8192\n";
  for (const char* name : {"/v0.log", "/cmd.log"}) {
    const auto r = pftest::run_cli("logs " + dir + name + " --json", {.with_stderr = false});
    ASSERT_EQ(r.code, 0) << r.out.substr(0, 300);
    const Json args = Json::parse(r.out)["engine_args"];
    EXPECT_EQ(args["enable_chunked_prefill"]["value"], false) << name;
    EXPECT_EQ(args["enable_chunked_prefill"]["line"], 1) << name;
  }
}
