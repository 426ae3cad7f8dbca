#include <gtest/gtest.h>

#include <string>

#include "base/error.hpp"

using namespace preflight;

namespace {

// Counts the copies and moves made of it, so that a test sees how many times Expected<T> moved its value.
struct Counted {
  static inline int copies = 0;
  static inline int moves = 0;
  int payload = 0;
  explicit Counted(int p) : payload(p) {}
  Counted(const Counted& o) : payload(o.payload) { ++copies; }
  Counted(Counted&& o) noexcept : payload(o.payload) { ++moves; }
  Counted& operator=(const Counted&) = delete;
  Counted& operator=(Counted&&) = delete;
  ~Counted() = default;
  static void reset() { copies = moves = 0; }
};

Expected<Counted> made_named(int p) {
  Counted c(p);
  return c;  // implicitly moved into the Expected: one move
}

Expected<Counted> made_prvalue(int p) { return Counted(p); }  // the temporary moved into the Expected: one move

Expected<Counted> copied_from(const Counted& c) { return c; }  // an lvalue the function does not own: one copy

Expected<Counted> failed() { return make_error(ErrorKind::corrupt, "bad header", "a.gguf"); }

Expected<Counted> forwarded(int p) {
  PF_TRY(c, made_named(p));  // one move into the Expected, one out of it into `c`
  return c;                  // one more into this function's Expected
}

}  // namespace

// Issue 19 (cleanup): Expected<T> moves a value into place once. Before, its by-value constructor moved it into the
// parameter and again into the state: made_named counted 2 moves, forwarded 5 (2 + 1 + 2).
TEST(Expected, Issue19_ValueMovedOnceOnTheSuccessPath) {
  struct Row {
    const char* what;
    Expected<Counted> (*make)();
    int moves, copies;
  };
  const Row rows[] = {
      {"return of a named local", [] { return made_named(7); }, 1, 0},
      {"return of a temporary", [] { return made_prvalue(7); }, 1, 0},
      {"return of a caller's lvalue", [] { static const Counted kept(7); return copied_from(kept); }, 0, 1},
      {"PF_TRY and return", [] { return forwarded(7); }, 3, 0},
  };
  for (const Row& r : rows) {
    Counted::reset();
    const Expected<Counted> e = r.make();  // the returned Expected itself is elided (a prvalue), not moved
    ASSERT_TRUE(e.has_value()) << r.what;
    EXPECT_EQ(e->payload, 7) << r.what;
    EXPECT_EQ(Counted::moves, r.moves) << r.what;
    EXPECT_EQ(Counted::copies, r.copies) << r.what;
  }
}

// The error path is untouched: the kind, message and context arrive as made, and no value is made.
TEST(Expected, Issue19_ErrorKeepsItsKindMessageAndContext) {
  Counted::reset();
  const auto e = failed();
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().kind, ErrorKind::corrupt);
  EXPECT_EQ(e.error().message, "bad header");
  EXPECT_EQ(e.error().context, "a.gguf");
  EXPECT_EQ(Counted::moves + Counted::copies, 0);
}
