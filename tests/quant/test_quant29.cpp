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

// v0.16.0's QuantizationMethods (22 names), sorted by hand as the config-dataclass parser sorts a Literal, then 'None'.
const std::string k_v016_choices =
    "'awq', 'awq_marlin', 'bitsandbytes', 'compressed-tensors', 'cpu_awq', 'experts_int8', 'fbgemm_fp8', 'fp8', 'fp_quant', 'gguf', 'gptq', "
    "'gptq_marlin', 'inc', 'modelopt', 'modelopt_fp4', 'modelopt_mxfp8', 'moe_wna16', 'mxfp4', 'petit_nvfp4', 'ptpc_fp8', 'quark', 'torchao', 'None'";

engine::Version v(int major, int minor, int patch) { return engine::Version{major, minor, patch}; }

}  // namespace

TEST(QuantizationMethods, Issue16_ShippedListsAreTheEnginesOwn) {
  const auto& catalog = engine::shipped_quantization_methods();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  ASSERT_EQ(catalog->lists.size(), 4u);
  for (const auto& l : catalog->lists) EXPECT_FALSE(l.source.empty()) << l.id;
  // The refusal each list gives is the printed line, choices and all.
  EXPECT_EQ(engine::quantization_choice_refusal(*catalog, "vllm-ascend", v(0, 8, 5), "ascend"), k_issue902);
  EXPECT_EQ(engine::quantization_choice_refusal(*catalog, "vllm", v(0, 7, 3), "ascend"),
            "vllm serve: error: argument --quantization/-q: invalid choice: 'ascend' (choose from " + k_issue2819_choices + ")");
  EXPECT_EQ(engine::quantization_choice_refusal(*catalog, "vllm", v(0, 16, 0), "auto-round"),
            "vllm serve: error: argument --quantization/-q: invalid choice: 'auto-round' (choose from " + k_v016_choices + ")");
  // vLLM-Ascend from 0.9.0 prints its 'ascend' after vLLM's choices.
  EXPECT_EQ(engine::quantization_choice_refusal(*catalog, "vllm-ascend", v(0, 16, 0), "gptq_marlin_24"),
            "vllm serve: error: argument --quantization/-q: invalid choice: 'gptq_marlin_24' (choose from " + k_v016_choices + ", 'ascend')");
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
  EXPECT_EQ(uncovered.rfind("vllm serve: error: argument --quantization/-q: invalid choice: 'ascend' (choose from " + k_v016_choices + ")", 0), 0u) << uncovered;
  EXPECT_NE(uncovered.find("[the choices of vllm-0.16.0: data/engines/quantization_methods.json has no list for vllm 0.30.99]"), std::string::npos) << uncovered;
}

TEST(QuantizationMethods, Issue16_BadListsAreRefused) {
  const Json good = Json::parse(R"({"schema_version": 1, "note": "n", "lists": [
      {"id": "a", "version_min": "0.7.0", "version_max": "0.7.99", "methods": ["awq", "fp8"], "choices": "'awq', 'fp8', None", "source": "s"}],
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
  const auto cuda = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --quantization ascend");
  EXPECT_EQ(cuda.code, 2) << cuda.out.substr(0, 300);
  EXPECT_NE(cuda.out.find("--quantization: vllm serve: error: argument --quantization/-q: invalid choice: 'ascend' (choose from 'awq', "), std::string::npos)
      << cuda.out.substr(0, 400);
  const auto old_ascend = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --engine vllm-ascend@0.8.5 --quantization ascend");
  EXPECT_EQ(old_ascend.code, 2);
  EXPECT_NE(old_ascend.out.find("--quantization: " + k_issue902 + "\n"), std::string::npos) << old_ascend.out.substr(0, 600);
  const auto folded = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.16.0 --quantization auto-round");
  EXPECT_EQ(folded.code, 2);
  EXPECT_NE(folded.out.find("invalid choice: 'auto-round' (choose from " + k_v016_choices + ")"), std::string::npos) << folded.out.substr(0, 600);
  for (const char* taken : {"--device 910B4 --engine vllm-ascend@0.9.1 --quantization ascend", "--device H100 --engine vllm@0.16.0 --quantization fp8"}) {
    const auto r = pftest::run_cli(std::string("fit Qwen/Qwen3-8B ") + taken + " --json", {.with_stderr = false});
    EXPECT_NE(r.code, 2) << taken << ": " << r.out.substr(0, 300);
    EXPECT_EQ(r.out.find("invalid choice"), std::string::npos) << taken;
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
  ASSERT_EQ(message.rfind("vllm serve: error: argument --quantization/-q: invalid choice: 'ascend' (choose from ", 0), 0u) << message;
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
    EXPECT_NE(reason.find("engine rejects it: vllm serve: error: argument --quantization/-q: invalid choice: 'ascend'"), std::string::npos) << reason.substr(0, 200);
  }
  EXPECT_GT(dp_ep_rows, 0u);
}
