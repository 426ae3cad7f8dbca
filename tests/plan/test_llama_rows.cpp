// Issue 16 (llamacpp30): a llama.cpp plan row as llama-server allocates it: its KV tokens are the -c its start command
// passes, its concurrency the -np slots, and its memory llama.cpp's buffers against the host's, for Qwen3-0.6B's real
// config.json (../shared/models).
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"
#include "base/json_util.hpp"
#include "plan/llama_rows.hpp"

using namespace preflight;

namespace {

const std::string k_qwen3_06b = std::string(PREFLIGHT_SOURCE_DIR) + "/../shared/models/Qwen__Qwen3-0.6B";

Json plan_json(const std::string& flags, int expected_code) {
  const auto run = pftest::run_cli("plan " + k_qwen3_06b + " --engine llama.cpp --device cpu " + flags + " --json", {.with_stderr = false});
  EXPECT_EQ(run.code, expected_code) << flags << "\n" << run.out;
  return Json::parse(run.out);
}

}  // namespace

TEST(LlamaRows, Issue16_ServerContextIsSlotsTimesThePaddedContext) {
  // -np one slot a request; -c every slot's context padded to llama.cpp's 256 cells, times the slots.
  EXPECT_EQ(plan::llama_server_context(32768, 1).ctx_size, 32768);
  EXPECT_EQ(plan::llama_server_context(32768, 2).ctx_size, 65536);
  EXPECT_EQ(plan::llama_server_context(8000, 3).ctx_size, 3 * 8192);
  EXPECT_EQ(plan::llama_server_context(8000, 3).slots, 3);
  EXPECT_EQ(plan::llama_server_context(100, 0).slots, 1);
}

TEST(LlamaRows, Issue16_RowKvTokensAreTheContextItsCommandPasses) {
  const Json j = plan_json("--device-memory 64GiB --context 32768 --concurrency 2 --host-cores 16", 0);
  const Json& row = j["recommended"][0];
  // Before: the row showed the KV budget vLLM-style (138,239 tokens, concurrency 4.22 on a 16 GiB host) beside -c 32768.
  EXPECT_EQ(row["kv_cache_tokens"], 65536);
  EXPECT_EQ(row["max_concurrency"], 2.0);
  EXPECT_NE(row["launch"]["serve"].get<std::string>().find(" -c 65536 -np 2 -t 16 "), std::string::npos) << row["launch"]["serve"];
  const Json& b = row["llama_cpp"];
  EXPECT_EQ(b["ctx_size"], 65536);
  EXPECT_EQ(b["slots"], 2);
  // Qwen3-0.6B (config.json: 28 layers, 8 KV heads x head_dim 128, hidden 1024, intermediate 3072, vocab 151936, tied):
  // model: 596,049,920 parameters x 2 B (bf16) = 1,192,099,840 B, the embedding counted once;
  EXPECT_EQ(b["model_buffer_bytes"].get<double>(), 1192099840.0);
  // KV: 65,536 cells x 28 layers x (K 8 x 128 + V 8 x 128) x 2 B (f16) = 7,516,192,768 B (7 GiB);
  EXPECT_EQ(b["kv_buffer_bytes"].get<double>(), 7516192768.0);
  // compute (flash attention on): max(logits 151,936 x 512 x 4 + 2 x 1,024 x 512 x 4 = 315,359,232,
  //   n_kv 32,768 x 512 x 2 + 512 x 4 x (2 x 1,024 + 3 x 3,072) = 56,623,104) = 315,359,232 B;
  EXPECT_EQ(b["compute_buffer_bytes"].get<double>(), 315359232.0);
  // output: 151,936 x 2 sequences x 4 B = 1,215,488 B; all of it on the host: 9,024,867,328 B.
  EXPECT_EQ(b["output_buffer_bytes"].get<double>(), 1215488.0);
  EXPECT_EQ(b["device_bytes"].get<double>(), 9024867328.0);
}

TEST(LlamaRows, Issue16_RowLargerThanTheHostIsRejectedWithLlamaCppsBuffers) {
  const Json j = plan_json("--device-memory 8GiB --context 32768 --concurrency 2", 1);
  ASSERT_TRUE(j["recommended"].empty());
  bool seen = false;
  for (const auto& r : j["rejected"]) {
    const std::string reason = r["reason"].get<std::string>();
    if (r["num_devices"] != 1) continue;
    seen = true;
    EXPECT_NE(reason.find("llama.cpp at -c 65536 -np 2 needs 8.41 GiB on cpu"), std::string::npos) << reason;
    EXPECT_NE(reason.find("above its 8.00 GiB"), std::string::npos) << reason;
  }
  EXPECT_TRUE(seen) << j.dump();
  // 16 GiB holds it: the same row is recommended.
  EXPECT_FALSE(plan_json("--device-memory 16GiB --context 32768 --concurrency 2", 0)["recommended"].empty());
}

TEST(LlamaRows, Issue16_CpuRowNamesTheThreadDefaultAndTheHostMemory) {
  const Json j = plan_json("--context 4096", 0);
  const Json& row = j["recommended"][0];
  const std::string serve = row["launch"]["serve"].get<std::string>();
  EXPECT_EQ(serve.find(" -t "), std::string::npos) << serve;
  EXPECT_NE(serve.find(" -c 4096 -np 1 "), std::string::npos) << serve;
  bool threads = false, memory = false;
  for (const auto& n : row["launch"]["notes"]) threads = threads || n.get<std::string>().find("cpu_get_num_math()") != std::string::npos;
  for (const auto& a : j["assumptions"]) memory = memory || a.get<std::string>().find("MemAvailable in /proc/meminfo") != std::string::npos;
  EXPECT_TRUE(threads) << row["launch"]["notes"];
  EXPECT_TRUE(memory) << j["assumptions"];
}
