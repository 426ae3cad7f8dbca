#include <algorithm>
#include <cmath>
#include <fstream>
#include <gtest/gtest.h>

#include "base/file.hpp"
#include "base/units.hpp"
#include "model/hf_config.hpp"
#include "model/model_spec.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {
ModelSpec load(const std::string& dir) {
  auto spec = load_hf_config(pftest::shared_path("models/" + dir + "/config.json"));
  EXPECT_TRUE(spec.has_value()) << (spec ? "" : spec.error().describe());
  return spec ? *spec : ModelSpec{};
}
}  // namespace

TEST(HfConfig, Qwen3_8B_ParamsAndKv) {
  const auto spec = load("Qwen__Qwen3-8B");
  // 36 layers x (q 4096x4096 + k,v 4096x1024 + o + q/k norm 2x128 + MLP 3x4096x12288 + 2 norms)
  // + untied embedding and lm_head 151936x4096 each + final norm = 8,190,735,360.
  EXPECT_EQ(count_params(spec).total, 8190735360);
  // 36 layers x 8 KV heads x 128 x (K+V) x 2 bytes.
  EXPECT_EQ(kv_bytes_per_token(spec, 2), 147456);
  EXPECT_EQ(kv_bytes_per_token(spec, 1), 73728);
}

TEST(HfConfig, Llama31_8B_Params) { EXPECT_EQ(count_params(load("meta-llama__Meta-Llama-3.1-8B")).total, 8030261248); }

TEST(HfConfig, DeepSeekV3_MlaKvAndMoeParams) {
  const auto spec = load("deepseek-ai__DeepSeek-V3");
  EXPECT_EQ(kv_bytes_per_token(spec, 2), 61 * (512 + 64) * 2);  // 70,272: one latent "head" per layer
  const auto p = count_params(spec);
  // Published (README_WEIGHTS.md of deepseek-ai/DeepSeek-V3): main model 671B total, 36.7B activated ("37B" in the
  // paper); the MTP module (11.5B unique + the shared embedding and head = 14B) is counted apart, in neither.
  EXPECT_NEAR(static_cast<double>(p.total), 671e9, 671e9 * 0.005);
  // By hand from config.json: per layer MLA 7168x1536 + 1536 + 1536x(128x192) + 7168x576 + 512 + 512x(128x256) +
  // (128x128)x7168 = 187,107,328 plus 2 x 7168 norms; 3 dense MLPs of 3 x 7168 x 18432; 58 MoE layers with
  // 8 routed + 1 shared experts of 3 x 7168 x 2048, router 256 x 7168 + 256 bias; embedding and head 129280 x 7168.
  const int64_t per_layer = 187107328 + 2 * 7168;
  const int64_t expert = 3LL * 7168 * 2048;
  const int64_t by_hand = 61 * per_layer + 3 * (3LL * 7168 * 18432) + 58 * (9 * expert + 256 * 7168 + 256) + 2 * (129280LL * 7168) + 7168;
  EXPECT_EQ(p.active, by_hand);  // 37,552,297,472: embedding and head counted
  EXPECT_EQ(p.active_matmul, by_hand - 129280LL * 7168);  // the embedding lookup is not a matmul
  EXPECT_NEAR(static_cast<double>(p.active_matmul), 36.7e9, 36.7e9 * 0.005);
  EXPECT_EQ(std::llround(static_cast<double>(p.active_matmul) / 1e9), 37);
  EXPECT_EQ(spec.mtp_layers, 1);
  EXPECT_NEAR(static_cast<double>(p.mtp), 14e9, 14e9 * 0.10);
  EXPECT_EQ(count_layers(spec, LayerKind::mla_attention), 61);
}

