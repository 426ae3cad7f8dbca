#include <gtest/gtest.h>

#include <string>

#include "base/units.hpp"

using namespace preflight;

// Issue 19: format writes into a 1,024-byte stack buffer first and formats again only for longer
// text; every length around that buffer's end comes out whole.
TEST(Units, Issue19_FormatAroundItsStackBuffer) {
  for (const size_t n : {0u, 1u, 1022u, 1023u, 1024u, 1025u, 5000u}) {
    const std::string body(n, 'x');
    EXPECT_EQ(format("%s", body.c_str()), body) << n;
    EXPECT_EQ(format("[%s] %d %.2f", body.c_str(), 42, 0.25), "[" + body + "] 42 0.25") << n;
  }
  EXPECT_EQ(format("%s", ""), "");
}
