// Session 36's new-user pass (issues 15, 16): the catalogue used as a new user would, each promise of the issues checked
// against what the real binary prints. Each test failed before its fix.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "../test_support.hpp"

namespace {

nlohmann::json json_of(const pftest::CliRun& r) {
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 400);
  return j;
}

}  // namespace

// Issue 15 ("a speculative config naming an unknown method gets the engine's own validation message, exit 2") and 16
// (fit and plan agree on the same deployment): Qwen3-8B's config.json (../shared/models/Qwen__Qwen3-8B) has no
// num_nextn_predict_layers, so vLLM's SpeculativeConfig finds model_type "qwen3" in no MTP type and raises
// "NotImplementedError: Unsupported speculative method: 'mtp'". plan refused it (exit 2); fit said "the config has no MTP
// layers: nothing sized" and "fits", exit 0. Both now refuse it with vLLM's words.
TEST(User36, Issue15_FitRefusesMtpOnAModelWithoutMtpLayersAsPlanDoes) {
  const std::string spec = R"( --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}')";
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100-SXM" + spec);
  EXPECT_EQ(plan.code, 2) << plan.out.substr(0, 400);
  EXPECT_NE(plan.out.find("NotImplementedError: Unsupported speculative method: 'mtp'"), std::string::npos) << plan.out.substr(0, 400);
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM" + spec);
  EXPECT_EQ(fit.code, 2) << fit.out.substr(0, 600);
  EXPECT_NE(fit.out.find("--speculative-config: NotImplementedError: Unsupported speculative method: 'mtp'"), std::string::npos) << fit.out.substr(0, 600);
  EXPECT_EQ(fit.out.find("nothing sized"), std::string::npos) << fit.out.substr(0, 600);
  // A model with MTP layers still takes it: Qwen3.5-27B's config has mtp_num_hidden_layers 1 (inspect: "MTP layers 1").
  const auto mtp = pftest::run_cli("fit Qwen/Qwen3.5-27B --device 910B3 --max-model-len 4096 --skip-mm-profiling" + spec);
  EXPECT_NE(mtp.out.find("1 MTP layer(s) from the config"), std::string::npos) << mtp.out.substr(0, 600);
}

// Issue 15 ("resolve free-text descriptions as logs and people write them ..., the torch total a log prints"): the README
// says --device takes them, but `fit --device "29.49 GiB total capacity"` (torch's out-of-memory message on a 910B4) was
// "unknown device ...; did you mean 7900 XTX", exit 2. A name no card answers to that states a total now identifies the
// card by it, as a validation case's device text does; the totals are devices.json's runtime_total_bytes: 910B4
// 31,662,800,896 B = 29.49 GiB, RTX4090 25,383,256,719 B = 23.64 GiB.
TEST(User36, Issue15_DeviceFlagTakesTheTorchTotal) {
  struct Case {
    std::string device, card, said;
  };
  for (const Case& c : {Case{"'NPU 0; 29.49 GiB total capacity'", "910B4", "device identified by the 29.49 GiB total the runtime reports: 910B4"},
                        Case{"'NVIDIA GeForce RTX 4090 with 23.64 GiB total'", "RTX4090", ""}}) {
    const auto r = pftest::run_cli("fit Qwen/Qwen3-0.6B --device " + c.device + " --max-model-len 4096 --json", {.with_stderr = false});
    ASSERT_EQ(r.code, 0) << c.device << ": " << r.out.substr(0, 300);
    const auto j = json_of(r);
    EXPECT_EQ(j["device"], c.card) << c.device;
    if (!c.said.empty()) EXPECT_NE(j["assumptions"].dump().find(c.said), std::string::npos) << j["assumptions"].dump();
  }
  // A total no catalogue card reports: a device of that size, said so.
  const auto stated = pftest::run_cli("fit Qwen/Qwen3-0.6B --device '100.00 GiB total' --max-model-len 4096");
  EXPECT_EQ(stated.code, 0) << stated.out.substr(0, 300);
  EXPECT_NE(stated.out.find("device from the stated 100.00 GiB total"), std::string::npos) << stated.out.substr(0, 1500);
  EXPECT_NE(stated.out.find("total            100.00"), std::string::npos) << stated.out.substr(0, 800);
  // A name that is neither a card nor a total stays a usage error naming the flag.
  const auto unknown = pftest::run_cli("fit Qwen/Qwen3-0.6B --device 'Quantum GPU 9000'");
  EXPECT_EQ(unknown.code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("--device: unknown device 'Quantum GPU 9000'"), std::string::npos) << unknown.out;
}

