// Issue 15 (acc29): vLLM on ROCm pads an unquantized MoE layer's expert weights by 256 bytes a row
// (VLLM_ROCM_MOE_PADDING, default 1; UnquantizedFusedMoEMethod._maybe_pad_weight: F.pad(weight, (0, 256 // element
// bytes))[..., :-pad] keeps the padded storage) where the row, stride(-2) x element bytes, is a multiple of 512 bytes.
// vLLM's w13 is [experts, 2 x intermediate / TP, hidden] (the checkpoint's gate_proj and up_proj rows) and w2
// [experts, hidden, intermediate / TP] (down_proj); with expert parallel a rank holds experts / (DP x TP) whole
// experts instead. Expected bytes worked by hand from the configs in ../shared/models:
//  - Qwen3-30B-A3B: hidden 2048, 128 experts, moe_intermediate 768, 48 layers, bf16.
//    TP 1: w13 rows 2 x 768 of 4,096 B (a multiple of 512): 48 x 128 x 1,536 x 256 = 2,415,919,104;
//          w2 rows 2,048 of 1,536 B (a multiple of 512): 48 x 128 x 2,048 x 256 = 3,221,225,472; 5,637,144,576 B.
//    TP 2: w13 48 x 128 x 768 x 256 = 1,207,959,552; w2 rows of 384 x 2 = 768 B, not a multiple of 512: none.
//    TP 2 with expert parallel: 64 experts a rank, whole: w13 48 x 64 x 1,536 x 256 = 1,207,959,552, w2
//          48 x 64 x 2,048 x 256 = 1,610,612,736; 2,818,572,288 B.
//  - Mixtral-8x7B: hidden 4096, 8 experts, intermediate 14336, 32 layers: w13 rows of 8,192 B: 32 x 8 x 28,672 x 256 =
//    1,879,048,192; w2 rows of 28,672 B (56 x 512): 32 x 8 x 4,096 x 256 = 268,435,456; 2,147,483,648 B.
// The padding is the only weights difference between an MI300X and an H200 on the same vLLM version.
#include <gtest/gtest.h>

#include "engine/engine_profile.hpp"
#include "base/json_util.hpp"
#include "engine/moe_row_padding.hpp"
#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

estimate::Deployment layout(int64_t tp, bool expert_parallel = false) {
  estimate::Deployment d;
  d.tensor_parallel_size = tp;
  d.enable_expert_parallel = expert_parallel;
  d.max_model_len = 8192;
  d.gpu_memory_utilization = 0.9;
  return d;
}

// weights_bytes of one rank of `model` on `device` with vLLM `version`, with the overheads of the device's platform.
double weights(const std::string& model, const std::string& device, const std::string& version, const estimate::Deployment& d) {
  auto s = pftest::fit_setup(model, device, "vllm", version);
  auto engines = engine::load_engine_catalog();
  EXPECT_TRUE(engines.has_value());
  if (!engines) return 0;
  const engine::Overheads* oh = engines->overheads_for(s.engine, s.device.platform);
  EXPECT_NE(oh, nullptr) << s.device.platform;
  if (!oh) return 0;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, *oh, d);
  return e.weights_bytes;
}

double padding(const std::string& model, const std::string& version, const estimate::Deployment& d) {
  return weights(model, "MI300X", version, d) - weights(model, "H200", version, d);
}

}  // namespace

