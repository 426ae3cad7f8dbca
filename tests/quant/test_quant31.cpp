// Issue 16 (quant31): a variant no conversion produces keeps its refusal, now with the reason and what was read to say so
// (data/engines/quantized_checkpoints.json "no_recipe"): msModelSlim W4A16 (its one W4A16 command quantizes every linear
// of a dense model, which vLLM-Ascend has no W4A16 linear scheme for), W4A16_MXFP4 (no saver writes it) and W4A8_MXFP
// (written only by the tool's smoke test). fit and plan give the same reason.
//
// Expected texts are written by hand from the records' sources (Ascend/msmodelslim 3de0a3c, vllm-ascend 182b75e).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../test_support.hpp"
#include "base/json_util.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "model/quant_variant.hpp"

using namespace preflight;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every shipped record names a known variant whose tool has no conversion on that platform; a bad record is a corrupt
// error naming the file and the record.
TEST(Quant31, Issue16_NoRecipeRecordsAreValidated) {
  const auto shipped = engine::load_quantized_catalog();
  ASSERT_TRUE(shipped.has_value()) << shipped.error().describe();
  const auto& variants = model::load_variant_catalog();
  ASSERT_TRUE(variants.has_value());
  ASSERT_EQ(shipped->no_recipe.size(), 3u);
  for (const auto& m : shipped->no_recipe) {
    EXPECT_TRUE(model::find_variant(*variants, m.variant).has_value()) << m.variant;
    EXPECT_EQ(engine::find_conversion(*shipped, m.variant, m.platform), nullptr) << m.variant;
    EXPECT_TRUE(has(m.source, "3de0a3c")) << m.variant << ": " << m.source;
  }
  ASSERT_NE(engine::find_missing_recipe(*shipped, "w4a16", "npu"), nullptr);
  EXPECT_EQ(engine::find_missing_recipe(*shipped, "w4a16", "cuda"), nullptr);
  EXPECT_EQ(engine::find_missing_recipe(*shipped, "w8a8_mxfp8", "npu"), nullptr);  // msmodelslim-w8a8-mxfp8 produces it

  auto doc = [](const std::string& records) {
    return Json::parse(R"({"schema_version":1,"checkpoints":[],"conversions":[{"id":"c","variant":"w8a8","platform":"npu","tool":"t",)"
                       R"("output_suffix":"-W8A8","quantization_flag":"ascend","commands":["x {output_dir}"],"note":"n","source":"s"}],"no_recipe":[)" +
                       records + "]}");
  };
  const std::string good = R"({"variant":"w4a16","platform":"npu","reason":"r","source":"s"})";
  const auto ok = engine::parse_quantized_catalog(doc(good), "q.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"variant":"w4a16","platform":"npu","reason":"","source":"s"})", "q.json: no_recipe[w4a16]: reason is empty"},
      {R"({"variant":"w4a16","platform":"tpu","reason":"r","source":"s"})", "platform 'tpu', expected npu, cuda or any"},
      {good + "," + good, "q.json: no_recipe[w4a16]: duplicate variant and platform"},
      {R"({"variant":"w4a16","platform":"npu","reason":"r","source":""})", "source is empty"},
      {R"({"variant":"w4a16","platform":"npu","reason":"r","source":"s","x":1})", "x"},
      {R"({"variant":"w8a8","platform":"npu","reason":"r","source":"s"})", "q.json: no_recipe[w8a8]: conversion c produces it on npu"},
  };
  for (const auto& [records, message] : bad) {
    const auto r = engine::parse_quantized_catalog(doc(records), "q.json");
    ASSERT_FALSE(r.has_value()) << records;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt) << records;
    EXPECT_TRUE(has(r.error().describe(), message)) << r.error().describe();
  }
}

// fit refuses the variant with the reason (exit 1, verdict unsupported_quantization) and plan rejects its rows with the
// same text; a variant without a record keeps the bare gap (MXFP4 of a model with no MXFP4 release on CUDA).
TEST(Quant31, Issue16_RefusalWithoutARecipeSaysWhy) {
  struct Case {
    std::string fit, plan, reason;
  };
  const std::string w4a16 =
      "no conversion recipe on npu: msModelSlim's one documented W4A16 command quantizes every linear layer of a dense model "
      "(example/Qwen, Qwen2.5-72B-Instruct: quant_qwen.py --w_bit 4 --a_bit 16 --group_size 128), and vLLM-Ascend registers W4A16 for MoE experts "
      "only (no linear scheme)";
  const std::vector<Case> cases = {
      {"fit Qwen/Qwen3-30B-A3B --device 910B4 --variant w4a16", "plan Qwen/Qwen3-30B-A3B --device 910B4 --num-devices 4 --variant w4a16 --json", w4a16},
      {"fit Qwen/Qwen3-30B-A3B --device 950DT --variant w4a16_mxfp4", "plan Qwen/Qwen3-30B-A3B --device 950DT --num-devices 1 --variant w4a16_mxfp4 --json",
       "no conversion recipe on npu: msModelSlim writes no W4A16_MXFP4 checkpoint"},
      {"fit Qwen/Qwen3-30B-A3B --device 950DT --variant w4a8_mxfp", "plan Qwen/Qwen3-30B-A3B --device 950DT --num-devices 1 --variant w4a8_mxfp --json",
       "no conversion recipe on npu: msModelSlim's saver writes W4A8_MXFP (on_w4a8_mx_dynamic_per_block) but the only configuration asking for it is "
       "the tool's smoke test"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fit);
    const auto fit = pftest::run_cli(c.fit);
    EXPECT_EQ(fit.code, 1) << fit.out.substr(0, 1200);
    EXPECT_TRUE(has(fit.out, "unsupported_quantization")) << fit.out.substr(0, 1200);
    EXPECT_TRUE(has(fit.out, c.reason)) << fit.out.substr(0, 1200);
    const auto plan = pftest::run_cli(c.plan, {.with_stderr = false});
    EXPECT_EQ(plan.code, 1) << plan.out.substr(0, 600);
    const Json j = Json::parse(plan.out);
    size_t with_reason = 0;
    for (const auto& r : j["rejected"]) with_reason += has(r["reason"].get<std::string>(), c.reason) ? 1 : 0;
    EXPECT_GE(with_reason, 1u) << j["rejected"].dump().substr(0, 1200);
  }
  const auto mxfp4 = pftest::run_cli("fit Qwen/Qwen3-30B-A3B --device H100 --variant mxfp4");
  EXPECT_EQ(mxfp4.code, 1) << mxfp4.out.substr(0, 1200);
  EXPECT_TRUE(has(mxfp4.out, "in this variant (MXFP4 experts (gpt-oss; other weights in model dtype)) and no conversion recipe on cuda\n")) << mxfp4.out.substr(0, 1200);
}

}  // namespace
