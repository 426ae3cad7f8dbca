// Issue 15 (eng31): what each vLLM version accepts and falls back to, the same in fit and plan. vLLM's V1 oracle
// (vllm/engine/arg_utils.py _is_v1_supported_oracle, vLLM 0.8 - 0.10) sends some deployments back to the V0 engine,
// which sizes the cache with V0's scheduler defaults and prints V0's lines; fit applied it (v0eng30) and plan's rows did
// not: the row of a card the oracle sends to V0 was sized as V1. The expected warnings are vLLM's own words
// (_raise_or_fallback: f"{feature_name} is not supported by the V1 Engine. Falling back to V0."), written out here.
#include <gtest/gtest.h>

#include <string>

#include "base/json_util.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using pftest::json_of;

namespace {

Json plan_json(const std::string& args) {
  const auto r = pftest::run_cli("plan " + args + " --json", {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << args << ": " << r.out.substr(0, 400);
  return json_of(r);
}

Json fit_json(const std::string& args) {
  const auto r = pftest::run_cli("fit " + args + " --json", {.with_stderr = false});
  EXPECT_EQ(r.code, 0) << args << ": " << r.out.substr(0, 400);
  return json_of(r);
}

bool mentions(const Json& list, const std::string& fragment) {
  for (const auto& e : list)
    if (e.is_string() && e.get<std::string>().find(fragment) != std::string::npos) return true;
  return false;
}

// One deployment vLLM's V1 oracle sends to V0, as both commands take it.
struct Fallback {
  const char* model;
  const char* device;
  const char* engine;
  const char* flags;    // the flags both commands take ("" none)
  const char* warning;  // vLLM's warning (the feature name of _raise_or_fallback)
  const char* blocks;   // the start of V0's executor line on that platform
};

}  // namespace

// Each fall-back of engine_cores.json v1_fallbacks on a card it names: the plan row at TP 1 holds fit's KV tokens and
// concurrency (before: T4 on vLLM 0.9.1, 99,600 tokens in plan against fit's 99,488; A100 with --kv-cache-dtype fp8,
// V1's sizing in plan), fit prints V0's lines for it, and the plan says the card's rows were sized as V0.
TEST(EngineVersions31, Issue15_PlanRowsSizeTheV0FallBackAsFitDoes) {
  const Fallback cases[] = {
      {"Qwen/Qwen3-0.6B", "T4", "vllm@0.9.1", "", "Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0.", "# cuda blocks: "},
      {"Qwen/Qwen3-0.6B", "V100-32GB", "vllm@0.10.1", "", "Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0.", "# cuda blocks: "},
      {"Qwen/Qwen3-0.6B", "A100-80GB", "vllm@0.9.1", "--kv-cache-dtype fp8", "--kv-cache-dtype is not supported by the V1 Engine. Falling back to V0.",
       "# cuda blocks: "},
      {"Qwen/Qwen3-8B", "910B4", "vllm-ascend@0.9.1", "--kv-cache-dtype int8", "--kv-cache-dtype is not supported by the V1 Engine. Falling back to V0.",
       "# npu blocks: "},
      // VLLM_ATTENTION_BACKEND outside the oracle's V1_BACKENDS: the words vLLM printed for CUTLASS_MLA_VLLM_V1 (PR #22217).
      {"Qwen/Qwen3-0.6B", "H100", "vllm@0.9.1", "--attention-backend XFORMERS",
       "VLLM_ATTENTION_BACKEND=XFORMERS is not supported by the V1 Engine. Falling back to V0. We recommend to remove VLLM_ATTENTION_BACKEND=XFORMERS from "
       "your config in favor of the V1 Engine.",
       "# cuda blocks: "},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.model) + " on " + c.device + " " + c.engine + " " + c.flags);
    const std::string common = std::string(" --engine ") + c.engine + " " + c.flags;
    const Json fit = fit_json(std::string(c.model) + " --device " + c.device + " --max-model-len 8192" + common);
    const Json plan = plan_json(std::string(c.model) + " --devices " + c.device + " --max-devices 1 --variant bf16 --context 8192" + common);
    ASSERT_TRUE(plan.contains("recommended") && plan["recommended"].size() == 1) << plan.dump().substr(0, 400);
    const Json& row = plan["recommended"][0];
    ASSERT_TRUE(fit["engine_lines"].is_array() && !fit["engine_lines"].empty());
    EXPECT_EQ(fit["engine_lines"][0].get<std::string>(), c.warning);
    EXPECT_TRUE(mentions(fit["engine_lines"], c.blocks)) << fit["engine_lines"].dump();
    EXPECT_EQ(row["kv_cache_tokens"].get<long long>(), fit["kv_cache"]["tokens"].get<long long>());
    EXPECT_DOUBLE_EQ(row["max_concurrency"].get<double>(), fit["kv_cache"]["max_concurrency"].get<double>());
    EXPECT_TRUE(mentions(plan["assumptions"], c.warning)) << plan["assumptions"].dump();
  }
}