TEST(HfConfig, Qwen35_27B_HybridCachesOnlyFullAttentionLayers) {
  const auto spec = load("Qwen__Qwen3.5-27B");
  EXPECT_EQ(count_layers(spec, LayerKind::full_attention), 16);
  EXPECT_EQ(count_layers(spec, LayerKind::linear_attention), 48);
  EXPECT_EQ(kv_bytes_per_token(spec, 2), 65536);  // 2 x 16 x 4 x 256 x 2
  // Per GDN layer: conv (2x16x128 + 48x128) x 3 x 2 B = 61,440; ssm 48 x 128 x 128 x 4 B (mamba_ssm_dtype float32) = 3,145,728.
  EXPECT_EQ(state_bytes_per_sequence(spec, 2), 48 * (61440 + 3145728));
  EXPECT_GT(count_params(spec).vision, 400000000);
}

// Issue 15: a Gated DeltaNet layer keeps its key-head count (config.json linear_num_key_heads) beside the value heads
// (ssm_heads, linear_num_value_heads); attention layers carry 0. Qwen3.5-27B: 16 key and 48 value heads;
// Qwen3-Next-80B-A3B: 16 key and 32 value heads (their shared/models configs).
TEST(HfConfig, Issue15_LinearNumKeyHeadsRead) {
  const struct { const char* dir; int64_t key_heads, value_heads; } cases[] = {
      {"Qwen__Qwen3.5-27B", 16, 48}, {"Qwen__Qwen3-Next-80B-A3B-Thinking", 16, 32}};
  for (const auto& c : cases) {
    const auto spec = load(c.dir);
    int64_t gdn = 0;
    for (const auto& l : spec.layers) {
      if (l.kind == LayerKind::linear_attention) {
        ++gdn;
        EXPECT_EQ(l.linear_num_key_heads, c.key_heads) << c.dir;
        EXPECT_EQ(l.ssm_heads, c.value_heads) << c.dir;
      } else {
        EXPECT_EQ(l.linear_num_key_heads, 0) << c.dir;
      }
    }
    EXPECT_GT(gdn, 0) << c.dir;
  }
}

TEST(HfConfig, GptOss120b_SlidingAndMxfp4Bytes) {
  const auto spec = load("openai__gpt-oss-120b");
  EXPECT_EQ(count_layers(spec, LayerKind::sliding_attention), 18);
  EXPECT_EQ(count_layers(spec, LayerKind::full_attention), 18);
  for (const auto& l : spec.layers) {
    if (l.kind == LayerKind::sliding_attention) EXPECT_EQ(l.sliding_window, 128);
  }
  // OpenAI gpt-oss model card (2025-08-05), checkpoint size table: gpt-oss-120b 60.8 GiB.
  const double gib = bytes_to_gib(compute_weight_bytes(spec).total);
  EXPECT_NEAR(gib, 60.8, 60.8 * 0.02);
  EXPECT_NEAR(static_cast<double>(count_params(spec).total), 116.8e9, 116.8e9 * 0.01);
}

TEST(HfConfig, NemotronH_MambaLayersKeepStateNotKv) {
  const auto spec = load("nvidia__Nemotron-H-56B-Base-8K");
  EXPECT_EQ(count_layers(spec, LayerKind::full_attention), 10);
  EXPECT_EQ(count_layers(spec, LayerKind::mamba), 54);
  EXPECT_EQ(kv_bytes_per_token(spec, 2), 10 * 8 * 128 * 2 * 2);
  EXPECT_GT(state_bytes_per_sequence(spec, 2), 0);
}

TEST(HfConfig, Qwen3VL8B_TextPlusVision) {
  const auto spec = load("Qwen__Qwen3-VL-8B-Instruct");
  const auto p = count_params(spec);
  EXPECT_EQ(p.text, 8190735360);  // same text stack as Qwen3-8B
  EXPECT_EQ(p.vision, 576388336);  // 27 blocks + merger + 3 deepstack mergers, worked in vision_tower.cpp's layout
}

struct BadConfig {
  const char* json;
  const char* fragment;
};

