// Issue 16 (quant30): variant rules that can never fire are gone (vLLM's argument parser refuses `--quantization ascend`
// on plain vLLM before ModelConfig's "Unknown quantization method: ascend" could be raised); msModelSlim's adapters are
// matched by the family msModelSlim keys them on; GGUF on vLLM from 0.24.0 needs the out-of-tree plugin.
//
// Expected values are written by hand from the sources named at each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "engine/quantization_methods.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "model/quant_variant.hpp"
#include "../variant_support.hpp"

using namespace preflight;

namespace {

engine::Version version(const std::string& text) {
  const auto v = engine::parse_version(text);
  EXPECT_TRUE(v.has_value()) << text;
  return v.value_or(engine::Version{});
}

// The versions at which the parser's answer for one method can change: the ends of every list, the version right after
// each list's end (no list covers it), each plugin method's first version, and `from`. Between two of them the answer is
// the same (engine::quantization_choice_refusal reads only those bounds).
std::vector<engine::Version> parser_breakpoints(const engine::QuantizationMethodCatalog& catalog, const engine::Version& from) {
  std::vector<engine::Version> out = {from};
  for (const auto& l : catalog.lists) {
    out.push_back(l.version_min);
    out.push_back(l.version_max);
    out.push_back({l.version_max.major, l.version_max.minor, l.version_max.patch + 1});
  }
  for (const auto& p : catalog.plugin_methods) out.push_back(p.version_min);
  return out;
}

}  // namespace

// Every rejection rule of data/variants/quant_variants.json on vLLM or vLLM-Ascend must be able to fire: at some engine
// version inside the rule's range the parser takes the variant's --quantization, so the engine reaches the code whose
// message the rule quotes. Before quant30, nine variants (w8a8, w8a8_dynamic, w4a8_dynamic, w4a16, w8a8_mxfp8,
// w4a4_mxfp4, w4a16_mxfp4, w4a8_mxfp, w8a16_ascend) carried a rule on plain vLLM quoting ModelConfig's "ValueError:
// Unknown quantization method: ascend. Must be one of [...]": `ascend` is a choice of vLLM-Ascend's parser only
// (vllm_ascend/platform.py appends it from v0.9.0rc1), so plain vLLM's argparse refuses it first at every version and the
// rule could never be what a user sees. This test failed on them.
TEST(QuantVariantRules, Issue16_EveryRejectionRuleCanFireAfterTheParser) {
  const auto& methods = engine::shipped_quantization_methods();
  ASSERT_TRUE(methods.has_value()) << methods.error().describe();
  const auto& variants = model::load_variant_catalog();
  ASSERT_TRUE(variants.has_value()) << variants.error().describe();
  size_t checked = 0;
  for (const auto& v : variants->variants) {
    for (const auto& r : v.rules) {
      if (r.status != "rejected" || (r.engine != "vllm" && r.engine != "vllm-ascend") || v.engine_quantization.empty()) continue;
      const engine::Version from = r.from_version.empty() ? engine::Version{} : version(r.from_version);
      const std::optional<engine::Version> before = r.before_version.empty() ? std::nullopt : std::optional(version(r.before_version));
      bool parser_takes_it = false;
      for (const auto& at : parser_breakpoints(*methods, from)) {
        if (at < from || (before && !(at < *before))) continue;
        parser_takes_it |= engine::quantization_choice_refusal(*methods, r.engine, at, v.engine_quantization).empty();
      }
      EXPECT_TRUE(parser_takes_it) << v.id << " on " << r.engine << " [" << r.from_version << ", " << r.before_version
                                   << "): the parser refuses --quantization " << v.engine_quantization << " throughout, so \"" << r.message
                                   << "\" never fires";
      ++checked;
    }
  }
  EXPECT_GT(checked, 30u);  // the vLLM-Ascend version rules (W4A8_DYNAMIC, W4A16, the MX schemes, the 310P registry) are read
}

