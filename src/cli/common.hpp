// cli/common: what every subcommand shares: exit codes (0 success, 1 does not fit / target not met /
// measurement failed, 2 bad input, 3 environment or network failure), the one place an error becomes text, JSON
// printing, and whether colour is allowed (a TTY and no NO_COLOR).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "base/json_writer.hpp"
#include "base/text.hpp"

namespace preflight::cli {

inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_fail = 1;
inline constexpr int k_exit_usage = 2;
inline constexpr int k_exit_environment = 3;

// The exit code of an error: 3 for what the machine or the network failed at (network, timeout,
// environment), 2 for everything the user gave (a bad flag, a missing or corrupt file).
inline int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::network:
    case ErrorKind::timeout:
    case ErrorKind::environment: return k_exit_environment;
    case ErrorKind::invalid_argument:
    case ErrorKind::not_found:
    case ErrorKind::corrupt:
    case ErrorKind::unsupported:
    case ErrorKind::io: return k_exit_usage;
  }
  return k_exit_usage;
}

// TERM=dumb: a terminal that takes no escape sequences (Emacs' shell buffer, some CI logs), as for ls and git.
inline bool use_color() {
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  return isatty(STDOUT_FILENO) && !(no_color && *no_color) && !(term && std::string(term) == "dumb");
}

// The one place an error becomes text and an exit code. Messages quote foreign text (configs, logs, server replies,
// a flag's value, a case's field), so terminal controls are stripped and at most k_max_error_bytes are printed (issue
// 19: a 100,000-byte kv_cache_dtype of a case was echoed whole).
inline constexpr size_t k_max_error_bytes = 8192;
inline int report_error(const Error& e) {
  std::fprintf(stderr, "preflight: %s\n", clip_text(strip_terminal_controls(e.describe()), k_max_error_bytes).c_str());
  return exit_code_for(e.kind);
}

inline void print_json(const Json& j) { std::cout << dump_json(j, 2) << "\n"; }

}  // namespace preflight::cli
