// Issue 15: speculative drafters that are their own checkpoints (draft_model, dflash, eagle3 with "model"),
// sized from the drafter's own config.json as deploy resolves it (catalogue, --models DIR, hub cache).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "deploy/deployment.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "model/model_source.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

struct Target {
  model::ModelSpec model;
  device::DeviceSpec device;
  engine::EngineProfile engine;
  engine::Overheads overheads;
};

Target target(const std::string& model_id) {
  Target t;
  auto m = model::resolve_model(model_id);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().describe());
  t.model = *m;
  auto devices = device::load_device_catalog();
  t.device = *device::find_device(*devices, "H200");
  auto engines = engine::load_engine_catalog();
  t.engine = *engine::select_engine(*engines, "vllm", "0.11.0");
  t.overheads = *engines->overheads_for(t.engine.platform);
  return t;
}

Expected<estimate::Deployment> with_spec(const std::string& json, const std::vector<std::string>& dirs) {
  deploy::Flags f;
  f.max_model_len = deploy::Given<int64_t>{32768, "--max-model-len"};
  f.speculative_config = deploy::Given<std::string>{json, "--speculative-config"};
  f.drafter_model_dirs = dirs;
  return deploy::deployment_from_flags(f);
}

estimate::Deployment plain() {
  estimate::Deployment d;
  d.max_model_len = 32768;
  return d;
}

}  // namespace

// Qwen3-8B with Qwen3-0.6B as its draft model (../shared/models configs). vLLM's draft-model proposer loads the
// whole drafter (its own embedding; tie_word_embeddings true, so no separate head), inside the target's
// "Model loading took" line. Qwen3-0.6B: hidden 1024, 28 layers, 16 heads x 128, 8 KV heads x 128, MLP 3072:
//   per layer q 1024 x 2048 = 2,097,152; k, v 1024 x 1024 = 2 x 1,048,576; o 2048 x 1024 = 2,097,152;
//   q/k norms 2 x 128; MLP 3 x 1024 x 3072 = 9,437,184; 2 norms x 1024 -> 15,730,944; x 28 = 440,466,432;
//   + final norm 1,024 + embedding 151,936 x 1,024 = 155,582,464 -> 596,049,920 params x 2 B = 1,192,099,840 B.
// KV: each of its 28 layers caches 8 x 128 x (K + V) x 2 B = 4,096 B per token, the target's own page:
//   28 x 4,096 = 114,688 B per token more.
TEST(FitSpec, Issue15_DraftModelSizedFromItsOwnConfig) {
  auto t = target("Qwen/Qwen3-8B");
  const auto base = estimate::estimate_fit(t.model, t.device, t.engine, t.overheads, plain());
  auto d = with_spec(R"({"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 3})", {pftest::shared_path("models")});
  ASSERT_TRUE(d.has_value()) << d.error().message;
  ASSERT_TRUE(d->speculative.drafter);
  const auto e = estimate::estimate_fit(t.model, t.device, t.engine, t.overheads, *d);
  EXPECT_DOUBLE_EQ(e.drafter_weights_bytes, 1192099840.0);
  EXPECT_NEAR(e.weights_bytes - base.weights_bytes, 1192099840.0, 1.0);
  EXPECT_EQ(e.drafter_layers, 28);
  EXPECT_EQ(e.kv_bytes_per_token_rank - base.kv_bytes_per_token_rank, 114688);
}

