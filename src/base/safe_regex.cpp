// base/safe_regex: see safe_regex.hpp. A recursive-descent parser builds a small tree, which is emitted as a Thompson
// program (byte sets, splits, jumps, zero-width assertions); run() keeps the set of live states per text position.
#include "base/safe_regex.hpp"

#include <bit>

#include <string>
#include <utility>

namespace preflight {
namespace {

// Thrown inside the builder only; compile() turns it into an Error.
struct PatternError {
  ErrorKind kind;
  std::string what;
};

constexpr int k_max_group_depth = 100;

bool is_word_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 0x80;
}

std::bitset<256> class_set(char c) {
  std::bitset<256> s;
  for (int b = 0; b < 256; ++b) {
    const auto u = static_cast<unsigned char>(b);
    const bool digit = u >= '0' && u <= '9';
    const bool space = u == ' ' || (u >= '\t' && u <= '\r');
    switch (c) {
      case 'd': case 'D': s[b] = digit; break;
      case 'w': case 'W': s[b] = is_word_byte(u); break;
      default: s[b] = space; break;  // 's', 'S'
    }
  }
  if (c == 'D' || c == 'W' || c == 'S') s.flip();
  return s;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

class SafeRegexBuilder {
 public:
  explicit SafeRegexBuilder(std::string_view p) : p_(p) {}

  SafeRegex build() {
    const Node root = parse_alt(0);
    if (i_ < p_.size()) fail(ErrorKind::corrupt, "unbalanced parenthesis", i_);
    emit(root);
    push({SafeRegex::Op::match, 0, 0});
    out_.sets_ = std::move(sets_);
    out_.literal_prefix_ = literal_prefix();
    return std::move(out_);
  }

 private:
  using Op = SafeRegex::Op;
  enum class Kind : uint8_t { empty, bytes, concat, alt, repeat, assertion };
  struct Node {
    Kind kind = Kind::empty;
    std::vector<Node> kids;
    int set = -1;           // bytes: index into sets_
    int min = 0, max = 0;   // repeat: max -1 = unbounded
    Op op = Op::match;      // assertion
  };

  std::string_view p_;
  size_t i_ = 0;
  std::vector<std::bitset<256>> sets_;
  SafeRegex out_;

  [[noreturn]] static void fail(ErrorKind kind, const std::string& what, size_t at) {
    throw PatternError{kind, what + " at offset " + std::to_string(at)};
  }
  bool more() const { return i_ < p_.size(); }
  char peek(size_t ahead = 0) const { return i_ + ahead < p_.size() ? p_[i_ + ahead] : '\0'; }

  Node bytes_node(const std::bitset<256>& s) {
    sets_.push_back(s);
    Node n;
    n.kind = Kind::bytes;
    n.set = static_cast<int>(sets_.size() - 1);
    return n;
  }
  Node byte_node(unsigned char c) {
    std::bitset<256> s;
    s[c] = true;
    return bytes_node(s);
  }
  static Node assertion(Op op) {
    Node n;
    n.kind = Kind::assertion;
    n.op = op;
    return n;
  }

  Node parse_alt(int depth) {
    Node first = parse_concat(depth);
    if (peek() != '|' || !more()) return first;
    Node alt;
    alt.kind = Kind::alt;
    alt.kids.push_back(std::move(first));
    while (more() && peek() == '|') {
      ++i_;
      alt.kids.push_back(parse_concat(depth));
    }
    return alt;
  }

  Node parse_concat(int depth) {
    Node c;
    c.kind = Kind::concat;
    while (more() && peek() != '|' && peek() != ')') c.kids.push_back(parse_repeat(depth));
    if (c.kids.empty()) return Node{};
    if (c.kids.size() == 1) return std::move(c.kids.front());
    return c;
  }

  // `{m}`, `{m,}`, `{,n}`, `{m,n}`, `{,}` at i_ (Python's forms); false (i_ unchanged) when the brace is a literal.
  bool parse_count(int& lo, int& hi) {
    size_t j = i_ + 1;
    auto number = [&](int& v) {
      const size_t start = j;
      long long value = 0;
      while (j < p_.size() && p_[j] >= '0' && p_[j] <= '9') {
        if (value <= SafeRegex::k_max_repeat) value = value * 10 + (p_[j] - '0');
        ++j;
      }
      if (j == start) return false;
      if (value > SafeRegex::k_max_repeat)
        fail(ErrorKind::unsupported, "a repetition count over " + std::to_string(SafeRegex::k_max_repeat), start);
      v = static_cast<int>(value);
      return true;
    };
    lo = 0;
    hi = -1;
    const bool has_lo = number(lo);
    if (j < p_.size() && p_[j] == ',') {
      ++j;
      int v = 0;
      if (number(v)) hi = v;
    } else {
      if (!has_lo) return false;
      hi = lo;
    }
    if (j >= p_.size() || p_[j] != '}') return false;
    if (hi >= 0 && lo > hi) fail(ErrorKind::corrupt, "min repeat greater than max repeat", i_);
    i_ = j + 1;
    return true;
  }

  bool quantifier(int& lo, int& hi) {
    switch (peek()) {
      case '*': lo = 0; hi = -1; ++i_; return true;
      case '+': lo = 1; hi = -1; ++i_; return true;
      case '?': lo = 0; hi = 1; ++i_; return true;
      case '{': return parse_count(lo, hi);
      default: return false;
    }
  }

  Node parse_repeat(int depth) {
    Node atom = parse_atom(depth);
    if (!more()) return atom;
    const size_t at = i_;
    int lo = 0, hi = 0;
    if (!quantifier(lo, hi)) return atom;
    if (atom.kind == Kind::assertion) fail(ErrorKind::corrupt, "nothing to repeat", at);
    if (peek() == '?' && more()) {
      ++i_;  // lazy: the same yes/no answer
    } else if (peek() == '+' && more()) {
      fail(ErrorKind::unsupported, "a possessive quantifier", i_);
    }
    const size_t again = i_;
    int lo2 = 0, hi2 = 0;
    if (more() && quantifier(lo2, hi2)) fail(ErrorKind::corrupt, "multiple repeat", again);
    if (atom.kind == Kind::empty) return atom;  // "()*": Python accepts it, and it matches the empty string
    Node r;
    r.kind = Kind::repeat;
    r.min = lo;
    r.max = hi;
    r.kids.push_back(std::move(atom));
    return r;
  }

  Node parse_group(int depth) {
    const size_t open = i_;
    if (depth >= k_max_group_depth) fail(ErrorKind::unsupported, "groups nested deeper than " + std::to_string(k_max_group_depth), open);
    ++i_;
    if (peek() == '?') {
      const char k = peek(1);
      if (k == ':') {
        i_ += 2;
      } else if (k == 'P' && peek(2) == '<') {
        i_ += 3;
        const size_t name = i_;
        while (more() && peek() != '>') {
          const char c = peek();
          if (!(is_word_byte(static_cast<unsigned char>(c)))) fail(ErrorKind::corrupt, "bad character in group name", i_);
          ++i_;
        }
        if (!more() || i_ == name) fail(ErrorKind::corrupt, "missing group name", name);
        ++i_;
      } else if (k == '#') {
        while (more() && peek() != ')') ++i_;
        if (!more()) fail(ErrorKind::corrupt, "missing ), unterminated comment", open);
        ++i_;
        return Node{};
      } else if (k == 'P' && peek(2) == '=') {
        fail(ErrorKind::unsupported, "a backreference (?P=", open);
      } else if (k == '=' || k == '!' || (k == '<' && (peek(2) == '=' || peek(2) == '!'))) {
        fail(ErrorKind::unsupported, "lookaround", open);
      } else {
        fail(ErrorKind::unsupported, "an inline flag, conditional or extension group (?" + std::string(1, k), open);
      }
    }
    Node inner = parse_alt(depth + 1);
    if (!more() || peek() != ')') fail(ErrorKind::corrupt, "missing ), unterminated subpattern", open);
    ++i_;
    return inner;
  }

  // One byte of an escape that stands for a byte (\n, \x41, \.), or -1 for a class escape (\d ...), whose set goes
  // to `set`. i_ is at the backslash.
  int escape_byte(bool in_class, std::bitset<256>& set) {
    const size_t at = i_;
    if (i_ + 1 >= p_.size()) fail(ErrorKind::corrupt, "bad escape (end of pattern)", at);
    const char c = p_[i_ + 1];
    i_ += 2;
    switch (c) {
      case 'd': case 'D': case 'w': case 'W': case 's': case 'S': set = class_set(c); return -1;
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
      case 'a': return '\a';
      case 'b': return in_class ? '\b' : -2;  // backspace in a class, a word boundary outside
      case 'x': {
        const int h = hex_value(peek()), l = hex_value(peek(1));
        if (h < 0 || l < 0) fail(ErrorKind::corrupt, "incomplete escape \\x", at);
        i_ += 2;
        return h * 16 + l;
      }
      default: break;
    }
    if (c >= '0' && c <= '9') fail(ErrorKind::unsupported, "a backreference or octal escape \\" + std::string(1, c), at);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      if (!in_class && (c == 'A' || c == 'Z' || c == 'B')) return -2;  // anchors: the caller reads p_[at + 1]
      fail(ErrorKind::corrupt, std::string("bad escape \\") + c, at);
    }
    return static_cast<unsigned char>(c);
  }

  Node parse_class() {
    const size_t open = i_;
    ++i_;
    std::bitset<256> s;
    const bool negate = more() && peek() == '^';
    if (negate) ++i_;
    bool first = true;
    while (true) {
      if (!more()) fail(ErrorKind::corrupt, "unterminated character set", open);
      if (peek() == ']' && !first) break;
      first = false;
      std::bitset<256> cls;
      const int lo = peek() == '\\' ? escape_byte(true, cls) : static_cast<unsigned char>(p_[i_++]);
      if (lo < 0) {
        s |= cls;
        continue;
      }
      if (peek() == '-' && i_ + 1 < p_.size() && p_[i_ + 1] != ']') {
        const size_t dash = i_;
        ++i_;
        const int hi = peek() == '\\' ? escape_byte(true, cls) : static_cast<unsigned char>(p_[i_++]);
        if (hi < 0 || hi < lo) fail(ErrorKind::corrupt, "bad character range", dash);
        for (int b = lo; b <= hi; ++b) s[static_cast<size_t>(b)] = true;
      } else {
        s[static_cast<size_t>(lo)] = true;
      }
    }
    ++i_;
    if (negate) s.flip();
    return bytes_node(s);
  }

  Node parse_atom(int depth) {
    const size_t at = i_;
    const char c = peek();
    switch (c) {
      case '(': return parse_group(depth);
      case '[': return parse_class();
      case '.': {
        ++i_;
        std::bitset<256> s;
        s.set();
        s['\n'] = false;
        return bytes_node(s);
      }
      case '^': ++i_; return assertion(Op::line_begin);
      case '$': ++i_; return assertion(Op::line_end);
      case '*': case '+': case '?': fail(ErrorKind::corrupt, "nothing to repeat", at);
      case '\\': {
        std::bitset<256> cls;
        const int b = escape_byte(false, cls);
        if (b == -1) return bytes_node(cls);
        if (b == -2) {
          const char a = p_[at + 1];
          return assertion(a == 'A' ? Op::line_begin : a == 'Z' ? Op::text_end : a == 'b' ? Op::word_boundary : Op::not_word_boundary);
        }
        return byte_node(static_cast<unsigned char>(b));
      }
      default: ++i_; return byte_node(static_cast<unsigned char>(c));
    }
  }

  // The bytes on the program's path from its start while that path is a chain of one-byte sets (jumps followed): every
  // match reads them first. Stops at a split, an anchor or a set of more than one byte.
  std::string literal_prefix() const {
    std::string out;
    size_t pc = 0, steps = 0;
    while (pc < out_.prog_.size() && steps++ < out_.prog_.size()) {
      const SafeRegex::Inst& in = out_.prog_[pc];
      if (in.op == Op::jump) {
        pc = static_cast<size_t>(in.x);
        continue;
      }
      if (in.op != Op::bytes) break;
      const std::bitset<256>& set = out_.sets_[static_cast<size_t>(in.x)];
      if (set.count() != 1) break;
      const std::bitset<256> low_word(~0ULL);
      for (size_t w = 0; w < 4; ++w) {
        const uint64_t word = ((set >> (64 * w)) & low_word).to_ullong();
        if (word == 0) continue;
        out.push_back(static_cast<char>(64 * w + static_cast<size_t>(std::countr_zero(word))));
        break;
      }
      ++pc;
    }
    return out;
  }

  int push(SafeRegex::Inst in) {
    if (out_.prog_.size() >= SafeRegex::k_max_states)
      throw PatternError{ErrorKind::unsupported, "an automaton over " + std::to_string(SafeRegex::k_max_states) + " states (repetition counts multiply)"};
    out_.prog_.push_back(in);
    return static_cast<int>(out_.prog_.size() - 1);
  }
  int here() const { return static_cast<int>(out_.prog_.size()); }

  void emit_repeat(const Node& n) {
    const Node& body = n.kids.front();
    for (int k = 0; k < n.min; ++k) emit(body);
    if (n.max < 0) {
      const int split = push({Op::split, 0, 0});
      out_.prog_[static_cast<size_t>(split)].x = split + 1;
      emit(body);
      push({Op::jump, split, 0});
      out_.prog_[static_cast<size_t>(split)].y = here();
      return;
    }
    std::vector<int> splits;
    for (int k = n.min; k < n.max; ++k) {
      const int split = push({Op::split, 0, 0});
      out_.prog_[static_cast<size_t>(split)].x = split + 1;
      splits.push_back(split);
      emit(body);
    }
    for (const int s : splits) out_.prog_[static_cast<size_t>(s)].y = here();
  }

  void emit(const Node& n) {
    switch (n.kind) {
      case Kind::empty: return;
      case Kind::bytes: push({Op::bytes, n.set, 0}); return;
      case Kind::assertion: push({n.op, 0, 0}); return;
      case Kind::concat:
        for (const auto& k : n.kids) emit(k);
        return;
      case Kind::repeat: emit_repeat(n); return;
      case Kind::alt: {
        std::vector<int> jumps;
        for (size_t k = 0; k + 1 < n.kids.size(); ++k) {
          const int split = push({Op::split, 0, 0});
          out_.prog_[static_cast<size_t>(split)].x = split + 1;
          emit(n.kids[k]);
          jumps.push_back(push({Op::jump, 0, 0}));
          out_.prog_[static_cast<size_t>(split)].y = here();
        }
        emit(n.kids.back());
        for (const int j : jumps) out_.prog_[static_cast<size_t>(j)].x = here();
        return;
      }
    }
  }
};

Expected<SafeRegex> SafeRegex::compile(std::string_view pattern) {
  if (pattern.size() > k_max_pattern_bytes)
    return make_error(ErrorKind::unsupported, "a pattern of " + std::to_string(pattern.size()) + " bytes (at most " + std::to_string(k_max_pattern_bytes) + ")");
  try {
    return SafeRegexBuilder(pattern).build();
  } catch (const PatternError& e) {
    return make_error(e.kind, e.what);
  }
}

namespace {
// One thread's state lists, reused from call to call (a plan's workers match on two threads): a GPTQ `dynamic` map of
// 20,000 rules is tried on each of a model's ~250 module prefixes, and four allocations a call were a third of `fit`.
struct RunScratch {
  std::vector<int32_t> cur, next, stack;
  std::vector<size_t> mark;
};
}  // namespace

bool SafeRegex::run(std::string_view t, bool anchored, bool full) const {
  if (anchored ? !t.starts_with(literal_prefix_) : t.find(literal_prefix_) == std::string_view::npos) return false;
  const size_t n = t.size();
  thread_local RunScratch scratch;
  // Plain references, not a structured binding: clang does not let the lambda below capture bindings.
  std::vector<int32_t>& cur = scratch.cur;
  std::vector<int32_t>& next = scratch.next;
  std::vector<int32_t>& stack = scratch.stack;
  std::vector<size_t>& mark = scratch.mark;
  cur.clear();
  next.clear();
  stack.clear();
  cur.reserve(prog_.size());
  next.reserve(prog_.size());
  mark.assign(prog_.size(), 0);  // 1 + the text position at which the state was last added
  // The states reachable from pc without reading a byte, at text position pos (each once per position).
  auto add = [&](std::vector<int32_t>& list, int32_t pc0, size_t pos) {
    stack.push_back(pc0);
    while (!stack.empty()) {
      const int32_t pc = stack.back();
      stack.pop_back();
      const auto upc = static_cast<size_t>(pc);
      if (mark[upc] == pos + 1) continue;
      mark[upc] = pos + 1;
      const Inst& in = prog_[upc];
      bool pass = false;
      switch (in.op) {
        case Op::jump: stack.push_back(in.x); continue;
        case Op::split:
          stack.push_back(in.y);
          stack.push_back(in.x);
          continue;
        case Op::bytes:
        case Op::match: list.push_back(pc); continue;
        case Op::line_begin: pass = pos == 0; break;
        case Op::line_end: pass = pos == n || (pos + 1 == n && t[pos] == '\n'); break;
        case Op::text_end: pass = pos == n; break;
        case Op::word_boundary:
        case Op::not_word_boundary: {
          const bool before = pos > 0 && is_word_byte(static_cast<unsigned char>(t[pos - 1]));
          const bool after = pos < n && is_word_byte(static_cast<unsigned char>(t[pos]));
          pass = (before != after) == (in.op == Op::word_boundary);
          break;
        }
      }
      if (pass) stack.push_back(pc + 1);
    }
  };
  for (size_t pos = 0;; ++pos) {
    if (pos == 0 || !anchored) add(cur, 0, pos);
    if (cur.empty() && anchored) return false;
    next.clear();
    for (const int32_t pc : cur) {
      const Inst& in = prog_[static_cast<size_t>(pc)];
      if (in.op == Op::match) {
        if (!full || pos == n) return true;
        continue;
      }
      if (pos < n && sets_[static_cast<size_t>(in.x)][static_cast<unsigned char>(t[pos])]) add(next, pc + 1, pos + 1);
    }
    if (pos == n) return false;
    cur.swap(next);
  }
}

bool SafeRegex::search(std::string_view text) const { return run(text, false, false); }
bool SafeRegex::match(std::string_view text) const { return run(text, true, false); }
bool SafeRegex::fullmatch(std::string_view text) const { return run(text, true, true); }

}  // namespace preflight
