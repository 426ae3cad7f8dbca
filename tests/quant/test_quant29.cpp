// Issue 16 (quant29): the names `--quantization` takes are data per engine version (data/engines/quantization_methods.json)
// and fit, plan, validate and logs read them; `fit --variant` refuses a variant no start command serves, as plan does;
// `fit --json` of a deployment that does not run carries no decode speed, as the text form prints none.
//
// Expected values are copied by hand from the sources: the line vLLM 0.8.5 (the vllm-ascend v0.8.5rc1 image) printed for
// `vllm serve ... --quantization ascend` (https://github.com/vllm-project/vllm-ascend/issues/902), vLLM 0.7.3's
// (https://github.com/vllm-project/vllm-ascend/issues/2819), QuantizationMethods at v0.16.0
// (https://docs.vllm.ai/en/v0.16.0/api/vllm/model_executor/layers/quantization/), and vllm_ascend/platform.py, which
// adds 'ascend' to the parser's choices from v0.9.0rc1 (PR #877).
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <optional>
#include <tuple>

#include "base/json_util.hpp"
#include "engine/quantization_methods.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "../variant_support.hpp"

using namespace preflight;

namespace {

// vllm-ascend #902, the second line of its log, verbatim.
const std::string k_issue902 =
    "vllm serve: error: argument --quantization/-q: invalid choice: 'ascend' (choose from 'aqlm', 'awq', 'deepspeedfp', 'tpu_int8', 'fp8', 'ptpc_fp8', "
    "'fbgemm_fp8', 'modelopt', 'nvfp4', 'marlin', 'bitblas', 'gguf', 'gptq_marlin_24', 'gptq_marlin', 'gptq_bitblas', 'awq_marlin', 'gptq', "
    "'compressed-tensors', 'bitsandbytes', 'qqq', 'hqq', 'experts_int8', 'neuron_quant', 'ipex', 'quark', 'moe_wna16', 'torchao', None)";

// vllm-ascend #2819 (vLLM 0.7.3), the choices of its last log line, verbatim.
const std::string k_issue2819_choices =
    "'aqlm', 'awq', 'deepspeedfp', 'tpu_int8', 'fp8', 'ptpc_fp8', 'fbgemm_fp8', 'modelopt', 'marlin', 'gguf', 'gptq_marlin_24', 'gptq_marlin', "
    "'awq_marlin', 'gptq', 'compressed-tensors', 'bitsandbytes', 'qqq', 'hqq', 'experts_int8', 'neuron_quant', 'ipex', 'quark', 'moe_wna16', None";

// v0.16.0's QuantizationMethods (22 names) in the Literal's order, as ModelConfig's "Must be one of {QUANTIZATION_METHODS}"
// prints them (from v0.13.0 the parser has no choices: quant32).
const std::string k_v016_list =
    "'awq', 'fp8', 'ptpc_fp8', 'fbgemm_fp8', 'fp_quant', 'modelopt', 'modelopt_fp4', 'modelopt_mxfp8', 'gguf', 'gptq_marlin', 'awq_marlin', 'gptq', "
    "'compressed-tensors', 'bitsandbytes', 'experts_int8', 'quark', 'moe_wna16', 'torchao', 'inc', 'mxfp4', 'petit_nvfp4', 'cpu_awq'";

// What `vllm serve` prints from v0.13.0 for a name outside the list (vllm/config/model.py _verify_quantization in pydantic's
// ValidationError).
std::string model_config_refusal(const std::string& method, const std::string& list) {
  return "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Unknown quantization method: " + method +
         ". Must be one of [" + list + "].";
}

// Its first line and the message up to the list, for `--quantization ascend` on plain vLLM from 0.13.
const std::string k_unknown_ascend =
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Unknown quantization method: ascend. Must be one of [";

engine::Version v(int major, int minor, int patch) { return engine::Version{major, minor, patch}; }

}  // namespace

TEST(QuantizationMethods, Issue16_ShippedListsAreTheEnginesOwn) {
  const auto& catalog = engine::shipped_quantization_methods();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  ASSERT_EQ(catalog->lists.size(), 26u);  // every vLLM release line 0.6 - 0.23 (quant32)
  for (const auto& l : catalog->lists) EXPECT_FALSE(l.source.empty()) << l.id;
  // The refusal each list gives is the printed line, choices and all.
  EXPECT_EQ(engine::quantization_choice_refusal(*catalog, "vllm-ascend", v(0, 8, 5), "ascend"), k_issue902);
  EXPECT_EQ(engine::quantization_choice_refusal(*catalog, "vllm", v(0, 7, 3), "ascend"),
            "vllm serve: error: argument --quantization/-q: invalid choice: 'ascend' (choose from " + k_issue2819_choices + ")");
  EXPECT_EQ(engine::quantization_choice_refusal(*catalog, "vllm", v(0, 16, 0), "auto-round"), model_config_refusal("auto-round", k_v016_list));
  // vLLM-Ascend registers its 'ascend' after vLLM's methods (register_quantization_config appends it).
  EXPECT_EQ(engine::quantization_choice_refusal(*catalog, "vllm-ascend", v(0, 16, 0), "gptq_marlin_24"),
            model_config_refusal("gptq_marlin_24", k_v016_list + ", 'ascend'"));
  // Taken: a listed name, 'ascend' on vLLM-Ascend from 0.9.0, any engine that is not vLLM's.
  for (const auto& [engine_name, version, method] : std::vector<std::tuple<std::string, engine::Version, std::string>>{
           {"vllm", v(0, 8, 5), "torchao"},
           {"vllm", v(0, 9, 0), "auto-round"},
           {"vllm", v(0, 16, 3), "inc"},
           {"vllm-ascend", v(0, 9, 0), "ascend"},
           {"vllm-ascend", v(0, 23, 0), "ascend"},
           {"vllm", v(0, 28, 0), "fp8_per_tensor"},  // no list for 0.28: only a platform's name is refused
           {"llama.cpp", v(0, 8, 5), "ascend"},
           {"vllm", v(0, 16, 0), ""}}) {
    EXPECT_EQ(engine::quantization_choice_refusal(*catalog, engine_name, version, method), "") << engine_name << " " << version.text() << " " << method;
  }
  // A name is compared as argparse compares it: 'AWQ' is no choice of 0.8.5.
  EXPECT_NE(engine::quantization_choice_refusal(*catalog, "vllm", v(0, 8, 5), "AWQ"), "");
  // No list for the version: a platform's name on plain vLLM is refused with the nearest list's choices, said as such.
  const std::string uncovered = engine::quantization_choice_refusal(*catalog, "vllm", v(0, 30, 99), "ascend");
  EXPECT_EQ(uncovered.rfind("pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Unknown quantization method: ascend. "
                            "Must be one of ['awq', 'fp8', 'fbgemm_fp8', ",
                            0),
            0u)
      << uncovered;
  EXPECT_NE(uncovered.find("[the choices of vllm-0.23.0: data/engines/quantization_methods.json has no list for vllm 0.30.99]"), std::string::npos) << uncovered;
}

TEST(QuantizationMethods, Issue16_BadListsAreRefused) {
  const Json good = Json::parse(R"({"schema_version": 1, "note": "n", "lists": [
      {"id": "a", "version_min": "0.7.0", "version_max": "0.7.99", "parser": "argparse", "methods": ["awq", "fp8"], "choices": "'awq', 'fp8', None", "source": "s"}],
      "plugin_methods": [{"method": "ascend", "engine": "vllm-ascend", "version_min": "0.9.0", "choice": "'ascend'", "source": "s"}]})");
  ASSERT_TRUE(engine::parse_quantization_methods(good, "x.json").has_value());
  struct Bad {
    const char* what;
    std::function<void(Json&)> edit;
    const char* fragment;
  };
  const std::vector<Bad> bad = {
      {"unknown key", [](Json& j) { j["lists"][0]["extra"] = 1; }, "extra"},
      {"no source", [](Json& j) { j["lists"][0]["source"] = ""; }, "x.json: lists[a]: source is empty"},
      {"overlap", [](Json& j) { Json b = j["lists"][0]; b["id"] = "b"; b["version_min"] = "0.7.5"; b["version_max"] = "0.8.0"; j["lists"].push_back(b); },
       "x.json: lists[b]: its version range overlaps lists[a]"},
      {"choices without a method", [](Json& j) { j["lists"][0]["choices"] = "'awq', None"; }, "x.json: lists[a]: choices does not print method 'fp8'"},
      {"reversed range", [](Json& j) { j["lists"][0]["version_max"] = "0.6.0"; }, "x.json: lists[a]: version_max is below version_min"},
      {"unknown parser", [](Json& j) { j["lists"][0]["parser"] = "click"; }, "x.json: lists[a]: parser 'click' is not argparse or model_config"},
      {"empty methods", [](Json& j) { j["lists"][0]["methods"] = Json::array(); }, "x.json: lists[a]: methods is empty"},
      {"plugin of another engine", [](Json& j) { j["plugin_methods"][0]["engine"] = "llama.cpp"; }, "engine 'llama.cpp' is not vllm or vllm-ascend"},
      {"plugin vLLM already lists", [](Json& j) { j["plugin_methods"][0]["method"] = "awq"; j["plugin_methods"][0]["choice"] = "'awq'"; },
       "x.json: plugin_methods[awq]: lists[a] already names it"},
  };
  for (const auto& b : bad) {
    Json j = good;
    b.edit(j);
    const auto parsed = engine::parse_quantization_methods(j, "x.json");
    ASSERT_FALSE(parsed.has_value()) << b.what;
    EXPECT_EQ(parsed.error().kind, ErrorKind::corrupt) << b.what;
    EXPECT_NE(parsed.error().message.find(b.fragment), std::string::npos) << b.what << ": " << parsed.error().message;
  }
}

