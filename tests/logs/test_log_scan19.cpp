// Issue 19 (planfast9): the case-insensitive search the log scanners use (logs/log_scan find_ci) finds the places of
// its key's first byte with memchr, one search per case, each kept until passed. Table-driven through parse_engine_log:
// keys whose first byte stands in both cases before the match, a match that ends the line, one byte short of a match,
// and a key whose first byte is no letter (one case).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "signatures_support.hpp"
#include "logs/engine_log.hpp"
#include "logs/llama_cpp_log.hpp"

namespace lg = preflight::logs;

namespace {

const auto& sigs = pftest::shipped_signatures;

std::string value_or_none(const std::optional<lg::Logged<std::string>>& v) { return v ? v->value + " (l." + std::to_string(v->line) + ")" : "none"; }

}  // namespace

TEST(EngineLog, Issue19_CaseFoldedKeysAreFoundInEitherCaseOfTheirFirstByte) {
  struct Case {
    std::string text;
    std::string engine, vllm_ascend, vllm;
  };
  const std::vector<Case> cases = {
      // 'V' then 'v' stand before the key's own first byte: both candidates fail, the third matches.
      {"INFO Vv VLLM-ASCEND version: 0.9.1rc1\n", "vllm-ascend", "0.9.1rc1 (l.1)", "none"},
      {"x\nvV vLlM_AsCeNd==0.11.0\n", "vllm-ascend", "0.11.0 (l.2)", "none"},
      // The key ends the line (its last place), and one byte short of it.
      {"INFO served by VLLM\n", "vllm", "none", "none"},
      {"INFO served by VLL\n", "unknown", "none", "none"},
      {"mInDiE\n", "mindie", "none", "none"},
      // A key of several words in another case; the first of two places is not followed by a version.
      {"INFO vllm api server VERSION, vLLM API Server Version 0.10.1\n", "vllm", "none", "0.10.1 (l.1)"},
      // A version line after the log's 2nd line, the key's first byte only upper case in the line.
      {"a\nb\nVLLM==0.8.5.post1\n", "vllm", "none", "0.8.5.post1 (l.3)"},
  };
  for (const auto& c : cases) {
    const auto log = lg::parse_engine_log(c.text, sigs());
    EXPECT_EQ(log.engine, c.engine) << c.text;
    EXPECT_EQ(value_or_none(log.versions.vllm_ascend), c.vllm_ascend) << c.text;
    EXPECT_EQ(value_or_none(log.versions.vllm), c.vllm) << c.text;
  }
}

// A long line (64 KB, the scanners' cap) of the key's first byte in both cases with the key at its end: found, once.
TEST(EngineLog, Issue19_CaseFoldedKeyAtTheEndOfALongLineOfItsFirstByte) {
  std::string line;
  for (int i = 0; i < 30000; ++i) line += i % 2 ? "v" : "V";
  line += " VLLM-Ascend 0.13.0";
  const auto log = lg::parse_engine_log(line + "\n", sigs());
  EXPECT_EQ(log.engine, "vllm-ascend");
  EXPECT_EQ(value_or_none(log.versions.vllm_ascend), "0.13.0 (l.1)");
}

// Issue 19 (hard33): a log with CR-only line ends (no '\n' at all) read as one line, its lines run together ("vllm
// 0.11.0INFO ..."): the version took the next line's text and the arguments on line 2 were not read. Where a log has no
// '\n', '\r' ends its lines; a '\n' log keeps '\n' (a tqdm bar's '\r' inside a line stays in its line).
TEST(EngineLog, Issue19_CrOnlyLineEndsAreLineEnds) {
  const std::string text =
      "INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version 0.11.0\r"
      "INFO 01-01 [utils.py:1] non-default args: {'model': 'Qwen/Qwen3-8B', 'tensor_parallel_size': 2}\r"
      "INFO 01-01 [gpu_worker.py:1] Available KV cache memory: 54.77 GiB\r";
  const auto log = lg::parse_engine_log(text, sigs());
  EXPECT_EQ(log.line_count, 3);
  EXPECT_EQ(value_or_none(log.versions.vllm), "0.11.0 (l.1)");
  ASSERT_TRUE(log.args.tensor_parallel_size);
  EXPECT_EQ(log.args.tensor_parallel_size->value, 2);
  EXPECT_EQ(log.args.tensor_parallel_size->line, 2);
  // With '\n' line ends a '\r' inside a line is no line end: still three lines.
  const auto lf = lg::parse_engine_log("a\rb\nc\r\nd\n", sigs());
  EXPECT_EQ(lf.line_count, 3);
  // llama.cpp's reader splits the same way.
  const auto llama = lg::parse_llama_cpp_log("llama_context: n_ctx                 = 1024\rllama_context: n_batch               = 512\r");
  EXPECT_EQ(llama.line_count, 2);
  ASSERT_TRUE(llama.n_ctx && llama.n_batch);
  EXPECT_EQ(llama.n_ctx->value, 1024);
  EXPECT_EQ(llama.n_batch->line, 2);
}

// Issue 19 (hard33): an integer argument past 64 bits ('api_server_count': 100000000000000000000) was read as 2^63 - 1
// (strtoll's saturated value) and written so by `logs --emit-case`; it is not read (as any argument that is no integer).
TEST(EngineLog, Issue19_IntegerArgumentsPast64BitsAreNotRead) {
  const auto log = lg::parse_engine_log(
      "INFO [utils.py:1] non-default args: {'model': 'Qwen/Qwen3-8B', 'api_server_count': 100000000000000000000, 'data_parallel_size': 9223372036854775807, "
      "'tensor_parallel_size': -9223372036854775809}\n",
      sigs());
  EXPECT_FALSE(log.args.api_server_count);
  EXPECT_FALSE(log.args.tensor_parallel_size);
  ASSERT_TRUE(log.args.data_parallel_size);  // 2^63 - 1 itself fits
  EXPECT_EQ(log.args.data_parallel_size->value, INT64_MAX);
}