// The oracle reads the card: in one plan over a card it sends to V0 and one it keeps on V1, each row is sized as fit
// sizes that card (the cards of one platform were one run with one engine).
TEST(EngineVersions31, Issue15_OnePlanSizesEachCardWithItsOwnEngineCore) {
  const Json plan = plan_json("Qwen/Qwen3-0.6B --devices T4,A100-80GB --max-devices 1 --variant bf16 --context 8192 --engine vllm@0.9.1");
  ASSERT_TRUE(plan.contains("recommended") && plan["recommended"].size() == 2) << plan.dump().substr(0, 400);
  for (const auto& row : plan["recommended"]) {
    const std::string device = row["device"].get<std::string>();
    SCOPED_TRACE(device);
    const Json fit = fit_json("Qwen/Qwen3-0.6B --device " + device + " --max-model-len 8192 --engine vllm@0.9.1");
    EXPECT_EQ(row["kv_cache_tokens"].get<long long>(), fit["kv_cache"]["tokens"].get<long long>());
    const bool v0 = mentions(fit["engine_lines"], "# cuda blocks: ");
    EXPECT_EQ(v0, device == "T4") << fit["engine_lines"].dump();
  }
}

// The oracle's attention-backend check keeps a name of its V1 list on V1, and 0.11 has no V0 to send anything to.
TEST(EngineVersions31, Issue15_AttentionBackendOnV1StaysV1) {
  for (const char* args : {"--engine vllm@0.9.1 --attention-backend FLASHINFER", "--engine vllm@0.11.0 --attention-backend XFORMERS"}) {
    SCOPED_TRACE(args);
    const Json fit = fit_json(std::string("Qwen/Qwen3-0.6B --device H100 --max-model-len 8192 ") + args);
    EXPECT_FALSE(mentions(fit["engine_lines"], "Falling back to V0")) << fit["engine_lines"].dump();
    EXPECT_FALSE(mentions(fit["engine_lines"], "# cuda blocks: ")) << fit["engine_lines"].dump();
  }
}

// V0 under pipeline parallel (vLLM 0.9.1 on T4s, sent to V0 by the oracle). Each stage's worker logs V0's memory summary
// (vllm/worker/worker.py determine_num_available_blocks logs it on every rank; one line stood for all stages before), the
// executor keeps the minimum of the stages' blocks, and the CPU blocks are the 4 GiB swap space over one block of the
// stage's own layers (CacheEngine.get_cache_block_size counts the rank's layers). Worked by hand for Llama-3.1-8B
// (../shared/models/meta-llama__Meta-Llama-3.1-8B/config.json: 32 layers, 8 KV heads, head_dim 128) at PP 2: 16 layers a
// stage, a 16-token block in 16-bit 16 x 16 x 8 x 128 x 2 x 2 B = 1 MiB, 4 GiB / 1 MiB = 4096 CPU blocks.
TEST(EngineVersions31, Issue15_V0UnderPipelineParallelPrintsEachStagesSummary) {
  const Json fit = fit_json("meta-llama/Meta-Llama-3.1-8B --device T4 --engine vllm@0.9.1 --max-model-len 4096 --pipeline-parallel-size 2");
  const Json& lines = fit["engine_lines"];
  ASSERT_TRUE(lines.is_array());
  const long long block_bytes = 16LL * 16 * 8 * 128 * 2 * 2;
  EXPECT_EQ(block_bytes, 1048576);
  const std::string cpu_blocks = ", # CPU blocks: " + std::to_string((4LL << 30) / block_bytes);
  EXPECT_TRUE(mentions(lines, cpu_blocks)) << lines.dump();
  EXPECT_TRUE(mentions(lines, "# cuda blocks: " + std::to_string(fit["kv_cache"]["num_blocks"].get<long long>()) + cpu_blocks)) << lines.dump();
  for (const char* stage : {"(PP stage 0, T4, layers 0-15) ", "(PP stage 1, T4, layers 16-31) "}) {
    EXPECT_TRUE(mentions(lines, std::string(stage) + "the current vLLM instance can use total_gpu_memory (")) << stage << lines.dump();
    EXPECT_TRUE(mentions(lines, std::string(stage) + "model weights take ")) << stage << lines.dump();
  }
}
