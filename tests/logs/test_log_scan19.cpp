// Issue 19 (planfast9): the case-insensitive search the log scanners use (logs/log_scan find_ci) finds the places of
// its key's first byte with memchr, one search per case, each kept until passed. Table-driven through parse_engine_log:
// keys whose first byte stands in both cases before the match, a match that ends the line, one byte short of a match,
// and a key whose first byte is no letter (one case).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "signatures_support.hpp"
#include "logs/engine_log.hpp"

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
