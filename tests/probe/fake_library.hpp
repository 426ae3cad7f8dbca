// Test helper: holds one of the fake runtime libraries open for a test (so its counters survive the
// measurement's own dlclose) and reads its counters.
#pragma once

#include <dlfcn.h>

#include <string>

namespace pftest {

class FakeRuntime {
 public:
  explicit FakeRuntime(const std::string& path) : m_handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!m_handle) return;
    m_calls = reinterpret_cast<int (*)(const char*)>(dlsym(m_handle, "fake_runtime_calls"));
    m_live = reinterpret_cast<int (*)()>(dlsym(m_handle, "fake_runtime_live_buffers"));
    m_reset = reinterpret_cast<void (*)()>(dlsym(m_handle, "fake_runtime_reset"));
    if (m_reset) m_reset();
  }
  FakeRuntime(const FakeRuntime&) = delete;
  FakeRuntime& operator=(const FakeRuntime&) = delete;
  ~FakeRuntime() {
    if (m_handle) dlclose(m_handle);
  }
  bool loaded() const { return m_handle && m_calls && m_live && m_reset; }
  int calls(const char* function) const { return m_calls(function); }
  int live_buffers() const { return m_live(); }

 private:
  void* m_handle = nullptr;
  int (*m_calls)(const char*) = nullptr;
  int (*m_live)() = nullptr;
  void (*m_reset)() = nullptr;
};

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : m_name(name) { setenv(name, value.c_str(), 1); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() { unsetenv(m_name); }

 private:
  const char* m_name;
};

}  // namespace pftest