// The brief's case: msModelSlim W8A8 asked of vLLM on an H100 was sized and said to fit. Now it is vLLM's argparse refusal,
// exit 2; on vLLM-Ascend 0.8.5 the whole line of #902; a name the version lists still sizes.
TEST(QuantizationMethods, Issue16_FitRefusesAQuantizationTheParserLacks) {
  const auto cuda = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.12.0 --quantization ascend");
  EXPECT_EQ(cuda.code, 2) << cuda.out.substr(0, 300);
  EXPECT_NE(cuda.out.find("--quantization: vllm serve: error: argument --quantization/-q: invalid choice: 'ascend' (choose from 'auto-round', 'awq', "), std::string::npos)
      << cuda.out.substr(0, 400);
  const auto old_ascend = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --engine vllm-ascend@0.8.5 --quantization ascend");
  EXPECT_EQ(old_ascend.code, 2);
  EXPECT_NE(old_ascend.out.find("--quantization: " + k_issue902 + "\n"), std::string::npos) << old_ascend.out.substr(0, 600);
  const auto folded = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.16.0 --quantization auto-round");
  EXPECT_EQ(folded.code, 2);
  EXPECT_NE(folded.out.find(model_config_refusal("auto-round", k_v016_list)), std::string::npos) << folded.out.substr(0, 600);
  for (const char* taken : {"--device 910B4 --engine vllm-ascend@0.9.1 --quantization ascend", "--device H100 --engine vllm@0.16.0 --quantization fp8"}) {
    const auto r = pftest::run_cli(std::string("fit Qwen/Qwen3-8B ") + taken + " --json", {.with_stderr = false});
    EXPECT_NE(r.code, 2) << taken << ": " << r.out.substr(0, 300);
    EXPECT_EQ(r.out.find("invalid choice"), std::string::npos) << taken;
    EXPECT_EQ(r.out.find("Unknown quantization method"), std::string::npos) << taken;
  }
}

