// Issue 19 (planfast9): strip_terminal_controls returns text with none of the bytes it acts on whole, without its byte
// loop. Table-driven: text it keeps as it is (plain, newline and tab, UTF-8 letters, a 0xc2 lead byte of no C1 control:
// the loop's path) and text it strips (CSI, OSC, a C1 CSI in UTF-8 or as a lone 8-bit byte, BEL, DEL).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/quote.hpp"
#include "base/text.hpp"

TEST(Text, Issue19_StripTerminalControlsKeepsPlainTextWholeAndStripsTheRest) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", ""},
      {"INFO 05-12 12:00:01 [core.py:74] Initializing a V1 LLM engine", "INFO 05-12 12:00:01 [core.py:74] Initializing a V1 LLM engine"},
      {"tab\tand newline\n", "tab\tand newline\n"},
      {"caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93"},
      {"no\xc2\xa0" "break", "no\xc2\xa0" "break"},
      {"a\xc2\x9b" "b", "ab"},
      {"\x1b[31mred\x1b[0m", "red"},
      {"\x1b]0;title\a" "x", "x"},
      {"bell\a", "bell"},
      {"del\x7f!", "del!"},
      {"cr\r", "cr"},
      // Session 36: a lone 0x9b (8-bit CSI, no UTF-8 lead byte before it) goes, with a lone 0x85 (NEL); the same bytes
      // inside a UTF-8 character stay: the euro sign E2 82 AC, CJK E4 B8 AD ("\u4e2d"), a 4-byte emoji F0 9F 98 80.
      {"\x9b" "2Jx", "2Jx"},
      {"a\x85" "b", "ab"},
      {"\xe2\x82\xac 5 \xe4\xb8\xad \xf0\x9f\x98\x80", "\xe2\x82\xac 5 \xe4\xb8\xad \xf0\x9f\x98\x80"},
      {"\xe2\x82\xac\x9b" "x", "\xe2\x82\xacx"},
      {"lone \xa9 stays", "lone \xa9 stays"},
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(preflight::strip_terminal_controls(in), out) << in;
}

// Issue 19 (hard34): a value quoted in a one-line message keeps its line breaks and other controls as visible escapes
// (a "\n" in --served-model-name split the error and could forge a second "preflight:" line), and a long value is cut
// as clip_text cuts it, never inside an escape or a UTF-8 character. Each expected text is written out by hand from the
// rule in base/quote.hpp.
TEST(Text, Issue19_OneLineEscapesControlsAndClipsWhole) {
  struct Case {
    std::string in;
    size_t max_bytes;
    std::string out;
  };
  const std::vector<Case> cases = {
      {"", 80, ""},
      {"Qwen/Qwen3-8B", 80, "Qwen/Qwen3-8B"},
      {"a\nb", 80, "a\\nb"},
      {"a\r\npreflight: forged", 80, "a\\r\\npreflight: forged"},
      {"tab\tesc\x1b[31m", 80, "tab\\x09esc\\x1b[31m"},
      {std::string("nul\0!", 5), 80, "nul\\x00!"},
      {"del\x7f", 80, "del\\x7f"},
      {"nel\xc2\x85!", 80, "nel\\u0085!"},                   // U+0085 NEXT LINE, a C1 control
      {"caf\xc3\xa9 C:\\dir", 80, "caf\xc3\xa9 C:\\dir"},     // a UTF-8 letter and a backslash as written
      {"bad\xff", 80, "bad\xff"},                            // not UTF-8: left to the writer
      // 10 bytes: the rendering "abcdefgh" fits 8; the 9th byte does not -> cut, with the value's own length.
      {"abcdefghij", 8, "abcdefgh... (10 bytes in all)"},
      // "ab\n..." renders "ab\\ncd": at 3 bytes the escape (2 bytes) does not fit after "ab" -> "ab" and the marker.
      {"ab\ncd", 3, "ab... (5 bytes in all)"},
      // "\xc3\xa9" (2 bytes) after "a" does not fit 2 bytes -> "a" and the marker.
      {"a\xc3\xa9z", 2, "a... (4 bytes in all)"},
  };
  for (const auto& c : cases) EXPECT_EQ(preflight::one_line(c.in, c.max_bytes), c.out) << c.in;
  // 10 MB of newlines: 80 bytes of escapes (40 of them) and the marker; the length says the whole value.
  const std::string huge(10'000'000, '\n');
  std::string forty;
  for (int i = 0; i < 40; ++i) forty += "\\n";
  EXPECT_EQ(preflight::one_line(huge), forty + "... (10000000 bytes in all)");
}
