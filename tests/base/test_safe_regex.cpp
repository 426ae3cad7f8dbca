// base/safe_regex (issue 19): the linear-time matcher for patterns read from quantization descriptors. The oracle is
// std::regex (ECMAScript), an independent backtracking implementation, on the part of the syntax both share and on
// texts short enough for it; Python-only forms ((?P<name>...), \Z, {,n}, $ before a final newline) are checked against
// what Python's `re` documents, written out by hand.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "base/safe_regex.hpp"

using namespace preflight;

namespace {

SafeRegex must(const std::string& p) {
  auto r = SafeRegex::compile(p);
  EXPECT_TRUE(r.has_value()) << p << ": " << (r ? "" : r.error().message);
  return r ? *r : *SafeRegex::compile("");
}

// search / match / fullmatch against std::regex_search, regex_search with match_continuous, regex_match.
// Returns the search answer.
bool expect_same(const std::string& pattern, const std::string& text) {
  const SafeRegex mine = must(pattern);
  const std::regex theirs(pattern);
  const bool found = mine.search(text);
  EXPECT_EQ(found, std::regex_search(text, theirs)) << "search /" << pattern << "/ on '" << text << "'";
  EXPECT_EQ(mine.match(text), std::regex_search(text, theirs, std::regex_constants::match_continuous)) << "match /" << pattern << "/ on '" << text << "'";
  EXPECT_EQ(mine.fullmatch(text), std::regex_match(text, theirs)) << "fullmatch /" << pattern << "/ on '" << text << "'";
  return found;
}

}  // namespace

// The patterns of real descriptors (ModelCloud's GPTQ dynamic-cfg checkpoint under tests/fixtures/quant; the
// compressed-tensors ignore lists of vLLM's tests) on the module names preflight builds.
TEST(SafeRegex, Issue19_RealDescriptorPatternsAgreeWithStdRegex) {
  const std::vector<std::string> patterns = {
      R"(model\.layers\.([2-9]\d*|[1-9]\d+)\..*)", R"(.*\.1\..*)", R"(.*lm_head)", R"(model.layers.\d+.mlp.gate$)",
      R"(.*self_attn.*)", R"(.*\.mlp\.experts\.\d+\.(gate|up|down)_proj$)", R"(^model\.layers\.(0|1|2)\.)", R"(.*(q|k|v)_proj)",
      R"([a-z_]+\.layers\.[0-9]{1,2}\.mlp)", R"(.*\bmlp\b.*)", R"(.*visual.*)", R"(model\.layers\.1[0-5]\..*)"};
  const std::vector<std::string> names = {
      "model.layers.0.self_attn.q_proj", "model.layers.1.mlp.gate_proj", "model.layers.12.mlp.down_proj", "model.layers.2.mlp.gate",
      "model.layers.21.mlp.experts.17.up_proj", "lm_head", "model.embed_tokens", "visual.blocks.3.attn.qkv", "model.layers.15.self_attn.o_proj",
      "model.layers.1", "", "mlp", "model.layers.100.mlp.gate"};
  for (const auto& p : patterns)
    for (const auto& n : names) expect_same(p, n);
}

// Random patterns over a small grammar against std::regex on short texts (a fixed seed: the same 1,600 pairs each run;
// both answers occur often, so a matcher that always says one of them fails).
TEST(SafeRegex, Issue19_RandomPatternsAgreeWithStdRegex) {
  std::mt19937 rng(19);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::string> atoms = {"a", "b", ".", "\\.", "\\d", "[ab]", "[^a]", "[0-9]", "\\w", "_"};
  const std::vector<std::string> quants = {"", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "+?"};
  std::function<std::string(int)> gen = [&](int depth) -> std::string {
    std::string s;
    const int parts = 1 + pick(3);
    for (int k = 0; k < parts; ++k) {
      std::string atom = depth < 2 && pick(4) == 0 ? "(" + gen(depth + 1) + (pick(2) ? "|" + gen(depth + 1) : "") + ")" : atoms[static_cast<size_t>(pick(10))];
      s += atom + quants[static_cast<size_t>(pick(10))];
    }
    if (pick(8) == 0) s = "^" + s;
    if (pick(8) == 0) s += "$";
    return s;
  };
  const std::string alphabet = "ab.1_";
  int found = 0, total = 0;
  for (int k = 0; k < 200; ++k) {
    const std::string pattern = gen(0);
    for (int t = 0; t < 8; ++t) {
      std::string text;
      const int len = pick(7);
      for (int c = 0; c < len; ++c) text += alphabet[static_cast<size_t>(pick(5))];
      found += expect_same(pattern, text) ? 1 : 0;
      ++total;
    }
  }
  EXPECT_GT(found, total / 5);
  EXPECT_LT(found, total * 4 / 5);
}

// What std::regex backtracks on for minutes: each answer below is by hand (the text has no 'X'; "aaaa...ab" ends in
// 'b'), and it comes back at once.
TEST(SafeRegex, Issue19_HostilePatternsAnswerWithoutBacktracking) {
  const std::string name = "model.layers.31.mlp.experts.127.down_proj.weight_packed";
  EXPECT_FALSE(must("(.*.*)*X").search(name));
  EXPECT_FALSE(must("(.*.*)*X").match(name));
  const std::string as(5000, 'a');
  EXPECT_FALSE(must("(a|aa)*$").fullmatch(as + "b"));
  EXPECT_TRUE(must("(a|aa)*$").fullmatch(as));
  EXPECT_FALSE(must("(a*)*b").search(as));
  EXPECT_TRUE(must("(a*)*b").search(as + "b"));
  EXPECT_FALSE(must("((a+)+)+c").match(as));
}