// fit --variant and validate apply the parser's verdict as a rejection (exit 1, the line as the failure message), and plan
// tries no variant whose --quantization the version refuses: on vLLM-Ascend 0.8.5 msModelSlim W8A8 is refused by all three.
TEST(QuantizationMethods, Issue16_VariantRefusedByTheParserInFitPlanAndValidate) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --engine vllm-ascend@0.8.5 --variant w8a8 --max-model-len 4096 --json", {.with_stderr = false});
  EXPECT_EQ(fit.code, 1) << fit.out.substr(0, 300);
  const Json f = pftest::json_of(fit);
  EXPECT_EQ(f["failure"], "unsupported_quantization");
  EXPECT_EQ(f["failure_message"], k_issue902);
  EXPECT_FALSE(f.contains("speed"));

  const auto plan = pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4 --engine vllm-ascend@0.8.5 --context 8192 --json", {.with_stderr = false});
  const Json p = pftest::json_of(plan);
  ASSERT_TRUE(p.contains("recommended")) << plan.out.substr(0, 300);
  for (const char* key : {"recommended", "rejected"})
    for (const auto& row : p[key]) EXPECT_NE(row.value("quantization", std::string()), "ascend") << row.dump().substr(0, 300);
  const auto newer = pftest::json_of(pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4 --engine vllm-ascend@0.9.1 --context 8192 --json", {.with_stderr = false}));
  bool ascend_row = false;
  for (const char* key : {"recommended", "rejected"})
    for (const auto& row : newer[key]) ascend_row |= row.value("quantization", std::string()) == "ascend";
  EXPECT_TRUE(ascend_row) << "vLLM-Ascend 0.9.1 takes --quantization ascend: plan should try W8A8";

  const std::string dir = pftest::scratch_dir("quant29-validate");
  const std::string file = dir + "/w8a8-085.jsonl";
  std::ofstream(file) << Json({{"id", "q29-w8a8-0.8.5"}, {"engine", "vllm-ascend"}, {"engine_version", "0.8.5"}, {"device", "910B4"}, {"num_devices", 1},
                               {"model", "Qwen/Qwen3-8B"}, {"quantization", "w8a8"}, {"max_model_len", 4096}, {"fits", false}, {"failure", "unsupported_quantization"}})
                                .dump()
                         << "\n";
  const auto v = pftest::run_cli("validate " + file + " --json", {.with_stderr = false});
  const Json j = pftest::json_of(v);
  ASSERT_FALSE(j["rows"].empty()) << v.out.substr(0, 300);
  EXPECT_EQ(j["rows"][0]["predicted_failure_message"], k_issue902) << j["rows"][0].dump().substr(0, 600);
}

