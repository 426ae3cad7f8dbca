#include "probe/runtime_library.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <utility>

#include "base/file.hpp"
#include "base/units.hpp"

namespace preflight::probe {

Expected<RuntimeLibrary> RuntimeLibrary::open(const std::vector<std::string>& candidates) {
  std::string tried, last_message;
  for (const auto& name : candidates) {
    if (name.empty()) continue;
    // RTLD_LOCAL: the runtime's symbols stay out of the global namespace; RTLD_NOW: a library missing
    // its own dependencies fails here, with the loader's message, not at the first call.
    tried += (tried.empty() ? "" : ", ") + name;
    // A path (--runtime-lib, PREFLIGHT_CUDART_LIB) naming a FIFO made dlopen wait for a writer for good (issue 19); a
    // directory or a device is no library either. A name without '/' is searched the loader's way.
    if (struct stat st {}; name.find('/') != std::string::npos && ::stat(name.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      last_message = format("%s: expected a regular file, found %s", name.c_str(), file_type_name(st.st_mode));
      continue;
    }
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return RuntimeLibrary(handle, name);
    const char* message = dlerror();
    last_message = message ? message : "unknown dlopen error";
  }
  if (tried.empty()) return make_error(ErrorKind::invalid_argument, "no runtime library name to try");
  return make_error(ErrorKind::not_found, format("cannot load the runtime library (tried %s): %s", tried.c_str(), last_message.c_str()), tried);
}

RuntimeLibrary::RuntimeLibrary(RuntimeLibrary&& other) noexcept
    : m_handle(std::exchange(other.m_handle, nullptr)), m_path(std::move(other.m_path)) {}

RuntimeLibrary& RuntimeLibrary::operator=(RuntimeLibrary&& other) noexcept {
  if (this != &other) {
    if (m_handle) dlclose(m_handle);
    m_handle = std::exchange(other.m_handle, nullptr);
    m_path = std::move(other.m_path);
  }
  return *this;
}

RuntimeLibrary::~RuntimeLibrary() {
  if (m_handle) dlclose(m_handle);
}

Expected<void*> RuntimeLibrary::symbol(const std::string& name) const {
  dlerror();
  void* address = dlsym(m_handle, name.c_str());
  if (!address) return make_error(ErrorKind::not_found, format("%s: symbol %s not found", m_path.c_str(), name.c_str()), m_path);
  return address;
}

}  // namespace preflight::probe
