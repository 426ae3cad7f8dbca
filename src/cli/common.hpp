// cli/common: what every subcommand shares: exit codes, the one place an error becomes text, JSON
// printing, and whether colour is allowed (a TTY and no NO_COLOR).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::cli {

inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_fail = 1;
inline constexpr int k_exit_usage = 2;

inline bool use_color() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && !(no_color && *no_color);
}

inline int report_error(const Error& e) {
  std::fprintf(stderr, "preflight: %s\n", e.describe().c_str());
  return k_exit_usage;
}

inline void print_json(const Json& j) { std::cout << j.dump(2) << "\n"; }

}  // namespace preflight::cli