// logs: the parser's refusal is classified as an unsupported quantization, from #902's two lines.
TEST(QuantizationMethods, Issue16_LogsClassifyTheParsersRefusal) {
  const std::string dir = pftest::scratch_dir("quant29-logs");
  const std::string file = dir + "/issue902.log";
  std::ofstream(file) << "usage: vllm serve [model_tag] [options]\n" << k_issue902 << "\n";
  const auto r = pftest::run_cli("logs " + file + " --json", {.with_stderr = false});
  EXPECT_NE(r.out.find("unsupported_quantization"), std::string::npos) << r.out.substr(0, 600);
  EXPECT_NE(r.out.find("quant-invalid-choice"), std::string::npos) << r.out.substr(0, 600);
  // quant32: from vLLM 0.13 the refusal is ModelConfig's (no argparse choices); `logs` said "no failure found" for it.
  const std::string later = dir + "/vllm016.log";
  std::ofstream(later) << "INFO 12-07 03:00:00 [api_server.py:1] vLLM API server version 0.16.0\n"
                       << model_config_refusal("ascend", k_v016_list)
                       << " [type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]\n";
  const auto r16 = pftest::run_cli("logs " + later + " --json", {.with_stderr = false});
  EXPECT_NE(r16.out.find("unsupported_quantization"), std::string::npos) << r16.out.substr(0, 600);
  EXPECT_NE(r16.out.find("quant-unknown-method"), std::string::npos) << r16.out.substr(0, 600);
}