// Without tie_word_embeddings the text model's config class decides: LlamaConfig / MistralConfig / Qwen
// default to untied (an lm_head of its own), Gemma and the PretrainedConfig base to tied.
TEST(HfConfig, UnstatedTieFollowsTheConfigClassDefault) {
  auto params = [](const std::string& type) {
    auto json = parse_json(R"({"model_type": ")" + type + R"(", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 128, "vocab_size": 1000})",
                           "config.json");
    EXPECT_TRUE(json.has_value());
    auto spec = parse_hf_config(*json, "config.json");
    EXPECT_TRUE(spec.has_value());
    return spec ? count_params(*spec).embedding : 0;
  };
  EXPECT_EQ(params("mistral"), 2 * 1000 * 64);
  EXPECT_EQ(params("llama"), 2 * 1000 * 64);
  EXPECT_EQ(params("gemma2"), 1000 * 64);
}

TEST(HfConfig, RejectsHostileConfigsWithFieldNames) {
  const BadConfig cases[] = {
      {R"({"hidden_size": 4096, "num_attention_heads": 32, "vocab_size": 1000})", "num_hidden_layers"},
      {R"({"hidden_size": "big", "num_hidden_layers": 2, "num_attention_heads": 32, "vocab_size": 1000})", "hidden_size: expected an integer"},
      {R"({"hidden_size": 4096, "num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 6, "vocab_size": 1000})", "not a multiple of num_key_value_heads (6)"},
      {R"({"hidden_size": -1, "num_hidden_layers": 2, "num_attention_heads": 32, "vocab_size": 1000})", "hidden_size is -1"},
      {R"({"hidden_size": 64, "num_hidden_layers": 99999999, "num_attention_heads": 8, "vocab_size": 1000})", "num_hidden_layers"},
      {R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 10, "layer_types": ["full_attention"]})", "layer_types"},
      {R"([1,2,3])", "expected a JSON object"},
  };
  for (const auto& c : cases) {
    auto json = parse_json(c.json, "config.json");
    ASSERT_TRUE(json.has_value());
    auto spec = parse_hf_config(*json, "config.json");
    ASSERT_FALSE(spec.has_value()) << c.json;
    EXPECT_EQ(spec.error().kind, ErrorKind::corrupt);
    EXPECT_NE(spec.error().describe().find(c.fragment), std::string::npos) << spec.error().describe();
    EXPECT_NE(spec.error().describe().find("config.json"), std::string::npos);
  }
  auto malformed = parse_json("{\"hidden_size\": 4", "config.json");
  ASSERT_FALSE(malformed.has_value());
  EXPECT_NE(malformed.error().describe().find("malformed JSON at byte"), std::string::npos);
}

namespace {
// A copy of a real config.json from ../shared/models with `from` replaced by `to` in its text, in a
// scratch directory of its own; returns the directory.
std::string mutated_copy(const std::string& model, const std::string& from, const std::string& to, const std::string& name) {
  auto text = read_text_file(pftest::shared_path("models/" + model + "/config.json"));
  EXPECT_TRUE(text.has_value());
  std::string s = text ? *text : "";
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  const std::string dir = pftest::scratch_dir(name);
  std::ofstream(dir + "/config.json") << s;
  return dir;
}

struct Mutation {
  const char* model;
  const char* from;
  const char* to;
  const char* fragment;  // expected in the error message
};
}  // namespace

