// logs/llama_cpp_log on llama.cpp start-up lines as public logs print them (the other llama.cpp log
// tests, with the estimate they are compared against, are in tests/estimate/test_llama_cpp.cpp).
#include <gtest/gtest.h>

#include <string>

#include "logs/llama_cpp_log.hpp"

namespace preflight {
namespace {

// Issue 15 (evid31): the context parameters of llama.cpp builds of early 2025 are printed under
// "llama_init_from_model:", which the reader did not know, so `preflight logs` fell back to n_ctx 4096,
// n_seq_max 1 and "flash_attn not printed" for a log that states 8192, 4 and 0. The lines are verbatim from
// an Ollama runner serving deepseek-r1:671b on eight MI250X GCDs (Pawsey Setonix notes, April 2025; code
// search id 12972183120, data/evidence/llamacpp-startup-public.jsonl), the spinner character Ollama
// interleaves included; the buffer lines between them are cut to one per kind.
TEST(LlamaCppLog, Issue15_ContextParametersUnderLlamaInitFromModel) {
  const std::string text =
      "load_tensors: offloaded 62/62 layers to GPU\n"                                                                  // 1
      "load_tensors:        ROCm0 model buffer size = 35642.36 MiB\n"                                                 // 2
      "\xE2\xA0\xA7 llama_init_from_model: n_seq_max     = 4\n"                                                      // 3
      "llama_init_from_model: n_ctx         = 8192\n"                                                                 // 4
      "llama_init_from_model: n_ctx_per_seq = 2048\n"                                                                 // 5
      "llama_init_from_model: n_batch       = 2048\n"                                                                 // 6
      "llama_init_from_model: n_ubatch      = 512\n"                                                                  // 7
      "llama_init_from_model: flash_attn    = 0\n"                                                                    // 8
      "llama_kv_cache_init: kv_size = 8192, offload = 1, type_k = 'f16', type_v = 'f16', n_layer = 61, can_shift = 0\n"
      "llama_kv_cache_init:      ROCm0 KV buffer size =  5120.00 MiB\n"                                               // 10
      "llama_init_from_model: KV self size  = 39040.00 MiB, K (f16): 23424.00 MiB, V (f16): 15616.00 MiB\n"
      "llama_init_from_model:  ROCm_Host  output buffer size =     2.08 MiB\n"                                        // 12
      "llama_init_from_model: pipeline parallelism enabled (n_copies=4)\n"
      "\xE2\xA0\x87 llama_init_from_model:      ROCm0 compute buffer size =  2322.01 MiB\n"                          // 14
      "llama_init_from_model:  ROCm_Host compute buffer size =    78.02 MiB\n";                                       // 15
  ASSERT_TRUE(logs::is_llama_cpp_log(text));
  const auto log = logs::parse_llama_cpp_log(text);
  ASSERT_TRUE(log.n_ctx && log.n_batch && log.n_ubatch && log.n_seq_max && log.flash_attn);
  EXPECT_EQ(log.n_seq_max->value, 4);
  EXPECT_EQ(log.n_seq_max->line, 3);
  EXPECT_EQ(log.n_ctx->value, 8192);
  EXPECT_EQ(log.n_ctx->line, 4);
  EXPECT_EQ(log.n_batch->value, 2048);
  EXPECT_EQ(log.n_ubatch->value, 512);
  EXPECT_EQ(log.flash_attn->value, "disabled");
  EXPECT_EQ(log.flash_attn->line, 8);
  ASSERT_TRUE(log.cache_type_k && log.cache_type_v);
  EXPECT_EQ(log.cache_type_k->value, "f16");
  EXPECT_EQ(log.cache_type_v->value, "f16");
  ASSERT_EQ(log.buffers.size(), 5u);
  EXPECT_EQ(log.buffers[0].device, "ROCm0");
  EXPECT_EQ(log.buffers[0].kind, "model");
  EXPECT_EQ(log.buffers[1].kind, "KV");
  EXPECT_EQ(log.buffers[1].line, 10);
  EXPECT_EQ(log.buffers[2].kind, "output");
  EXPECT_EQ(log.buffers[3].device, "ROCm0");
  EXPECT_EQ(log.buffers[3].kind, "compute");
  EXPECT_EQ(log.buffers[3].line, 14);
  EXPECT_DOUBLE_EQ(log.total("compute"), (2322.01 + 78.02) * 1048576.0);
  EXPECT_DOUBLE_EQ(log.total("KV"), 5120.00 * 1048576.0);
}

// Issue 15 (evid31): with "flash_attn = auto" llama.cpp prints what it chose a few lines later ("Flash Attention
// was auto, set to enabled", under llama_context: or sched_reserve:), which the reader did not read, so `preflight
// logs` reported "flash_attn auto" and predicted with auto. Lines verbatim from an Ollama runner on an RTX 2060
// (hermes3:8b, 15 of 33 layers offloaded; code search id 61471163053, data/evidence/llamacpp-startup-public.jsonl)
// and, for the older place of the line, a llama-server b7342 log on an A100 (code search id 28957180799).
TEST(LlamaCppLog, Issue15_FlashAttentionAutoResolvedLine) {
  const std::string ollama =
      "llama_context: n_ctx         = 32768\n"                                                                  // 1
      "llama_context: flash_attn    = auto\n"                                                                   // 2
      "llama_kv_cache:      CUDA0 KV buffer size =  1792.00 MiB\n"                                               // 3
      "sched_reserve: Flash Attention was auto, set to enabled\n"                                               // 4
      "sched_reserve:      CUDA0 compute buffer size =   248.00 MiB\n";                                         // 5
  auto log = logs::parse_llama_cpp_log(ollama);
  ASSERT_TRUE(log.flash_attn);
  EXPECT_EQ(log.flash_attn->value, "enabled");
  EXPECT_EQ(log.flash_attn->line, 4);
  ASSERT_EQ(log.buffers.size(), 2u);  // the resolved line is not a buffer

  const std::string server =
      "llama_context: flash_attn    = auto\n"                                                                   // 1
      "llama_context: Flash Attention was auto, set to enabled\n";                                              // 2
  log = logs::parse_llama_cpp_log(server);
  ASSERT_TRUE(log.flash_attn);
  EXPECT_EQ(log.flash_attn->value, "enabled");
  EXPECT_EQ(log.flash_attn->line, 2);

  // Only llama.cpp's two words are taken; "auto" alone stays "auto".
  log = logs::parse_llama_cpp_log("llama_context: flash_attn    = auto\n");
  ASSERT_TRUE(log.flash_attn);
  EXPECT_EQ(log.flash_attn->value, "auto");
}

// Issue 16 (llamacpp33): the build a llama.cpp log prints decides an MLA model's KV cache (estimate::llama_mla_cache), so
// the reader takes it: 'build: 7342 (2fbe3b7bb) with GNU 11.4.0 for Linux x86_64' (the A100 llama-server log of
// data/evidence/llamacpp-startup-public.jsonl line 1) and '--version''s 'version: 7917 (91ea44e89)' (ggml-org/llama.cpp
// #19307). A word that is not a build number, or no '(' after it, is no build.
TEST(LlamaCppLog, Issue16_BuildLine) {
  auto log = logs::parse_llama_cpp_log("main: loading model\nbuild: 7342 (2fbe3b7bb) with GNU 11.4.0 for Linux x86_64\n");
  ASSERT_TRUE(log.build);
  EXPECT_EQ(log.build->value, 7342);
  EXPECT_EQ(log.build->line, 2);
  log = logs::parse_llama_cpp_log("version: 7917 (91ea44e89)\nbuilt with GNU 13.3.0 for Linux x86_64\n");
  ASSERT_TRUE(log.build);
  EXPECT_EQ(log.build->value, 7917);
  for (const char* text : {"build: abc (1234)\n", "build: 7342\n", "system_info: build: 12 (x)\n", "build: -5 (x)\n"})
    EXPECT_FALSE(logs::parse_llama_cpp_log(text).build) << text;
}

}  // namespace
}  // namespace preflight
