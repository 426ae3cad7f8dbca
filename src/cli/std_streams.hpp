// cli/std_streams: standard input, output and error as a command finds them and leaves them (issue 19).
#pragma once

namespace preflight::cli {

// What reserve_standard_descriptors found closed at start.
struct StandardStreams {
  bool stdout_closed = false;
};

// Holds each of descriptors 0-2 that is closed at start open on /dev/null, so that no file preflight opens later (a
// database, a manifest, a cache entry) takes standard output's or error's number and receives what is printed, and a
// print to a closed stream does not fail. Standard output's closure is remembered for finish_output.
StandardStreams reserve_standard_descriptors();

// The command's exit code, or 3 (environment) with one line on standard error when its result could not be written: a
// full disk, a pipe whose reader left while SIGPIPE is ignored, or standard output closed at start (for a command that
// ends 0 or 1, whose result goes there).
int finish_output(int code, const StandardStreams& streams);

}  // namespace preflight::cli