// Python-only syntax, by Python's documentation: named groups, \Z, {,n}, `$` before one final newline, (?#...).
TEST(SafeRegex, Issue19_PythonForms) {
  EXPECT_TRUE(must(R"((?P<layer>\d+)\.mlp)").search("model.layers.7.mlp.up_proj"));
  EXPECT_TRUE(must(R"(proj\Z)").search("q_proj"));
  EXPECT_FALSE(must(R"(proj\Z)").search("q_proj\n"));
  EXPECT_TRUE(must(R"(proj$)").search("q_proj\n"));   // $ matches before a final newline
  EXPECT_FALSE(must(R"(proj$)").search("q_proj\n\n"));
  EXPECT_TRUE(must(R"(^a{,2}$)").search("aa"));
  EXPECT_FALSE(must(R"(^a{,2}$)").search("aaa"));
  EXPECT_TRUE(must(R"(a(?#a comment)b)").fullmatch("ab"));
  EXPECT_TRUE(must(R"(a{)").fullmatch("a{"));  // a brace that starts no count is a literal
  EXPECT_TRUE(must(R"(\Aq)").match("q_proj"));
  EXPECT_FALSE(must(R"(\Aq)").search("xq"));
  EXPECT_TRUE(must(R"([\]a-]+)").fullmatch("]-a"));
  EXPECT_TRUE(must("").search("anything"));
}

// Constructs that need backtracking or change the rest of the pattern are refused with the construct and its offset;
// malformed patterns get Python's words; sizes are bounded.
TEST(SafeRegex, Issue19_RefusesWhatItCannotMatchLinearly) {
  struct Case {
    std::string pattern, message;
    ErrorKind kind;
  };
  const std::vector<Case> cases = {
      {"(a)\\1", "a backreference or octal escape \\1 at offset 3", ErrorKind::unsupported},
      {"(?P<x>a)(?P=x)", "a backreference (?P= at offset 8", ErrorKind::unsupported},
      {"mlp(?=\\.)", "lookaround at offset 3", ErrorKind::unsupported},
      {"(?<!x)mlp", "lookaround at offset 0", ErrorKind::unsupported},
      {"(?i)mlp", "an inline flag, conditional or extension group (?i at offset 0", ErrorKind::unsupported},
      {"a++", "a possessive quantifier at offset 2", ErrorKind::unsupported},
      {"a**", "multiple repeat at offset 2", ErrorKind::corrupt},
      {"*a", "nothing to repeat at offset 0", ErrorKind::corrupt},
      {"^*", "nothing to repeat at offset 1", ErrorKind::corrupt},
      {"[z-a]", "bad character range at offset 2", ErrorKind::corrupt},
      {"(ab", "missing ), unterminated subpattern at offset 0", ErrorKind::corrupt},
      {"ab)", "unbalanced parenthesis at offset 2", ErrorKind::corrupt},
      {"[ab", "unterminated character set at offset 0", ErrorKind::corrupt},
      {"\\q", "bad escape \\q at offset 0", ErrorKind::corrupt},
      {"a\\", "bad escape (end of pattern) at offset 1", ErrorKind::corrupt},
      {"a{3,2}", "min repeat greater than max repeat at offset 1", ErrorKind::corrupt},
      {"a{1001}", "a repetition count over 1000 at offset 2", ErrorKind::unsupported},
      {"(a{1000}){1000}", "an automaton over 20000 states (repetition counts multiply)", ErrorKind::unsupported},
      {std::string(101, '(') + "a" + std::string(101, ')'), "groups nested deeper than 100 at offset 100", ErrorKind::unsupported},
      {std::string(4097, 'a'), "a pattern of 4097 bytes (at most 4096)", ErrorKind::unsupported},
  };
  for (const auto& c : cases) {
    const auto r = SafeRegex::compile(c.pattern);
    ASSERT_FALSE(r.has_value()) << c.pattern.substr(0, 40);
    EXPECT_EQ(r.error().message, c.message) << c.pattern.substr(0, 40);
    EXPECT_EQ(r.error().kind, c.kind) << c.pattern.substr(0, 40);
  }
  EXPECT_TRUE(SafeRegex::compile(std::string(100, '(') + "a" + std::string(100, ')')).has_value());
  EXPECT_TRUE(SafeRegex::compile("a{1000}").has_value());
}

// Issue 19: a pattern's leading literal bytes are checked before the automaton runs (a text that does not start with
// them, or for search does not contain them, is refused at once). The shortcut must give std::regex's answers where the
// literal ends at a quantifier, an alternation, a group, a class, an escape or an anchor, and on texts that hold the
// literal only in part, later, or twice.
TEST(SafeRegex, Issue19_LiteralPrefixShortcutAgreesWithStdRegex) {
  const std::vector<std::string> patterns = {
      "abc", "abc*", "ab+c", "ab?c", "ab{2}c", "ab|ac", "a(b|c)d", "(ab)c", "(?:ab)+c", "ab[cd]", "a\\.b", "a\\.b.*",
      "ab.c", "^ab", "ab$", "a\\bb", "a\\d", "aa*", "model\\.layers\\.2\\..*", "a{0}b", "a{1,}b"};
  const std::vector<std::string> texts = {"", "a", "ab", "abc", "abcc", "xabc", "abab", "abbc", "ac", "acd", "abd", "a.b", "a.bx",
                                          "axb", "a1", "aab", "b", "model.layers.2.mlp", "model.layers.20.mlp", "xmodel.layers.2.x",
                                          "ababc", "abc\n"};
  int found = 0, total = 0;
  for (const auto& p : patterns)
    for (const auto& t : texts) {
      found += expect_same(p, t) ? 1 : 0;
      ++total;
    }
  EXPECT_GT(found, total / 10);
  EXPECT_LT(found, total * 9 / 10);
}
