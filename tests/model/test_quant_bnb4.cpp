// Issue 16 (h-quant12): bitsandbytes 4-bit as bitsandbytes really exports it, read from a real published descriptor
// (tests/fixtures/quant/danielhanchen__merged_4bit3_21022024, an unsloth/mistral-7b-bnb-4bit derived checkpoint; URL
// and commit in the README there) and sized by hand from the format:
//   bitsandbytes functional.py quantize_4bit: absmax fp32 [ceil(n/64)] over the flattened weight; with
//   compress_statistics (config bnb_4bit_use_double_quant) the absmax is quantize_blockwise'd in blocks of 256:
//   uint8 [ceil(n/64)] + nested_absmax fp32 [ceil(blocks/256)] + nested_quant_map fp32 [256]. QuantState.as_dict
//   (packed) also saves quant_map fp32 [16] and a uint8 tensor with the JSON of the other fields (not counted).
//   Codes: uint8 [n/2, 1].
//   vLLM (model_loader/bitsandbytes_loader.py _dequantize_dq) dequantizes the nested absmax to fp32 at load, so the
//   device holds n/2 + 4 x n/64 (+ the 16-entry map) per linear whatever the file stores.
// Before: the 4-bit format was int4_group with a 2-byte scale per 64 weights (0.53125 B per weight), neither the
// file (0.5159) nor what vLLM holds (0.5625).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json_util.hpp"
#include "model/model_source.hpp"
#include "model/model_spec.hpp"
#include "model/quant_scheme.hpp"
#include "model/quant_variant.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {

const std::string k_dir = "danielhanchen__merged_4bit3_21022024";

double fit_weights_bytes(const std::string& args, std::string* out = nullptr) {
  const auto r = pftest::run_cli("fit " + args + " --device H100-SXM --max-model-len 4096 --json", {.with_stderr = false});
  if (out) *out = r.out;
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 300);
  return pftest::term_gib(pftest::json_of(r), "weights") * 1073741824.0;
}

// Mistral-7B (hidden 4096, intermediate 14336, 32 layers, 32 x 128 query and 8 x 128 KV heads, vocab 32000, untied),
// per layer as out x in: q 4096x4096, k 1024x4096, v 1024x4096, o 4096x4096, gate/up 14336x4096, down 4096x14336:
//   218,103,808 weights per layer, x 32 = 6,979,321,856 in 224 linears; blocks of 64: 109,051,904 (every linear's
//   count divides by 64 x 256, so no ceil rounds up); nested blocks: 109,051,904 / 256 = 425,984.
//   embed_tokens + lm_head fp16: 2 x 32,000 x 4,096 x 2 = 524,288,000; norms (2 x 4096 x 32 + 4096) x 2 = 532,480.
constexpr double k_codes = 6979321856.0 / 2;              // 3,489,660,928
constexpr double k_unquantized = 524288000.0 + 532480.0;  // 524,820,480
constexpr double k_maps = 224 * 64.0;                     // quant_map fp32 [16] per linear

}  // namespace

// One out 4096 x in 14336 linear (58,720,256 weights, 917,504 blocks of 64, 3,584 nested blocks of 256) by hand.
TEST(QuantBnb4, Issue16_LinearBytesDoubleQuantAndPlain) {
  // codes 29,360,128 + absmax uint8 917,504 + nested_absmax 3,584 x 4 = 14,336 + nested_quant_map 1,024 + quant_map 64
  EXPECT_DOUBLE_EQ(bnb_4bit_bytes(4096, 14336, 64, {.double_quant = true}), 29360128.0 + 917504.0 + 14336.0 + 1024.0 + 64.0);
  // codes + absmax fp32 917,504 x 4 = 3,670,016 + quant_map 64
  EXPECT_DOUBLE_EQ(bnb_4bit_bytes(4096, 14336, 64, {.double_quant = false}), 29360128.0 + 3670016.0 + 64.0);
  EXPECT_DOUBLE_EQ(bnb_4bit_bytes(4096, 14336, 0, {.double_quant = false}), 29360128.0 + 3670016.0 + 64.0);  // no block: bnb's 64
  QuantScheme s;
  s.method = "bitsandbytes";
  s.group_size = 64;
  s.bnb_double_quant = true;
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::bnb_nf4, 4096, 14336, s, 2), 29360128.0 + 917504.0 + 14336.0 + 1024.0 + 64.0);
  EXPECT_STREQ(weight_format_name(WeightFormat::bnb_nf4), "bnb_nf4");
}

