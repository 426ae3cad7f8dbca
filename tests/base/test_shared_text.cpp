#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/shared_text.hpp"

using namespace preflight;

// Issue 19 (round 10): a SharedText's copies hold one text (the same characters at the same address), an unset
// one reads as "", and it compares, prints and converts to JSON as the std::string it holds would.
TEST(SharedText, Issue19_CopiesShareOneText) {
  const SharedText a = std::string("effective bandwidth 1600 GB/s");
  const SharedText b = a;
  EXPECT_EQ(&a.str(), &b.str());                      // one text, two references
  EXPECT_EQ(a.str().data(), b.str().data());
  SharedText c = std::string("effective bandwidth 1600 GB/s");  // equal text, made apart
  EXPECT_NE(&a.str(), &c.str());
  EXPECT_TRUE(a == c);
  EXPECT_TRUE(a == std::string("effective bandwidth 1600 GB/s"));
  EXPECT_TRUE(a == "effective bandwidth 1600 GB/s");
  EXPECT_FALSE(a == "effective bandwidth 1600 GB/");
  c = std::string("link: HCCS");  // a change is a new text: the copy it was made from keeps its own
  EXPECT_EQ(b.str(), "effective bandwidth 1600 GB/s");
  EXPECT_EQ(c.str(), "link: HCCS");
  EXPECT_EQ(a.size(), 29u);
  EXPECT_EQ(a.find("1600"), 20u);
  EXPECT_EQ(a.rfind("effective", 0), 0u);
}

TEST(SharedText, Issue19_UnsetReadsEmpty) {
  const SharedText none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.str(), "");
  EXPECT_STREQ(none.c_str(), "");
  EXPECT_TRUE(none == SharedText(std::string()));
  EXPECT_TRUE(none == "");
}

TEST(SharedText, Issue19_JsonAndStreamAsItsText) {
  const std::vector<SharedText> lines = {std::string("decode step at batch 1"), SharedText(), "prefill 8192 tokens"};
  const nlohmann::json j = lines;
  EXPECT_EQ(j.dump(), R"(["decode step at batch 1","","prefill 8192 tokens"])");
  std::ostringstream o;
  o << lines[0] << "|" << lines[1] << "|" << lines[2];
  EXPECT_EQ(o.str(), "decode step at batch 1||prefill 8192 tokens");
  const std::vector<std::string> copied(lines.begin(), lines.end());  // validate copies assumptions into std::string rows
  EXPECT_EQ(copied, (std::vector<std::string>{"decode step at batch 1", "", "prefill 8192 tokens"}));
}
