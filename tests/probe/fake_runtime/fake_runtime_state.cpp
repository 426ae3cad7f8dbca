#include "fake_runtime_state.hpp"

extern "C" {

int fake_runtime_calls(const char* function) {
  if (!function) return -1;
  std::lock_guard<std::mutex> lock(fake::state().mutex);
  auto it = fake::state().calls.find(function);
  return it == fake::state().calls.end() ? 0 : it->second;
}

int fake_runtime_live_buffers() {
  std::lock_guard<std::mutex> lock(fake::state().mutex);
  return static_cast<int>(fake::state().live.size());
}

void fake_runtime_reset() {
  std::lock_guard<std::mutex> lock(fake::state().mutex);
  fake::state().calls.clear();
}

}  // extern "C"
