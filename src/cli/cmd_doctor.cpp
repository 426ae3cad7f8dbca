#include "cli/cmd_doctor.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "base/file.hpp"
#include "base/text.hpp"
#include "cli/args.hpp"
#include "cli/common.hpp"
#include "cli/help.hpp"
#include "doctor/doctor.hpp"
#include "model/hub_repo_id.hpp"
#include "report/render.hpp"

extern char** environ;

namespace preflight::cli {

namespace {

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

const char* colored(doctor::CheckStatus s, bool color) {
  if (!color) return doctor::check_status_name(s);
  switch (s) {
    case doctor::CheckStatus::ok: return "\033[32mok\033[0m";
    case doctor::CheckStatus::warn: return "\033[33mwarn\033[0m";
    case doctor::CheckStatus::fail: return "\033[31mfail\033[0m";
    case doctor::CheckStatus::skip: return "\033[2mskip\033[0m";
  }
  return "skip";
}

// What `preflight doctor` takes.
struct DoctorRequest {
  std::optional<std::string> root, venv, script, cache_dir;
  std::optional<std::string> model, revision;  // llamacpp30: the model whose cached copies are checked
  bool fix = false, json = false;
};

std::vector<Option> doctor_options(DoctorRequest& r) {
  return {text_flag("root", "DIR", r.root, "the filesystem root the stack is installed under (default /)"),
          text_flag("venv", "DIR", r.venv, "the Python environment vLLM runs in"),
          text_flag("script", "FILE", r.script, "a deploy script to check for traps (set -u around set_env.sh)"),
          text_flag("cache-dir", "DIR[,DIR]", r.cache_dir, "kernel caches to scan for stale TBE lock files"),
          text_flag("model", "ORG/NAME", r.model, "check the Hugging Face and ModelScope caches hold this model whole (also the positional MODEL)"),
          text_flag("revision", "REV", r.revision, "with --model: the branch or commit of the Hugging Face cache (default main)"),
          switch_flag("fix", r.fix, "remove only exact *.lock files, listing each one"), json_flag(r.json)};
}

const CommandText k_doctor_text{
    "usage: preflight doctor [MODEL] [--root DIR] [--venv DIR] [--script FILE] [--cache-dir DIR[,DIR]] [--model ORG/NAME] [--revision REV] [--fix] [--json]",
    R"(Checks an Ascend / CUDA serving stack before it wastes a day: CANN, driver and torch_npu versions against the
vllm-ascend compatibility table, the ATB cxx_abi, missing Python packages, stale TBE lock files, and a deploy
script's traps (set -u around set_env.sh). With MODEL (org/name): whether the Hugging Face and ModelScope caches
hold it whole (every shard its index names, at the size its header gives), what is missing and the command that
finishes the download, and the space left for it; nothing is deleted.)",
    "", "exit: 0 all checks pass, 1 a check fails, 2 bad input (a flag given twice included)"};

}  // namespace

CommandHelp doctor_help() {
  static DoctorRequest scratch;
  return {k_doctor_text, doctor_options(scratch)};
}

namespace {

// user37: after --fix removed every stale lock, the lock check reports what it did; it printed the failure it found
// before the removal ("[fail] ... 1 stale lock file(s)", "fix: preflight doctor --fix ...") while exiting 0.
void mark_locks_fixed(doctor::DoctorReport& report, size_t removed) {
  if (removed == 0) return;
  for (auto& c : report.checks) {
    if (c.id != "locks" || c.status != doctor::CheckStatus::fail) continue;
    c.status = doctor::CheckStatus::ok;
    c.summary = fmt::format("{} stale lock file(s) removed by --fix (listed above); the owners' processes were gone", removed);
    c.fix.clear();
  }
}

}  // namespace

