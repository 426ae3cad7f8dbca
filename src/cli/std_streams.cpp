#include "cli/std_streams.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "cli/common.hpp"

namespace preflight::cli {

// Issue 19 (hard29's note): with descriptor 2 closed (`2>&-`), `bench --db` opened its database as descriptor 2 and the
// first progress line's fmt::print failed and ended the process (exit 134); any file opened there would have taken what
// was printed. Each closed one of 0-2 is opened on /dev/null in order (open returns the lowest free number).
StandardStreams reserve_standard_descriptors() {
  StandardStreams s;
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int got = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got != fd && got >= 0) ::close(got);  // not the number asked for (cannot happen with the lower ones open)
    if (fd == STDOUT_FILENO) s.stdout_closed = true;
  }
  return s;
}

// Issue 19: a result that could not be written (stdout on a full disk, closed, or a pipe whose reader left while
// SIGPIPE is ignored) ended with exit 0 and the output lost. Now one line says so and the exit is 3 (environment).
// With SIGPIPE at its default a closed pipe ends the process by the signal before this runs, as for other tools.
int finish_output(int code, const StandardStreams& streams) {
  errno = 0;
  std::cout.flush();
  const int cout_err = errno;
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_err = errno;
  // Standard output closed at start is held on /dev/null, where writes succeed: a command whose result goes there (exit
  // 0 or 1) lost it all the same.
  const bool result_lost = streams.stdout_closed && (code == k_exit_ok || code == k_exit_fail);
  if (flushed && !std::ferror(stdout) && std::cout.good() && !result_lost) return code;
  // The write that failed may be long past (a large output), so its errno may be gone: ask the descriptor first.
  int err = result_lost ? EBADF : flush_err ? flush_err : cout_err;
  pollfd out{STDOUT_FILENO, POLLOUT, 0};
  if (::fcntl(STDOUT_FILENO, F_GETFL) == -1) err = EBADF;
  else if (!result_lost && ::poll(&out, 1, 0) == 1 && (out.revents & POLLERR)) err = EPIPE;  // a pipe whose reader has gone
  std::fprintf(stderr, "preflight: cannot write the output to standard output%s%s; what was written is incomplete\n", err ? ": " : "", err ? std::strerror(err) : "");
  return k_exit_environment;
}

}  // namespace preflight::cli
