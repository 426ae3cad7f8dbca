// engine/quantized_checkpoints: the catalogue of published quantized checkpoints and conversions plan's start commands
// name (split from test_launch.cpp): the shipped file loads, every record is the variant it is filed under, bad records
// are refused with the file, the record and the reason.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "model/quant_variant.hpp"
#include "../test_support.hpp"

using namespace preflight;

// The quantized-checkpoint catalogue: the shipped file loads, and bad records are refused with the
// file, the record and the reason.
TEST(QuantizedCatalog, Issue16_ShippedCatalogueLoadsAndBadRecordsAreRefused) {
  auto shipped = engine::load_quantized_catalog();
  ASSERT_TRUE(shipped.has_value()) << shipped.error().describe();
  EXPECT_NE(engine::find_quantized_checkpoint(*shipped, "qwen/qwen3-235b-a22b", "w8a8"), nullptr);
  EXPECT_EQ(engine::find_quantized_checkpoint(*shipped, "Qwen/Qwen3-14B", "w8a8"), nullptr);
  EXPECT_NE(engine::find_conversion(*shipped, "w8a8", "npu"), nullptr);
  EXPECT_EQ(engine::find_conversion(*shipped, "w8a8", "cuda"), nullptr);
  // Issue 16: the 4-bit Ascend variant is produced by msModelSlim's W4A8 one-click recipe.
  const auto* w4a8 = engine::find_conversion(*shipped, "w4a8_dynamic", "npu");
  ASSERT_NE(w4a8, nullptr);
  EXPECT_NE(w4a8->commands.back().find("--quant_type w4a8 "), std::string::npos);
  // Issue 16: FP8 block checkpoints (DeepSeek-V3/R1, Qwen3-*-FP8) have a cast back to BF16, the input of
  // msModelSlim; a format without one (NVFP4) has none.
  const auto* cast = engine::find_cast(*shipped, "fp8_block");
  ASSERT_NE(cast, nullptr);
  EXPECT_TRUE(cast->quantization_flag.empty());
  EXPECT_EQ(engine::find_cast(*shipped, "modelopt_nvfp4"), nullptr);
  const auto& variants = model::load_variant_catalog();
  ASSERT_TRUE(variants.has_value());
  for (const auto& c : shipped->casts) EXPECT_TRUE(model::find_variant(*variants, c.variant).has_value()) << c.id;

  const auto ok = Json::parse(R"({"schema_version":1,"checkpoints":[{"repo":"o/M-W8A8","hub":"modelscope","base_model":"o/M","variant":"ascend",
      "format":"W8A8","quantization_flag":"ascend","url":"https://modelscope.cn/models/o/M-W8A8","source":"s"}],
      "conversions":[{"id":"c","variant":"awq","platform":"cuda","tool":"t","output_suffix":"-AWQ","quantization_flag":"",
      "commands":["quantize {model_id} {output_dir}"],"note":"n","source":"s"}]})");
  ASSERT_TRUE(engine::parse_quantized_catalog(ok, "q.json").has_value());
  struct Bad {
    const char* what;
    Json doc;
    const char* message;
  };
  std::vector<Bad> bad;
  Json j = ok;
  j["checkpoints"][0]["url"] = "http://modelscope.cn/x";
  bad.push_back({"http url", j, "is not an https address"});
  j = ok;
  j["checkpoints"][0]["hub"] = "civitai";
  bad.push_back({"hub", j, "expected huggingface or modelscope"});
  j = ok;
  j["checkpoints"][0]["source"] = "";
  bad.push_back({"source", j, "source is empty"});
  j = ok;
  j["checkpoints"].push_back(ok["checkpoints"][0]);
  j["checkpoints"][1]["repo"] = "O/m-w8a8";
  bad.push_back({"duplicate", j, "duplicate repo"});
  j = ok;
  j["checkpoints"][0]["license"] = "x";
  bad.push_back({"unknown key", j, "unknown key"});
  j = ok;
  j["conversions"][0]["commands"] = Json::array({"quantize {model_id}"});
  bad.push_back({"no output", j, "no command writes {output_dir}"});
  j = ok;
  j["conversions"][0]["platform"] = "tpu";
  bad.push_back({"platform", j, "expected npu, cuda or any"});
  // Issue 16: a cast writes BF16, so it carries no --quantization; its records are checked like conversions.
  j = ok;
  j["casts"] = Json::array({ok["conversions"][0]});
  j["casts"][0]["quantization_flag"] = "awq";
  bad.push_back({"cast with a flag", j, "casts[c]: quantization_flag 'awq', expected \"\""});
  j = ok;
  j["casts"] = Json::array({ok["conversions"][0]});
  j["casts"][0]["commands"] = Json::array({"cast {model_dir}"});
  bad.push_back({"cast without output", j, "casts[c]: no command writes {output_dir}"});
  for (const auto& b : bad) {
    auto r = engine::parse_quantized_catalog(b.doc, "q.json");
    ASSERT_FALSE(r.has_value()) << b.what;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt) << b.what;
    EXPECT_NE(r.error().describe().find(b.message), std::string::npos) << b.what << ": " << r.error().describe();
    EXPECT_NE(r.error().describe().find("q.json"), std::string::npos) << b.what;
  }
}