// Issue 19 item 5: products of config values overflowed int64 and gave plausible wrong answers
// with exit 0 ("fits, 1,802,415 tokens" for ssm_state_size 2^62; a huge kv_lora_rank gave a smaller
// KV per token). Now each is a corrupt error naming the field, and the CLI exits 2.
// Item 10: max_position_embeddings -1 became 4096 labelled as the model's.
// Item 12: 2^63 layers read as a negative number; a NaN was reported as "missing".
TEST(HfConfig, Issue19_OverflowAndImpossibleValuesNameTheField) {
  const Mutation cases[] = {
      {"nvidia__Nemotron-H-56B-Base-8K", "\"ssm_state_size\": 256", "\"ssm_state_size\": 4611686018427387904",
       "ssm_state_size is 4611686018427387904, expected 0..4194304"},
      {"deepseek-ai__DeepSeek-V3", "\"kv_lora_rank\": 512", "\"kv_lora_rank\": 4611686018427387904", "kv_lora_rank is 4611686018427387904"},
      {"deepseek-ai__DeepSeek-V3", "\"kv_lora_rank\": 512", "\"kv_lora_rank\": -512", "kv_lora_rank is -512"},
      {"Qwen__Qwen3-8B", "\"max_position_embeddings\": 40960", "\"max_position_embeddings\": -1", "max_position_embeddings is -1, expected 1..2147483647"},
      {"Qwen__Qwen3-8B", "\"num_hidden_layers\": 36", "\"num_hidden_layers\": 9223372036854775808",
       "num_hidden_layers: expected an integer below 2^63, found integer"},
      {"Qwen__Qwen3-8B", "\"num_attention_heads\": 32", "\"num_attention_heads\": NaN", "num_attention_heads is NaN, not a finite number"},
      {"Qwen__Qwen3-8B", "\"head_dim\": 128", "\"head_dim\": -Infinity", "head_dim is -Infinity, not a finite number"},
      {"Qwen__Qwen3-8B", "\"max_position_embeddings\": 40960", "\"max_position_embeddings\": 40960, \"partial_rotary_factor\": 7",
       "partial_rotary_factor is 7, expected a number in (0, 1]"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string dir = mutated_copy(c.model, c.from, c.to, "issue19-" + std::to_string(i++));
    auto spec = load_hf_config(dir + "/config.json");
    ASSERT_FALSE(spec.has_value()) << c.to;
    EXPECT_EQ(spec.error().kind, ErrorKind::corrupt);
    EXPECT_NE(spec.error().message.find(c.fragment), std::string::npos) << spec.error().message;
    EXPECT_NE(spec.error().message.find("config.json"), std::string::npos);
    const auto run = pftest::run_cli("fit " + dir + " --device H100-SXM");
    EXPECT_EQ(run.code, 2) << run.out;
    EXPECT_NE(run.out.find(c.fragment), std::string::npos) << run.out;
  }
}

// Issue 19 item 5: dimensions each within their caps whose product overflows (MLA: heads x
// (qk_nope_head_dim + v_head_dim) x kv_lora_rank rows x cols) name the module, never wrap.
TEST(HfConfig, Issue19_ParameterCountOverflowNamesTheModule) {
  auto json = parse_json(R"({"hidden_size": 4194304, "num_hidden_layers": 10000, "num_attention_heads": 4194304, "vocab_size": 1000,
    "kv_lora_rank": 4194304, "qk_rope_head_dim": 64, "qk_nope_head_dim": 4194304, "v_head_dim": 4194304})",
                         "config.json");
  ASSERT_TRUE(json.has_value());
  auto spec = parse_hf_config(*json, "config.json");
  ASSERT_FALSE(spec.has_value());
  EXPECT_NE(spec.error().message.find("config.json: model.layers.*.self_attn."), std::string::npos) << spec.error().message;
  EXPECT_NE(spec.error().message.find("parameter count overflows"), std::string::npos) << spec.error().message;
}

// Real configs with Infinity (Nemotron-H's time_step_limit) still load: only fields that are read
// as numbers object to a non-finite value.
TEST(HfConfig, Issue19_InfinityInAnUnreadFieldStillLoads) {
  const auto spec = load("nvidia__Nemotron-H-56B-Base-8K");
  EXPECT_EQ(spec.num_hidden_layers, 118);  // config.json num_hidden_layers
}