// A DFlash drafter in the layout of z-lab/Qwen3.8-27B-DFlash2 (5 layers, 8 KV heads x 128; written here) on
// Qwen3.5-27B. vLLM's DFlash head (qwen3_dflash.py) caches KV in every layer and uses the target's embedding and
// lm_head; its fc takes num_hidden_layers target hidden states. Per layer: q 5120 x 4096 = 20,971,520;
// k, v 5120 x 1024 = 2 x 5,242,880; o 4096 x 5120 = 20,971,520; q/k norms 2 x 128; MLP 3 x 5120 x 17408 =
// 267,386,880; 2 norms x 5120 -> 319,826,176; x 5 = 1,599,130,880; + final norm 5,120; + fc 5 x 5120 x 5120 =
// 131,072,000 -> 1,730,208,000 params x 2 B = 3,460,416,000 B.
// KV: 8 x 128 x 2 x 2 B = 4,096 B per token per layer, the target's full-attention page (4 x 256 x 2 x 2 B):
// 5 more layers in that group, + 20,480 B per token.
TEST(FitSpec, Issue15_DflashDrafterSizedFromItsOwnConfig) {
  const std::string dir = pftest::scratch_dir("dflash");
  std::filesystem::create_directories(dir + "/z-lab__Qwen3.5-27B-DFlash");
  std::ofstream(dir + "/z-lab__Qwen3.5-27B-DFlash/config.json")
      << R"({"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": 5120, "num_hidden_layers": 5,
             "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 17408,
             "vocab_size": 248320, "max_position_embeddings": 262144, "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16",
             "tie_word_embeddings": false, "dflash_config": {"mask_token_id": 248070, "target_layer_ids": [1, 16, 31, 46, 61]}})";
  auto t = target("Qwen/Qwen3.5-27B");
  const auto base = estimate::estimate_fit(t.model, t.device, t.engine, t.overheads, plain());
  auto d = with_spec(R"({"method": "dflash", "model": "z-lab/Qwen3.5-27B-DFlash", "num_speculative_tokens": 7})", {dir});
  ASSERT_TRUE(d.has_value()) << d.error().message;
  const auto e = estimate::estimate_fit(t.model, t.device, t.engine, t.overheads, *d);
  EXPECT_DOUBLE_EQ(e.drafter_weights_bytes, 3460416000.0);
  EXPECT_NEAR(e.weights_bytes - base.weights_bytes, 3460416000.0, 1.0);
  EXPECT_EQ(e.drafter_layers, 5);
  // The same speculative tokens without a drafter (ngram) isolate the drafter's KV layers from the longer conv states.
  auto ngram = with_spec(R"({"method": "ngram", "num_speculative_tokens": 7})", {});
  ASSERT_TRUE(ngram.has_value());
  const auto n = estimate::estimate_fit(t.model, t.device, t.engine, t.overheads, *ngram);
  EXPECT_EQ(e.kv_bytes_per_token_rank - n.kv_bytes_per_token_rank, 20480);
  std::filesystem::remove_all(dir);
}

// A drafter whose config cannot be read is bad input naming it (exit 2), never a silent 0; an EAGLE head keeps
// its assumed shape.
TEST(FitSpec, Issue15_UnreadableDrafterIsAnError) {
  auto d = with_spec(R"({"method": "dflash", "model": "z-lab/NoSuch-DFlash", "num_speculative_tokens": 5})", {});
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(d.error().message.find("drafter 'z-lab/NoSuch-DFlash' (method dflash)"), std::string::npos) << d.error().message;
  EXPECT_NE(d.error().message.find("cannot be sized"), std::string::npos) << d.error().message;
  auto nomodel = with_spec(R"({"method": "draft_model", "num_speculative_tokens": 2})", {});
  ASSERT_FALSE(nomodel.has_value());
  auto eagle = with_spec(R"({"method": "eagle3", "model": "yuhuili/NoSuch-EAGLE3", "num_speculative_tokens": 2})", {});
  ASSERT_TRUE(eagle.has_value());
  EXPECT_FALSE(eagle->speculative.drafter);
}