// The shipped rule: vLLM on ROCm, 256 bytes a row where the row is a multiple of 512 bytes, with its source.
TEST(RocmMoePadding, Issue15_CatalogueRecord) {
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  const engine::Overheads* rocm = engines->overheads_for("rocm");
  ASSERT_NE(rocm, nullptr);
  ASSERT_NE(rocm->moe_row_padding, nullptr) << "engines.json overheads[rocm].moe_row_padding";
  EXPECT_EQ(rocm->moe_row_padding->engine, "vllm");
  EXPECT_EQ(rocm->moe_row_padding->pad_bytes, 256);
  EXPECT_EQ(rocm->moe_row_padding->row_bytes_multiple, 512);
  EXPECT_NE(rocm->moe_row_padding->source.find("VLLM_ROCM_MOE_PADDING"), std::string::npos);
  EXPECT_EQ(rocm->moe_row_padding->switch_env, "VLLM_ROCM_MOE_PADDING=0");
  EXPECT_FALSE(rocm->moe_row_padding->applies.source.empty());
  const engine::Overheads* cuda = engines->overheads_for("cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->moe_row_padding, nullptr);
}

TEST(RocmMoePadding, Issue15_Qwen3MoeExpertsPaddedByTheRowRule) {
  const char* model = "Qwen/Qwen3-30B-A3B";
  EXPECT_DOUBLE_EQ(padding(model, "0.28.0", layout(1)), 5637144576.0);
  EXPECT_DOUBLE_EQ(padding(model, "0.28.0", layout(2)), 1207959552.0);
  EXPECT_DOUBLE_EQ(padding(model, "0.28.0", layout(2, true)), 2818572288.0);
}

TEST(RocmMoePadding, Issue15_MixtralFromTheFirstVersionRead) {
  const char* model = "mistralai/Mixtral-8x7B-v0.1";
  EXPECT_DOUBLE_EQ(padding(model, "0.9.2", layout(1)), 2147483648.0);
  EXPECT_DOUBLE_EQ(padding(model, "0.7.3", layout(1)), 0.0) << "before the first version read with the padding";
}

// Quantized experts go through their own MoE method, which does not pad; dense models have no experts.
TEST(RocmMoePadding, Issue15_NoPaddingForQuantizedExpertsOrDenseModels) {
  EXPECT_DOUBLE_EQ(padding("Qwen/Qwen3-30B-A3B-FP8", "0.28.0", layout(1)), 0.0);
  EXPECT_DOUBLE_EQ(padding("Qwen/Qwen3-32B", "0.28.0", layout(1)), 0.0);
}

// The catalogue record: a padding outside 1-4096 bytes, a row multiple that is not whole, an unknown key or a blank
// source is corrupt and names the key.
TEST(RocmMoePadding, Issue15_CatalogueRecordChecked) {
  const auto record = [](const std::string& pad, const std::string& multiple, const std::string& source, const std::string& extra = "") {
    return Json::parse(R"({"engine": "vllm", "version_min": "0.9.2", "version_max": "0.30.99", "version_source": "v", "pad_bytes": )" + pad +
                       R"(, "row_bytes_multiple": )" + multiple + R"(, "switch_env": "VLLM_ROCM_MOE_PADDING=0", "source": ")" + source + "\"" + extra + "}");
  };
  const auto parse = [](const Json& j) { return engine::parse_moe_row_padding(JsonObject(j, "engines.json", "overheads[rocm].moe_row_padding"), "engines.json"); };
  const Json good = record("256", "512", "s");
  auto ok = parse(good);
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  EXPECT_EQ(ok->pad_bytes, 256);
  const struct {
    Json record;
    const char* fragment;
  } rejected[] = {
      {record("0", "512", "s"), "pad_bytes: expected 1-4096, found 0"},
      {record("8192", "512", "s"), "pad_bytes: expected 1-4096, found 8192"},
      {record("256", "512.5", "s"), "row_bytes_multiple: expected a whole number 1-65536, found 512.5"},
      {record("256", "512", " "), "source"},
      {record("256", "512", "s", R"(, "pad_rows": 1)"), "pad_rows"},
  };
  for (const auto& r : rejected) {
    auto e = parse(r.record);
    ASSERT_FALSE(e.has_value()) << r.fragment;
    EXPECT_EQ(e.error().kind, ErrorKind::corrupt) << r.fragment;
    EXPECT_NE(e.error().message.find(r.fragment), std::string::npos) << e.error().message;
  }
}
