// Session 31's user journeys (issues 15, 16, 19): a new user's pass over every command, as the seeds' users type it.
// Each test runs the real binary.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "../test_support.hpp"

namespace {

// The serve line of plan's first recommended row.
std::string first_serve(const std::string& args) {
  const auto r = pftest::run_cli(args + " --json", {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << args << "\n" << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_discarded() || !j.contains("recommended") || j["recommended"].empty() || !j["recommended"][0].contains("launch")) {
    ADD_FAILURE() << args << ": no launch in " << r.out.substr(0, 400);
    return {};
  }
  return j["recommended"][0]["launch"]["serve"].get<std::string>();
}

}  // namespace

// Issue 16 ("start commands that run as written: flags the engine version really has"): vLLM added
// --default-chat-template-kwargs in PR #31343 (opened 2025-12-25, after v0.13.0 of 2025-12-19), so it is in v0.14.0 on.
// The start of a Qwen3 model named vllm-ascend@0.13.0 (or 0.7.3, the long-time stable release on 910B) carried it,
// and vLLM's argparse exits with "unrecognized arguments" before loading anything: the rule said 0.10.0, and a rule
// was applied when its range touched the profile's (0.13-0.14) instead of the version the user named.
TEST(Ux31, Issue16_StartCommandCarriesOnlyFlagsTheNamedVersionHas) {
  const std::string flag = "--default-chat-template-kwargs";
  // arch31: vllm-ascend 0.7.3 (vLLM 0.7.3) cannot load Qwen3 at all, so plan has no row for it there (test_model_support).
  for (const char* version : {"0.13.0"}) {
    const std::string serve = first_serve(std::string("plan Qwen/Qwen3-8B --devices 910B4 --context 8192 --engine vllm-ascend@") + version);
    EXPECT_NE(serve.find("vllm serve Qwen/Qwen3-8B"), std::string::npos) << version << ": " << serve;
    EXPECT_EQ(serve.find(flag), std::string::npos) << version << ": " << serve;
  }
  EXPECT_EQ(first_serve("plan Qwen/Qwen3-8B --devices H100 --context 8192 --engine vllm@0.13.0").find(flag), std::string::npos);
  // From 0.14 the flag is there, on either engine; the seed's vLLM-Ascend 0.18.0 keeps it.
  EXPECT_NE(first_serve("plan Qwen/Qwen3-8B --devices 910B4 --context 8192 --engine vllm-ascend@0.14.0").find(flag), std::string::npos);
  EXPECT_NE(first_serve("plan Qwen/Qwen3-8B --devices 910B4 --context 8192 --engine vllm-ascend@0.18.0").find(flag), std::string::npos);
  EXPECT_NE(first_serve("plan Qwen/Qwen3-8B --devices H100 --context 8192 --engine vllm@0.14.1").find(flag), std::string::npos);
}

// Issue 16 (bench as the seed's user runs it: `bench --url ... --model Qwen/Qwen3-8B --device 910B4`): the prediction
// needs the model to size as --spec, and the refusal said only "--device and --spec go together", naming neither what
// was missing nor that --model (the served name) is not it. Refused before any request (port 9 takes none).
TEST(Ux31, Issue16_BenchDeviceWithoutSpecSaysWhatIsMissing) {
  const auto no_spec = pftest::run_cli("bench --url http://127.0.0.1:9 --model qwen3-8b --device 910B4");
  EXPECT_EQ(no_spec.code, 2) << no_spec.out;
  EXPECT_NE(no_spec.out.find("--device 910B4 needs --spec MODEL"), std::string::npos) << no_spec.out;
  EXPECT_NE(no_spec.out.find("--model is only the name the server serves"), std::string::npos) << no_spec.out;
  const auto no_device = pftest::run_cli("bench --url http://127.0.0.1:9 --model qwen3-8b --spec Qwen/Qwen3-8B");
  EXPECT_EQ(no_device.code, 2) << no_device.out;
  EXPECT_NE(no_device.out.find("--spec Qwen/Qwen3-8B needs --device D"), std::string::npos) << no_device.out;
}

// Issue 16 ("Plan as a user reads it"): fit's "largest context" is capped at vLLM's derived max_model_len, so Qwen3-8B
// on a 910B4 read "40,960 tokens for one request" beside an 80,640-token KV cache (and 40,960 beside 828,160 on 16
// cards), as if memory set it. Qwen3-8B's config: max_position_embeddings 40,960, no rope scaling. The line now says
// the model's maximum sets it, and --json names the bound; where the KV cache sets it (Qwen3.5-27B on a 910B3 at 32K,
// 62,976 tokens against a 262,144-token model) the line is as before.
TEST(Ux31, Issue16_LargestContextSaysWhenTheModelSetsIt) {
  const auto capped = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4");
  ASSERT_EQ(capped.code, 0) << capped.out;
  EXPECT_NE(capped.out.find("GPU KV cache size: 80,640 tokens"), std::string::npos) << capped.out;
  EXPECT_NE(capped.out.find("largest context  40,960 tokens for one request (the model's maximum, vLLM's derived max_model_len"), std::string::npos)
      << capped.out;
  const auto j = nlohmann::json::parse(pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --json", {.with_stderr = false}).out);
  EXPECT_EQ(j["kv_cache"]["largest_context"], 40960);
  EXPECT_EQ(j["kv_cache"]["largest_context_bound"], "model_max_len");

  const auto held = pftest::run_cli("fit Qwen/Qwen3.5-27B --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768 --skip-mm-profiling --json",
                                    {.with_stderr = false});
  const auto h = nlohmann::json::parse(held.out);
  EXPECT_EQ(h["kv_cache"]["largest_context"], 62976);
  EXPECT_EQ(h["kv_cache"]["largest_context_bound"], "kv_cache");
}

// Issue 16 (the llama.cpp-on-CPU user): plan and fit on --device cpu say "until `preflight bw --save --device cpu`
// measures the card", but `bw --save` without a device answered "the device catalogue has no host entry (save with
// --target cuda|npu --device ID)", which is not so: the host entry is "cpu", and saving to it works. Refused before
// any measurement runs.
TEST(Ux31, Issue16_BwSaveOnTheHostNamesTheCpuEntry) {
  for (const char* args : {"bw --save", "bw --target host --save --device H100"}) {
    const auto r = pftest::run_cli(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("no host entry"), std::string::npos) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("a host measurement is saved with --device cpu"), std::string::npos) << args << "\n" << r.out;
  }
  // What plan tells a CPU user to run is a command bw takes (the store is a scratch overlay, one short run).
  const std::string overlay = pftest::scratch_dir("ux31-bw") + "/devices.json";
  const auto saved = pftest::run_cli("bw --target host --save --device cpu --size 8 --repeats 1 --warmup 0 --kernel copy",
                                     {.env = "PREFLIGHT_DEVICE_OVERRIDES=" + overlay});
  EXPECT_EQ(saved.code, 0) << saved.out;
  EXPECT_NE(saved.out.find("saved to " + overlay + " as cpu"), std::string::npos) << saved.out;
}

// Issue 16 (validate as a user reads it): the seed cases all evaluate, yet the report printed an empty "skipped"
// heading; and pydantic's refusal spans two lines, the second of which left the row's indent (fit indents both).
TEST(Ux31, Issue16_ValidateReadsAsFitDoes) {
  const auto r = pftest::run_cli("validate " + pftest::shared_path("validation/seed-cases.jsonl") + " --models " + pftest::shared_path("models"),
                                 {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(" 0 skipped"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nskipped\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
                       "      Value error, awq quantization is currently not supported in npu."),
            std::string::npos)
      << r.out;
}

// Issue 16 (the llama.cpp-on-CPU and vLLM-vs-MindIE users): `preflight --help` named neither engine, and a user who
// typed the engine as a command got "unknown command 'mindie'; did you mean inspect". The fit line and two examples
// name --engine mindie / llama.cpp, and an engine typed as a command is told where it goes (exit 2 as before).
TEST(Ux31, Issue16_EnginesAreFoundFromTheTopLevelHelp) {
  const auto help = pftest::run_cli("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--engine mindie / llama.cpp"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("preflight fit Qwen/Qwen3-8B --device 910B3 --engine mindie"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("preflight fit model.gguf --engine llama.cpp --device cpu"), std::string::npos) << help.out;
  const auto mindie = pftest::run_cli("mindie Qwen/Qwen3-8B");
  EXPECT_EQ(mindie.code, 2);
  EXPECT_NE(mindie.out.find("mindie is an engine: preflight fit MODEL --device D --engine mindie"), std::string::npos) << mindie.out;
  const auto llama = pftest::run_cli("llama model.gguf");
  EXPECT_EQ(llama.code, 2);
  EXPECT_NE(llama.out.find("llama.cpp is an engine: preflight fit MODEL --device D --engine llama.cpp"), std::string::npos) << llama.out;
  const auto other = pftest::run_cli("valdate x.jsonl");
  EXPECT_NE(other.out.find("did you mean validate"), std::string::npos) << other.out;  // other words keep the nearest command
}

// Issue 16 (cosmetic, as a user reads it): plan --engine mindie --config-out DIR/ printed "wrote DIR//config.json and
// DIR//start.sh"; the paths are joined once.
TEST(Ux31, Issue16_MindieConfigOutPrintsThePathsItWrote) {
  const std::string dir = pftest::scratch_dir("ux31-mindie") + "/out/";
  const auto r = pftest::run_cli("plan Qwen/Qwen3-14B --devices 910B4 --engine mindie --context 8192 --config-out " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + dir + "config.json and " + dir + "start.sh"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(dir + "/config.json"), std::string::npos) << r.out;
}

// Issue 16 (logs -> validate as a user chains them): a log that names no card (kv_negative.1.log: vLLM-Ascend 0.23,
// Qwen3-8B, no device line) gives a case whose device is null, and validate skipped it as "device not in the catalogue
// and no total memory stated: " with nothing after the colon. It now says what is missing and how to give it.
TEST(Ux31, Issue16_CaseWithoutADeviceSaysSo) {
  const std::string log = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/logs/synthetic/kv_negative.1.log";
  const std::string cases = pftest::scratch_dir("ux31-case") + "/case.jsonl";
  EXPECT_EQ(pftest::run_cli("logs " + log + " --emit-case > " + cases, {.with_stderr = false}).code, 1);  // the log shows a failure
  const auto v = pftest::run_cli("validate " + cases);
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_NE(v.out.find("log-kv_negative.1.log: no device named: the case's device is null or empty"), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("`preflight logs FILE --device D --emit-case` writes it"), std::string::npos) << v.out;
  EXPECT_EQ(v.out.find("no total memory stated: \n"), std::string::npos) << v.out;
  // With --device the case carries the card.
  const auto with_device = pftest::run_cli("logs " + log + " --emit-case --device 910B4", {.with_stderr = false});
  EXPECT_NE(with_device.out.find("\"device\":\"910B4\""), std::string::npos) << with_device.out;
}
