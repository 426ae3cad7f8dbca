// Session 34 (issue 16, quant34): a published quantized checkpoint's hub id is MODEL for inspect and plan as for fit (one
// resolution, cli/model_arg); plan's speculative start command takes the form the named vLLM version parses (V0's
// --speculative-model / --num-speculative-tokens before 0.8.2, data/engines/flag_versions.json speculative_legacy); fit
// says what --allow-deprecated-quantization does, and a fix naming a deprecated method carries the flag. Most tests run
// the real binary.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "engine/flag_versions.hpp"
#include "../test_support.hpp"

namespace {

nlohmann::json run_json(const std::string& args, int code) {
  const auto r = pftest::run_cli(args + " --json", {.with_stderr = false});
  EXPECT_EQ(r.code, code) << args << "\n" << r.out.substr(0, 400);
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 400);
  return j;
}

std::string joined(const std::vector<preflight::engine::GivenFlag>& args) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : " ") + a.flag + (a.value.empty() ? "" : " " + a.value);
  return out;
}

}  // namespace

// Issue 16: `fit vllm-ascend/Qwen3-32B-W8A8` sized the published checkpoint (ux33) while `inspect` and `plan` refused the
// same id ("not in the catalogue", exit 2). All three now read it as Qwen/Qwen3-32B in the variant it is published in
// (data/engines/quantized_checkpoints.json: msModelSlim W8A8, --variant w8a8): inspect gives the variant's weights,
// plan's rows start that checkpoint, and fit of plan's row has the row's KV tokens.
TEST(Quant34, Issue16_InspectAndPlanTakeAPublishedCheckpointId) {
  const auto by_id = run_json("inspect vllm-ascend/Qwen3-32B-W8A8", 0);
  const auto by_variant = run_json("inspect Qwen/Qwen3-32B --variant w8a8", 0);
  ASSERT_TRUE(by_id.contains("weights")) << by_id.dump().substr(0, 300);
  EXPECT_EQ(by_id["weights"], by_variant["weights"]);
  EXPECT_NE(by_id["assumptions"].dump().find("vllm-ascend/Qwen3-32B-W8A8: not on this machine"), std::string::npos) << by_id["assumptions"];
  const auto refused = pftest::run_cli("inspect vllm-ascend/Qwen3-32B-W8A8 --variant awq");
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("is published as --variant w8a8"), std::string::npos) << refused.out;

  const auto plan = run_json("plan vllm-ascend/Qwen3-32B-W8A8 --devices 910B4", 0);
  ASSERT_FALSE(plan["recommended"].empty());
  const auto& row = plan["recommended"][0];
  EXPECT_EQ(row["variant_id"], "w8a8") << row.dump().substr(0, 300);
  const std::string serve = row["launch"]["serve"].get<std::string>();
  ASSERT_EQ(serve.rfind("vllm serve vllm-ascend/Qwen3-32B-W8A8 ", 0), 0u) << serve;
  // The same rows as the base model with the variant named.
  const auto base = run_json("plan Qwen/Qwen3-32B --devices 910B4 --variant w8a8", 0);
  EXPECT_EQ(base["recommended"][0]["kv_cache_tokens"], row["kv_cache_tokens"]);
  // fit of the row's own start line: the row's KV tokens.
  const auto fit = run_json("fit" + serve.substr(std::string("vllm serve").size()) + " --device 910B4", 0);
  EXPECT_EQ(fit["kv_cache"]["tokens"], row["kv_cache_tokens"]);
  const auto other = pftest::run_cli("plan vllm-ascend/Qwen3-32B-W8A8 --devices 910B4 --variant awq");
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_NE(other.out.find("give the base model Qwen/Qwen3-32B with --variant awq"), std::string::npos) << other.out;
}