// Issue 15 ("the flags above work in ... logs (a log's own flags are read back)"): a vLLM 0.11.0 log whose non-default
// args start Qwen3-30B-A3B as DP 2 + EP with an EAGLE-3 drafter was predicted with all three (30.15 GiB per rank, as
// `fit ... -dp 2 --enable-expert-parallel --speculative-config ...` gives), but `logs` showed only model and
// max_model_len under "engine args" and said nothing of the drafter it assumed. Now the arguments are shown with their
// line, in --json too, and the estimate's assumptions (the drafter's) are notes.
TEST(User36, Issue15_LogsShowsTheLayoutAndSpeculativeArgsItRead) {
  const std::string dir = pftest::scratch_dir("user36-dpep-log");
  const std::string path = dir + "/dpep.log";
  std::ofstream(path) << "(APIServer pid=1) INFO 11-20 10:02:10 [api_server.py:1805] vLLM API server version 0.11.0\n"
                         "(APIServer pid=1) INFO 11-20 10:02:10 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-30B-A3B', 'max_model_len': 32768, "
                         "'data_parallel_size': 2, 'enable_expert_parallel': True, 'speculative_config': {'method': 'eagle3', 'model': "
                         "'Tengyunw/qwen3_30b_moe_eagle3', 'num_speculative_tokens': 3}}\n"
                         "(EngineCore_DP0 pid=2) INFO 11-20 10:03:40 [gpu_model_runner.py:2653] Model loading took 29.7 GiB and 20.1 seconds\n";
  const auto r = pftest::run_cli("logs " + path + " --device H100-SXM");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("data_parallel_size=2 (line 2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("enable_expert_parallel=true (line 2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("speculative_config={\"method\": \"eagle3\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: speculative decoding (eagle3, 3 tokens)"), std::string::npos) << r.out;
  const auto j = json_of(pftest::run_cli("logs " + path + " --device H100-SXM --json", {.with_stderr = false}));
  EXPECT_EQ(j["engine_args"]["data_parallel_size"]["value"], 2);
  EXPECT_EQ(j["engine_args"]["enable_expert_parallel"]["value"], true);
  EXPECT_EQ(j["engine_args"]["speculative_config"]["line"], 2);
}

// Issue 15 ("when nothing dates it, give the prediction across the plausible versions as a band"): fit Qwen/Qwen3-8B with
// no version gave "fits on 9 of 9 versions", vllm@0.6-0.7 among them, though vLLM's model registry has
// Qwen3ForCausalLM only from 0.8.4 (data/engines/model_support.json; fit --engine vllm@0.7 refuses it, exit 1). The band
// now leaves out the profiles wholly before 0.8.4, sizes vllm@0.8-0.9.1 from 0.8.4, and says so.
TEST(User36, Issue15_VersionBandLeavesOutVersionsWithoutTheArchitecture) {
  const auto refused = pftest::run_cli("fit Qwen/Qwen3-8B --device A100-40G-SXM --engine vllm@0.7");
  EXPECT_EQ(refused.code, 1) << refused.out.substr(0, 300);
  EXPECT_NE(refused.out.find("are not supported for now"), std::string::npos) << refused.out.substr(0, 300);
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device A100-40G-SXM --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 300);
  const auto band = json_of(r)["version_band"];
  ASSERT_TRUE(band.is_object()) << r.out.substr(0, 300);
  for (const auto& v : band["versions"]) EXPECT_NE(v["engine"].get<std::string>().rfind("vllm@0.6", 0), 0u) << band.dump();
  EXPECT_EQ(band["versions"][0]["engine"], "vllm@0.8-0.9.1 from 0.8.4") << band.dump();
  EXPECT_EQ(band["fitting"], band["versions"].size());
  EXPECT_NE(band["left_out"].get<std::string>().find("vllm@0.6-0.7, vllm@0.8-0.9.1 before 0.8.4; their model registry lacks Qwen3ForCausalLM"),
            std::string::npos)
      << band.dump();
  const auto text = pftest::run_cli("fit Qwen/Qwen3-8B --device A100-40G-SXM");
  EXPECT_NE(text.out.find("  left out: vllm@0.6-0.7, vllm@0.8-0.9.1 before 0.8.4"), std::string::npos) << text.out;
}