// The engine's refusal is what `vllm serve --quantization ascend` prints on plain vLLM: from 0.13 ModelConfig's
// ValidationError (QuantizationMethods at v0.16.0 in the Literal's order, read at the tag by quant32; the parser has no
// choices since vllm PR #30695), up to 0.12 argparse's line (0.12.0: its own list since quant32, sorted, then 'None');
// fit gives it for every variant whose dead rule was removed, the variant's own rules never reached.
TEST(QuantVariantRules, Issue16_ParserLineComesFirstForAscendVariantsOnVllm) {
  const std::string v016 = "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, Unknown quantization method: "
                           "ascend. Must be one of ['awq', 'fp8', 'ptpc_fp8', 'fbgemm_fp8', 'fp_quant', 'modelopt', 'modelopt_fp4', 'modelopt_mxfp8', 'gguf', "
                           "'gptq_marlin', 'awq_marlin', 'gptq', 'compressed-tensors', 'bitsandbytes', 'experts_int8', 'quark', 'moe_wna16', 'torchao', 'inc', "
                           "'mxfp4', 'petit_nvfp4', 'cpu_awq'].";
  for (const char* id : {"w8a8", "w8a8_dynamic", "w4a8_dynamic", "w4a16", "w8a8_mxfp8", "w4a4_mxfp4", "w4a16_mxfp4", "w4a8_mxfp", "w8a16_ascend"}) {
    SCOPED_TRACE(id);
    const auto at16 = pftest::run_cli(std::string("fit Qwen/Qwen3-30B-A3B --device H100-SXM --engine vllm@0.16.0 --variant ") + id + " --json", {.with_stderr = false});
    EXPECT_EQ(at16.code, 1) << at16.out.substr(0, 300);
    const Json j = pftest::json_of(at16);
    EXPECT_EQ(j.value("failure", std::string()), "unsupported_quantization");
    EXPECT_EQ(j.value("failure_message", std::string()), v016);
  }
  const Json at12 = pftest::json_of(pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM --engine vllm@0.12.0 --variant w8a8 --json", {.with_stderr = false}));
  const std::string line = at12.value("failure_message", std::string());
  EXPECT_EQ(line.rfind("vllm serve: error: argument --quantization/-q: invalid choice: 'ascend' (choose from 'auto-round', 'awq', 'awq_marlin', 'bitblas', ", 0), 0u)
      << line;
  EXPECT_EQ(line.find("[the choices of"), std::string::npos) << line;  // 0.12.0 has its own list
  EXPECT_EQ(line.find("Unknown quantization method"), std::string::npos) << line;
}

// msModelSlim keys its adapters by --model_type name: setup.py registers every name of a config/config.ini [ModelAdapter]
// group as an entry point of that group's loader (Ascend/msmodelslim 3de0a3c), so each name of a group loads the same
// adapter. A model whose name msModelSlim does not list but whose model_type is the family of one group (Qwen3.6-35B-A3B,
// model_type qwen3_5_moe / text_config qwen3_5_moe_text: the qwen3_5_moe adapter builds Qwen3_5MoeForConditionalGeneration)
// gets a name of that group; before, it got no recipe ("registers no model adapter"). Names and families read by hand from
// config.ini and the models' config.json in ../shared/models.
TEST(MsModelSlimAdapters, Issue16_AModelOfARegisteredFamilyGetsItsAdapter) {
  const auto& catalog = engine::shipped_quantized_catalog();
  ASSERT_TRUE(catalog.has_value()) << catalog.error().describe();
  const auto* w8a8 = engine::find_conversion(*catalog, "w8a8", "npu");
  ASSERT_NE(w8a8, nullptr);
  struct Case {
    std::string name, model_type;
    std::optional<std::string> expected;
  };
  for (const auto& c : std::vector<Case>{
           {"Qwen3.6-35B-A3B", "qwen3_5_moe_text", "Qwen3.5-35B-A3B"},  // the name ending "-35B-A3B", of the MoE practice
           {"Qwen3.6-35B-A3B", "", std::nullopt},                        // the name alone: none, as before
           {"Qwen3.6-27B", "qwen3_5_text", "Qwen3.6-27B"},               // listed: its own name
           {"Qwen3-4B", "qwen3", "Qwen3-14B"},                           // qwen3 group: Qwen3-8B, Qwen3-14B, Qwen3-32B
           {"Kimi-K2-Instruct", "kimi_k2", "Kimi-K2-Thinking"},          // a tie of endings: the nearest length (16)
           {"Qwen3.5-9B", "qwen3_5_text", "Qwen3.5-27B"},                // dense: not the MoE Qwen3.5-397B-A17B listed first
           {"Qwen3-VL-8B-Instruct", "qwen3_vl_text", "Qwen3-VL-4B-Instruct"},  // ending and length tie: the first listed
           {"Qwen3-Next-80B-A3B-Thinking", "qwen3_next", "Qwen3-Next-80B-A3B-Instruct"},
           {"Qwen3-30B-A3B", "qwen3_moe", "Qwen3-30B"},                  // a listed prefix still wins
           {"Qwen2.5-14B-Instruct", "qwen2", std::nullopt},              // four groups for Qwen2ForCausalLM: none chosen
           {"Meta-Llama-3.1-8B", "llama", std::nullopt},
       }) {
    EXPECT_EQ(engine::recipe_model_type(*catalog, *w8a8, c.name, c.model_type), c.expected) << c.name << " / " << c.model_type;
  }

  const Json plan = pftest::json_of(pftest::run_cli("plan Qwen/Qwen3.6-35B-A3B --devices 910B4 --variant w8a8 --context 8192 --json", {.with_stderr = false}));
  ASSERT_FALSE(plan["recommended"].empty()) << plan["rejected"].dump().substr(0, 600);
  std::string prepare, notes;
  for (const auto& p : plan["recommended"][0]["launch"]["prepare"]) prepare += p.get<std::string>() + "\n";
  for (const auto& n : plan["recommended"][0]["launch"]["notes"]) notes += n.get<std::string>() + "\n";
  EXPECT_NE(prepare.find("--model_type Qwen3.5-35B-A3B --quant_type w8a8"), std::string::npos) << prepare;
  EXPECT_NE(notes.find("--model_type Qwen3.5-35B-A3B: msModelSlim lists no name for Qwen3.6-35B-A3B; its model_type qwen3_5_moe_text is of the family of "
                       "msModelSlim's adapter qwen3_5_moe"),
            std::string::npos)
      << notes;
  // A model of no registered family still says why, its model_type named.
  const Json llama = pftest::json_of(pftest::run_cli("plan meta-llama/Meta-Llama-3.1-8B --devices 910B4 --variant w8a8 --context 8192 --json", {.with_stderr = false}));
  ASSERT_FALSE(llama["rejected"].empty());
  EXPECT_NE(llama["rejected"][0]["reason"].get<std::string>().find("msModelSlim registers no model adapter for Meta-Llama-3.1-8B, nor for its model_type llama"),
            std::string::npos)
      << llama["rejected"][0]["reason"];
}

// A model_types record whose two adapters claim one model_type, or list one name twice, is corrupt, naming the record.
TEST(MsModelSlimAdapters, Issue16_AmbiguousAdapterListsAreRefused) {
  const auto base = [](const std::string& adapters) {
    return parse_json(R"({"schema_version": 1, "checkpoints": [], "conversions": [], "model_types": [{"id": "t", "tool": "msModelSlim", "adapters": [)" + adapters +
                          R"(], "source": "x"}]})",
                      "t.json")
        .value();
  };
  const auto twice = engine::parse_quantized_catalog(
      base(R"({"adapter": "a", "config_model_types": ["qwen3"], "names": ["A-1"]}, {"adapter": "b", "config_model_types": ["qwen3"], "names": ["B-1"]})"), "t.json");
  ASSERT_FALSE(twice.has_value());
  EXPECT_NE(twice.error().message.find("model_types[t].adapters[b]: config_model_type 'qwen3' is adapter a's too"), std::string::npos) << twice.error().message;
  const auto name_twice =
      engine::parse_quantized_catalog(base(R"({"adapter": "a", "names": ["A-1"]}, {"adapter": "b", "names": ["A-1"]})"), "t.json");
  ASSERT_FALSE(name_twice.has_value());
  EXPECT_NE(name_twice.error().message.find("name 'A-1' is listed twice"), std::string::npos) << name_twice.error().message;
  EXPECT_TRUE(engine::parse_quantized_catalog(base(R"({"adapter": "a", "config_model_types": ["qwen3"], "names": ["A-1"]})"), "t.json").has_value());
}

// GGUF on vLLM: vLLM 0.24.0 moved GGUF out of the tree into vllm-gguf-plugin (vllm PR #39612; the release from
// vllm-project/vllm-metal PR #466 and gpustack/runner PR #222, which cites docs.vllm.ai/en/v0.24.0): from that version the
// start command installs the plugin before `vllm serve`, before it not (the plugin is for the vLLM without the in-tree
// code). On vLLM-Ascend no version's platform lists gguf among supported_quantization (vllm_ascend/platform.py at each tag):
// fit and plan give the platform's refusal, where fit said it fits and plan "no conversion recipe on npu" before.
TEST(GgufOnVllm, Issue16_PluginFromVllm0_24AndRefusalOnNpu) {
  const auto prepare_of = [](const std::string& engine) {
    const Json j = pftest::json_of(
        pftest::run_cli("plan Qwen/Qwen3-8B --devices H100-SXM --engine " + engine + " --variant gguf_q4_k_m --context 16384 --json", {.with_stderr = false}));
    std::vector<std::string> out;
    if (j["recommended"].empty()) return out;
    for (const auto& p : j["recommended"][0]["launch"]["prepare"]) out.push_back(p.get<std::string>());
    return out;
  };
  const auto before = prepare_of("vllm@0.23.0"), from = prepare_of("vllm@0.24.0"), newest = prepare_of("vllm");
  ASSERT_FALSE(before.empty());
  ASSERT_FALSE(from.empty());
  EXPECT_EQ(std::count(before.begin(), before.end(), "uv pip install vllm-gguf-plugin"), 0);
  ASSERT_EQ(from.size(), before.size() + 1);
  EXPECT_EQ(from.back(), "uv pip install vllm-gguf-plugin");  // after the conversion, before the serve line
  EXPECT_EQ(newest, from);

  const std::string npu = "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, gguf quantization is currently not supported in npu.";
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --variant gguf_q4_k_m --json", {.with_stderr = false});
  EXPECT_EQ(fit.code, 1);
  EXPECT_EQ(pftest::json_of(fit).value("failure_message", std::string()), npu);
  const Json plan = pftest::json_of(pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B4 --variant gguf_q4_k_m --json", {.with_stderr = false}));
  EXPECT_TRUE(plan["recommended"].empty());
  ASSERT_FALSE(plan["rejected"].empty());
  for (const auto& row : plan["rejected"]) EXPECT_EQ(row.value("reason", std::string()), "engine rejects it: " + npu) << row.dump().substr(0, 300);
}
