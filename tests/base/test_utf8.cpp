// base/utf8: well-formed UTF-8 per RFC 3629, table-driven.
#include <gtest/gtest.h>

#include <string>

#include "base/utf8.hpp"

using preflight::is_valid_utf8;

TEST(Utf8, Issue19_WellFormedTextAndEachIllFormedKind) {
  struct Case {
    std::string text;
    bool valid;
  };
  const Case cases[] = {
      {"", true},
      {"/models/qwen", true},
      {"/models/\xe4\xb8\xad\xe6\x96\x87", true},  // 中文
      {"\xc3\xa9", true},                          // é
      {"\xf0\x9f\x98\x80", true},                  // U+1F600
      {"\xf4\x8f\xbf\xbf", true},                  // U+10FFFF
      {"\xd6\xd0\xce\xc4", false},                 // 中文 in GBK
      {"\xff", false},                             // never a UTF-8 byte
      {"a\xe4\xb8", false},                        // a sequence cut short at the end
      {"\xe4\xb8" "a", false},                     // ... and in the middle
      {"\xc0\xaf", false},                         // overlong '/'
      {"\xe0\x80\xaf", false},                     // overlong '/' in three bytes
      {"\xed\xa0\x80", false},                     // a surrogate, U+D800
      {"\xf4\x90\x80\x80", false},                 // above U+10FFFF
      {"\x80", false},                             // a lone continuation byte
  };
  for (const auto& c : cases) EXPECT_EQ(is_valid_utf8(c.text), c.valid) << c.text;
}