// Issue 15/16, the club-3090 DFlash2 boots: a DFlash2 drafter's layers are sliding-window attention
// (layer_types all "sliding_attention", sliding_window 2048: vLLM PR #52816 as backported in club-3090
// models/qwen3.8-27b/vllm/patches/vllm-dflash2-backport; the 2,048-token window from syv-ai/qwen38-27b-rtx3090
// docs/optimizations.md), so vLLM gives them a SlidingWindowSpec: a KV group kind of their own, not 5 more
// full-attention layers. The config below is written here in that layout (5 layers, 8 KV heads x 128).
// By hand, Qwen/Qwen3.5-27B at TP 2, bf16 KV, max_model_len 65,536, prefix caching on (align), 7 speculative
// tokens, max_num_batched_tokens 8,192, a budget of 11.15 GiB = 11,972,221,337 B (club3090-1086's printed line):
//   K+V per token per layer on a rank: target 2 heads x (256 + 256) x 2 B = 2,048; drafter 4 x (128 + 128) x 2 B
//   = 2,048, the same, so the drafter adds 5 layers of the target's page.
//   GDN state: conv 5,120 channels x (3 + 7) x 2 B = 102,400; ssm 24 x 128 x 128 x 4 B = 1,572,864; 1,675,264.
//   block 16 x ceil(1,675,264 / (16 x 2,048)) = 16 x 52 = 832; page 832 x 2,048 = 1,703,936;
//   11,972,221,337 // 1,703,936 = 7,026 pages.
//   Sliding drafter: kinds full 16, sliding 5, GDN 48 -> group size 5 (48 >= 1.5 x 5), 4 + 1 + 10 = 15 groups;
//     num_blocks 7,026 // 5 = 1,405; a request: 4 x ceil(65,536 / 832) = 4 x 79 = 316, the sliding group
//     ceil(min(2,047 + 8,192, 65,536) / 832) + 1 = 13 + 1 = 14, the GDN groups 10 x (2 + 7) = 90: 420;
//     1,405 / 420 = 3.3452x, int(1,405 x 65,536 / 420) = 219,233 tokens.
//   The same drafter read as full attention (no layer_types): kinds full 21, GDN 48 -> group size 21
//     (48 >= 31.5), num_blocks 7,026 // 21 = 334; a request 79 + 3 x 9 = 106: 3.1509x, 206,500 tokens.
// The boot printed 3.27x and 214,135 tokens (club-3090 #1086), whose num_blocks can only be 281 or a multiple
// (1,405 = 5 x 281): the group size 5 is what the printed line says. The own group is a versioned rule
// (engines.json drafter_sliding_kv_group, vLLM 0.26+): on the 0.21-0.25 profile, which has no such rule, the
// DFlash2 layers count as full attention (206,500 tokens) and the estimate says so.
TEST(FitSpec, Issue15_Dflash2SlidingDrafterLayersAreAKvGroupOfTheirOwn) {
  const std::string dir = pftest::scratch_dir("dflash2");
  const std::string common = R"("model_type": "qwen3", "hidden_size": 5120, "num_hidden_layers": 5,
             "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 17408,
             "vocab_size": 248320, "max_position_embeddings": 262144, "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16",
             "tie_word_embeddings": false)";
  std::filesystem::create_directories(dir + "/z-lab__Qwen3.8-27B-DFlash2");
  std::ofstream(dir + "/z-lab__Qwen3.8-27B-DFlash2/config.json")
      << R"({"architectures": ["DFlash2DraftModel"], "is_causal": false, "sliding_window": 2048,
             "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention"], )"
      << common << "}";
  std::filesystem::create_directories(dir + "/z-lab__Qwen3.8-27B-DFlash-full");
  std::ofstream(dir + "/z-lab__Qwen3.8-27B-DFlash-full/config.json") << R"({"architectures": ["DFlashDraftModel"], )" << common << "}";
  auto t = target("Qwen/Qwen3.5-27B");
  t.device = *device::find_device(*device::load_device_catalog(), "RTX5090");
  const auto engines = engine::load_engine_catalog();
  struct Row {
    const char* drafter;
    const char* version;
    int64_t group_size, num_blocks, kv_tokens;
    double concurrency;
  };
  for (const Row& row : {Row{"z-lab/Qwen3.8-27B-DFlash2", "0.27.1", 5, 1405, 219233, 1405.0 / 420.0},
                         Row{"z-lab/Qwen3.8-27B-DFlash-full", "0.27.1", 21, 334, 206500, 334.0 / 106.0},
                         Row{"z-lab/Qwen3.8-27B-DFlash2", "0.24.0", 21, 334, 206500, 334.0 / 106.0}}) {
    t.engine = *engine::select_engine(*engines, "vllm", row.version);
    auto d = with_spec(std::string(R"({"method": "dflash", "model": ")") + row.drafter + R"(", "num_speculative_tokens": 7})", {dir});
    ASSERT_TRUE(d.has_value()) << d.error().message;
    d->tensor_parallel_size = 2;
    d->max_model_len = 65536;
    d->max_num_batched_tokens = 8192;
    d->enable_prefix_caching = true;
    d->kv_cache_memory_bytes = 11.15 * 1073741824.0;
    const auto e = estimate::estimate_fit(t.model, t.device, t.engine, t.overheads, *d);
    EXPECT_EQ(e.drafter_layers, 5) << row.drafter;
    EXPECT_EQ(e.block_size, 832) << row.drafter;
    EXPECT_EQ(e.page_bytes, 1703936) << row.drafter;
    EXPECT_EQ(e.group_size, row.group_size) << row.drafter;
    EXPECT_EQ(e.num_blocks, row.num_blocks) << row.drafter;
    EXPECT_NEAR(e.max_concurrency, row.concurrency, 1e-9) << row.drafter;
    EXPECT_EQ(e.kv_tokens, row.kv_tokens) << row.drafter;
    const bool said = std::any_of(e.assumptions.begin(), e.assumptions.end(),
                                  [](const std::string& a) { return a.find("sliding-window layer(s) counted as full attention") != std::string::npos; });
    EXPECT_EQ(said, std::string(row.version) == "0.24.0") << row.drafter << " " << row.version;
  }
  std::filesystem::remove_all(dir);
}