// Issue 16: the speculative flags of each vLLM version (vllm/engine/arg_utils.py and vllm/config.py at the tags, efschu/vllm):
// from 0.8.2 --speculative-config as given; before it V0's flags. MTP has a V0 form from 0.7.3 only (vLLM PR #12755), for a
// deepseek_v3 target only, from --num-speculative-tokens without --speculative-model; ngram is '[ngram]' and needs
// --ngram-prompt-lookup-max (V0 raises "ngram_prompt_lookup_max=None must be > 0"); eagle3 has no V0 form.
TEST(Quant34, Issue16_SpeculativeArgsTakeTheVersionsForm) {
  using preflight::engine::speculative_serve_args;
  const auto& c = preflight::engine::shipped_flag_versions();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  const auto v = [](const char* text) { return *preflight::engine::parse_version(text); };
  const std::string mtp = R"({"method": "mtp", "num_speculative_tokens": 1})";
  struct Case {
    const char* engine;
    const char* version;
    std::string config;
    const char* model_type;
    std::string args;      // expected, "" when refused
    const char* refusal;   // a fragment of the refusal
  } cases[] = {
      {"vllm", "0.8.2", mtp, "deepseek_v3", "--speculative-config " + mtp, ""},
      {"vllm", "0.7.3", mtp, "deepseek_v3", "--num-speculative-tokens 1", ""},
      {"vllm-ascend", "0.7.3", mtp, "deepseek_v3", "--num-speculative-tokens 1", ""},
      {"vllm", "0.7.2", mtp, "deepseek_v3", "", "V0 runs it from 0.7.3"},
      {"vllm", "0.8.1", mtp, "qwen3_next", "", "runs for model_type deepseek_v3 only, not qwen3_next"},
      {"vllm", "0.7.3", R"({"model": "org/draft-1B", "num_speculative_tokens": 4, "draft_tensor_parallel_size": 1})", "llama",
       "--speculative-model org/draft-1B --speculative-draft-tensor-parallel-size 1 --num-speculative-tokens 4", ""},
      {"vllm", "0.6.0", R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4})", "llama",
       "--speculative-model [ngram] --num-speculative-tokens 3 --ngram-prompt-lookup-max 4", ""},
      {"vllm", "0.8.1", R"({"method": "ngram", "num_speculative_tokens": 3})", "llama", "", "needs \"prompt_lookup_max\""},
      {"vllm", "0.8.1", R"({"method": "eagle3", "model": "org/x-eagle3", "num_speculative_tokens": 2})", "llama", "", "serve no 'eagle3'"},
      {"vllm", "0.7.3", R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4, "disable_padded_drafter_batch": true})", "llama", "",
       "none of V0's flags takes it"},
      {"llama.cpp", "0.7.3", mtp, "deepseek_v3", "--speculative-config " + mtp, ""},
  };
  for (const auto& k : cases) {
    const auto args = speculative_serve_args(*c, k.engine, v(k.version), k.config, k.model_type);
    if (k.args.empty()) {
      ASSERT_FALSE(args.has_value()) << k.engine << "@" << k.version << " " << k.config;
      EXPECT_NE(args.error().message.find(k.refusal), std::string::npos) << args.error().message;
      EXPECT_NE(args.error().message.find("data/engines/flag_versions.json"), std::string::npos) << args.error().message;
    } else {
      ASSERT_TRUE(args.has_value()) << args.error().describe();
      EXPECT_EQ(joined(*args), k.args) << k.engine << "@" << k.version << " " << k.config;
    }
  }
}

