#include "doctor/probe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::doctor {

namespace fs = std::filesystem;

Probe::Probe(const DoctorOptions& options) : m_options(options) {}

std::string Probe::at(const std::string& host_path) const {
  if (m_options.root.empty() || m_options.root == "/") return host_path;
  std::string root = m_options.root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return host_path.empty() || host_path[0] != '/' ? root + "/" + host_path : root + host_path;
}

bool Probe::exists(const std::string& host_path) const {
  struct stat st;
  return ::lstat(at(host_path).c_str(), &st) == 0;
}

bool Probe::is_dir(const std::string& host_path) const {
  struct stat st;
  return ::stat(at(host_path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Probe::is_regular_file(const std::string& host_path) const {
  struct stat st;
  return ::stat(at(host_path).c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Expected<std::vector<std::string>> Probe::list(const std::string& host_path) const {
  std::error_code ec;
  fs::directory_iterator it(at(host_path), ec);
  if (ec) return make_error(ErrorKind::io, host_path + ": cannot list directory: " + ec.message(), host_path);
  std::vector<std::string> names;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return make_error(ErrorKind::io, host_path + ": error while listing: " + ec.message(), host_path);
    names.push_back(it->path().filename().string());
    if (names.size() > 100000) break;
  }
  std::sort(names.begin(), names.end());
  return names;
}

Expected<std::string> Probe::read(const std::string& host_path, uint64_t max_bytes) const {
  const std::string path = at(host_path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorKind::io, host_path + ": cannot open: " + std::strerror(errno), host_path);
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return make_error(ErrorKind::io, host_path + ": not a regular file", host_path);
  }
  std::string out;
  out.resize(static_cast<size_t>(std::min<uint64_t>(max_bytes, static_cast<uint64_t>(st.st_size))));
  size_t got = 0;
  while (got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return make_error(ErrorKind::io, host_path + ": read failed: " + std::strerror(e), host_path);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(got);
  return out;
}

std::string Probe::link_target(const std::string& host_path) const {
  std::error_code ec;
  const auto t = fs::read_symlink(at(host_path), ec);
  return ec ? std::string() : t.string();
}

std::optional<std::string> Probe::env(const std::string& name) const {
  auto it = m_options.env.find(name);
  if (it == m_options.env.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Probe::expand(const std::string& text) const {
  if (text.empty() || text[0] != '$') return text;
  const size_t slash = text.find('/');
  const std::string var = text.substr(1, slash == std::string::npos ? std::string::npos : slash - 1);
  auto value = env(var);
  if (!value) return std::nullopt;
  return *value + (slash == std::string::npos ? std::string() : text.substr(slash));
}

std::optional<std::string> Probe::find_program(const std::string& name) const {
  std::vector<std::string> dirs;
  if (auto path = env("PATH")) for (const auto& d : split(*path, ':')) if (!d.empty()) dirs.push_back(d);
  for (const char* d : {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}) dirs.push_back(d);
  for (const auto& d : dirs) {
    const std::string candidate = join_path(d, name);
    if (is_regular_file(candidate) && ::access(at(candidate).c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

std::vector<std::string> Probe::library_path() const {
  std::vector<std::string> out;
  if (auto v = env("LD_LIBRARY_PATH")) for (const auto& d : split(*v, ':')) if (!d.empty()) out.push_back(d);
  return out;
}

std::string normalize_package_name(const std::string& name) {
  std::string out;
  for (char c : to_lower(name)) {
    const char n = (c == '_' || c == '.') ? '-' : c;
    if (n == '-' && !out.empty() && out.back() == '-') continue;
    out.push_back(n);
  }
  return out;
}

const InstalledPackage* PythonEnv::find(const std::string& name) const {
  auto it = packages.find(normalize_package_name(name));
  return it == packages.end() ? nullptr : &it->second;
}

namespace {

void read_metadata(const Probe& probe, const std::string& dir, const std::string& entry, PythonEnv& env) {
  const bool dist = ends_with(entry, ".dist-info");
  const std::string meta = join_path(join_path(dir, entry), dist ? "METADATA" : "PKG-INFO");
  InstalledPackage pkg;
  pkg.metadata_path = meta;
  auto text = probe.read(meta, 64 * 1024);
  if (text) {
    for (const auto& raw : split(*text, '\n')) {
      const std::string line = trim(raw);
      if (line.empty()) break;  // end of the header block
      if (starts_with(line, "Name:")) pkg.name = trim(line.substr(5));
      else if (starts_with(line, "Version:")) pkg.version = trim(line.substr(8));
      else if (starts_with(line, "Requires-Dist:") && pkg.requires_dist.size() < 500) pkg.requires_dist.push_back(trim(line.substr(14)));
    }
  } else {
    env.problems.push_back(text.error().describe());
  }
  // The directory name "<name>-<version>.dist-info" when the metadata does not say.
  const std::string stem = entry.substr(0, entry.rfind('.'));
  const size_t dash = stem.find('-');
  if (pkg.name.empty()) pkg.name = stem.substr(0, dash);
  if (pkg.version.empty() && dash != std::string::npos) pkg.version = stem.substr(dash + 1);
  if (pkg.name.empty()) return;
  env.packages.emplace(normalize_package_name(pkg.name), std::move(pkg));
}

std::optional<std::string> site_packages_in(const Probe& probe, const std::string& prefix, std::string* python_version) {
  auto libs = probe.list(join_path(prefix, "lib"));
  if (!libs) return std::nullopt;
  for (auto it = libs->rbegin(); it != libs->rend(); ++it) {
    if (!starts_with(*it, "python3")) continue;
    for (const char* leaf : {"site-packages", "dist-packages"}) {
      const std::string sp = join_path(join_path(join_path(prefix, "lib"), *it), leaf);
      if (probe.is_dir(sp)) {
        *python_version = it->substr(6);
        return sp;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

PythonEnv read_python_env(const Probe& probe) {
  PythonEnv env;
  std::optional<std::string> venv = probe.options().venv;
  if (!venv) venv = probe.env("VIRTUAL_ENV");
  std::vector<std::string> prefixes;
  if (venv) prefixes.push_back(*venv);
  for (const char* p : {"/usr/local", "/usr"}) prefixes.push_back(p);
  for (const auto& prefix : prefixes) {
    std::string pyver;
    auto sp = site_packages_in(probe, prefix, &pyver);
    if (!sp) {
      if (venv && prefix == *venv) env.problems.push_back(*venv + ": no lib/python3.*/site-packages in this virtual environment");
      continue;
    }
    env.site_packages = *sp;
    env.python_version = pyver;
    if (venv && prefix == *venv) {
      env.venv = *venv;
      if (auto cfg = probe.read(join_path(*venv, "pyvenv.cfg"), 64 * 1024)) {
        for (const auto& line : split(*cfg, '\n')) {
          if (line.find("include-system-site-packages") != std::string::npos) env.include_system_site_packages = line.find("true") != std::string::npos;
        }
      }
    }
    break;
  }
  if (env.site_packages.empty()) return env;
  auto entries = probe.list(env.site_packages);
  if (!entries) {
    env.problems.push_back(entries.error().describe());
    return env;
  }
  for (const auto& e : *entries) {
    if (ends_with(e, ".dist-info") || ends_with(e, ".egg-info")) read_metadata(probe, env.site_packages, e, env);
  }
  return env;
}

CommandRunner system_command_runner() {
  return [](const std::vector<std::string>& argv, const std::map<std::string, std::string>& env) -> Expected<CommandOutput> {
    if (argv.empty()) return make_error(ErrorKind::invalid_argument, "no command to run");
    int fds[2];
    if (::pipe(fds) != 0) return make_error(ErrorKind::io, std::string("pipe failed: ") + std::strerror(errno), argv[0]);
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> cargv, cenv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    for (auto& e : env_strings) cenv.push_back(e.data());
    cenv.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) return make_error(ErrorKind::io, std::string("fork failed: ") + std::strerror(errno), argv[0]);
    if (pid == 0) {
      ::dup2(fds[1], 1);
      ::dup2(fds[1], 2);
      ::close(fds[0]);
      ::close(fds[1]);
      ::execve(cargv[0], cargv.data(), cenv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    bool timed_out = false;
    char buf[4096];
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) { timed_out = true; break; }
      struct pollfd p{fds[0], POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) { timed_out = r == 0; break; }
      const ssize_t n = ::read(fds[0], buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (out.size() < (1u << 20)) out.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    if (timed_out) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (timed_out) return make_error(ErrorKind::timeout, argv[0] + ": no exit within 20 s", argv[0]);
    CommandOutput result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    result.output = std::move(out);
    return result;
  };
}

}  // namespace preflight::doctor
