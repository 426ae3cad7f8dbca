// probe/runtime_library: a vendor runtime (libcudart, libascendcl) opened at run time with dlopen, so
// that preflight builds and runs on machines without CUDA or CANN. No vendor header is used: callers
// declare the few function types they need. Tests point the loader at small fake libraries.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"

namespace preflight::probe {

class RuntimeLibrary {
 public:
  // Opens the first candidate dlopen accepts (a file path or a soname searched the usual way).
  // not_found naming every candidate tried and the last loader message.
  static Expected<RuntimeLibrary> open(const std::vector<std::string>& candidates);

  RuntimeLibrary(RuntimeLibrary&& other) noexcept;
  RuntimeLibrary& operator=(RuntimeLibrary&& other) noexcept;
  RuntimeLibrary(const RuntimeLibrary&) = delete;
  RuntimeLibrary& operator=(const RuntimeLibrary&) = delete;
  ~RuntimeLibrary();

  // The address of an exported function; not_found naming the library and the symbol.
  Expected<void*> symbol(const std::string& name) const;
  // As symbol(), stored in `out` as the function type the caller declared; `out` is unchanged on error.
  template <typename Fn>
  Status bind(const std::string& name, Fn& out) const {
    PF_TRY(address, symbol(name));
    out = reinterpret_cast<Fn>(address);
    return Ok{};
  }
  const std::string& path() const { return m_path; }

 private:
  RuntimeLibrary(void* handle, std::string path) : m_handle(handle), m_path(std::move(path)) {}
  void* m_handle = nullptr;
  std::string m_path;
};

}  // namespace preflight::probe