// Through plan: Llama-3.1-8B on one H100 with n-gram speculation. vLLM 0.7.3's row starts with V0's flags ('[ngram]' quoted
// for the shell), 0.9.2's with --speculative-config as given; eagle3 on 0.7.3 is refused with the reason (exit 2).
TEST(Quant34, Issue16_PlanWritesTheSpeculativeFormOfTheVersion) {
  const std::string llama = pftest::shared_path("models/meta-llama__Meta-Llama-3.1-8B");
  const std::string config = R"({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4})";
  const auto old_row = run_json("plan " + llama + " --devices H100 --engine vllm@0.7.3 --max-devices 1 --context 8192 --speculative-config '" + config + "'", 0);
  ASSERT_FALSE(old_row["recommended"].empty());
  const std::string old_serve = old_row["recommended"][0]["launch"]["serve"].get<std::string>();
  EXPECT_NE(old_serve.find(" --speculative-model '[ngram]' --num-speculative-tokens 3 --ngram-prompt-lookup-max 4"), std::string::npos) << old_serve;
  EXPECT_EQ(old_serve.find("--speculative-config"), std::string::npos) << old_serve;
  const auto new_row = run_json("plan " + llama + " --devices H100 --engine vllm@0.9.2 --max-devices 1 --context 8192 --speculative-config '" + config + "'", 0);
  ASSERT_FALSE(new_row["recommended"].empty());
  const std::string new_serve = new_row["recommended"][0]["launch"]["serve"].get<std::string>();
  EXPECT_NE(new_serve.find(" --speculative-config '" + config + "'"), std::string::npos) << new_serve;
  // The V0 start line, pasted into fit on 0.7.3 (which takes V0's flags, --ngram-prompt-lookup-max among them): the row's KV tokens.
  const auto fit = run_json("fit" + old_serve.substr(std::string("vllm serve").size()) + " --device H100 --engine vllm@0.7.3", 0);
  EXPECT_EQ(fit["kv_cache"]["tokens"], old_row["recommended"][0]["kv_cache_tokens"]);
  EXPECT_NE(fit["assumptions"].dump().find("speculative decoding (ngram, 3 tokens)"), std::string::npos) << fit["assumptions"];
  // On 0.9.2 V0's n-gram flag is argparse's "unrecognized arguments" (exit 2), as the other V0 speculative flags are.
  const auto late = pftest::run_cli("fit " + llama + " --device H100 --engine vllm@0.9.2 --speculative-model '[ngram]' --ngram-prompt-lookup-max 4");
  EXPECT_EQ(late.code, 2) << late.out;
  EXPECT_NE(late.out.find("vllm 0.9.2 has no --"), std::string::npos) << late.out;
  const auto eagle3 = pftest::run_cli("plan " + llama + R"( --devices H100 --engine vllm@0.7.3 --speculative-config '{"method": "eagle3", "model": "org/x-eagle3", "num_speculative_tokens": 2}')");
  EXPECT_EQ(eagle3.code, 2) << eagle3.out;
  EXPECT_NE(eagle3.out.find("--speculative-config: speculative method 'eagle3' on vllm 0.7.3"), std::string::npos) << eagle3.out;
  // The --device form: the model's row is rejected with the same reason (exit 1), as a config vLLM refuses for a model is.
  const auto sweep = run_json(R"(plan --device H100 --engine vllm@0.7.3 --model 'meta-llama/Llama-3.2-1B' --speculative-config '{"method": "eagle3", "model": "org/x-eagle3", "num_speculative_tokens": 2}')",
                              1);
  ASSERT_EQ(sweep["rejected"].size(), 1u) << sweep.dump().substr(0, 400);
  EXPECT_EQ(sweep["rejected"][0]["reason"].get<std::string>().rfind("engine rejects it: speculative method 'eagle3' on vllm 0.7.3: vLLM before 0.8.2", 0), 0u)
      << sweep["rejected"][0]["reason"];
}

// Issue 16: fit echoed --allow-deprecated-quantization nowhere (only the provenance in --json). It now says what the flag does
// on the deployment. vLLM 0.14.0's DEPRECATED_QUANTIZATION_METHODS has auto-round (data/engines/quantization_methods.json;
// not at 0.15.0): the published AutoRound checkpoint (quant_method auto-round, served without --quantization) loads only
// with the flag, with vLLM's warning, and without it gets ModelConfig's ValueError; on 0.15.0, and on a model with no
// quantization method, the flag changes nothing, and fit says so.
TEST(Quant34, Issue16_DeprecatedQuantizationIsSaid) {
  const std::string autoround = "fit Intel/Qwen3-8B-int4-AutoRound --device H100 --max-model-len 4096";
  const auto needed = run_json(autoround + " --engine vllm@0.14.0 --allow-deprecated-quantization", 0);
  EXPECT_NE(needed["assumptions"].dump().find("--allow-deprecated-quantization: vllm 0.14.0 deprecates auto-round; with the flag it loads, vLLM logging "
                                              "\\\"The quantization method auto-round is deprecated and will be removed in future versions of vLLM.\\\""),
            std::string::npos)
      << needed["assumptions"];
  const auto without = pftest::run_cli(autoround + " --engine vllm@0.14.0");
  EXPECT_EQ(without.code, 1) << without.out;
  EXPECT_NE(without.out.find("To bypass, set `--allow-deprecated-quantization`.', 'auto-round')"), std::string::npos) << without.out;
  const auto later = run_json(autoround + " --engine vllm@0.15.0 --allow-deprecated-quantization", 0);
  EXPECT_NE(later["assumptions"].dump().find("--allow-deprecated-quantization: vllm 0.15.0 does not deprecate auto-round; the flag changes nothing here"),
            std::string::npos)
      << later["assumptions"];
  const auto plain = run_json("fit Qwen/Qwen3-8B --device H100 --max-model-len 4096 --engine vllm@0.14.0 --allow-deprecated-quantization", 0);
  EXPECT_NE(plain["assumptions"].dump().find("--allow-deprecated-quantization: no quantization method is loaded on vllm 0.14.0"), std::string::npos)
      << plain["assumptions"];
}

