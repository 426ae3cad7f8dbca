// base/safe_regex: regular expressions that come from input files, matched in time linear in the text.
//
// Issue 19 (no hang on hostile input): quantization descriptors carry regular expressions that preflight must apply
// to module names the way vLLM does with Python's `re`: GPTQModel's `dynamic` map (re.match per module prefix) and
// compressed-tensors' `re:` targets and ignore lists. std::regex backtracks: the pattern "(.*.*)*X", one line of a
// config.json on a hub, held `fit` for more than a minute on a 40-character module name. SafeRegex compiles the pattern
// to a Thompson automaton and simulates it breadth first (every state at most once per text position), so a match
// costs at most text length x automaton size steps and memory bounded by the automaton.
//
// The subset is Python `re`'s that those files use: literals and escapes, `.` (any byte but a newline), classes
// `[...]` with ranges and negation, `\d \D \w \W \s \S`, groups `(...)`, `(?:...)`, `(?P<name>...)`, alternation,
// the quantifiers `* + ? {m} {m,} {m,n} {,n}` (greedy or lazy: the same for a yes/no answer), anchors `^ $ \A \Z \b
// \B`. Backreferences, lookaround, inline flags and conditionals, which need backtracking or change the meaning of the
// rest, are refused at compile with an error naming the construct and its offset; so are patterns over 4,096 bytes,
// a repetition count over 1,000 and automata over 20,000 states. Classes are ASCII (`\w` is [A-Za-z0-9_], and every
// byte >= 0x80 counts as a word byte, as UTF-8 letters do in Python).
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"

namespace preflight {

class SafeRegex {
 public:
  static constexpr size_t k_max_pattern_bytes = 4096;
  static constexpr int k_max_repeat = 1000;
  static constexpr size_t k_max_states = 20000;

  // The error (ErrorKind::unsupported for a construct outside the subset, corrupt for a malformed pattern) names the
  // construct and the byte offset; the caller adds the file and field.
  static Expected<SafeRegex> compile(std::string_view pattern);

  bool search(std::string_view text) const;     // Python re.search: a match starting anywhere
  bool match(std::string_view text) const;      // re.match: a match starting at offset 0, ending anywhere
  bool fullmatch(std::string_view text) const;  // re.fullmatch
  size_t states() const { return prog_.size(); }

 private:
  enum class Op : uint8_t { bytes, split, jump, line_begin, line_end, text_end, word_boundary, not_word_boundary, match };
  struct Inst {
    Op op = Op::match;
    int32_t x = 0;  // bytes: index into sets_; split / jump: target
    int32_t y = 0;  // split: second target
  };
  std::vector<Inst> prog_;
  std::vector<std::bitset<256>> sets_;
  // The bytes every match starts with (the program's leading single-byte steps): a text that does not start with them
  // (contain them, for search) is refused by one comparison, before the automaton runs. A GPTQ `dynamic` map holds one
  // rule per layer ("model\.layers\.12\.mlp\..*"), each tried on every module prefix of the model.
  std::string literal_prefix_;

  friend class SafeRegexBuilder;
  bool run(std::string_view text, bool anchored, bool full) const;
};

}  // namespace preflight
