#include "base/dynamic_library.hpp"

#include <dlfcn.h>

#include "base/units.hpp"

namespace preflight {

Expected<DynamicLibrary> DynamicLibrary::open(const std::string& soname) {
  // RTLD_NOW: a library missing one of its own dependencies fails here, with the loader's message,
  // not at its first call. RTLD_LOCAL: its symbols stay out of the global namespace.
  if (void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL)) return DynamicLibrary(handle, soname);
  const char* message = dlerror();
  return make_error(ErrorKind::environment, format("cannot load %s: %s", soname.c_str(), message ? message : "unknown dlopen error"), soname);
}

Expected<void*> DynamicLibrary::symbol(const std::string& name) const {
  dlerror();
  void* address = dlsym(m_handle, name.c_str());
  if (!address) return make_error(ErrorKind::environment, format("%s: symbol %s not found", m_soname.c_str(), name.c_str()), m_soname);
  return address;
}

}  // namespace preflight
