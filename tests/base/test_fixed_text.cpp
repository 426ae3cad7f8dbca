#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "base/fixed_text.hpp"

using namespace preflight;

namespace {

std::string printf_fixed(double v, int precision) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

std::string fixed_text(double v, int precision) {
  FixedText t;
  t.fixed(v, precision);
  return t.take();
}

}  // namespace

// Issue 19 (round 7): FixedText::fixed writes "%.Nf" from the integer nearest v x 10^N where that integer is
// certain (fixed_digits), else through std::to_chars. Expected texts by hand (the exact binary values: 0.125 and 2.5
// are ties, which printf rounds to even; 1.005 is 1.00499999999999989..., 9.995 is 9.99499999999999921...).
TEST(FixedText, Issue19_FixedIsPrintfsText) {
  struct Case {
    double v;
    int precision;
    const char* text;
  };
  const Case cases[] = {
      {0.125, 2, "0.12"},      {0.375, 2, "0.38"},        {2.5, 0, "2"},           {3.5, 0, "4"},     {0.5, 0, "0"},
      {1.005, 2, "1.00"},      {9.995, 2, "9.99"},        {-0.0, 2, "-0.00"},      {-0.001, 2, "-0.00"}, {0.0, 0, "0"},
      {123456.789, 3, "123456.789"}, {-42.25, 1, "-42.2"}, {1e20, 1, "100000000000000000000.0"}, {0.1, 9, "0.100000000"},
      {0.1, 12, "0.100000000000"}, {4503599627370495.0, 0, "4503599627370495"}, {99.96, 1, "100.0"}, {7.0, 3, "7.000"},
      {std::numeric_limits<double>::infinity(), 2, "inf"}, {std::nan(""), 1, "nan"},
  };
  for (const auto& c : cases) EXPECT_EQ(fixed_text(c.v, c.precision), c.text) << c.v << " %." << c.precision << "f";
}

// fixed_digits declines ties, near-ties, large values and long precisions (0: the caller takes std::to_chars), and
// writes the common values itself.
TEST(FixedText, Issue19_FixedDigitsDeclinesWhatItCannotRound) {
  char buf[64];
  EXPECT_EQ(fixed_digits(buf, 0.125, 2), 0u);               // an exact tie: printf rounds half to even
  EXPECT_EQ(fixed_digits(buf, 2.5, 0), 0u);
  EXPECT_EQ(fixed_digits(buf, 1e17, 1), 0u);                // above 2^52 once scaled
  EXPECT_EQ(fixed_digits(buf, 0.3, 10), 0u);                // precision above 9
  EXPECT_EQ(fixed_digits(buf, std::nan(""), 2), 0u);
  ASSERT_EQ(fixed_digits(buf, 3.14159, 2), 4u);
  EXPECT_EQ(std::string(buf, 4), "3.14");
  ASSERT_EQ(fixed_digits(buf, -1234.5678, 1), 7u);
  EXPECT_EQ(std::string(buf, 7), "-1234.6");
}

// Against the C library's printf over values of every magnitude a plan writes (and beyond), each precision 0-12,
// and values on and next to the halves at each precision.
TEST(FixedText, Issue19_FixedMatchesPrintfOverManyValues) {
  std::mt19937_64 rng(19);
  std::uniform_real_distribution<double> mantissa(0.0, 1.0);
  std::uniform_int_distribution<int> exponent(-12, 18), precision(0, 12), sign(0, 1);
  for (int i = 0; i < 200000; ++i) {
    const int p = precision(rng);
    double v = mantissa(rng) * std::pow(10.0, exponent(rng));
    if (sign(rng)) v = -v;
    ASSERT_EQ(fixed_text(v, p), printf_fixed(v, p)) << v << " %." << p << "f";
  }
  for (int p = 0; p <= 9; ++p)
    for (int k = 0; k < 2000; ++k) {
      const double half = (static_cast<double>(k) + 0.5) / std::pow(10.0, p);
      for (const double v : {half, std::nextafter(half, 0.0), std::nextafter(half, 1e300), -half})
        ASSERT_EQ(fixed_text(v, p), printf_fixed(v, p)) << v << " %." << p << "f";
    }
}

// The text is whole whatever its length: inside the inline buffer, at its end, and past it.
TEST(FixedText, Issue19_LongTextPastTheInlineBuffer) {
  for (const size_t n : {0u, 1u, 470u, 479u, 480u, 481u, 2000u}) {
    FixedText t;
    const std::string body(n, 'x');
    t << body;
    t.fixed(2.75, 1) << " " << int64_t{-7};
    EXPECT_EQ(t.take(), body + "2.8 -7") << n;
    EXPECT_EQ(t.take(), "") << n;
  }
}

// Round 18: literals, numbers written in place and numbers that fixed_digits declines (a tie, a huge value, a non-finite
// one), piece after piece across the inline buffer's end (480 bytes) and on into the spilled text: the whole reads as
// snprintf writes the same format.
TEST(FixedText, Issue19_PiecesInPlaceAndPastTheBufferReadAsPrintf) {
  const double values[] = {0.125, 2.5, 1234.5678, -0.0, 1e300, std::numeric_limits<double>::infinity(), 3.14159, 0.005};
  for (const size_t pad : {0u, 7u, 13u}) {
    FixedText t;
    std::string want(pad, 'y');
    t << want;
    for (int i = 0; i < 40; ++i) {
      const double v = values[i % 8];
      const int p = i % 4;
      const int64_t n = int64_t{i} * 1000003 - 20000000;
      t << "step ";
      t.fixed(v, p) << " GB; ";
      t.integer(n) << " x";
      char buf[512];
      std::snprintf(buf, sizeof buf, "step %.*f GB; %lld x", p, v, static_cast<long long>(n));
      want += buf;
    }
    EXPECT_GT(want.size(), 480u);
    EXPECT_EQ(t.take(), want) << pad;
  }
}