// Issue 19 item 5: Mamba state heads x head_dim x ssm_state_size, each within its cap, overflowed
// state_bytes_per_sequence (int64) while the weights stayed small.
TEST(HfConfig, Issue19_RecurrentStateOverflowNamesTheKeys) {
  auto json = parse_json(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "vocab_size": 100, "hybrid_override_pattern": "M*",
    "mamba_num_heads": 4194304, "mamba_head_dim": 4194304, "ssm_state_size": 4194304, "n_groups": 1, "conv_kernel": 4})",
                         "config.json");
  ASSERT_TRUE(json.has_value());
  auto spec = parse_hf_config(*json, "config.json");
  ASSERT_FALSE(spec.has_value());
  EXPECT_NE(spec.error().message.find("config.json: mamba_num_heads x mamba_head_dim x ssm_state_size"), std::string::npos) << spec.error().message;
  EXPECT_NE(spec.error().message.find("recurrent state cache size overflows"), std::string::npos) << spec.error().message;
}

// Issue 16: auto_map (top level, or inside text_config) is recorded, so the start command can add
// --trust-remote-code; a config without one records none; a malformed one names the key.
TEST(HfConfig, Issue16_AutoMapRecorded) {
  auto ds = load_hf_config(pftest::shared_path("models/deepseek-ai__DeepSeek-V3/config.json"));
  ASSERT_TRUE(ds.has_value()) << ds.error().describe();
  bool causal = false;
  for (const auto& e : ds->auto_map) causal |= e == "AutoModelForCausalLM=modeling_deepseek.DeepseekV3ForCausalLM";
  EXPECT_TRUE(causal) << ds->auto_map.size();
  auto nemotron = load_hf_config(pftest::shared_path("models/nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16/config.json"));
  ASSERT_TRUE(nemotron.has_value()) << nemotron.error().describe();
  EXPECT_FALSE(nemotron->auto_map.empty());
  auto qwen = load_hf_config(pftest::shared_path("models/Qwen__Qwen3-32B/config.json"));
  ASSERT_TRUE(qwen.has_value());
  EXPECT_TRUE(qwen->auto_map.empty());
  auto cfg = load_json_file(pftest::shared_path("models/Qwen__Qwen3-32B/config.json"));
  ASSERT_TRUE(cfg.has_value());
  (*cfg)["auto_map"] = "modeling_x.X";
  auto bad = parse_hf_config(*cfg, "config.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("auto_map: expected an object"), std::string::npos) << bad.error().message;
}

// Issue 15: vLLM's derived max_model_len (vllm/config/model.py, _get_and_verify_max_len), which a --max-model-len
// above it runs into. Real configs: Qwen3-8B states max_position_embeddings 40960 and no rope scaling; DeepSeek-V3
// yarn with original_max_position_embeddings 4096 and an integer factor 40 (4096 x 40 = 163840, printed as an int);
// Kimi-K2 yarn 4096 x 32.0 = 131072.0 (a float factor: Python prints "131072.0"); Llama 3.1's rope type llama3 is not
// scaled (131072 stays).
TEST(HfConfig, Issue15_DerivedMaxModelLenAsVllmDerivesIt) {
  const struct {
    const char* dir;
    int64_t len;
    const char* text;
  } cases[] = {
      {"Qwen__Qwen3-8B", 40960, "max_position_embeddings=40960 or model_max_length=None"},
      {"deepseek-ai__DeepSeek-V3", 163840, "max_position_embeddings=163840 or model_max_length=None"},
      {"moonshotai__Kimi-K2-Instruct", 131072, "max_position_embeddings=131072.0 or model_max_length=None"},
      {"meta-llama__Meta-Llama-3.1-8B", 131072, "max_position_embeddings=131072 or model_max_length=None"},
  };
  for (const auto& c : cases) {
    const auto spec = load(c.dir);
    EXPECT_EQ(spec.derived_max_model_len, c.len) << c.dir;
    EXPECT_EQ(spec.derived_max_model_len_text, c.text) << c.dir;
  }
  // Synthetic: a linear factor scales max_position_embeddings; model_max_length replaces the smallest key and is
  // named; seq_length below max_position_embeddings is the smallest; a dynamic factor of 2 scales too (vLLM applies
  // every type but su / longrope / llama3); no length key at all leaves it unknown (0).
  const auto derived = [](const std::string& extra) {
    auto json = parse_json(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 8, "intermediate_size": 128, "vocab_size": 1000)" +
                               extra + "}",
                           "config.json");
    EXPECT_TRUE(json.has_value());
    auto spec = parse_hf_config(*json, "config.json");
    EXPECT_TRUE(spec.has_value());
    return spec ? std::make_pair(spec->derived_max_model_len, spec->derived_max_model_len_text) : std::make_pair(int64_t{-1}, std::string());
  };
  EXPECT_EQ(derived(R"(, "max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 4.0})"),
            std::make_pair(int64_t{16384}, std::string("max_position_embeddings=16384.0 or model_max_length=None")));
  EXPECT_EQ(derived(R"(, "max_position_embeddings": 4096, "model_max_length": 8192)"),
            std::make_pair(int64_t{8192}, std::string("model_max_length=8192 or model_max_length=8192")));
  EXPECT_EQ(derived(R"(, "max_position_embeddings": 8192, "seq_length": 2048)"),
            std::make_pair(int64_t{2048}, std::string("seq_length=2048 or model_max_length=None")));
  EXPECT_EQ(derived(R"(, "max_position_embeddings": 4096, "rope_scaling": {"rope_type": "dynamic", "factor": 2})"),
            std::make_pair(int64_t{8192}, std::string("max_position_embeddings=8192 or model_max_length=None")));
  EXPECT_EQ(derived("").first, 0);
}

