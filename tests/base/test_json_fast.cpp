// base/json_fast (issue 19): the reader parse_json tries first, against nlohmann's own parser, an independent
// implementation. Wherever the fast reader accepts a text, nlohmann must read it into the same value, type for type
// (number_integer / number_unsigned / number_float, a double bit for bit) and key for key; every real file the tool
// reads at start-up must be accepted, or start-up would pay nlohmann's price again.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/json_util.hpp"

using namespace preflight;
namespace fs = std::filesystem;

namespace {

bool same(const Json& a, const Json& b) {
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case Json::value_t::object: {
      if (a.size() != b.size()) return false;
      auto i = a.begin();
      auto j = b.begin();
      for (; i != a.end(); ++i, ++j) {
        if (i.key() != j.key() || !same(i.value(), j.value())) return false;
      }
      return true;
    }
    case Json::value_t::array:
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!same(a[i], b[i])) return false;
      }
      return true;
    case Json::value_t::number_float: {
      const double x = a.get<double>();
      const double y = b.get<double>();
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    default: return a == b;
  }
}

// nlohmann's reading of `text`, or discarded.
Json reference(const std::string& text) { return Json::parse(text, nullptr, /*allow_exceptions=*/false); }

// The fast reader accepts `text` only where nlohmann reads the same value; returns whether it accepted.
bool agrees(const std::string& text, const std::string& label) {
  Json fast;
  const bool accepted = detail::parse_json_fast(text, fast);
  if (accepted) {
    const Json ref = reference(text);
    EXPECT_FALSE(ref.is_discarded()) << label << ": the fast reader accepted what nlohmann refuses";
    EXPECT_TRUE(same(fast, ref)) << label << ": fast " << fast.dump() << " vs nlohmann " << ref.dump();
  }
  return accepted;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> json_files_under(const fs::path& root) {
  std::vector<fs::path> out;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path());
  }
  return out;
}

}  // namespace

// Every catalogue in data/ (what start-up parses) and every published config in ../shared/models: accepted, and the
// same tree as nlohmann's.
TEST(JsonFast, Issue19_EveryCatalogueAndPublishedConfigReadsAsNlohmannReadsIt) {
  std::vector<fs::path> files = json_files_under(fs::path(PREFLIGHT_SOURCE_DIR) / "data");
  const size_t catalogues = files.size();
  for (const auto& p : json_files_under(fs::path(PREFLIGHT_SHARED_DIR) / "models")) files.push_back(p);
  ASSERT_GE(catalogues, 10u);
  ASSERT_GT(files.size(), catalogues + 20);
  size_t non_finite = 0;
  for (const auto& p : files) {
    const std::string text = read_file(p);
    if (text.find("NaN") != std::string::npos || text.find("Infinity") != std::string::npos) {
      // nlohmann refuses these tokens; parse_json's own rewrite is checked in Issue19_NonFiniteTokensAsTheRewriteReadsThem.
      ++non_finite;
      Json fast;
      EXPECT_TRUE(detail::parse_json_fast(text, fast)) << p;
      continue;
    }
    EXPECT_TRUE(agrees(text, p.string())) << p << " was declined";
  }
  EXPECT_LT(non_finite, files.size() / 4);
}

TEST(JsonFast, Issue19_NumbersKeepNlohmannsTypes) {
  // Each accepted, with nlohmann's type: unsigned without '-', integer with it, a double past 64 bits or with a
  // fraction / exponent.
  const std::vector<std::pair<std::string, Json::value_t>> cases = {
      {"0", Json::value_t::number_unsigned},
      {"-0", Json::value_t::number_integer},
      {"18446744073709551615", Json::value_t::number_unsigned},
      {"18446744073709551616", Json::value_t::number_float},
      {"-9223372036854775808", Json::value_t::number_integer},
      {"-9223372036854775809", Json::value_t::number_float},
      {"1.5e3", Json::value_t::number_float},
      {"1E+2", Json::value_t::number_float},
      {"-0.0", Json::value_t::number_float},
      {"2.2250738585072014e-308", Json::value_t::number_float},
      {"0.1", Json::value_t::number_float},
      {"123456789012345678901234567890", Json::value_t::number_float},
  };
  for (const auto& [text, type] : cases) {
    EXPECT_TRUE(agrees(text, text)) << text;
    Json v;
    ASSERT_TRUE(detail::parse_json_fast(text, v)) << text;
    EXPECT_EQ(v.type(), type) << text;
  }
  // Declined: malformed (nlohmann refuses them too) or rounded to 0 / infinity by strtod.
  for (const std::string text : {"01", "1.", ".5", "-", "1e", "+1", "1e400", "-1e400", "1e-400", "0x10", "1.5.2"}) {
    Json v;
    EXPECT_FALSE(detail::parse_json_fast(text, v)) << text;
  }
}

