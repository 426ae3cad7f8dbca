// Shared by the two fake runtimes: host-memory "device" allocations, call counters and failure
// injection. FAKE_RUNTIME_FAIL=<function name> makes that function return FAKE_RUNTIME_FAIL_CODE
// (default 999). The test reads the counters through fake_runtime_calls() / fake_runtime_live_buffers().
#pragma once

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace fake {

struct State {
  std::mutex mutex;
  std::map<std::string, int> calls;
  std::set<void*> live;
  bool initialized = false;
  int device = -1;
};

inline State& state() {
  static State s;
  return s;
}

// Counts the call; returns the injected error code when this function is asked to fail, else 0.
inline int enter(const char* function) {
  std::lock_guard<std::mutex> lock(state().mutex);
  state().calls[function] += 1;
  const char* fail = std::getenv("FAKE_RUNTIME_FAIL");
  if (fail && std::strcmp(fail, function) == 0) {
    const char* code = std::getenv("FAKE_RUNTIME_FAIL_CODE");
    return code ? std::atoi(code) : 999;
  }
  return 0;
}

inline bool is_live(const void* p) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().live.count(const_cast<void*>(p)) > 0;
}

}  // namespace fake

extern "C" {
// Calls of `function` since the last fake_runtime_reset(); -1 for a null name.
int fake_runtime_calls(const char* function);
// Buffers allocated and not yet freed.
int fake_runtime_live_buffers();
void fake_runtime_reset();
}
