// Issue 16, remaining "done when" items: validate applies a variant's engine-version rules like fit and plan
// do; the recognizer reads real descriptor files; bad descriptors and bad variants get the documented exit.
// The case file tests/fixtures/quant/version_rules_cases.jsonl is hand-written (see its README).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "base/json_util.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

std::string fixture(const std::string& rel) { return std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/quant/" + rel; }

const Json* row_of(const Json& report, const std::string& id) {
  for (const auto& r : report["rows"])
    if (r["id"] == id) return &r;
  return nullptr;
}

// The strings vLLM-Ascend / vLLM raise, copied by hand from their sources at each tag (the same text the
// docs/quant-variants.md "Versions" table cites):
//   vllm_ascend/quantization/quantizer.py (v0.9.0, v0.9.2rc1) and utils.py (v0.11.0): "Currently, vLLM Ascend only
//   supports following quant types:" + str(list(table keys));
//   modelslim_config.py create_scheme_for_layer (v0.12.0rc1 .. v0.19.x; 310P registry from v0.15.0rc1):
//   "Currently, vLLM Ascend doesn't support {quant_type} for {layer_type}.";
//   vllm/model_executor/layers/quantization (fp8 get_min_capability 75 = Turing), V100 is capability 70.
const std::string k_only = "NotImplementedError: Currently, vLLM Ascend only supports following quant types:";

struct Expect {
  std::string id;
  std::string message;  // "" = the engine loads it (the verdict is not unsupported_quantization)
  std::string fit_args;  // the same deployment as `fit` flags
};

const std::vector<Expect>& expectations() {
  static const std::vector<Expect> table = {
      {"q17-w4a8-v0.9.0", k_only + "['W8A8', 'W8A8_DYNAMIC']",
       "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.9.0 --num-devices 2 --max-model-len 8192 --variant w4a8_dynamic"},
      {"q17-w4a8-v0.9.1rc2", "", "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.9.1rc2 --num-devices 2 --max-model-len 8192 --variant w4a8_dynamic"},
      {"q17-w4a8-v0.9.2rc1", k_only + "['W8A8', 'W8A8_DYNAMIC', 'C8']",
       "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.9.2rc1 --num-devices 2 --max-model-len 8192 --variant w4a8_dynamic"},
      {"q17-w4a8-v0.10.0rc1", "", "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.10.0rc1 --num-devices 2 --max-model-len 8192 --variant w4a8_dynamic"},
      {"q17-w4a16-moe-v0.11.0", k_only + "['W4A8_DYNAMIC', 'W4A4_FLATQUANT_DYNAMIC', 'W8A8', 'W8A8_DYNAMIC', 'C8']",
       "Qwen/Qwen3-30B-A3B --device 910B4 --engine vllm-ascend@0.11.0 --num-devices 1 --max-model-len 8192 --variant w4a16"},
      {"q17-w4a16-moe-v0.12.0rc1", "", "Qwen/Qwen3-30B-A3B --device 910B4 --engine vllm-ascend@0.12.0rc1 --num-devices 1 --max-model-len 8192 --variant w4a16"},
      {"q17-w4a16-dense-v0.12.0rc1", "NotImplementedError: Currently, vLLM Ascend doesn't support W4A16 for linear.",
       "Qwen/Qwen3-32B --device 910B4 --engine vllm-ascend@0.12.0rc1 --num-devices 2 --max-model-len 8192 --variant w4a16"},
      {"q17-310p-w8a8dyn-v0.15.0rc1", "NotImplementedError: Currently, vLLM Ascend doesn't support W8A8_DYNAMIC for linear.",
       "Qwen/Qwen3-8B --device 310P3 --engine vllm-ascend@0.15.0rc1 --num-devices 1 --max-model-len 8192 --variant w8a8_dynamic"},
      {"q17-310p-w8a8-v0.15.0rc1", "", "Qwen/Qwen3-8B --device 310P3 --engine vllm-ascend@0.15.0rc1 --num-devices 1 --max-model-len 8192 --variant w8a8"},
      // A checkpoint whose own descriptor is fp8_block (config.json quantization_config) meets that variant's rules.
      {"q17-fp8ckpt-v100", "ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 75. Current capability: 70.",
       "Qwen/Qwen3-32B-FP8 --device V100-SXM2-32G --engine vllm@0.10.0 --num-devices 2 --max-model-len 8192"},
  };
  return table;
}

}  // namespace

// (a) A case whose quantization the engine version it names rejects is predicted unsupported_quantization with
// the engine's own message (JSON predicted_failure_message, text under the verdict), like `fit --variant` at that
// version; a version that accepts it is sized. Before this change validate sized every case with the variant's
// storage and never consulted the rules, so all ten rows read "fits" or a memory verdict.
TEST(Quant17, Issue16_ValidateAppliesTheVariantsEngineVersionRules) {
  const auto r = pftest::run_cli("validate " + fixture("version_rules_cases.jsonl") + " --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  auto j = parse_json(r.out, "stdout");
  ASSERT_TRUE(j.has_value()) << r.out.substr(0, 400);
  EXPECT_EQ((*j)["evaluated"].get<int>(), 10) << (*j)["skipped"].dump();
  for (const auto& e : expectations()) {
    SCOPED_TRACE(e.id);
    const Json* row = row_of(*j, e.id);
    ASSERT_NE(row, nullptr);
    const auto fit = pftest::run_cli("fit " + e.fit_args + " --json", {.with_stderr = false});
    auto f = parse_json(fit.out, "stdout");
    ASSERT_TRUE(f.has_value()) << fit.out.substr(0, 300);
    if (e.message.empty()) {
      EXPECT_NE((*row)["predicted_failure"], "unsupported_quantization") << (*row).value("predicted_failure_message", "");
      EXPECT_FALSE(row->contains("predicted_failure_message") && (*row)["predicted_failure"] == "unsupported_quantization");
      EXPECT_NE((*f)["failure"], "unsupported_quantization") << (*f)["failure_message"];
      continue;
    }
    EXPECT_EQ((*row)["predicted_failure"], "unsupported_quantization");
    EXPECT_EQ((*row)["predicted_fits"], false);
    EXPECT_EQ((*row).value("predicted_failure_message", ""), e.message);
    // fit of the same deployment says the same, and exits 1 (does not fit), as documented.
    EXPECT_EQ(fit.code, 1);
    EXPECT_EQ((*f)["failure"], "unsupported_quantization");
    EXPECT_EQ((*f)["failure_message"], e.message);
    // A rejected case has no memory comparison: the engine never got that far.
    EXPECT_TRUE((*row)["fields"].empty()) << (*row)["fields"].dump();
  }
  // Every hand-written verdict is the predicted one: 10 of 10 (the file records the engines' behaviour by source).
  EXPECT_EQ((*j)["verdicts"]["correct"].get<int>(), 10);

  const auto text = pftest::run_cli("validate " + fixture("version_rules_cases.jsonl"), {.with_stderr = false});
  EXPECT_NE(text.out.find(k_only + "['W8A8', 'W8A8_DYNAMIC', 'C8']"), std::string::npos) << text.out.substr(0, 600);
}
