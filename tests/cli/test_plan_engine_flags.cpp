// Issues 15/16 (plan28): plan takes the engine settings fit takes (cli/engine_flags, one declaration for both), sizes
// every row with them as fit sizes the same deployment, and starts every row with them in vLLM's spelling; a setting
// only an Ascend NPU reads is refused on another card by both; and the length checks agree: fit --max-model-len, plan
// --context and validate's max_model_len above the model's derived length are vLLM's ValueError in all three.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "base/json_util.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using pftest::json_of;

namespace {

// One engine setting on a model and card: the flags as given to both commands, what plan's start command carries
// for it (in `vllm serve`, or as an environment entry), and whether the setting changes the KV cache of this
// deployment (then the fit without it must differ, so that agreement is not two defaults agreeing).
struct Setting {
  const char* model;
  const char* device;
  const char* flags;
  const char* serve;  // a fragment of launch.serve, or nullptr
  const char* env;    // an entry of launch.env, or nullptr
  bool changes_kv;
};

// The one row `plan MODEL --devices D --max-devices 1 --variant bf16` gives (TP 1 on one card), as JSON.
Json plan_row(const std::string& model, const std::string& device, const std::string& flags) {
  const auto r = pftest::run_cli("plan " + model + " --devices " + device + " --max-devices 1 --variant bf16 --context 32768 --json " + flags, {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << model << " " << flags << ": " << r.out.substr(0, 400);
  const Json j = json_of(r);
  EXPECT_TRUE(j.contains("recommended") && j["recommended"].size() == 1) << flags << ": " << r.out.substr(0, 400);
  return j.contains("recommended") && !j["recommended"].empty() ? j["recommended"][0] : Json();
}

Json fit_of(const std::string& model, const std::string& device, const std::string& flags) {
  const auto r = pftest::run_cli("fit " + model + " --device " + device + " --max-model-len 32768 --json " + flags, {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << model << " " << flags << ": " << r.out.substr(0, 400);
  return json_of(r);
}

bool has(const Json& list, const std::string& entry) {
  for (const auto& e : list)
    if (e.is_string() && e.get<std::string>() == entry) return true;
  return false;
}

}  // namespace

// Each setting of `fit --help`'s engine block, on `plan` (before: "unknown flag --kv-cache-dtype", exit 2): the plan row
// at TP 1 has fit's KV tokens, concurrency and single-stream speed for the same deployment, and its start command
// carries the setting.
TEST(PlanEngineFlags, Issue15_PlanSizesAndStartsEveryRowWithFitsEngineSettings) {
  const Setting settings[] = {
      {"Qwen/Qwen3-8B", "H100-SXM", "--kv-cache-dtype fp8", "--kv-cache-dtype fp8", nullptr, true},
      {"Qwen/Qwen3-8B", "H100-SXM", "--enforce-eager", " --enforce-eager", nullptr, true},  // no graph memory
      {"Qwen/Qwen3-8B", "H100-SXM", "--max-num-seqs 64", "--max-num-seqs 64", nullptr, true},  // the sampler run's 64 rows, not 1024
      {"Qwen/Qwen3-8B", "H100-SXM", "--max-num-batched-tokens 2048", "--max-num-batched-tokens 2048", nullptr, true},
      {"Qwen/Qwen3-8B", "H100-SXM", "--no-enable-chunked-prefill", "--no-enable-chunked-prefill", nullptr, true},  // 32,768 tokens at once
      {"Qwen/Qwen3-8B", "H100-SXM", "--enable-chunked-prefill", "--enable-chunked-prefill", nullptr, false},
      {"Qwen/Qwen3-8B", "H100-SXM", "--enable-prefix-caching", "--enable-prefix-caching", nullptr, false},
      {"Qwen/Qwen3-8B", "H100-SXM", "--no-enable-prefix-caching", "--no-enable-prefix-caching", nullptr, false},
      {"Qwen/Qwen3-30B-A3B", "H100-SXM", "--moe-backend triton", "--moe-backend triton", nullptr, false},
      {"Qwen/Qwen3-8B", "H100-SXM", "--flashinfer-sampler", nullptr, "VLLM_USE_FLASHINFER_SAMPLER=1", false},
      {"Qwen/Qwen3-8B", "H100-SXM", "--no-flashinfer-sampler", nullptr, "VLLM_USE_FLASHINFER_SAMPLER=0", false},
      {"Qwen/Qwen3-VL-8B-Instruct", "H100-SXM", "--skip-mm-profiling", "--skip-mm-profiling", nullptr, true},
      {"Qwen/Qwen3-VL-8B-Instruct", "H100-SXM", "--limit-mm-per-prompt '{\"image\": 0, \"video\": 0}'", "--limit-mm-per-prompt '{\"image\": 0, \"video\": 0}'",
       nullptr, true},
      {"Qwen/Qwen3-VL-8B-Instruct", "H100-SXM", "--language-model-only", "--language-model-only", nullptr, true},
      {"Qwen/Qwen3.5-27B", "H200", "--mamba-ssm-cache-dtype bfloat16", "--mamba-ssm-cache-dtype bfloat16", nullptr, true},  // half the float32 state
      {"Qwen/Qwen3-8B", "910B3", "--hccl-buffsize 400", nullptr, "HCCL_BUFFSIZE=400", false},
      {"Qwen/Qwen3-8B", "910B3", "--npu-driver-version 25.5.0", nullptr, nullptr, false},
      {"Qwen/Qwen3-8B", "910B3", "--engine vllm-ascend@0.18 --engine-build 0.17.0rc2.dev66+g9d0b7c8e9", nullptr, nullptr, false},
  };
  std::map<std::string, long long> plain_tokens;  // the KV tokens of the fit without a setting, per model and card (run once each)
  for (const auto& s : settings) {
    SCOPED_TRACE(std::string(s.model) + " on " + s.device + " " + s.flags);
    const Json row = plan_row(s.model, s.device, s.flags);
    const Json fit = fit_of(s.model, s.device, s.flags);
    ASSERT_FALSE(row.is_null());
    EXPECT_EQ(row["kv_cache_tokens"].get<long long>(), fit["kv_cache"]["tokens"].get<long long>());
    EXPECT_DOUBLE_EQ(row["max_concurrency"].get<double>(), fit["kv_cache"]["max_concurrency"].get<double>());
    EXPECT_DOUBLE_EQ(row["speed"]["points"][0]["per_stream_tokens_per_s"].get<double>(), fit["speed"]["points"][0]["per_stream_tokens_per_s"].get<double>());
    if (s.changes_kv) {
      const std::string key = std::string(s.model) + " on " + s.device;
      if (!plain_tokens.count(key)) plain_tokens[key] = fit_of(s.model, s.device, "")["kv_cache"]["tokens"].get<long long>();
      EXPECT_NE(plain_tokens[key], fit["kv_cache"]["tokens"].get<long long>()) << "the setting changes nothing here";
    }
    const std::string serve = row["launch"]["serve"].get<std::string>();
    if (s.serve) EXPECT_NE(serve.find(s.serve), std::string::npos) << serve;
    if (s.env) EXPECT_TRUE(has(row["launch"]["env"], s.env)) << row["launch"]["env"].dump();
  }
}

// The KV cache of --kv-cache-dtype fp8 worked by hand: Qwen3-8B (../shared/models/Qwen__Qwen3-8B/config.json: 36 layers,
// 8 KV heads, head_dim 128) stores K and V at one byte each: 36 x 8 x 128 x 2 x 1 B = 73,728 B per token, a 16-token block
// 1,179,648 B; the tokens are whole blocks of the available KV. plan's row holds that many, as fit does.
TEST(PlanEngineFlags, Issue15_Fp8KvTokensOfThePlanRowWorkedByHand) {
  const Json row = plan_row("Qwen/Qwen3-8B", "H100-SXM", "--kv-cache-dtype fp8");
  ASSERT_FALSE(row.is_null());
  const long long block_bytes = 16LL * 36 * 8 * 128 * 2 * 1;
  EXPECT_EQ(block_bytes, 1179648);
  const long long by_hand = static_cast<long long>(row["available_kv_gib"].get<double>() * 1073741824.0) / block_bytes * 16;
  EXPECT_EQ(row["kv_cache_tokens"].get<long long>(), by_hand);
  EXPECT_NE(row["launch"]["serve"].get<std::string>().find("--kv-cache-dtype fp8"), std::string::npos);
}

// The settings reach the Kubernetes manifests (built from the first row's start command) and every row's "launch".
TEST(PlanEngineFlags, Issue15_KubernetesManifestsCarryTheSettings) {
  const std::string dir = pftest::scratch_dir("plan28-k8s");
  const std::string file = dir + "/m.yaml";
  const auto r = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100-SXM --max-devices 1 --variant bf16 --enforce-eager --max-num-seqs 32 --kubernetes " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string yaml = pftest::read_all(file);
  EXPECT_NE(yaml.find("--enforce-eager"), std::string::npos) << yaml.substr(0, 2000);
  EXPECT_NE(yaml.find("--max-num-seqs 32"), std::string::npos) << yaml.substr(0, 2000);
  std::filesystem::remove_all(dir);
}

// A bad value is refused by plan with fit's message (one check, deploy::check_flags), exit 2.
TEST(PlanEngineFlags, Issue15_BadSettingValuesExitTwoWithFitsMessage) {
  for (const char* flags : {"--kv-cache-dtype fp9", "--max-num-seqs 0", "--mamba-ssm-cache-dtype int3", "--hccl-buffsize 1.5"}) {
    const auto plan = pftest::run_cli(std::string("plan Qwen/Qwen3-8B --devices 910B3 ") + flags);
    const auto fit = pftest::run_cli(std::string("fit Qwen/Qwen3-8B --device 910B3 ") + flags);
    EXPECT_EQ(plan.code, 2) << flags << ": " << plan.out;
    EXPECT_EQ(fit.code, 2) << flags << ": " << fit.out;
    EXPECT_EQ(plan.out, fit.out) << flags;
  }
}

// --hccl-buffsize is HCCL_BUFFSIZE, which CANN's HCCL reads and NCCL never does: fit on an H100 refuses it (before: taken
// and ignored, exit 0), plan with only CUDA cards refuses it with the same message (exit 2), and plan over an H100 and
// a 910B3 rejects the H100 rows with that message and starts the 910B3 row with HCCL_BUFFSIZE=400.
TEST(PlanEngineFlags, Issue15_NpuOnlySettingOnACudaCardIsRefusedByBoth) {
  const std::string message =
      "preflight: --hccl-buffsize: HCCL_BUFFSIZE sizes the buffers of CANN's HCCL, which only an Ascend NPU's engine reads; H100-SXM is a cuda device\n";
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM --hccl-buffsize 400");
  EXPECT_EQ(fit.code, 2);
  EXPECT_EQ(fit.out, message);
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100-SXM --hccl-buffsize 400");
  EXPECT_EQ(plan.code, 2);
  EXPECT_EQ(plan.out, message);
  const auto device_form = pftest::run_cli("plan --device H100-SXM --model 'Qwen/Qwen3-8B' --hccl-buffsize 400");
  EXPECT_EQ(device_form.code, 2);
  EXPECT_EQ(device_form.out, message);
  const auto driver = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM --npu-driver-version 25.5.0");
  EXPECT_EQ(driver.code, 2);
  EXPECT_NE(driver.out.find("--npu-driver-version: "), std::string::npos) << driver.out;

  const auto mixed = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100-SXM,910B3 --max-devices 1 --variant bf16 --hccl-buffsize 400 --json", {.with_stderr = false});
  ASSERT_EQ(mixed.code, 0) << mixed.out.substr(0, 400);
  const Json j = json_of(mixed);
  ASSERT_EQ(j["recommended"].size(), 1u);
  EXPECT_EQ(j["recommended"][0]["device"], "910B3");
  EXPECT_TRUE(has(j["recommended"][0]["launch"]["env"], "HCCL_BUFFSIZE=400")) << j["recommended"][0]["launch"].dump();
  int h100 = 0;
  for (const auto& c : j["rejected"]) {
    if (c["device"] != "H100-SXM") continue;
    ++h100;
    EXPECT_EQ("preflight: " + c["reason"].get<std::string>() + "\n", message);
  }
  EXPECT_EQ(h100, 1);
}

// llama-server takes none of vLLM's engine settings: plan --engine llama.cpp refuses them up front (exit 2).
TEST(PlanEngineFlags, Issue15_LlamaCppPlanRefusesVllmSettings) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100-SXM --engine llama.cpp --enforce-eager");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--enforce-eager: vLLM's engine setting; llama-server"), std::string::npos) << r.out;
}

// Issue 16: plan --context above the model's derived max_model_len gives fit's answer to --max-model-len: vLLM's
// ValueError, exit 2 (before: every row rejected, exit 1, with plan's own words); with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1
// both take it, and plan's start command sets the variable. Qwen3-8B: max_position_embeddings 40960, no rope scaling.
TEST(PlanEngineFlags, Issue16_PlanContextAboveTheDerivedLengthIsFitsValueError) {
  const pftest::CliOptions refused{.env = "env -u VLLM_ALLOW_LONG_MAX_MODEL_LEN"};
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM --max-model-len 131072", refused);
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100-SXM --context 131072", refused);
  EXPECT_EQ(fit.code, 2);
  EXPECT_EQ(plan.code, 2);
  const std::string value_error = "ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len "
                                  "(max_position_embeddings=40960 or model_max_length=None in model's config.json).";
  EXPECT_NE(fit.out.find("--max-model-len: " + value_error), std::string::npos) << fit.out;
  EXPECT_NE(plan.out.find("--context: " + value_error), std::string::npos) << plan.out;
  // The `plan --device` form: that model's rows are rejected with the same words.
  const auto device_form = pftest::run_cli("plan --device H100-SXM --model 'Qwen/Qwen3-8B' --context 131072 --all --json", {.env = refused.env, .with_stderr = false});
  EXPECT_EQ(device_form.code, 1);
  const Json d = json_of(device_form);
  EXPECT_TRUE(d["recommended"].empty());
  ASSERT_FALSE(d["rejected"].empty());
  for (const auto& c : d["rejected"]) EXPECT_NE(c["reason"].get<std::string>().find("--context: " + value_error), std::string::npos) << c["reason"];
  // Allowed: sized at 131,072 like fit, and the start command sets the variable vLLM needs for it.
  const pftest::CliOptions allowed{.env = "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1", .with_stderr = false};
  const auto fit_long = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM --max-model-len 131072 --json", allowed);
  const auto plan_long = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100-SXM --max-devices 1 --variant bf16 --context 131072 --json", allowed);
  ASSERT_EQ(fit_long.code, 0);
  ASSERT_EQ(plan_long.code, 0) << plan_long.out.substr(0, 400);
  const Json row = json_of(plan_long)["recommended"][0];
  EXPECT_EQ(row["context_tokens"], 131072);
  EXPECT_EQ(row["kv_cache_tokens"], json_of(fit_long)["kv_cache"]["tokens"]);
  EXPECT_TRUE(has(row["launch"]["env"], "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")) << row["launch"].dump();
}

// Issue 16: vLLM's default max_model_len, the largest-context cap and plan's model maximum are the derived length, not
// max_position_embeddings. Qwen3-8B's model card ("Processing Long Texts", huggingface.co/Qwen/Qwen3-8B, read 2026-12)
// enables YaRN by adding {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768} to its
// config.json; vLLM then derives 32,768 x 4.0 = 131,072 (printed "131072.0", a float factor) while
// max_position_embeddings stays 40,960. Before: fit defaulted to 40,960 and capped the largest context there, and plan
// rejected --context 131072.
TEST(PlanEngineFlags, Issue16_DefaultLengthIsTheDerivedLengthWhereRopeScalingDiffers) {
  const std::string dir = pftest::scratch_dir("plan28-yarn");
  const std::string model = dir + "/Qwen3-8B-yarn";
  std::filesystem::create_directories(model);
  auto cfg = load_json_file(pftest::shared_path("models/Qwen__Qwen3-8B/config.json"));
  ASSERT_TRUE(cfg.has_value());
  ASSERT_EQ((*cfg)["max_position_embeddings"], 40960);
  (*cfg)["rope_scaling"] = Json{{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}};
  std::ofstream(model + "/config.json") << cfg->dump(2);

  const auto fit = pftest::run_cli("fit " + model + " --device H200 --json", {.env = "env -u VLLM_ALLOW_LONG_MAX_MODEL_LEN", .with_stderr = false});
  ASSERT_EQ(fit.code, 0) << fit.out.substr(0, 400);
  const Json f = json_of(fit);
  EXPECT_EQ(f["settings"]["max_model_len"], 131072);
  EXPECT_EQ(f["kv_cache"]["largest_context"], 131072);  // the KV cache of an H200 holds more: capped at the derived length
  bool said = false;
  for (const auto& a : f["assumptions"])
    said = said || a.get<std::string>() == "max_model_len 131072 (vLLM's derived max_model_len: max_position_embeddings=131072.0 or model_max_length=None)";
  EXPECT_TRUE(said) << f["assumptions"].dump();

  const auto plan = pftest::run_cli("plan " + model + " --devices H200 --max-devices 1 --variant bf16 --context 131072 --json",
                                    {.env = "env -u VLLM_ALLOW_LONG_MAX_MODEL_LEN", .with_stderr = false});
  ASSERT_EQ(plan.code, 0) << plan.out.substr(0, 400);
  const Json row = json_of(plan)["recommended"][0];
  EXPECT_EQ(row["context_tokens"], 131072);
  EXPECT_FALSE(has(row["launch"]["env"], "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"));  // within the derived length: not needed
  std::filesystem::remove_all(dir);
}

// Issue 16: validate evaluates a case whose max_model_len exceeds the model's derived length as the engine runs it:
// refused at config time (vLLM's ValueError), never sized. At 40,960 the same case is sized and fits.
TEST(PlanEngineFlags, Issue16_ValidateCaseAboveTheDerivedLengthIsRefused) {
  const std::string dir = pftest::scratch_dir("plan28-validate");
  const std::string file = dir + "/cases.jsonl";
  std::ofstream(file) << R"({"id": "long", "device": "H100-SXM", "model": "Qwen/Qwen3-8B", "engine": "vllm", "engine_version": "0.11.0", "max_model_len": 131072, "fits": false})"
                      << "\n"
                      << R"({"id": "ok", "device": "H100-SXM", "model": "Qwen/Qwen3-8B", "engine": "vllm", "engine_version": "0.11.0", "max_model_len": 40960, "fits": true})"
                      << "\n";
  const auto r = pftest::run_cli("validate " + file + " --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  const Json j = json_of(r);
  ASSERT_EQ(j["rows"].size(), 2u) << r.out.substr(0, 400);
  const Json& longer = j["rows"][0];
  EXPECT_EQ(longer["predicted_fits"], false);
  EXPECT_EQ(longer["predicted_failure"], "max_model_len_too_large");
  EXPECT_NE(longer["predicted_failure_message"].get<std::string>().find(
                "max_model_len: ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len"),
            std::string::npos)
      << longer.dump();
  EXPECT_EQ(j["rows"][1]["predicted_fits"], true);
  EXPECT_EQ(j["verdicts"]["correct"], 2);
  std::filesystem::remove_all(dir);
}