// Issue 19: a negative expert count was read as "no experts": DeepSeek-V3 with n_routed_experts -1 became a dense
// 37 B model that fit one H100 (exit 0). 0 still means dense; a negative count is refused with the key.
TEST(HfConfig, Issue19_NegativeExpertCountIsRefused) {
  struct Case {
    const char* model;
    const char* from;
    const char* to;
    const char* fragment;
  };
  const Case cases[] = {
      {"deepseek-ai__DeepSeek-V3", "\"n_routed_experts\": 256", "\"n_routed_experts\": -1", "n_routed_experts is -1, expected 1.."},
      {"openai__gpt-oss-20b", "\"num_local_experts\": 32", "\"num_local_experts\": -32", "num_local_experts is -32, expected 1.."},
      {"Qwen__Qwen3-30B-A3B", "\"num_experts\": 128", "\"num_experts\": -128", "num_experts is -128, expected 1.."},
  };
  for (const auto& c : cases) {
    const std::string dir = mutated_copy(c.model, c.from, c.to, "issue19-negative-experts");
    auto spec = load_hf_config(dir + "/config.json");
    ASSERT_FALSE(spec.has_value()) << c.model;
    EXPECT_EQ(spec.error().kind, ErrorKind::corrupt);
    EXPECT_NE(spec.error().describe().find(c.fragment), std::string::npos) << spec.error().describe();
  }
  // 0 routed experts: a dense model, as before (Qwen3-30B-A3B's 48 layers without experts: far below its 30.5 B).
  const std::string dense = mutated_copy("Qwen__Qwen3-30B-A3B", "\"num_experts\": 128", "\"num_experts\": 0", "issue19-zero-experts");
  auto spec = load_hf_config(dense + "/config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  EXPECT_EQ(spec->num_experts, 0);
}

// Issue 19: a torch_dtype preflight does not know was reported as "config has no torch_dtype/dtype".
TEST(HfConfig, Issue19_UnknownDtypeIsNamedInTheAssumption) {
  const std::string dir = mutated_copy("Qwen__Qwen3-8B", "\"torch_dtype\": \"bfloat16\"", "\"torch_dtype\": \"float7\"", "issue19-unknown-dtype");
  auto spec = load_hf_config(dir + "/config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  EXPECT_EQ(spec->dtype, Dtype::bf16);
  const auto& a = spec->assumptions;
  EXPECT_NE(std::find(a.begin(), a.end(), "config's torch_dtype 'float7' is not a dtype preflight knows; assumed bfloat16"), a.end());
  EXPECT_EQ(std::find(a.begin(), a.end(), "config has no torch_dtype/dtype; assumed bfloat16"), a.end());
}