// Issue 15 (hyb): the drafter the club-3090 dual DFlash2 recipes serve, from the catalogue
// (syvai/Qwen3.8-27B-DFlash2-W4A16, reconstructed from syv-ai/qwen38-27b-rtx3090's drafter/README.md and
// drafter/quant_dflash2.py: 5 layers, hidden 5120, 32 x 128 query / 8 x 128 KV heads, MLP 17408, compressed-tensors
// int4 group 128 symmetric on every Linear, fc included). On Qwen/Qwen3.5-27B at TP 2, int4 group 128 is
// rows x cols / 2 B of values + ceil(cols / 128) x rows x 2 B of fp16 scales (no zero points: symmetric):
//   q 4096 x 5120: 10,485,760 + 40 x 4096 x 2 = 10,813,440;  k, v 1024 x 5120: 2,621,440 + 40 x 1024 x 2 = 2,703,360 each;
//   o 5120 x 4096: 10,485,760 + 32 x 5120 x 2 = 10,813,440;  gate, up 17408 x 5120: 44,564,480 + 40 x 17408 x 2 = 45,957,120
//   each; down 5120 x 17408: 44,564,480 + 136 x 5120 x 2 = 45,957,120 -> 164,904,960 a layer, x 5 / TP 2 = 412,262,400;
//   norms in bf16 on every rank: 5 x (2 x 5120 + 2 x 128) x 2 B + final 5120 x 2 B = 104,960 + 10,240;
//   fc 5120 x (5 x 5120) in int4, whole on every rank (ReplicatedLinear with the drafter's quant_config):
//   65,536,000 + 200 x 5120 x 2 = 67,584,000 (it was 131,072,000 x 2 B = 262,144,000 in bf16 before).
//   Total 412,262,400 + 115,200 + 67,584,000 = 479,961,600 B a rank (0.447 GiB).
// The profile run: the target forward returns the 5 hidden states the drafter's fc reads (aux hidden state layers),
// held through it: 5 x 8,192 batched tokens x 5120 x 2 B = 419,430,400 B on the text forward, the activation peak
// of a text-only profile run (--skip-mm-profiling), which the same speculative tokens without a drafter (ngram) do
// not hold; vLLM-Ascend's fitted text factor is left as it was.
TEST(FitSpec, Issue15_Dflash2W4a16DrafterFromTheCatalogue) {
  auto t = target("Qwen/Qwen3.5-27B");
  t.device = *device::find_device(*device::load_device_catalog(), "RTX5090");
  const auto engines = engine::load_engine_catalog();
  t.engine = *engine::select_engine(*engines, "vllm", "0.27.1");
  auto setup = [](estimate::Deployment& d) {
    d.tensor_parallel_size = 2;
    d.max_model_len = 65536;
    d.max_num_batched_tokens = 8192;
    d.max_num_seqs = 1;
    d.skip_mm_profiling = true;  // the text forward is the peak (with the vision pass, the encoder's 1.67 GiB is)
  };
  auto d = with_spec(R"({"method": "dflash", "model": "syvai/Qwen3.8-27B-DFlash2-W4A16", "num_speculative_tokens": 7})", {});
  ASSERT_TRUE(d.has_value()) << d.error().message;
  ASSERT_TRUE(d->speculative.drafter);
  setup(*d);
  auto ngram = with_spec(R"({"method": "ngram", "num_speculative_tokens": 7})", {});
  ASSERT_TRUE(ngram.has_value());
  setup(*ngram);
  const auto e = estimate::estimate_fit(t.model, t.device, t.engine, t.overheads, *d);
  const auto n = estimate::estimate_fit(t.model, t.device, t.engine, t.overheads, *ngram);
  EXPECT_EQ(e.drafter_layers, 5);
  EXPECT_DOUBLE_EQ(e.drafter_weights_bytes, 479961600.0);
  EXPECT_DOUBLE_EQ(e.activation_drafter_held_output_bytes, 419430400.0);
  EXPECT_DOUBLE_EQ(n.activation_drafter_held_output_bytes, 0.0);
  EXPECT_NEAR(e.activation_bytes - n.activation_bytes, 419430400.0, 1.0);
  t.device = *device::find_device(*device::load_device_catalog(), "910B3");
  t.engine = *engine::select_engine(*engines, "vllm-ascend", "0.23.0");
  t.overheads = *engines->overheads_for(t.engine.platform);
  const auto a = estimate::estimate_fit(t.model, t.device, t.engine, t.overheads, *d);
  EXPECT_DOUBLE_EQ(a.activation_drafter_held_output_bytes, 0.0);
}
