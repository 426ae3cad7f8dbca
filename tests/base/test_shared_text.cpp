#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/inline_vector.hpp"
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

// Issue 19 (fitcopy36): a speed estimate's provenance and assumptions are InlineVectors of SharedText: the first N in
// place (inside the object: no heap block), the N+1th moves them all to a std::vector, in order. A push of one of its own
// elements at that moment is made before the move; copies and moves keep the texts and their order (a copy shares each
// text's block), and a moved-from one is empty.
TEST(SharedText, Issue19_InlineVectorKeepsItsFirstTextsInPlace) {
  using Texts = InlineVector<SharedText, 2>;
  const auto in_place = [](const Texts& v) {
    const char* at = reinterpret_cast<const char*>(v.data());
    return at >= reinterpret_cast<const char*>(&v) && at < reinterpret_cast<const char*>(&v + 1);
  };
  const auto texts = [](const Texts& v) { return std::vector<std::string>(v.begin(), v.end()); };
  Texts v;
  EXPECT_TRUE(v.empty());
  v.push_back(SharedText("link: NVLink"));
  v.push_back(SharedText("bandwidth prior"));
  EXPECT_EQ(v.size(), 2u);
  EXPECT_TRUE(in_place(v));
  Texts copy = v;
  EXPECT_TRUE(in_place(copy));
  EXPECT_EQ(copy[1].c_str(), v[1].c_str());  // one block per text
  v.push_back(v[0]);                           // the third: every element moves to the heap, this one made first
  EXPECT_FALSE(in_place(v));
  EXPECT_EQ(texts(v), (std::vector<std::string>{"link: NVLink", "bandwidth prior", "link: NVLink"}));
  EXPECT_EQ(v.back().c_str(), v.front().c_str());
  Texts spilled_copy = v;
  EXPECT_TRUE(spilled_copy == v);
  EXPECT_FALSE(copy == v);
  Texts moved = std::move(v);
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(texts(moved), texts(spilled_copy));
  Texts moved_in_place = std::move(copy);
  EXPECT_TRUE(copy.empty());
  EXPECT_TRUE(in_place(moved_in_place));
  EXPECT_EQ(texts(moved_in_place), (std::vector<std::string>{"link: NVLink", "bandwidth prior"}));
  moved_in_place = spilled_copy;  // assigned a longer one: its three, in order
  EXPECT_EQ(texts(moved_in_place), texts(spilled_copy));
  moved.clear();
  moved.push_back(SharedText("one"));
  EXPECT_EQ(texts(moved), (std::vector<std::string>{"one"}));
}
