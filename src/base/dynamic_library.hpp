// base/dynamic_library: a shared library opened at run time with dlopen and kept for the life of the
// process. Commands that never touch the network or the database (fit, --version) then start without
// loading libcurl, libsqlite3 and their thirty-odd dependencies (issue 19, start-up time).
#pragma once

#include <string>

#include "base/error.hpp"

namespace preflight {

class DynamicLibrary {
 public:
  // Opens `soname` (searched the usual way, or a path). The handle is never closed: the loaders that
  // use this keep their function tables for the whole process.
  // environment naming the library and the loader's message when it cannot be loaded.
  static Expected<DynamicLibrary> open(const std::string& soname);

  // The address of an exported symbol; environment naming the library and the symbol.
  Expected<void*> symbol(const std::string& name) const;

  // As symbol(), stored in `out` as the function type of the declaration it was taken from.
  template <typename Fn>
  Status bind(const std::string& name, Fn& out) const {
    PF_TRY(address, symbol(name));
    out = reinterpret_cast<Fn>(address);
    return Ok{};
  }

  const std::string& soname() const { return m_soname; }

 private:
  DynamicLibrary(void* handle, std::string soname) : m_handle(handle), m_soname(std::move(soname)) {}
  void* m_handle = nullptr;
  std::string m_soname;
};

}  // namespace preflight
