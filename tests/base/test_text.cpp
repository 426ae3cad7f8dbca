// Tests for base/text: clip_text, the one cut applied to foreign text quoted in messages (issue 19 item 12).
#include "base/text.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace preflight {
namespace {

// True when `s` is well-formed UTF-8 (lead byte, then exactly its continuation bytes), written here independently of
// clip_text so the property checks the cut rather than restating it.
bool valid_utf8(const std::string& s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

TEST(ClipText, Issue19_ShortTextUnchanged) {
  EXPECT_EQ(clip_text("", 0), "");
  EXPECT_EQ(clip_text("w8a8", 4), "w8a8");
  EXPECT_EQ(clip_text("w8a8", 120), "w8a8");
}

TEST(ClipText, Issue19_AsciiCutAtLimitWithTotal) {
  EXPECT_EQ(clip_text("abcdefgh", 3), "abc... (8 bytes in all)");
  EXPECT_EQ(clip_text("abcdefgh", 0), "... (8 bytes in all)");
  EXPECT_EQ(clip_text(std::string(100000, 'x'), 120), std::string(120, 'x') + "... (100000 bytes in all)");
}

// "中" is 3 bytes (E4 B8 AD). "a" + 2 x "中" is 7 bytes; a 5-byte limit falls inside the second character, which is
// left out whole: "a中" (4 bytes) is kept.
TEST(ClipText, Issue19_NeverSplitsAUtf8Character) {
  const std::string zh = "\xE4\xB8\xAD";
  EXPECT_EQ(clip_text("a" + zh + zh, 5), "a" + zh + "... (7 bytes in all)");
  EXPECT_EQ(clip_text("a" + zh + zh, 4), "a" + zh + "... (7 bytes in all)");
  EXPECT_EQ(clip_text("a" + zh + zh, 2), "a... (7 bytes in all)");
  // A 4-byte character (U+1F600, F0 9F 98 80) with the limit on each of its bytes.
  const std::string emoji = "\xF0\x9F\x98\x80";
  for (size_t limit = 1; limit <= 4; ++limit) EXPECT_EQ(clip_text("x" + emoji + "y", limit), "x... (6 bytes in all)") << limit;
  EXPECT_EQ(clip_text("x" + emoji + "y", 5), "x" + emoji + "... (6 bytes in all)");
  std::string long_zh;
  for (int i = 0; i < 100; ++i) long_zh += zh;
  for (size_t limit = 0; limit < 40; ++limit) EXPECT_TRUE(valid_utf8(clip_text("a" + long_zh, limit))) << limit;
}

}  // namespace
}  // namespace preflight

namespace preflight {
namespace {

// Issue 19: a credential in a URL's query (bench --url http://host/v1?token=..., a server's error quoting its own URL)
// reached the terminal, the database and the HTML report: only the userinfo was redacted.
TEST(RedactUrl, Issue19_QueryCredentialsAreRedacted) {
  const std::pair<std::string, std::string> cases[] = {
      {"http://u:pw@h:8000/v1?token=QT77&n=1", "http://***@h:8000/v1?token=***&n=1"},
      {"GET https://h/x?api_key=K1;Sig=S2#frag and more", "GET https://h/x?api_key=***;Sig=***#frag and more"},
      {"s3 https://b/o?X-Amz-Signature=abcdef&X-Amz-Credential=AK%2F1&v=2 'q'", "s3 https://b/o?X-Amz-Signature=***&X-Amz-Credential=***&v=2 'q'"},
      {"x http://h/?access_token=a \"http://h2/?password=b\"", "x http://h/?access_token=*** \"http://h2/?password=***\""},
      {"http://h/?a=1&b=2", "http://h/?a=1&b=2"},                  // nothing secret by name
      {"http://h/?token=&token", "http://h/?token=&token"},        // no value to hide
      {"no url ?token=x", "no url ?token=x"},                      // a query only after "scheme://"
      {"http://h/path#?token=x", "http://h/path#?token=x"},        // after '#' is the fragment
      {"http://h/?next=http://u:p@g/&sig=1", "http://h/?next=http://***@g/&sig=***"}};  // a URL inside a query
  for (const auto& [in, out] : cases) EXPECT_EQ(redact_url_credentials(in), out) << in;
  // The same spans, as text: what a server may quote without the URL around it.
  EXPECT_EQ(url_credentials("http://u:pw@h:8000/v1?token=QT77&n=1&Session=S"), (std::vector<std::string>{"u:pw", "QT77", "S"}));
  EXPECT_TRUE(url_credentials("http://h/?a=1").empty());
}

}  // namespace
}  // namespace preflight
