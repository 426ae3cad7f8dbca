// Issue 16 (h-quant24): the engine-version boundary of ModelOpt's quantized lm_head (data/engines/engines.json
// modelopt_lm_head_quantized on the vLLM CUDA profiles). vLLM PR #42124 (merge commit 6f5b53324, an ancestor of
// v0.22.1rc0) gives ParallelLMHead ModelOpt's linear method unless exclude_modules names it; before it the head kept
// lm_head.weight only and a checkpoint carrying the head's scales failed to load with
//   ValueError: There is no module or parameter named 'lm_head.input_scale' in Qwen3_5MoeForCausalLM.
//   The available parameters belonging to lm_head (ParallelLMHead) are: {'lm_head.weight'}
// (vLLM 0.22.0, https://github.com/vllm-project/vllm/issues/45102).
// The real descriptors read in place from ../shared/models: nvidia/Qwen3.6-27B-NVFP4 (MIXED_PRECISION, lm_head listed in
// quantized_layers as NVFP4, untied) and nvidia/Qwen3-32B-NVFP4 (NVFP4, "lm_head" in exclude_modules).
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"

namespace {

struct FitRun {
  int code = -1;
  std::string out;
};

FitRun fit_on(const std::string& model_dir, const std::string& engine) {
  const auto r = pftest::run_cli("fit " + pftest::shared_path("models/" + model_dir) + " --device B200 --engine " + engine + " --max-model-len 4096");
  return {r.code, r.out};
}

const char* k_load_error = "There is no module or parameter named 'lm_head.input_scale' in Qwen3_5ForConditionalGeneration.";
const char* k_available = "The available parameters belonging to lm_head (ParallelLMHead) are: {'lm_head.weight'}";

}  // namespace

// The checkpoint that quantizes its head: refused with the loader's message up to 0.22.0 (exit 1, as any quantization
// the engine refuses), loaded from 0.22.1 on.
TEST(ModelOptLmHead, Issue16_QuantizedHeadLoadsFromVllm0221) {
  for (const char* version : {"vllm@0.20.1", "vllm@0.22.0"}) {
    SCOPED_TRACE(version);
    const FitRun r = fit_on("nvidia__Qwen3.6-27B-NVFP4", version);
    EXPECT_EQ(r.code, 1) << r.out.substr(0, 600);
    EXPECT_NE(r.out.find(k_load_error), std::string::npos) << r.out.substr(0, 600);
    EXPECT_NE(r.out.find(k_available), std::string::npos) << r.out.substr(0, 600);
  }
  for (const char* version : {"vllm@0.22.1", "vllm@0.28.0"}) {
    SCOPED_TRACE(version);
    const FitRun r = fit_on("nvidia__Qwen3.6-27B-NVFP4", version);
    EXPECT_EQ(r.code, 0) << r.out.substr(0, 600);
    EXPECT_EQ(r.out.find("lm_head.input_scale"), std::string::npos) << r.out.substr(0, 600);
  }
}

// A checkpoint that excludes its head loads on every version: the boundary concerns quantized heads only.
TEST(ModelOptLmHead, Issue16_ExcludedHeadLoadsOnEveryVersion) {
  for (const char* version : {"vllm@0.20.1", "vllm@0.22.0", "vllm@0.22.1"}) {
    SCOPED_TRACE(version);
    const FitRun r = fit_on("nvidia__Qwen3-32B-NVFP4", version);
    EXPECT_EQ(r.code, 0) << r.out.substr(0, 600);
    EXPECT_EQ(r.out.find("lm_head.input_scale"), std::string::npos);
  }
}
