// Runs work(i) for every i in [0, count) on a few threads: the plan's search and the catalogue's spec build.
#pragma once

#include <cstddef>
#include <functional>

namespace preflight {

// Runs work(i) for every i in [0, count) on `threads` workers (0 = the hardware's concurrency), this
// thread included. Indices are handed out in order through one counter; each call writes only its own
// slot, so the results do not depend on the number of workers or their timing. When no more threads
// can be started, the workers already running (at least this one) take every index.
void parallel_for(size_t count, int threads, const std::function<void(size_t)>& work);

}  // namespace preflight
