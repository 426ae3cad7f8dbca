// doctor/probe: reading a system tree under a root directory (the real "/" or a fake tree in
// tests): listing with errors kept, bounded reads of regular files only, installed Python packages
// from their metadata, PATH lookup. Internal to the doctor module.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/file.hpp"
#include "doctor/doctor.hpp"

namespace preflight::doctor {

class Probe {
 public:
  explicit Probe(const DoctorOptions& options);

  // Host path -> path on this machine (root prefix applied).
  std::string at(const std::string& host_path) const;
  bool exists(const std::string& host_path) const;
  bool is_dir(const std::string& host_path) const;
  bool is_regular_file(const std::string& host_path) const;
  // Entry names, sorted; io error when the directory cannot be read.
  Expected<std::vector<std::string>> list(const std::string& host_path) const;
  // The first `max_bytes` of a regular file; io error for anything else.
  Expected<std::string> read(const std::string& host_path, uint64_t max_bytes = 1 << 20) const;
  // Target of a symbolic link (as written), or empty.
  std::string link_target(const std::string& host_path) const;
  std::optional<std::string> env(const std::string& name) const;
  // "$HOME/x" -> value; nullopt when a named variable is unset.
  std::optional<std::string> expand(const std::string& text) const;
  // First executable regular file named `name` in $PATH, then the usual sbin/bin directories.
  std::optional<std::string> find_program(const std::string& name) const;
  // Colon-separated entries of $LD_LIBRARY_PATH.
  std::vector<std::string> library_path() const;

  const DoctorOptions& options() const { return m_options; }

 private:
  const DoctorOptions& m_options;
};

struct InstalledPackage {
  std::string name;     // as in the metadata
  std::string version;  // as in the metadata (may be odd)
  std::string metadata_path;
  std::vector<std::string> requires_dist;
};

struct PythonEnv {
  std::string site_packages;  // host path; empty when none was found
  std::string python_version; // "3.10" from the lib/pythonX.Y path
  std::string venv;           // host path of the venv root, when one is used
  std::optional<bool> include_system_site_packages;  // pyvenv.cfg
  std::map<std::string, InstalledPackage> packages;  // by normalized name (PEP 503)
  std::vector<std::string> problems;                 // unreadable metadata, odd entries
  const InstalledPackage* find(const std::string& name) const;
};

std::string normalize_package_name(const std::string& name);
PythonEnv read_python_env(const Probe& probe);

// What the check groups share; each group appends its CheckResults to report.checks.
struct CheckContext {
  const Probe& probe;
  const Compat& compat;
  const PythonEnv& python;
  DoctorReport& report;
  bool ascend_host = false;
  bool cuda_host = false;
  std::string cann_toolkit;  // host path of the toolkit found (for later checks)
};

void check_cann(CheckContext& ctx);      // checks_ascend.cpp: toolkit, NNAL/ATB + cxx_abi, persistence
void check_driver(CheckContext& ctx);    // checks_ascend.cpp: npu-smi, driver lib64, memory in use
void check_python(CheckContext& ctx);    // checks_python.cpp: stack vs row, triton, CUDA-only, TBE deps
void check_glibc(CheckContext& ctx);     // checks_python.cpp
void check_cuda(CheckContext& ctx);      // checks_python.cpp: driver, memory, torch CUDA build
void check_locks(CheckContext& ctx);     // checks_files.cpp
void check_script(CheckContext& ctx);    // checks_files.cpp
void check_model_cache(CheckContext& ctx);  // model_cache.cpp: the model's copies in the Hugging Face and ModelScope caches

}  // namespace preflight::doctor