// The speculative_legacy section is checked as the file's records are: each fault named with the file and where it is.
TEST(Quant34, Issue16_CorruptSpeculativeLegacyIsRefused) {
  const auto parse = [](const std::string& section) {
    auto json = preflight::parse_json(R"({"schema_version": 1, "note": "n", "records": [{"id": "--speculative-config", "version_min": "0.8.2", "source": "s"}],
                                          "speculative_legacy": )" + section + "}",
                                      "f.json");
    return json ? preflight::engine::parse_flag_versions(*json, "f.json") : preflight::Expected<preflight::engine::FlagVersionCatalog>(json.error());
  };
  const std::string keys = R"("keys": [{"key": "model", "flag": "--speculative-model"}])";
  const std::string good = R"({"id": "a", "methods": ["ngram"], "version_min": "0.6.0", "speculative_model": "[ngram]", "source": "s"})";
  const auto ok = parse("{" + keys + R"(, "methods": [)" + good + "]}");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  ASSERT_EQ(ok->legacy_speculative_methods.size(), 1u);
  EXPECT_EQ(ok->legacy_speculative_methods[0].speculative_model, "[ngram]");
  const struct {
    std::string section, fragment;
  } bad[] = {
      {"[]", "speculative_legacy: expected an object"},
      {"{" + keys + R"(, "methods": [)" + good + ", " + good + "]}", "duplicate id"},
      {"{" + keys + R"(, "methods": [{"id": "b", "methods": ["ngram"], "version_min": "0.6.0", "speculative_model": "", "source": "s"}, )" + good + "]}",
       "method 'ngram' is also in b"},
      {"{" + keys + R"(, "methods": [{"id": "a", "methods": [], "version_min": "0.6.0", "speculative_model": "", "source": "s"}]})", "methods must not be empty"},
      {"{" + keys + R"(, "methods": [{"id": "a", "methods": ["x"], "version_min": "soon", "speculative_model": "", "source": "s"}]})", "is not a version"},
      {"{" + keys + R"(, "methods": [{"id": "a", "methods": ["x"], "version_min": "0.6.0", "speculative_model": "", "source": ""}]})", "source must not be empty"},
      {R"({"keys": [{"key": "model", "flag": "speculative-model"}], "methods": []})", "flag spelled --name"},
      {R"({"keys": [{"key": "model", "flag": "--a"}, {"key": "model", "flag": "--b"}], "methods": []})", "keys[model]: duplicate key"},
      {"{" + keys + R"(, "methods": [{"id": "a", "methods": ["x"], "version_min": "0.6.0", "speculative_model": "", "source": "s", "extra": 1}]})", "extra"},
  };
  for (const auto& b : bad) {
    const auto parsed = parse(b.section);
    ASSERT_FALSE(parsed.has_value()) << b.section;
    EXPECT_NE(parsed.error().describe().find(b.fragment), std::string::npos) << parsed.error().describe();
    EXPECT_NE(parsed.error().describe().find("f.json"), std::string::npos) << parsed.error().describe();
  }
}