// fit --json of a deployment that does not run has no "speed" (the text form prints none); one that fits has it.
TEST(QuantizationMethods, Issue16_FitJsonHasNoSpeedWhenItDoesNotRun) {
  struct Case {
    std::string args, failure;
  };
  for (const auto& c : std::vector<Case>{{"fit Qwen/Qwen3-32B --device 910B4 --max-model-len 4096 --json", "weights_oom"},
                                          {"fit Qwen/Qwen3-8B --device 910B4 --quantization awq --json", "unsupported_quantization"}}) {
    const auto r = pftest::run_cli(c.args, {.with_stderr = false});
    EXPECT_EQ(r.code, 1) << c.args << ": " << r.out.substr(0, 300);
    const Json j = pftest::json_of(r);
    EXPECT_EQ(j["failure"], c.failure) << c.args;
    EXPECT_FALSE(j.contains("speed")) << c.args;
    const auto text = pftest::run_cli(c.args.substr(0, c.args.size() - 7), {.with_stderr = false});
    EXPECT_EQ(text.out.find("decode"), std::string::npos) << c.args << " (text form)";
  }
  const Json fits = pftest::json_of(pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --max-model-len 4096 --json", {.with_stderr = false}));
  EXPECT_TRUE(fits["fits"].get<bool>());
  EXPECT_TRUE(fits.contains("speed"));
}

// msModelSlim's --model_type is the name of one of its model adapters (config/config.ini [ModelAdapter] at 3de0a3c): the
// qwen3_moe group registers "Qwen3-30B" and "Qwen3-235B", not the repos' names, and a name it lacks falls back to the
// default adapter and default practice ("Model adapter '...' not found, trying default adapter..."). The names below are
// read from that file by hand.
TEST(QuantizationMethods, Issue16_MsModelSlimModelTypeIsAnAdapterName) {
  const auto& catalog = engine::shipped_quantized_catalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  const auto* w8a8 = engine::find_conversion(*catalog, "w8a8", "npu");
  const auto* awq = engine::find_conversion(*catalog, "awq", "cuda");
  ASSERT_NE(w8a8, nullptr);
  ASSERT_NE(awq, nullptr);
  const std::vector<std::pair<std::string, std::optional<std::string>>> names = {
      {"Qwen3-32B", "Qwen3-32B"},           {"Qwen3-30B-A3B", "Qwen3-30B"},  {"Qwen3-30B-A3B-Instruct-2507", "Qwen3-30B"},
      {"Qwen3-235B-A22B", "Qwen3-235B"},    {"DeepSeek-V3.1-Base", "DeepSeek-V3.1"}, {"GLM-4.5-Air", "GLM-4.5"},
      {"Qwen3-VL-30B-A3B-Instruct", "Qwen3-VL-30B-A3B"},
      {"Qwen3-4B", std::nullopt},           {"Meta-Llama-3.1-8B", std::nullopt}, {"Kimi-K2-Instruct", std::nullopt}, {"Qwen3-30", std::nullopt}};
  for (const auto& [name, type] : names) EXPECT_EQ(engine::recipe_model_type(*catalog, *w8a8, name), type) << name;
  EXPECT_EQ(engine::recipe_model_type(*catalog, *awq, "Meta-Llama-3.1-8B"), "Meta-Llama-3.1-8B");  // AutoAWQ takes no model type

  // plan writes the adapter's name; before, "--model_type Qwen3-30B-A3B" (the default adapter).
  const Json moe = pftest::json_of(pftest::run_cli("plan Qwen/Qwen3-30B-A3B --devices 910B4 --variant w8a8 --context 8192 --json", {.with_stderr = false}));
  ASSERT_FALSE(moe["recommended"].empty());
  std::string prepare;
  for (const auto& p : moe["recommended"][0]["launch"]["prepare"]) prepare += p.get<std::string>() + "\n";
  EXPECT_NE(prepare.find("--model_type Qwen3-30B --quant_type w8a8"), std::string::npos) << prepare;
  EXPECT_EQ(prepare.find("--model_type Qwen3-30B-A3B"), std::string::npos) << prepare;

  // A model msModelSlim has no adapter for gets no msModelSlim command: every row says why.
  const auto llama = pftest::run_cli("plan meta-llama/Meta-Llama-3.1-8B --devices 910B4 --variant w8a8 --context 8192 --json", {.with_stderr = false});
  EXPECT_EQ(llama.code, 1) << llama.out.substr(0, 300);
  const Json l = pftest::json_of(llama);
  EXPECT_TRUE(l["recommended"].empty());
  ASSERT_FALSE(l["rejected"].empty());
  for (const auto& row : l["rejected"])
    EXPECT_NE(row["reason"].get<std::string>().find("no start command: no published checkpoint of meta-llama/Meta-Llama-3.1-8B in this variant (msModelSlim W8A8 "
                                                    "(static; MoE experts W8A8_DYNAMIC)), and msModelSlim registers no model adapter for Meta-Llama-3.1-8B"),
              std::string::npos)
        << row["reason"];
}

// Issue 16: `plan --variant w8a8` on a CUDA card rejected every row with the variant rule's "ValueError: Unknown
// quantization method: ascend", while `fit --variant w8a8` on the same card gave the line vLLM's argument parser prints
// first (it refuses `--quantization ascend` before any config is read). Both now give the parser's line: the plan's row
// reason is fit's failure message after "engine rejects it: ".
TEST(QuantizationMethods, Issue16_PlanVariantRowsGiveTheParsersRefusalAsFitDoes) {
  const Json fit = pftest::json_of(pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --variant w8a8 --json", {.with_stderr = false}));
  const std::string message = fit.value("failure_message", std::string());
  // The newest vLLM (0.13 on) has no parser choices: ModelConfig refuses it (quant32).
  ASSERT_EQ(message.rfind(k_unknown_ascend, 0), 0u) << message;
  const Json plan = pftest::json_of(pftest::run_cli("plan Qwen/Qwen3-8B --devices H100 --variant w8a8 --json", {.with_stderr = false}));
  ASSERT_TRUE(plan["recommended"].empty());
  ASSERT_FALSE(plan["rejected"].empty());
  for (const auto& row : plan["rejected"]) EXPECT_EQ(row.value("reason", std::string()), "engine rejects it: " + message) << row.dump().substr(0, 300);
  // The DP+EP rows of an MoE model too ("DP 2 x TP 1 + EP: engine rejects it: <the parser's line>").
  const Json moe = pftest::json_of(pftest::run_cli("plan Qwen/Qwen3-30B-A3B --devices H100 --variant w8a8 --json", {.with_stderr = false}));
  size_t dp_ep_rows = 0;
  for (const auto& row : moe["rejected"]) {
    const std::string reason = row.value("reason", std::string());
    if (reason.rfind("DP ", 0) == 0) ++dp_ep_rows;
    EXPECT_NE(reason.find("engine rejects it: " + k_unknown_ascend), std::string::npos) << reason.substr(0, 200);
  }
  EXPECT_GT(dp_ep_rows, 0u);
}

// Issue 16 (quant32): every vLLM release line 0.6 - 0.23 has its own list, read at its tags (git show
// vX.Y.Z:vllm/model_executor/layers/quantization/__init__.py); before, only 0.7.3, 0.8.5, 0.9.0 and 0.16.0 had one and every
// other version refused only a platform's name. Each expectation below is a change between two tags, read by hand in the
// file's history, and the parser each era hands the name to (vllm/engine/arg_utils.py, vllm/config/model.py).
TEST(QuantizationMethods, Issue16_EveryVllmReleaseLineHasItsOwnList) {
  const auto& catalog = engine::shipped_quantization_methods();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  for (int minor = 6; minor <= 23; ++minor)
    for (int patch = 0; patch <= 6; ++patch) {
      const engine::Version at = v(0, minor, patch);
      size_t covering = 0;
      for (const auto& l : catalog->lists) covering += l.version_min <= at && at <= l.version_max;
      EXPECT_EQ(covering, 1u) << at.text();
    }
  const auto refused = [&](int minor, int patch, const std::string& method, const std::string& engine_name = "vllm") {
    return engine::quantization_choice_refusal(*catalog, engine_name, v(0, minor, patch), method);
  };
  // SqueezeLLM left at v0.6.1 (0.6.x: choices=[*QUANTIZATION_METHODS, None], the list's own order).
  EXPECT_EQ(refused(6, 0, "squeezellm"), "");
  EXPECT_EQ(refused(6, 1, "squeezellm"),
            "vllm serve: error: argument --quantization/-q: invalid choice: 'squeezellm' (choose from 'aqlm', 'awq', 'deepspeedfp', 'tpu_int8', 'fp8', "
            "'fbgemm_fp8', 'modelopt', 'marlin', 'gguf', 'gptq_marlin_24', 'gptq_marlin', 'awq_marlin', 'gptq', 'compressed-tensors', 'bitsandbytes', "
            "'qqq', 'experts_int8', 'neuron_quant', None)");
  // AQLM left and MXFP4 came at v0.10.1; Marlin, QQQ and neuron_quant left at v0.10.2 (sorted choices, then 'None').
  EXPECT_EQ(refused(10, 0, "aqlm"), "");
  EXPECT_NE(refused(10, 0, "mxfp4"), "");
  EXPECT_NE(refused(10, 1, "aqlm"), "");
  EXPECT_EQ(refused(10, 1, "mxfp4"), "");
  EXPECT_EQ(refused(10, 2, "marlin"),
            "vllm serve: error: argument --quantization/-q: invalid choice: 'marlin' (choose from 'auto-round', 'awq', 'awq_marlin', 'bitblas', "
            "'bitsandbytes', 'compressed-tensors', 'deepspeedfp', 'experts_int8', 'fbgemm_fp8', 'fp8', 'gguf', 'gptq', 'gptq_bitblas', 'gptq_marlin', "
            "'gptq_marlin_24', 'hqq', 'inc', 'ipex', 'modelopt', 'modelopt_fp4', 'moe_wna16', 'mxfp4', 'petit_nvfp4', 'ptpc_fp8', 'quark', 'rtn', "
            "'torchao', 'tpu_int8', 'None')");
  // From v0.13.0 (vllm PR #30695) argparse takes any name and ModelConfig refuses it: 0.12 argparse, 0.13 ModelConfig.
  EXPECT_EQ(refused(12, 0, "ascend").rfind("vllm serve: error: argument --quantization/-q: invalid choice: 'ascend'", 0), 0u);
  EXPECT_EQ(refused(13, 0, "ascend").rfind(k_unknown_ascend, 0), 0u) << refused(13, 0, "ascend");
  EXPECT_EQ(refused(13, 0, "ascend", "vllm-ascend"), "");
  // AutoRound's name left at v0.15.0 (read through inc); the online shorthands came at v0.20.0; cpu_awq left at v0.23.0.
  // (quant33: at 0.14.x auto-round is listed and deprecated: QuantizationMethods.Issue16_DeprecatedMethodsAreRefusedWithoutTheFlag.)
  EXPECT_EQ(refused(14, 1, "auto-round").find("Unknown quantization method"), std::string::npos);
  EXPECT_EQ(refused(15, 0, "auto-round"),
            "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Unknown quantization method: auto-round. "
            "Must be one of ['awq', 'fp8', 'ptpc_fp8', 'fbgemm_fp8', 'fp_quant', 'modelopt', 'modelopt_fp4', 'bitblas', 'gguf', 'gptq_marlin_24', "
            "'gptq_marlin', 'gptq_bitblas', 'awq_marlin', 'gptq', 'compressed-tensors', 'bitsandbytes', 'experts_int8', 'ipex', 'quark', 'moe_wna16', "
            "'torchao', 'inc', 'mxfp4', 'petit_nvfp4', 'cpu_awq'].");
  EXPECT_NE(refused(19, 1, "fp8_per_block"), "");
  EXPECT_EQ(refused(20, 0, "fp8_per_block"), "");
  EXPECT_EQ(refused(22, 1, "cpu_awq"), "");
  EXPECT_NE(refused(23, 0, "cpu_awq"), "");
  // fit: the version's own list, exit 2 with the engine's words (before: 0.15.0 had no list, so auto-round passed).
  const auto at15 = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.15.0 --quantization auto-round");
  EXPECT_EQ(at15.code, 2) << at15.out.substr(0, 300);
  EXPECT_NE(at15.out.find("Value error, Unknown quantization method: auto-round. Must be one of ['awq', 'fp8', 'ptpc_fp8', "), std::string::npos)
      << at15.out.substr(0, 600);
  const auto at14 = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.14.1 --quantization auto-round --allow-deprecated-quantization");
  EXPECT_NE(at14.code, 2) << at14.out.substr(0, 300);
}

// Issue 16 (quant32): a variant every start command serves without --quantization (AWQ, GPTQ, AutoRound: vLLM reads
// quant_method from the checkpoint) meets no parser; it meets ModelConfig's check of the checkpoint's method. "auto-round"
// left the list at v0.15.0, and INCConfig.override_quantization_method reads it as "inc" from then (inc.py at the tags),
// so an AutoRound checkpoint still loads on 0.21 (the evidence's case), while before 0.9.0 no release knows it. Judged by
// the flag instead, the new lists refused AutoRound on every version from 0.15.
TEST(QuantizationMethods, Issue16_AVariantServedWithoutTheFlagMeetsTheCheckpointCheck) {
  const auto& catalog = engine::shipped_quantization_methods();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  // vLLM 0.8.5's ModelConfig (not a pydantic dataclass then): its QUANTIZATION_METHODS as a Python list.
  EXPECT_EQ(engine::checkpoint_method_refusal(*catalog, "vllm", v(0, 8, 5), "auto-round"),
            "ValueError: Unknown quantization method: auto-round. Must be one of ['aqlm', 'awq', 'deepspeedfp', 'tpu_int8', 'fp8', 'ptpc_fp8', "
            "'fbgemm_fp8', 'modelopt', 'nvfp4', 'marlin', 'bitblas', 'gguf', 'gptq_marlin_24', 'gptq_marlin', 'gptq_bitblas', 'awq_marlin', 'gptq', "
            "'compressed-tensors', 'bitsandbytes', 'qqq', 'hqq', 'experts_int8', 'neuron_quant', 'ipex', 'quark', 'moe_wna16', 'torchao'].");
  for (const auto& at : {v(0, 9, 0), v(0, 13, 0), v(0, 15, 0), v(0, 21, 0), v(0, 23, 0)})
    EXPECT_EQ(engine::checkpoint_method_refusal(*catalog, "vllm", at, "auto-round"), "") << at.text();
  EXPECT_EQ(engine::checkpoint_method_refusal(*catalog, "vllm", v(0, 15, 0), "intel/auto-round").rfind(
                "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Unknown quantization method: intel/auto-round. ", 0),
            0u);
  // The flag itself is still refused from 0.15 (fit --quantization auto-round: QuantizationMethods.Issue16_EveryVllmReleaseLineHasItsOwnList).
  EXPECT_NE(engine::quantization_choice_refusal(*catalog, "vllm", v(0, 21, 0), "auto-round"), "");
  const auto fit_at = [](const std::string& engine) {
    return pftest::json_of(pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine " + engine + " --variant autoround --json", {.with_stderr = false}));
  };
  EXPECT_EQ(fit_at("vllm@0.21.0").value("failure_message", std::string()).find("Unknown quantization method"), std::string::npos);
  EXPECT_EQ(fit_at("vllm@0.8.5").value("failure_message", std::string()).rfind("ValueError: Unknown quantization method: auto-round. Must be one of ['aqlm', ", 0), 0u);
  // An override naming a method no list has is corrupt.
  Json bad = Json::parse(R"({"schema_version": 1, "note": "n", "lists": [
      {"id": "a", "version_min": "0.7.0", "version_max": "0.7.99", "parser": "argparse", "methods": ["awq"], "choices": "'awq', None", "source": "s"}],
      "plugin_methods": [], "checkpoint_overrides": [{"method": "auto-round", "read_as": "inc", "version_min": "0.7.0", "source": "s"}]})");
  const auto parsed = engine::parse_quantization_methods(bad, "x.json");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_NE(parsed.error().message.find("x.json: checkpoint_overrides[auto-round]: read_as 'inc' is in no list from 0.7.0"), std::string::npos) << parsed.error().message;
}

// Issue 16 (quant33): DEPRECATED_QUANTIZATION_METHODS (vllm/model_executor/layers/quantization/__init__.py, read at every
// tag v0.14.0 - v0.23.0 of github.com/efschu/vllm; none at v0.13.0) and ModelConfig._verify_quantization's refusal
// (vllm/config/model.py, the same at v0.14.0, v0.16.0, v0.20.0, v0.23.0): `raise ValueError("The quantization method %s is
// deprecated and will be removed in future versions of vLLM. To bypass, set `--allow-deprecated-quantization`.",
// self.quantization)`: two arguments, so str() prints the tuple, unformatted, inside pydantic's ValidationError. The flag
// exists from v0.14.0 (arg_utils.py; absent at v0.13.0).
TEST(QuantizationMethods, Issue16_DeprecatedMethodsAreRefusedWithoutTheFlag) {
  const auto& catalog = engine::shipped_quantization_methods();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  const auto refused = [&](int minor, int patch, const std::string& method, engine::DeprecatedQuantization d = engine::DeprecatedQuantization::refused) {
    return engine::quantization_choice_refusal(*catalog, "vllm", v(0, minor, patch), method, d);
  };
  const std::string deprecated_fbgemm =
      "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, ('The quantization method %s is deprecated and will "
      "be removed in future versions of vLLM. To bypass, set `--allow-deprecated-quantization`.', 'fbgemm_fp8')";
  EXPECT_EQ(refused(13, 0, "fbgemm_fp8"), "");  // no deprecation list before 0.14.0
  EXPECT_EQ(refused(14, 0, "fbgemm_fp8"), deprecated_fbgemm);
  EXPECT_EQ(refused(23, 0, "fbgemm_fp8"), deprecated_fbgemm);
  EXPECT_EQ(refused(23, 0, "fbgemm_fp8", engine::DeprecatedQuantization::allowed), "");
  // By version: auto-round and hqq deprecated at 0.14 only (gone from the list at 0.15: "Unknown" first); bitblas to 0.15;
  // experts_int8 to 0.19 and listed, not deprecated, at 0.20; ptpc_fp8 to 0.18.
  EXPECT_NE(refused(14, 1, "auto-round").find("'auto-round')"), std::string::npos);
  EXPECT_NE(refused(15, 0, "auto-round").find("Unknown quantization method: auto-round"), std::string::npos);
  EXPECT_NE(refused(15, 1, "bitblas").find("is deprecated"), std::string::npos);
  EXPECT_NE(refused(19, 1, "experts_int8").find("is deprecated"), std::string::npos);
  EXPECT_EQ(refused(20, 0, "experts_int8"), "");
  EXPECT_NE(refused(18, 1, "ptpc_fp8").find("is deprecated"), std::string::npos);
  EXPECT_EQ(refused(23, 0, "fp8"), "");
  // A checkpoint's method meets the same check: auto-round at 0.14 (before INC read it, from 0.15).
  EXPECT_NE(engine::checkpoint_method_refusal(*catalog, "vllm", v(0, 14, 1), "auto-round").find("'auto-round')"), std::string::npos);
  EXPECT_EQ(engine::checkpoint_method_refusal(*catalog, "vllm", v(0, 14, 1), "auto-round", engine::DeprecatedQuantization::allowed), "");
  // fit: the flag is exit 2 with ModelConfig's words; --allow-deprecated-quantization lets it through, and a version before
  // 0.14.0 refuses that flag itself (argparse, exit 2); a variant served from its checkpoint is exit 1 with the message.
  const auto no_flag = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.23.0 --quantization fbgemm_fp8");
  EXPECT_EQ(no_flag.code, 2) << no_flag.out.substr(0, 300);
  EXPECT_NE(no_flag.out.find("('The quantization method %s is deprecated"), std::string::npos) << no_flag.out.substr(0, 400);
  const auto with_flag = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.23.0 --quantization fbgemm_fp8 --allow-deprecated-quantization");
  // quant34: fit now quotes vLLM's warning ("... is deprecated and will be removed ..."); ModelConfig's refusal is what must be absent.
  EXPECT_EQ(with_flag.out.find("To bypass, set"), std::string::npos) << with_flag.out.substr(0, 400);
  EXPECT_NE(with_flag.out.find("--allow-deprecated-quantization: vllm 0.23.0 deprecates fbgemm_fp8; with the flag it loads"), std::string::npos)
      << with_flag.out.substr(0, 400);
  const auto too_old = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.13.0 --allow-deprecated-quantization");
  EXPECT_EQ(too_old.code, 2) << too_old.out.substr(0, 300);
  EXPECT_NE(too_old.out.find("unrecognized arguments: --allow-deprecated-quantization"), std::string::npos) << too_old.out.substr(0, 400);
  const auto variant = pftest::json_of(pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.14.1 --variant autoround --json", {.with_stderr = false}));
  EXPECT_NE(variant.value("failure_message", std::string()).find("'auto-round')"), std::string::npos) << variant.dump().substr(0, 400);
  const auto variant_allowed = pftest::json_of(
      pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.14.1 --variant autoround --allow-deprecated-quantization --json", {.with_stderr = false}));
  EXPECT_EQ(variant_allowed.value("failure_message", std::string()).find("is deprecated"), std::string::npos);
  // logs: the refusal in a log is classified (it said "no failure found" before).
  const std::string dir = pftest::scratch_dir("quant33-logs");
  std::ofstream(dir + "/deprecated.log") << "INFO 12-07 03:00:00 [api_server.py:1] vLLM API server version 0.23.0\n" << deprecated_fbgemm
                                         << " [type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]\n";
  const auto logged = pftest::run_cli("logs " + dir + "/deprecated.log --json", {.with_stderr = false});
  EXPECT_NE(logged.out.find("quant-deprecated-method"), std::string::npos) << logged.out.substr(0, 600);
  EXPECT_NE(logged.out.find("unsupported_quantization"), std::string::npos) << logged.out.substr(0, 600);
  // A "deprecated" key on an argparse-era list is corrupt (vLLM has no such check before 0.14.0).
  Json bad = Json::parse(R"({"schema_version": 1, "note": "n", "lists": [
      {"id": "a", "version_min": "0.7.0", "version_max": "0.7.99", "parser": "argparse", "methods": ["awq"], "deprecated": ["awq"], "choices": "'awq', None", "source": "s"}],
      "plugin_methods": []})");
  const auto parsed = engine::parse_quantization_methods(bad, "x.json");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_NE(parsed.error().message.find("lists[a]: deprecated needs parser model_config"), std::string::npos) << parsed.error().message;
}
