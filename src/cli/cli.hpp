// cli: subcommands, flags, environment and exit codes. The only place an error becomes text and an
// exit code: 0 success (fit: fits), 1 failure (fit: does not fit), 2 usage or bad input.
#pragma once

namespace preflight::cli {

int run(int argc, char** argv);

}  // namespace preflight::cli