// Issue 16: every (variant -> published checkpoint / conversion) pair of the catalogue agrees: the variant
// exists in data/variants/quant_variants.json, the record passes that variant's own --quantization (the method
// the checkpoint's descriptor states), and the checkpoint's format / the recipe's tool is that variant's tool.
// The llm-compressor AWQ recipe was filed under "awq" (AutoAWQ GEMM, zero points) with no flag, while it
// writes compressed-tensors W4A16 (symmetric): both checks below failed on it.
TEST(QuantizedCatalog, Issue16_EveryCheckpointAndConversionIsTheVariantItIsFiledUnder) {
  auto shipped = engine::load_quantized_catalog();
  ASSERT_TRUE(shipped.has_value()) << shipped.error().describe();
  const auto& variants = model::load_variant_catalog();
  ASSERT_TRUE(variants.has_value()) << variants.error().describe();
  // A variant's tool may name alternatives ("vendor FP8 release / transformers FineGrainedFP8Config / ..."): the record
  // names the first word of one of them.
  auto made_by = [](const std::string& text, const std::string& tools) {
    for (size_t at = 0; at <= tools.size();) {
      const size_t end = std::min(tools.find(" / ", at), tools.size());
      const std::string tool = tools.substr(at, end - at);
      if (text.find(tool.substr(0, tool.find(' '))) != std::string::npos) return true;
      at = end + 3;
    }
    return false;
  };
  auto check = [&](const std::string& what, const std::string& variant_id, const std::string& flag, const std::string& text) {
    SCOPED_TRACE(what);
    auto v = model::find_variant(*variants, variant_id);
    ASSERT_TRUE(v.has_value()) << v.error().describe();
    EXPECT_TRUE((*v)->quantized());
    // ux28: AWQ and GPTQ are served without --quantization (vLLM reads the method from config.json and picks Marlin;
    // an explicit awq / gptq forces the slower kernel); AutoRound too (its flag name changed between versions: auto-round
    // in vLLM 0.9's choices, inc in 0.16's); every other record passes its variant's own method.
    const std::string& method = (*v)->engine_quantization;
    EXPECT_EQ(flag, method == "awq" || method == "gptq" || method == "auto-round" ? std::string() : method);
    EXPECT_TRUE(made_by(text, (*v)->tool)) << text << " is not made by " << (*v)->tool;
  };
  for (const auto& c : shipped->checkpoints) check("checkpoint " + c.repo, c.variant, c.quantization_flag, c.format);
  for (const auto& c : shipped->conversions) check("conversion " + c.id, c.variant, c.quantization_flag, c.tool);
  // The hand-named pairs: what each record really is.
  // awq is AutoAWQ's own GEMM export (h-conv12), never the llm-compressor recipe (that writes compressed-tensors).
  const auto* awq = engine::find_conversion(*shipped, "awq", "cuda");
  ASSERT_NE(awq, nullptr);
  EXPECT_EQ(awq->id, "autoawq-gemm-int4");
  const auto* ct = engine::find_conversion(*shipped, "ct_w4a16", "cuda");
  ASSERT_NE(ct, nullptr);
  EXPECT_EQ(ct->id, "llm-compressor-awq-w4a16");
  EXPECT_EQ(engine::find_quantized_checkpoint(*shipped, "Qwen/Qwen3-32B", "awq")->repo, "Qwen/Qwen3-32B-AWQ");
}

// h-conv12: the "in_flight" records are validated like the rest (an empty flag, an unknown platform, a duplicate
// variant and platform, an unknown key are corrupt errors naming the file and record), and every shipped one is
// a known variant whose --quantization is the variant's own.
TEST(QuantizedCatalog, Issue16_InFlightRecordsAreValidated) {
  auto shipped = engine::load_quantized_catalog();
  ASSERT_TRUE(shipped.has_value()) << shipped.error().describe();
  const auto& variants = model::load_variant_catalog();
  ASSERT_TRUE(variants.has_value());
  ASSERT_NE(engine::find_in_flight(*shipped, "bnb_4bit", "cuda"), nullptr);
  EXPECT_EQ(engine::find_in_flight(*shipped, "bnb_4bit", "npu"), nullptr);
  EXPECT_EQ(engine::find_in_flight(*shipped, "bnb_8bit", "cuda"), nullptr);  // vLLM quantizes 4-bit only in flight
  for (const auto& q : shipped->in_flight) {
    auto v = model::find_variant(*variants, q.variant);
    ASSERT_TRUE(v.has_value()) << q.variant;
    EXPECT_EQ(q.quantization_flag, (*v)->engine_quantization) << q.variant;
  }
  auto doc = [](const std::string& in_flight) {
    return Json::parse(R"({"schema_version":1,"checkpoints":[],"conversions":[],"in_flight":[)" + in_flight + "]}");
  };
  const std::string good = R"({"variant":"bnb_4bit","platform":"cuda","quantization_flag":"bitsandbytes","note":"n","source":"s"})";
  ASSERT_TRUE(engine::parse_quantized_catalog(doc(good), "q.json").has_value());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"variant":"bnb_4bit","platform":"cuda","quantization_flag":"","note":"n","source":"s"})", "q.json: in_flight[bnb_4bit]: quantization_flag is empty"},
      {R"({"variant":"bnb_4bit","platform":"tpu","quantization_flag":"bitsandbytes","note":"n","source":"s"})", "platform 'tpu', expected npu, cuda or any"},
      {good + "," + good, "q.json: in_flight[bnb_4bit]: duplicate variant and platform"},
      {R"({"variant":"bnb_4bit","platform":"cuda","quantization_flag":"bitsandbytes","note":"n","source":""})", "source is empty"},
      {R"({"variant":"bnb_4bit","platform":"cuda","quantization_flag":"bitsandbytes","note":"n","source":"s","x":1})", "x"},
  };
  for (const auto& [records, message] : bad) {
    auto r = engine::parse_quantized_catalog(doc(records), "q.json");
    ASSERT_FALSE(r.has_value()) << records;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt) << records;
    EXPECT_NE(r.error().describe().find(message), std::string::npos) << r.error().describe();
  }
}