// Issue 15 ("the engine version from the evidence ... when nothing dates it, give the prediction across the plausible
// versions as a band instead of silently taking the newest"): a vLLM log with no version line, no dated line (vLLM prints
// MM-DD only) and a token line that both formats agree on was predicted on vllm@0.28-0.30 with "version not stated", and
// nothing else. `fit` gave the band for the same deployment; `logs` now gives it too (text and --json), from the
// version the architecture first loads in (Qwen3ForCausalLM: vLLM 0.8.4), and a log that states its version gets none.
TEST(User36, Issue15_LogsWithoutAVersionGivesTheBand) {
  const std::string dir = pftest::scratch_dir("user36-undated-log");
  const std::string body =
      "(EngineCore_DP0 pid=812) INFO 11-20 10:02:54 [core.py:93] Initializing a V1 LLM engine with config: model='Qwen/Qwen3-32B', "
      "speculative_config=None, dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=2, pipeline_parallel_size=1, quantization=None, "
      "enforce_eager=False, kv_cache_dtype=auto\n"
      "(EngineCore_DP0 pid=812) INFO 11-20 10:03:40 [gpu_model_runner.py:2653] Model loading took 30.5855 GiB and 20.1 seconds\n"
      "(EngineCore_DP0 pid=812) INFO 11-20 10:04:29 [gpu_worker.py:298] Available KV cache memory: 38.67 GiB\n"
      "(EngineCore_DP0 pid=812) INFO 11-20 10:04:29 [kv_cache_utils.py:1087] GPU KV cache size: 316,768 tokens\n";
  std::ofstream(dir + "/undated.log") << body;
  std::ofstream(dir + "/dated.log") << "(APIServer pid=1) INFO 11-20 10:02:21 [api_server.py:1805] vLLM API server version 0.23.0\n" << body;
  const auto r = pftest::run_cli("logs " + dir + "/undated.log --device H100-SXM");
  ASSERT_EQ(r.code, 0) << r.out;
  // date37: the formats of its lines now date it ("(EngineCore_DP0 pid=...)" is printed from vLLM 0.10.2 on,
  // data/engines/line_formats.json), so the band spans the profiles from 0.10.2 on, not every one from 0.8.4
  // (tests/logs/test_line_formats37.cpp has the whole check).
  EXPECT_NE(r.out.find("version not stated, dated by the formats of its printed lines to 0.10.2 or later"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("across engine versions"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vllm@0.9.2-0.11.0 from 0.10.2"), std::string::npos) << r.out;
  const auto j = json_of(pftest::run_cli("logs " + dir + "/undated.log --device H100-SXM --json", {.with_stderr = false}));
  ASSERT_TRUE(j.contains("version_band")) << j.dump().substr(0, 400);
  EXPECT_GE(j["version_band"]["versions"].size(), 2u);
  // The printed 316,768 tokens lie inside the band's span.
  EXPECT_LE(j["version_band"]["kv_tokens_min"].get<long long>(), 316768);
  EXPECT_GE(j["version_band"]["kv_tokens_max"].get<long long>(), 316768);
  const auto dated = json_of(pftest::run_cli("logs " + dir + "/dated.log --device H100-SXM --json", {.with_stderr = false}));
  EXPECT_FALSE(dated.contains("version_band")) << dated.dump().substr(0, 400);
  EXPECT_EQ(dated["fit"]["engine"], "vllm@0.21-0.25");
}

// Issue 16 ("fit --variant ... agree[s] with plan on the same deployment"): `plan --device RTX4090 --context 65536` listed
// Qwen2.5-VL-7B FP8 with 176,240 KV tokens above its W4A16 row (101,712, smaller weights) and gave no reason; `fit
// --variant fp8_tensor --max-model-len 65536` said "does not fit" (46,592 tokens). The row was sized and started with
// --limit-mm-per-prompt '{"video": 0}' (its start line only): the default profile run encodes a dummy video that grows with
// the context. The row's reason now says so, and fit with that flag gives the row's numbers.
TEST(User36, Issue16_PlanRowSaysTheProfileFlagItAdded) {
  const auto r = pftest::run_cli("plan --device RTX4090 --context 65536 --model 'Qwen/Qwen2.5-VL*' --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 300);
  const auto j = json_of(r);
  const nlohmann::json* fp8 = nullptr;
  for (const auto& row : j["recommended"])
    if (row["variant"].get<std::string>().rfind("FP8 per-tensor", 0) == 0) fp8 = &row;
  ASSERT_NE(fp8, nullptr) << j["recommended"].dump().substr(0, 600);
  const std::string serve = (*fp8)["launch"]["serve"].get<std::string>();
  ASSERT_NE(serve.find("--limit-mm-per-prompt '{\"video\": 0}'"), std::string::npos) << serve;
  EXPECT_NE((*fp8)["reason"].get<std::string>().find("sized and started with --limit-mm-per-prompt '{\"video\": 0}'"), std::string::npos) << fp8->dump();
  const auto with_flag = json_of(pftest::run_cli("fit Qwen/Qwen2.5-VL-7B-Instruct --device RTX4090 --variant fp8_tensor --max-model-len 65536 "
                                                 "--limit-mm-per-prompt '{\"video\": 0}' --json",
                                                 {.with_stderr = false}));
  EXPECT_EQ(with_flag["kv_cache"]["tokens"], (*fp8)["kv_cache_tokens"]);
  const auto without = pftest::run_cli("fit Qwen/Qwen2.5-VL-7B-Instruct --device RTX4090 --variant fp8_tensor --max-model-len 65536");
  EXPECT_EQ(without.code, 1) << without.out.substr(0, 300);
}

// Issue 16 ("a variant the engine rejects on that card gets the engine's message and exit 1"): `fit Qwen/Qwen3-8B --device
// 910B4 --variant w4a16` gave vLLM-Ascend's NotImplementedError for W4A16 on a linear layer as its verdict, exit 1, under
// "the engine will print: Loading model weights took 15.2955 GB ... GPU KV cache size: 80,640 tokens", lines the engine
// never reaches: it raises while it builds the model. Those lines are gone (text and --json engine_lines); the sizes stay.
TEST(User36, Issue16_RejectedVariantPrintsNoEngineLines) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --variant w4a16");
  EXPECT_EQ(r.code, 1) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("NotImplementedError: Currently, vLLM Ascend doesn't support quant_type=W4A16 for layer_type=linear"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("the engine will print"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("Available KV cache memory"), std::string::npos) << r.out;
  const auto j = json_of(pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --variant w4a16 --json", {.with_stderr = false}));
  EXPECT_TRUE(j["engine_lines"].empty()) << j["engine_lines"].dump();
  EXPECT_EQ(j["failure"], "unsupported_quantization") << j.dump().substr(0, 400);
  EXPECT_EQ(j["fits"], false);
}

// Issue 15 ("every card, by the way people name it ... ambiguous names say which card was assumed and why"): a name with
// the card's size was refused ("Ascend 910B 32GB", "910B 64GB": "unknown device ...; did you mean Ascend 910") though
// a validation case's device text resolves it, and `plan --devices H100` took the SXM card without saying so (plan --device
// H100 said it). The size now picks among the cards the name stands for (devices.json: 910B4 is the 32 GB 910B), and
// --devices resolves each name as --device does. A name with a size no card it names has (an "RTX 4090 48GB") or none
// ("RTX 3090 Ti", not in the catalogue) stays unknown, exit 2.
TEST(User36, Issue15_SizedNamesAndPlanDevicesSayWhichCard) {
  struct Case {
    std::string device, card, said;
  };
  for (const Case& c : {Case{"Ascend 910B 32GB", "910B4", "the stated size picks 910B4"}, Case{"910B 64GB", "910B2", "assumed 910B2"},
                        Case{"NVIDIA L40S 48GB", "L40S", "read as L40S"},
                        // "MI300" (devices.json ambiguous_names, added here) names the MI300X and the MI300A APU; it was unknown.
                        Case{"MI300", "MI300X", "'MI300' names 2 cards (MI300X, MI300A); assumed MI300X"}}) {
    const auto r = pftest::run_cli("fit Qwen/Qwen3-0.6B --device '" + c.device + "' --max-model-len 4096 --json", {.with_stderr = false});
    ASSERT_EQ(r.code, 0) << c.device << ": " << r.out.substr(0, 300);
    const auto j = json_of(r);
    EXPECT_EQ(j["device"], c.card) << c.device;
    EXPECT_NE(j["assumptions"].dump().find(c.said), std::string::npos) << j["assumptions"].dump();
  }
  for (const char* unknown : {"RTX 4090 48GB", "RTX 3090 Ti"}) {
    const auto r = pftest::run_cli(std::string("fit Qwen/Qwen3-0.6B --device '") + unknown + "'");
    EXPECT_EQ(r.code, 2) << unknown << ": " << r.out.substr(0, 300);
    EXPECT_NE(r.out.find("unknown device"), std::string::npos) << r.out.substr(0, 300);
  }
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices 'H100,Ascend 910B 32GB' --json", {.with_stderr = false});
  ASSERT_EQ(plan.code, 0) << plan.out.substr(0, 300);
  const std::string said = json_of(plan)["assumptions"].dump();
  EXPECT_NE(said.find("'H100' names 3 cards (H100-SXM, H100-PCIe, H100-NVL); assumed H100-SXM"), std::string::npos) << said;
  EXPECT_NE(said.find("the stated size picks 910B4"), std::string::npos) << said;
}

// A `vllm serve` line's layout flags given to plan ("plan Qwen/Qwen3-8B --devices 910B4 --tensor-parallel-size 2") were
// "unknown flag --tensor-parallel-size; did you mean --expert-parallel" (--pipeline-parallel-size: "did you mean
// --decode-context-parallel-size"), exit 2. Still exit 2, now saying that plan chooses them and what steers it.
TEST(User36, Issue15_PlanSaysItChoosesTheLayout) {
  for (const char* flag : {"--tensor-parallel-size 2", "--pipeline-parallel-size 2", "-dp 2", "--quantization=fp8"}) {
    const auto r = pftest::run_cli(std::string("plan Qwen/Qwen3-8B --devices 910B4 ") + flag);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.out;
    EXPECT_NE(r.out.find("plan chooses the layout (TP, PP, DP) and the quantization of each row itself"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("did you mean"), std::string::npos) << r.out;
  }
}