TEST(JsonFast, Issue19_StringsEscapesAndUtf8AsNlohmannReadsThem) {
  const std::vector<std::string> accepted = {
      R"("plain")",
      R"("q\"b\\s\/b\bf\fn\nr\rt\t")",
      R"("\u00e9\u4e2d\uD83D\uDE00\u0000")",
      "\"\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF \xEF\xBF\xBF\x7F\"",
      R"({"a": 1, "a": 2, "b": [true, false, null]})",
      " \t\r\n[ ] ",
      R"({ })",
      R"([{"x": {"y": [1, -2, 3.5, "z"]}}])",
  };
  for (const auto& text : accepted) EXPECT_TRUE(agrees(text, text)) << text;
  // A repeated key keeps its last value.
  Json v;
  ASSERT_TRUE(detail::parse_json_fast(R"({"a": 1, "a": 2})", v));
  EXPECT_EQ(v.at("a").get<int>(), 2);
  // Declined, and nlohmann refuses each as well (or, for the byte order mark, reads it: the fallback's job).
  const std::vector<std::string> declined = {
      R"("\uDE00")",          // lone low surrogate
      R"("\uD83D")",          // high surrogate without its pair
      R"("\uD83D\u0041")",    // high surrogate and a non-surrogate
      R"("\x")",              // unknown escape
      "\"a\x01b\"",           // control character
      "\"\xC0\x80\"",         // overlong
      "\"\xED\xA0\x80\"",     // encoded surrogate
      "\"\xF4\x90\x80\x80\"",  // past U+10FFFF
      "\"\xE4\xB8\"",         // truncated
      "\"open",
      "[1, 2,]",
      "{\"a\" 1}",
      "{\"a\": 1,}",
      "[1] x",
      "truex",
      "",
      "\xEF\xBB\xBF{}",  // byte order mark
  };
  for (const auto& text : declined) {
    Json out;
    EXPECT_FALSE(detail::parse_json_fast(text, out)) << text;
    if (text.rfind("\xEF\xBB\xBF", 0) != 0) EXPECT_TRUE(reference(text).is_discarded()) << text;
  }
  // Declined, though nlohmann reads them (the fallback's job): nlohmann's lexer ends the input at a NUL byte.
  Json nul;
  EXPECT_FALSE(detail::parse_json_fast(std::string("[1]\0x", 5), nul));
  EXPECT_FALSE(reference(std::string("[1]\0x", 5)).is_discarded());
  auto nul_read = parse_json(std::string("[1]\0x", 5), "nul.json");
  ASSERT_TRUE(nul_read.has_value());
  EXPECT_EQ(nul_read->size(), 1u);
  // The byte order mark still reads through parse_json (nlohmann's path).
  auto bom = parse_json("\xEF\xBB\xBF{\"a\": 1}", "bom.json");
  ASSERT_TRUE(bom.has_value());
  EXPECT_EQ(bom->at("a").get<int>(), 1);
}

// NaN, Infinity and -Infinity where a value goes become parse_json's marker strings, as its rewrite makes them; in
// strings they stay text; elsewhere the reader declines and parse_json's rewrite decides.
TEST(JsonFast, Issue19_NonFiniteTokensAsTheRewriteReadsThem) {
  Json v;
  ASSERT_TRUE(detail::parse_json_fast(R"({"a": NaN, "b": [Infinity, -Infinity], "c": "NaN"})", v));
  EXPECT_EQ(non_finite_token(v.at("a")).value_or(""), "NaN");
  EXPECT_EQ(non_finite_token(v.at("b")[0]).value_or(""), "Infinity");
  EXPECT_EQ(non_finite_token(v.at("b")[1]).value_or(""), "-Infinity");
  EXPECT_FALSE(is_non_finite(v.at("c")));
  EXPECT_EQ(v.at("c").get<std::string>(), "NaN");
  for (const std::string text : {"[NaNx]", "[-NaN]", "[-Inf]", "{NaN: 1}"}) {
    Json out;
    EXPECT_FALSE(detail::parse_json_fast(text, out)) << text;
  }
  // parse_json's rewrite still reads a bare token as a key (nlohmann's path).
  auto key = parse_json("{NaN: 1}", "key.json");
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->size(), 1u);
}

// 64 levels read; 65 are declined and parse_json names the limit, as before.
TEST(JsonFast, Issue19_NestingLimitAsParseJsonSetsIt) {
  const auto nested = [](int n) { return std::string(n, '[') + std::string(n, ']'); };
  EXPECT_TRUE(agrees(nested(64), "64 deep"));
  Json out;
  EXPECT_FALSE(detail::parse_json_fast(nested(65), out));
  auto deep = parse_json(nested(65), "deep.json");
  ASSERT_FALSE(deep.has_value());
  EXPECT_NE(deep.error().message.find("nested deeper than 64"), std::string::npos) << deep.error().message;
  auto broken = parse_json("{\"a\": [1, 2}", "broken.json");
  ASSERT_FALSE(broken.has_value());
  EXPECT_NE(broken.error().message.find("malformed JSON at byte"), std::string::npos) << broken.error().message;
}