int cmd_doctor(const std::vector<std::string>& argv) {
  DoctorRequest req;
  auto positional = parse_options(argv, doctor_options(req));
  if (!positional) {
    fmt::print(stderr, "preflight: {}\n", positional.error().describe());
    return k_exit_usage;
  }
  if (positional->size() > 1 || (positional->size() == 1 && req.model && *req.model != positional->front())) {
    fmt::print(stderr, "preflight: {}\n", command_usage("doctor"));
    return k_exit_usage;
  }
  if (positional->size() == 1) req.model = positional->front();
  // Issue 16 (llamacpp30): a model id names a cache directory; hard31: by the hub's own rules (model/hub_repo_id), as
  // every command checks one before a cache path is built from it.
  if (req.model) {
    if (auto ok = model::check_hub_repo_id(*req.model, "--model"); !ok) return report_error(ok.error());
  }
  // hard31: the revision of a hub reference's rule (docs/hub.md: letters, digits, '-', '_', '.'), not only no '/' or '..':
  // it is joined into refs/<revision> and printed in the fix command, where "x;touch PWNED$(id)" ran as a second command
  // once pasted and a newline split the line.
  const auto revision_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; };
  // hard32: nor one that begins with '-' or '.' or ends with '.', which git's ref names never do (git check-ref-format):
  // "-rf" was printed as `hf download ... --revision -rf`, an option to the command it is pasted into, and "." joined as
  // refs/. named the refs folder itself.
  if (req.revision && (req.revision->empty() || req.revision->size() > 200 || req.revision->find("..") != std::string::npos ||
                       req.revision->front() == '-' || req.revision->front() == '.' || req.revision->back() == '.' ||
                       !std::all_of(req.revision->begin(), req.revision->end(), revision_char)))
    return report_error(make_error(ErrorKind::invalid_argument,
                                   "--revision: expected a branch or commit name of letters, digits, '-', '_' and '.' (no '..', not beginning with '-' or '.', "
                                   "not ending with '.'), found " +
                                       dump_json(Json(clip_text(*req.revision, 120))),
                                   "--revision"));
  auto compat = doctor::load_compat();
  if (!compat) {
    fmt::print(stderr, "preflight: {}\n", compat.error().describe());
    return k_exit_usage;
  }
  // A --root that is not a directory (a typo, a file, a dangling link) was checked as an empty tree: every check
  // skipped, exit 0 (issue 19). It is a usage error naming the path.
  if (req.root && !is_directory(*req.root))
    return report_error(make_error(ErrorKind::invalid_argument, "--root " + *req.root + ": not a directory (or it cannot be reached)", "--root"));
  doctor::DoctorOptions options;
  options.root = req.root.value_or("/");
  options.env = current_environment();
  options.venv = req.venv;
  options.script_path = req.script;
  options.model = req.model;
  if (req.revision) options.model_revision = *req.revision;
  // The script is named on the command line: one that cannot be opened (missing, a FIFO, a
  // directory) is a usage error, exit 2, and is never read in a way that could block.
  if (options.script_path) {
    if (auto opened = FileReader::open(*options.script_path); !opened) {
      fmt::print(stderr, "preflight: --script {}\n", opened.error().describe());
      return k_exit_usage;
    }
  }
  if (auto dirs = req.cache_dir) for (const auto& d : split(*dirs, ',')) if (!d.empty()) options.cache_dirs.push_back(d);
  options.runner = doctor::system_command_runner();
  doctor::DoctorReport report = doctor::run_doctor(options, *compat);

  // --fix: stale *.lock files only, each path printed before it is removed.
  Json fixed = Json::array();
  int fix_errors = 0;
  if (req.fix) {
    for (const auto& lock : report.locks) {
      if (!lock.stale()) continue;
      fmt::print(req.json ? stderr : stdout, "removing {}\n", lock.path);
      std::fflush(stdout);
      auto st = doctor::remove_stale_lock(options.root, lock);
      fixed.push_back({{"path", lock.path}, {"removed", st.has_value()}, {"error", st ? Json() : Json(st.error().describe())}});
      if (!st) {
        ++fix_errors;
        fmt::print(stderr, "preflight: {}\n", st.error().describe());
      }
    }
  }
  if (req.fix && fix_errors == 0) mark_locks_fixed(report, fixed.size());
  bool any_fail = false;
  for (const auto& c : report.checks) any_fail = any_fail || c.status == doctor::CheckStatus::fail;
  if (req.json) {
    Json j = report::envelope("doctor");
    j["root"] = report.root;
    j["platform"] = report.platform;
    Json checks = Json::array();
    for (const auto& c : report.checks) {
      checks.push_back({{"id", c.id}, {"title", c.title}, {"status", doctor::check_status_name(c.status)}, {"summary", c.summary}, {"evidence", c.evidence},
                        {"fix", c.fix.empty() ? Json() : Json(c.fix)}});
    }
    j["checks"] = checks;
    Json locks = Json::array();
    for (const auto& l : report.locks) {
      locks.push_back({{"path", l.path}, {"owner_pid", l.owner_pid ? Json(*l.owner_pid) : Json()},
                       {"owner", doctor::lock_owner_name(l.owner)}, {"stale", l.stale()}});
    }
    j["locks"] = locks;
    j["free_fraction_min"] = report.free_fraction_min ? Json(*report.free_fraction_min) : Json();
    if (req.model) {
      Json caches = Json::array();
      auto file_json = [](const doctor::CachedFile& f) {
        return Json{{"name", f.name}, {"state", doctor::cached_file_state_name(f.state)}, {"size_bytes", f.size_bytes ? Json(*f.size_bytes) : Json()},
                    {"expected_bytes", f.expected_bytes ? Json(*f.expected_bytes) : Json()}, {"detail", f.detail}};
      };
      for (const auto& c : report.model_caches) {
        Json files = Json::array(), partial = Json::array();
        for (const auto& f : c.files) files.push_back(file_json(f));
        for (const auto& f : c.partial) partial.push_back(file_json(f));
        caches.push_back({{"hub", c.hub}, {"state", doctor::cache_state_name(c.state)}, {"directory", c.directory}, {"snapshot", c.snapshot},
                          {"revision", c.revision}, {"looked_in", c.looked_in}, {"files", files}, {"partial", partial}, {"problem", c.problem},
                          {"index_total_bytes", c.index_total_bytes ? Json(*c.index_total_bytes) : Json()},
                          {"missing_bytes", c.missing_bytes ? Json(*c.missing_bytes) : Json()}, {"free_bytes", c.free_bytes ? Json(*c.free_bytes) : Json()},
                          {"download_command", c.download_command}});
      }
      j["model"] = *req.model;
      j["model_caches"] = caches;
    }
    if (req.fix) j["fixed"] = fixed;
    print_json(j);
  } else {
    const bool color = use_color();
    fmt::print("preflight doctor: root {}, platform {}\n\n", report.root, report.platform);
    for (const auto& c : report.checks) {
      fmt::print("[{}] {}: {}\n", colored(c.status, color), c.title, c.summary);
      for (const auto& e : c.evidence) fmt::print("       {}\n", e);
      if (!c.fix.empty()) fmt::print("       fix: {}\n", c.fix);
    }
    if (report.free_fraction_min) fmt::print("\nfor fit: at most {:.2f} of device memory is free now (--gpu-memory-utilization)\n", *report.free_fraction_min);
  }
  if (fix_errors > 0) return k_exit_fail;
  if (req.fix) {
    // After a successful fix, the lock check no longer fails; the rest still counts.
    bool other_fail = false;
    for (const auto& c : report.checks) other_fail = other_fail || (c.status == doctor::CheckStatus::fail && c.id != "locks");
    return other_fail ? k_exit_fail : k_exit_ok;
  }
  return any_fail ? k_exit_fail : k_exit_ok;
}

}  // namespace preflight::cli
