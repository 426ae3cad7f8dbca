// Compiler lock files and deploy scripts.
// Locks: the TBE compiler leaves "<name>.lock" files holding the owner's pid and checks only that
// the file exists, so a killed build blocks every later compile with "Another process is using this
// dir" (seeds/001 section 4.3). Only regular files whose name ends in exactly ".lock" are
// considered ("*lock*" also matches block_table.py). A lock is stale only when its whole content is
// a pid ("<pid>" or "pid=<pid>") and kill(pid, 0) on this machine answers ESRCH; the process table
// is never read under --root (a fake /proc there says nothing about the processes that run).
// Every directory scanned and every file removed is resolved first (realpath, then openat without
// following links) and refused when its real path leaves the real root: a symlinked cache directory
// must not let --fix delete files elsewhere.
// Scripts: CANN's set_env.sh reads unset variables, so sourcing it under `set -u` ends the calling
// shell with no message (seeds/001 section 4.1).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "base/text.hpp"
#include "base/units.hpp"
#include "doctor/probe.hpp"

namespace preflight::doctor {

namespace {

constexpr int k_max_lock_depth = 16;
constexpr size_t k_max_lock_entries = 200000;

bool is_lock_name(const std::string& name) { return name.size() > 5 && ends_with(name, ".lock"); }

constexpr int64_t k_pid_max_limit = 4194304;  // Linux PID_MAX_LIMIT on 64-bit (include/linux/threads.h)

LockOwner owner_state(const std::optional<int64_t>& pid) {
  if (!pid) return LockOwner::not_recorded;
  return process_state(*pid);
}

// realpath(3) of a path on this machine; nullopt when it does not resolve.
std::optional<std::string> real_path(const std::string& path) {
  char buf[PATH_MAX];
  if (::realpath(path.c_str(), buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

bool is_inside(const std::string& real_root, const std::string& real) {
  if (real_root == "/") return !real.empty() && real[0] == '/';
  return real == real_root || starts_with(real, real_root + "/");
}

// The real root, or an error naming it.
Expected<std::string> resolve_root(const std::string& root) {
  auto real = real_path(root.empty() ? std::string("/") : root);
  if (!real) return make_error(ErrorKind::io, format("%s: cannot resolve the root: %s", root.c_str(), std::strerror(errno)), root);
  return *real;
}

void walk(const Probe& probe, const std::string& dir, int depth, size_t& seen, std::vector<LockFile>& out, std::vector<std::string>& problems) {
  auto entries = probe.list(dir);
  if (!entries) {
    problems.push_back(entries.error().describe());
    return;
  }
  for (const auto& name : *entries) {
    if (++seen > k_max_lock_entries) {
      if (seen == k_max_lock_entries + 1) problems.push_back(format("stopped after %zu entries", k_max_lock_entries));
      return;
    }
    const std::string path = join_path(dir, name);
    struct stat st;
    if (::lstat(probe.at(path).c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (depth < k_max_lock_depth) walk(probe, path, depth + 1, seen, out, problems);
      continue;
    }
    if (!S_ISREG(st.st_mode) || !is_lock_name(name)) continue;
    LockFile lock;
    lock.path = path;
    // 257 bytes: a longer file is no pid in the documented format, whatever it starts with.
    if (auto text = probe.read(path, 257)) lock.owner_pid = text->size() > 256 ? std::nullopt : parse_lock_pid(*text);
    else problems.push_back(text.error().describe());
    lock.owner = owner_state(lock.owner_pid);
    out.push_back(lock);
  }
}

}  // namespace

void check_locks(CheckContext& ctx) {
  const Probe& probe = ctx.probe;
  CheckResult lk{"locks", "stale compiler lock files (*.lock)", CheckStatus::ok, "", {}, ""};
  std::vector<std::string> dirs;
  for (const auto& d : ctx.compat.compile_cache_dirs.values) if (auto e = probe.expand(d)) dirs.push_back(*e);
  for (const auto& d : probe.options().cache_dirs) dirs.push_back(d);
  std::vector<std::string> problems;
  size_t seen = 0;
  int scanned = 0, refused = 0;
  const auto real_root = resolve_root(probe.options().root);
  if (!real_root) problems.push_back(real_root.error().describe());
  // user37: a --cache-dir that is not there is said by name (it is looked up under --root, as every path is); before, the
  // check said "pass a build tree with --cache-dir" to a user who had passed one.
  std::vector<std::string> given_missing;
  for (const auto& d : probe.options().cache_dirs)
    if (!probe.exists(d)) given_missing.push_back(d);
  for (const auto& d : given_missing) lk.evidence.push_back(format("--cache-dir %s: no such directory under the root %s", d.c_str(), probe.options().root.c_str()));
  for (const auto& d : dirs) {
    if (!probe.exists(d) || !real_root) continue;
    // A cache directory that is (or passes through) a symbolic link out of the root is not ours to scan.
    const auto real = real_path(probe.at(d));
    if (real && !is_inside(*real_root, *real)) {
      ++refused;
      lk.evidence.push_back(format("refused %s: its real path %s is outside the root %s", d.c_str(), real->c_str(), real_root->c_str()));
      continue;
    }
    ++scanned;
    lk.evidence.push_back("scanned " + d);
    walk(probe, d, 0, seen, ctx.report.locks, problems);
  }
  for (const auto& p : problems) lk.evidence.push_back("unreadable: " + p);
  int stale = 0, unknown = 0;
  for (const auto& l : ctx.report.locks) {
    const char* state = l.owner == LockOwner::alive ? "owner alive: kept"
                        : l.owner == LockOwner::dead ? "owner dead: stale"
                        : l.owner == LockOwner::unknown ? "owner cannot be checked: kept"
                                                         : "unknown owner: kept";
    lk.evidence.push_back(l.path + (l.owner_pid ? format(" (pid %lld, %s)", static_cast<long long>(*l.owner_pid), state) : std::string(" (") + state + ")"));
    stale += l.stale();
    unknown += l.owner == LockOwner::not_recorded || l.owner == LockOwner::unknown;
  }
  if (scanned == 0 && refused > 0) {
    lk.status = CheckStatus::warn;
    lk.summary = format("%d cache director%s refused: outside the root", refused, refused == 1 ? "y" : "ies");
  } else if (scanned == 0 && !given_missing.empty()) {
    lk.status = CheckStatus::warn;
    lk.summary = format("--cache-dir %s: no such directory under the root %s; nothing scanned", given_missing.front().c_str(), probe.options().root.c_str());
  } else if (scanned == 0) {
    lk.status = CheckStatus::skip;
    lk.summary = "no compile-cache directory found (pass a build tree with --cache-dir)";
  } else if (stale > 0) {
    lk.status = CheckStatus::fail;
    lk.summary = format("%d stale lock file(s) (owner process gone): the TBE compiler reports 'Another process is using this dir'", stale);
    lk.fix = "preflight doctor --fix removes exactly these files (never 'find -name \"*lock*\"', which also matches block_table.py)";
  } else {
    lk.status = unknown > 0 || refused > 0 || !problems.empty() ? CheckStatus::warn : CheckStatus::ok;
    lk.summary = format("%zu lock file(s), none stale", ctx.report.locks.size());
    if (unknown > 0) lk.summary += format("; %d with an unknown owner (kept)", unknown);
    if (refused > 0) lk.summary += format("; %d cache director%s refused: outside the root", refused, refused == 1 ? "y" : "ies");
  }
  ctx.report.checks.push_back(lk);
}

namespace {
// A shell line's code, as both script checks read it: trimmed, a trailing " #..." comment cut, "" for a comment line.
std::string script_code(const std::string& line) {
  std::string code = trim(line);
  if (const size_t hash = code.find(" #"); hash != std::string::npos) code = code.substr(0, hash);
  return starts_with(code, "#") ? std::string() : code;
}
}  // namespace

std::vector<ScriptFinding> scan_deploy_script(const std::string& text) {
  std::vector<ScriptFinding> out;
  bool nounset = false;
  int64_t nounset_line = 0;
  int64_t n = 0;
  for (const auto& raw : split(text, '\n')) {
    ++n;
    std::string line = trim(raw);
    if (n == 1 && starts_with(line, "#!")) {
      for (const auto& tok : split(line, ' ')) {
        if (tok.size() > 1 && tok[0] == '-' && tok[1] != '-' && tok.find('u') != std::string::npos) { nounset = true; nounset_line = 0; }
      }
      continue;
    }
    line = script_code(line);
    if (line.empty()) continue;
    // Commands separated by ; && || on one line, in order.
    std::vector<std::string> commands;
    std::string cur;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == ';' || ((line[i] == '&' || line[i] == '|') && i + 1 < line.size() && line[i + 1] == line[i])) {
        commands.push_back(trim(cur));
        cur.clear();
        if (line[i] != ';') ++i;
        continue;
      }
      cur.push_back(line[i]);
    }
    commands.push_back(trim(cur));
    for (const auto& cmd : commands) {
      std::vector<std::string> toks;
      for (const auto& t : split(cmd, ' ')) if (!t.empty()) toks.push_back(t);
      if (toks.empty()) continue;
      if (toks[0] == "set") {
        for (size_t i = 1; i < toks.size(); ++i) {
          const std::string& t = toks[i];
          if ((t == "-o" || t == "+o") && i + 1 < toks.size() && toks[i + 1] == "nounset") {
            nounset = t == "-o";
            if (nounset) nounset_line = n;
            ++i;
          } else if (t.size() > 1 && (t[0] == '-' || t[0] == '+') && t[1] != '-' && t.find('u') != std::string::npos && t.find('o') == std::string::npos) {
            nounset = t[0] == '-';
            if (nounset) nounset_line = n;
          } else if (t.size() > 1 && t[0] == '-' && t.find('u') != std::string::npos && t.back() == 'o') {  // "-euo pipefail"
            nounset = true;
            nounset_line = n;
          }
        }
      } else if ((toks[0] == "source" || toks[0] == ".") && toks.size() > 1 && toks[1].find("set_env.sh") != std::string::npos && nounset) {
        out.push_back({n, nounset_line, trim(strip_terminal_controls(raw))});  // the line is printed
      }
    }
  }
  return out;
}

namespace {
// "*lock*", "'*lock'", "\"*.LOCK*\"" minus quotes: a '*' right before "lock" makes the glob match inside a word
// (block, unlock, deadlock); "*.lock" and "lock*" do not.
bool substring_lock_glob(std::string token) {
  std::erase_if(token, [](char c) { return c == '\'' || c == '"' || c == '\\'; });
  const std::string lower = to_lower(token);
  for (size_t at = lower.find("lock"); at != std::string::npos; at = lower.find("lock", at + 1))
    if (at > 0 && lower[at - 1] == '*') return true;
  return false;
}
}  // namespace

std::vector<ScriptFinding> scan_lock_globs(const std::string& text) {
  std::vector<ScriptFinding> out;
  int64_t n = 0;
  for (const auto& raw : split(text, '\n')) {
    ++n;
    const std::string line = script_code(raw);
    bool glob = false, deletes = false;
    for (const auto& t : split(line, ' ')) {
      glob = glob || substring_lock_glob(t);
      deletes = deletes || t == "-delete" || t == "rm" || t == "unlink" || ends_with(t, "/rm");
    }
    if (glob && deletes) out.push_back({n, 0, trim(strip_terminal_controls(raw))});
  }
  return out;
}

void check_script_lock_globs(CheckContext& ctx, const std::string& path, const std::string& text) {
  CheckResult lg{"script.lock_glob", "deploy script: lock files deleted by a substring glob", CheckStatus::ok, "", {}, ""};
  const auto findings = scan_lock_globs(text);
  if (findings.empty()) {
    lg.summary = "no deletion by a '*lock*' glob";
  } else {
    lg.status = CheckStatus::fail;
    lg.summary = format("%s line %lld deletes by a glob with '*' before 'lock': it also matches source files such as block_table.py and "
                        "transpose_kv_cache_by_block.cpp (seeds/001 section 3: the source tree had to be rebuilt)",
                        path.c_str(), static_cast<long long>(findings.front().line));
    for (const auto& f : findings) lg.evidence.push_back(format("line %lld: %s", static_cast<long long>(f.line), f.text.c_str()));
    lg.fix = "match lock files exactly (find ... -name '*.lock'), or run 'preflight doctor --fix', which removes only stale *.lock files whose owner is dead";
  }
  ctx.report.checks.push_back(lg);
}

bool names_misplaced_fusion_key(const std::string& text) {
  return text.find("fuse_qknorm_rope") != std::string::npos && text.find("ascend_fusion_config") != std::string::npos &&
         text.find("ascend_compilation_config") == std::string::npos;
}

// ux32 (issue 16): a script line that writes the fusion switch where vllm-ascend does not read it
// (names_misplaced_fusion_key): the pass stays on and graph compile still fails.
void check_script_fusion_key(CheckContext& ctx, const std::string& path, const std::string& text) {
  CheckResult fk{"script.fusion_key", "deploy script: the qknorm-rope fusion switch where vllm-ascend reads it", CheckStatus::ok, "", {}, ""};
  int64_t n = 0;
  for (const auto& raw : split(text, '\n')) {
    ++n;
    const std::string code = script_code(raw);
    if (!names_misplaced_fusion_key(code)) continue;
    if (fk.status == CheckStatus::ok)
      fk.summary = format("%s line %lld sets fuse_qknorm_rope under ascend_fusion_config: vllm-ascend reads it only under ascend_compilation_config "
                          "(AscendFusionConfig takes the key into **kwargs), so the fusion pass stays on",
                          path.c_str(), static_cast<long long>(n));
    fk.status = CheckStatus::fail;
    fk.evidence.push_back(format("line %lld: %s", static_cast<long long>(n), clip_text(trim(strip_terminal_controls(raw)), 200).c_str()));
    fk.fix = k_fusion_key_fix;
  }
  if (fk.status == CheckStatus::ok) fk.summary = "no fuse_qknorm_rope under ascend_fusion_config";
  ctx.report.checks.push_back(fk);
}

void check_script(CheckContext& ctx) {
  const auto& path = ctx.probe.options().script_path;
  if (!path) return;
  CheckResult sc{"script.set_u", "deploy script: set -u around set_env.sh", CheckStatus::ok, "", {}, ""};
  auto text = read_text_file(*path, 8u << 20);
  if (!text) {
    sc.status = CheckStatus::fail;
    sc.summary = "cannot read the script";
    sc.evidence.push_back(text.error().describe());
    ctx.report.checks.push_back(sc);
    return;
  }
  const auto findings = scan_deploy_script(*text);
  if (findings.empty()) {
    sc.summary = text->find("set_env.sh") == std::string::npos ? "does not source set_env.sh" : "set_env.sh is not sourced under set -u";
  } else {
    sc.status = CheckStatus::fail;
    sc.summary = format("%s line %lld sources set_env.sh with set -u on: the shell exits with status 1 and prints nothing", path->c_str(),
                        static_cast<long long>(findings.front().line));
    for (const auto& f : findings) {
      sc.evidence.push_back(format("line %lld: %s (set -u from %s)", static_cast<long long>(f.line), f.text.c_str(),
                                   f.nounset_line == 0 ? "the shebang" : format("line %lld", static_cast<long long>(f.nounset_line)).c_str()));
    }
    sc.fix = "wrap it: 'set +u; source .../set_env.sh; set -u'";
  }
  ctx.report.checks.push_back(sc);
  check_script_lock_globs(ctx, *path, *text);
  check_script_fusion_key(ctx, *path, *text);
}

namespace {

class Fd {
 public:
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  int get() const { return m_fd; }

 private:
  int m_fd;
};

Error refuse(const LockFile& lock, const std::string& why) {
  return make_error(ErrorKind::invalid_argument, lock.path + ": " + why + "; refusing to remove", lock.path);
}

}  // namespace

const char* lock_owner_name(LockOwner owner) {
  switch (owner) {
    case LockOwner::alive: return "alive";
    case LockOwner::dead: return "dead";
    case LockOwner::not_recorded: return "not_recorded";
    case LockOwner::unknown: return "unknown";
  }
  return "unknown";
}

std::optional<int64_t> parse_lock_pid(const std::string& raw) {
  std::string text = trim(raw);
  if (starts_with(text, "pid=")) text = text.substr(4);
  if (text.empty() || text.size() > 7) return std::nullopt;
  int64_t pid = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  if (pid < 1 || pid > k_pid_max_limit) return std::nullopt;
  return pid;
}

LockOwner process_state(int64_t pid) {
  // pid 0 and negative pids name process groups for kill(2): never ask about them.
  if (pid < 1 || pid > k_pid_max_limit) return LockOwner::unknown;
  if (::kill(static_cast<pid_t>(pid), 0) == 0) return LockOwner::alive;
  if (errno == EPERM) return LockOwner::alive;  // it exists, owned by someone else
  if (errno == ESRCH) return LockOwner::dead;
  return LockOwner::unknown;
}

Status remove_stale_lock(const std::string& root, const LockFile& lock) {
  const std::string name = base_name(lock.path);
  if (!is_lock_name(name)) return refuse(lock, "not named *.lock");
  if (lock.path.empty() || lock.path[0] != '/' || lock.path.find("/../") != std::string::npos) return refuse(lock, "not an absolute host path");
  PF_TRY(real_root, resolve_root(root));
  DoctorOptions options;
  options.root = root;
  const Probe probe(options);
  const std::string parent = lock.path.substr(0, lock.path.size() - name.size());
  const auto real_parent = real_path(probe.at(parent.empty() ? "/" : parent));
  if (!real_parent) return refuse(lock, format("its directory does not resolve (%s)", std::strerror(errno)));
  if (!is_inside(real_root, *real_parent)) return refuse(lock, format("its real path %s is outside the root %s", real_parent->c_str(), real_root.c_str()));
  // Walk from the real root to the real parent one component at a time, following no link: the
  // directory the file is read from and unlinked in is the one checked above.
  Fd dir(::open(real_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return make_error(ErrorKind::io, format("%s: cannot open the root: %s", real_root.c_str(), std::strerror(errno)), real_root);
  const std::string rest = real_parent->substr(real_root == "/" ? 0 : real_root.size());
  std::vector<std::unique_ptr<Fd>> chain;
  int at = dir.get();
  for (const auto& component : split(rest, '/')) {
    if (component.empty()) continue;
    chain.push_back(std::make_unique<Fd>(::openat(at, component.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)));
    if (chain.back()->get() < 0) return refuse(lock, format("cannot open %s without following links (%s)", component.c_str(), std::strerror(errno)));
    at = chain.back()->get();
  }
  struct stat before {};
  if (::fstatat(at, name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) return make_error(ErrorKind::not_found, lock.path + ": " + std::strerror(errno), lock.path);
  if (!S_ISREG(before.st_mode)) return refuse(lock, std::string("not a regular file but ") + file_type_name(before.st_mode));
  Fd file(::openat(at, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (file.get() < 0) return refuse(lock, format("cannot open it (%s)", std::strerror(errno)));
  struct stat opened {};
  if (::fstat(file.get(), &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_ino != before.st_ino || opened.st_dev != before.st_dev) {
    return refuse(lock, "it changed while being checked");
  }
  char buf[257];
  ssize_t got = -1;
  do {
    got = ::read(file.get(), buf, sizeof buf);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return make_error(ErrorKind::io, lock.path + ": read failed: " + std::strerror(errno), lock.path);
  if (got > 256) return refuse(lock, "unknown owner (more than 256 bytes)");
  const auto pid = parse_lock_pid(std::string(buf, static_cast<size_t>(got)));
  if (!pid) return refuse(lock, "unknown owner (not a pid in the form '<pid>' or 'pid=<pid>')");
  const LockOwner owner = process_state(*pid);
  if (owner == LockOwner::alive) return refuse(lock, format("owner pid %lld is alive", static_cast<long long>(*pid)));
  if (owner != LockOwner::dead) return refuse(lock, format("cannot tell whether owner pid %lld is alive", static_cast<long long>(*pid)));
  if (::unlinkat(at, name.c_str(), 0) != 0) return make_error(ErrorKind::io, lock.path + ": cannot remove: " + std::strerror(errno), lock.path);
  return Ok{};
}

}  // namespace preflight::doctor