// The real descriptor reads as NF4 with double quant and is the bnb_4bit variant of the list; its tensors sum to the
// published file: Pot-l/mistral-7b-bnb-4bit-full-QA (the same unsloth/mistral-7b-bnb-4bit export, compute dtype bf16,
// same tensor bytes) model.safetensors is 4,125,687,xxx B (its LFS pointer; the last three digits were cut off in the
// retrieved page). By hand: codes 3,489,660,928 + absmax 109,051,904 + nested 425,984 x 4 = 1,703,936 + nested maps
// 224 x 1,024 = 229,376 + maps 14,336 + 524,820,480 = 4,125,480,960 B, 206 KB under the file (its JSON header of
// 1,572 tensors and the 224 packed quant_state JSONs): -0.005%. The former 2-byte scale per 64 sized 3,489,660,928 +
// 218,103,808 + 524,820,480 = 4,232,585,216 B: +2.59%.
TEST(QuantBnb4, Issue16_RealCheckpointSizedByHandAndAgainstThePublishedFile) {
  auto j = parse_json(pftest::read_all(pftest::quant_fixture(k_dir + "/config.json")), k_dir);
  ASSERT_TRUE(j.has_value());
  auto scheme = parse_quantization_config((*j)["quantization_config"], k_dir);
  ASSERT_TRUE(scheme.has_value()) << scheme.error().describe();
  EXPECT_EQ(scheme->linear_format, WeightFormat::bnb_nf4);
  EXPECT_EQ(scheme->group_size, 64);
  EXPECT_TRUE(scheme->bnb_double_quant);
  const auto& catalog = load_variant_catalog();
  ASSERT_TRUE(catalog.has_value());
  const QuantVariant* v = variant_of_checkpoint(*catalog, *scheme);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->id, "bnb_4bit");

  auto spec = load_model_directory(pftest::quant_fixture(k_dir));
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  const double tensors = compute_weight_bytes(*spec).total;
  const double by_hand = k_codes + 109051904.0 + 1703936.0 + 224 * 1024.0 + k_maps + k_unquantized;
  EXPECT_DOUBLE_EQ(by_hand, 4125480960.0);
  EXPECT_NEAR(tensors, by_hand, 1.0);
  const double published_low = 4125687000.0, published_high = 4125688000.0;
  EXPECT_LT(tensors, published_low);
  EXPECT_GT(tensors, published_high - 300e3) << "header and packed quant_state JSON are far below 300 KB";
}

// What vLLM holds: the nested absmax dequantized to fp32, the same bytes as a plain (no double quant) export, so the
// fit's weights term of the checkpoint is codes 3,489,660,928 + absmax 109,051,904 x 4 = 436,207,616 + maps 14,336
// + 524,820,480 + vLLM's rotary cos_sin_cache 32,768 x 128 x 2 = 8,388,608 -> 4,459,091,968 B, for the double-quant
// descriptor and for a copy with bnb_4bit_use_double_quant false; and `fit --variant bnb_4bit` of the published
// Llama-3.1-8B config (same layer shapes, vocab 128,256: 2,101,878,784 unquantized, rotary 131,072 x 128 x 2)
// holds 3,489,660,928 + 436,207,616 + 14,336 + 2,101,878,784 + 33,554,432 = 6,061,316,096 B.
TEST(QuantBnb4, Issue16_VllmHoldsTheNestedAbsmaxAsFp32) {
  std::string out;
  EXPECT_NEAR(fit_weights_bytes(pftest::quant_fixture(k_dir), &out), 4459091968.0, 1.0);
  EXPECT_NE(out.find("variant bnb_4bit: "), std::string::npos) << out.substr(0, 400);

  const std::string plain = pftest::scratch_dir("bnb4-plain") + "/acme__mistral-7b-bnb-4bit-plain";
  std::filesystem::create_directories(plain);
  auto config = parse_json(pftest::read_all(pftest::quant_fixture(k_dir + "/config.json")), "config.json");
  ASSERT_TRUE(config.has_value());
  (*config)["quantization_config"]["bnb_4bit_use_double_quant"] = false;
  std::ofstream(plain + "/config.json") << config->dump(2);
  EXPECT_NEAR(fit_weights_bytes(plain), 4459091968.0, 1.0);
  auto spec = load_model_directory(plain);
  ASSERT_TRUE(spec.has_value());
  EXPECT_NEAR(compute_weight_bytes(*spec).total, k_codes + 436207616.0 + k_maps + k_unquantized, 1.0);  // the plain file

  EXPECT_NEAR(fit_weights_bytes(pftest::shared_path("models/meta-llama__Meta-Llama-3.1-8B") + " --variant bnb_4bit"), 6061316096.0, 1.0);
}
