// Issue 19 (planfast9): strip_terminal_controls returns text with none of the bytes it acts on whole, without its byte
// loop. Table-driven: text it keeps as it is (plain, newline and tab, UTF-8 letters, a 0xc2 lead byte of no C1 control:
// the loop's path) and text it strips (CSI, OSC, a C1 CSI in UTF-8, BEL, DEL).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

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
  };
  for (const auto& [in, out] : cases) EXPECT_EQ(preflight::strip_terminal_controls(in), out) << in;
}
