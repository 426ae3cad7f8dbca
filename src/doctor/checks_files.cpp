// Compiler lock files and deploy scripts.
// Locks: the TBE compiler leaves "<name>.lock" files holding the owner's pid and checks only that
// the file exists, so a killed build blocks every later compile with "Another process is using this
// dir" (seeds/001 section 4.3). Only regular files whose name ends in exactly ".lock" are
// considered ("*lock*" also matches block_table.py); a lock is stale when the pid it records has no
// /proc/<pid> under the root.
// Scripts: CANN's set_env.sh reads unset variables, so sourcing it under `set -u` ends the calling
// shell with no message (seeds/001 section 4.1).
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "base/text.hpp"
#include "base/units.hpp"
#include "doctor/probe.hpp"

namespace preflight::doctor {

namespace {

constexpr int k_max_lock_depth = 16;
constexpr size_t k_max_lock_entries = 200000;

bool is_lock_name(const std::string& name) { return name.size() > 5 && ends_with(name, ".lock"); }

std::optional<int64_t> recorded_pid(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    int64_t pid = 0;
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) && pid < 100000000) pid = pid * 10 + (text[j++] - '0');
    if (pid > 0 && pid < 100000000) return pid;
    return std::nullopt;
  }
  return std::nullopt;
}

LockOwner owner_state(const Probe& probe, const std::optional<int64_t>& pid) {
  if (!pid) return LockOwner::not_recorded;
  return probe.exists("/proc/" + std::to_string(*pid)) ? LockOwner::alive : LockOwner::dead;
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
    if (auto text = probe.read(path, 256)) lock.owner_pid = recorded_pid(*text);
    else problems.push_back(text.error().describe());
    lock.owner = owner_state(probe, lock.owner_pid);
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
  int scanned = 0;
  for (const auto& d : dirs) {
    if (!probe.exists(d)) continue;
    ++scanned;
    lk.evidence.push_back("scanned " + d);
    walk(probe, d, 0, seen, ctx.report.locks, problems);
  }
  for (const auto& p : problems) lk.evidence.push_back("unreadable: " + p);
  int stale = 0, unknown = 0;
  for (const auto& l : ctx.report.locks) {
    const char* state = l.owner == LockOwner::alive ? "owner alive" : l.owner == LockOwner::dead ? "owner dead: stale" : "owner not recorded";
    lk.evidence.push_back(l.path + (l.owner_pid ? format(" (pid %lld, %s)", static_cast<long long>(*l.owner_pid), state) : std::string(" (") + state + ")"));
    stale += l.stale();
    unknown += l.owner == LockOwner::not_recorded;
  }
  if (scanned == 0) {
    lk.status = CheckStatus::skip;
    lk.summary = "no compile-cache directory found (pass a build tree with --cache-dir)";
  } else if (stale > 0) {
    lk.status = CheckStatus::fail;
    lk.summary = format("%d stale lock file(s) (owner process gone): the TBE compiler reports 'Another process is using this dir'", stale);
    lk.fix = "preflight doctor --fix removes exactly these files (never 'find -name \"*lock*\"', which also matches block_table.py)";
  } else {
    lk.status = unknown > 0 || !problems.empty() ? CheckStatus::warn : CheckStatus::ok;
    lk.summary = format("%zu lock file(s), none stale", ctx.report.locks.size());
    if (unknown > 0) lk.summary += format("; %d without a recorded owner (left alone)", unknown);
  }
  ctx.report.checks.push_back(lk);
}

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
    if (const size_t hash = line.find(" #"); hash != std::string::npos) line = line.substr(0, hash);
    if (starts_with(line, "#")) continue;
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
        out.push_back({n, nounset_line, trim(raw)});
      }
    }
  }
  return out;
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
}

Status remove_stale_lock(const std::string& root, const LockFile& lock) {
  DoctorOptions options;
  options.root = root;
  const Probe probe(options);
  const std::string real = probe.at(lock.path);
  if (!is_lock_name(base_name(lock.path))) return make_error(ErrorKind::invalid_argument, lock.path + ": not named *.lock; refusing to remove", lock.path);
  struct stat st;
  if (::lstat(real.c_str(), &st) != 0) return make_error(ErrorKind::not_found, lock.path + ": " + std::strerror(errno), lock.path);
  if (!S_ISREG(st.st_mode)) return make_error(ErrorKind::invalid_argument, lock.path + ": not a regular file; refusing to remove", lock.path);
  auto text = probe.read(lock.path, 256);
  if (!text) return text.error();
  const auto pid = recorded_pid(*text);
  if (owner_state(probe, pid) != LockOwner::dead) return make_error(ErrorKind::invalid_argument, lock.path + ": owner alive or not recorded; refusing to remove", lock.path);
  if (::unlink(real.c_str()) != 0) return make_error(ErrorKind::io, lock.path + ": cannot remove: " + std::strerror(errno), lock.path);
  return Ok{};
}

}  // namespace preflight::doctor
