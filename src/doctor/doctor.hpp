// doctor: checks of the software stack an engine needs, each with its evidence and fix: the CANN
// toolkit and NNAL/ATB (installed, active, persisted where the EngineCore child inherits it, the
// cxx_abi matching torch), the driver and npu-smi (per-NPU memory already in use), the Python stack
// read from installed package metadata against the vllm-ascend compatibility row, upstream triton
// beside triton-ascend, CUDA-only packages, the TBE compiler's Python dependencies, glibc versus the
// published wheel tag, stale compiler lock files, `set -u` around set_env.sh in a deploy script, and
// the CUDA basics on a CUDA host. Every path is read under DoctorOptions::root (a fake system tree in
// tests); commands run through an injectable runner. Library code: it never prints; unreadable
// paths and odd version strings become evidence on a check, never a crash.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace preflight::doctor {

// ---- compatibility data (data/doctor/compat.json) ----

struct CompatRow {
  std::string vllm_ascend, vllm, python_min, python_below, cann, torch, torch_npu;
  std::optional<std::string> triton_ascend;              // null: the release does not use it
  std::map<std::string, std::string> requires_;          // package -> "==5.5.4" / "<0.124.0"
  std::map<std::string, std::string> wheel_glibc_min;    // architecture -> "2.34"
  std::string source;
};

struct SourcedList {
  std::vector<std::string> values;
  std::string source;
};

struct UtilizationDefault {
  std::string from_vllm;
  double value = 0;
};

struct Compat {
  std::vector<CompatRow> rows;  // newest first
  SourcedList cann_prefixes, driver_lib_dir, tbe_python_deps, cuda_only_packages, compile_cache_dirs;
  std::vector<UtilizationDefault> utilization_defaults;
  std::string utilization_source;
  std::string origin;

  // The row for an installed vllm-ascend version: exact, then a row that prefixes it
  // ("0.26.0rc" for "0.26.0rc2"), then the same numeric release.
  const CompatRow* row_for(const std::string& vllm_ascend_version) const;
  double default_utilization(const std::string& vllm_version) const;
};

Expected<Compat> parse_compat(const std::string& text, const std::string& origin);
Expected<Compat> load_compat();

// Numeric comparison of the leading dotted numbers ("2.10.0.post4" -> 2,10,0); nullopt when the
// text does not start with a digit.
std::optional<int> compare_versions(const std::string& a, const std::string& b);
// Whether `installed` satisfies a pin: "==X" (local part "+..." ignored unless X has one), "<X",
// "<=X", ">X", ">=X", or a bare "X" meaning "==X".
bool satisfies(const std::string& installed, const std::string& pin);

// ---- checks ----

enum class CheckStatus { ok, warn, fail, skip };
const char* check_status_name(CheckStatus status);

struct CheckResult {
  std::string id;       // cann.toolkit, driver.npu_smi, python.stack, locks, script.set_u, ...
  std::string title;
  CheckStatus status = CheckStatus::skip;
  std::string summary;  // one line
  std::vector<std::string> evidence;  // paths, versions, values as found
  std::string fix;      // empty when nothing to do
};

struct CommandOutput {
  int exit_code = 0;
  std::string output;  // stdout and stderr together
};
using CommandRunner = std::function<Expected<CommandOutput>(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env)>;
// Runs a program with the given environment (fork/exec, 20 s limit, 1 MiB of output kept).
CommandRunner system_command_runner();

struct DoctorOptions {
  std::string root = "/";                    // system root: every absolute path is read under it
  std::map<std::string, std::string> env;    // the environment of the shell being checked
  std::optional<std::string> venv;           // virtual environment (under root); default $VIRTUAL_ENV
  std::vector<std::string> cache_dirs;       // extra compile-cache / build trees for lock files (under root)
  std::optional<std::string> script_path;    // --script: read as given, not under root
  CommandRunner runner;                      // empty: commands are not run (reported as skipped)
  // Issue 16 (llamacpp30): a model id (org/name) whose copies in the Hugging Face and ModelScope caches are checked
  // (model_cache.cpp), at `model_revision` (a branch or a commit; Hugging Face only). Unset: no cache check.
  std::optional<std::string> model;
  std::string model_revision = "main";
};

struct NpuMemory {
  int64_t npu = 0;
  std::string name;
  int64_t used_mb = 0, total_mb = 0;
};
struct NpuProcess {
  int64_t npu = 0;
  int64_t pid = 0;
  std::string name;
  int64_t memory_mb = 0;
};
struct NpuSmiInfo {
  std::vector<NpuMemory> memory;
  std::vector<NpuProcess> processes;
  std::string version;
};
// Parses `npu-smi info` (the NPU/chip rows and the process table). Rows it cannot read are skipped.
NpuSmiInfo parse_npu_smi_info(const std::string& text);

// not_recorded: the file is not exactly a pid in the documented format ("<pid>" or "pid=<pid>",
// surrounding whitespace allowed), so its owner is unknown and it is kept. unknown: a pid is
// recorded but the process table cannot say whether it runs; kept as well.
enum class LockOwner { alive, dead, not_recorded, unknown };
const char* lock_owner_name(LockOwner owner);
// The pid a lock file records, parsed strictly: the whole text must be "<pid>" or "pid=<pid>" with
// optional surrounding whitespace, the pid in 1..4194304 (Linux PID_MAX_LIMIT); else nullopt.
std::optional<int64_t> parse_lock_pid(const std::string& text);
// Liveness in the real process table of this machine (never under --root): kill(pid, 0) succeeds
// or fails with EPERM: alive; ESRCH: dead; anything else: unknown.
LockOwner process_state(int64_t pid);

struct LockFile {
  std::string path;  // as seen on the host (without the root prefix)
  std::optional<int64_t> owner_pid;
  LockOwner owner = LockOwner::not_recorded;
  bool stale() const { return owner == LockOwner::dead; }
};

struct ScriptFinding {
  int64_t line = 0;          // the line that sources set_env.sh
  int64_t nounset_line = 0;  // where set -u was turned on (0: the shebang)
  std::string text;
};
// Lines of a shell script that source a set_env.sh while `set -u` (nounset) is on.
std::vector<ScriptFinding> scan_deploy_script(const std::string& text);
// ux32 (issue 16): the qknorm-rope fusion switch written where vllm-ascend does not read it. shared/seeds/001 section 5
// writes '{"ascend_fusion_config": {"fuse_qknorm_rope": false}}'; vllm-ascend (v0.23.0 - v0.25.1rc1) reads the switch only
// under ascend_compilation_config (compilation/graph_fusion_pass_manager.py) and AscendFusionConfig takes the misplaced
// key into **kwargs, so the pass stays on (data/engines/launch.json qknorm-rope-fusion-a2). True for text (an
// --additional-config value, or a deploy script's line) that names fuse_qknorm_rope and ascend_fusion_config but not
// ascend_compilation_config: one check for doctor's script and fit's flag (hard33; they were two).
bool names_misplaced_fusion_key(const std::string& text);
// The --additional-config that turns the pass off where vllm-ascend reads it.
inline constexpr const char* k_fusion_key_fix = "--additional-config '{\"ascend_compilation_config\": {\"fuse_qknorm_rope\": false}}'";
// Lines that delete files by a glob taking "lock" as a substring or suffix ("*lock*", "*lock", quoted or not) with
// find's -delete, rm, xargs rm or unlink (seeds/001 section 3: `find -name '*lock*'` also deleted block_table.py and
// transpose_kv_cache_by_block.cpp, and the source tree had to be rebuilt). nounset_line is 0.
std::vector<ScriptFinding> scan_lock_globs(const std::string& text);

// ---- model caches (model_cache.cpp; issue 16, llamacpp30) ----

// One file of a cached model as found: the snapshot's name for it, and why it is not whole.
enum class CachedFileState {
  ok,
  missing,        // no such entry, or a link to a blob that is not there
  truncated,      // shorter than its safetensors header says (or a header that runs past the end)
  oversized,      // longer than its header says
  outside_cache,  // a link whose real path leaves the cache root: not followed, its size not read
  unreadable,     // not a regular file, or it cannot be opened
};
const char* cached_file_state_name(CachedFileState state);
struct CachedFile {
  std::string name;
  CachedFileState state = CachedFileState::ok;
  std::optional<uint64_t> size_bytes;      // as found (a partial download: its bytes so far)
  std::optional<uint64_t> expected_bytes;  // a shard: 8 + header length + the end of its last tensor's data
  std::optional<uint64_t> tensor_bytes;    // a shard: the end of its last tensor's data (what the index's total_size sums)
  std::string detail;
};
enum class CacheState { absent, complete, incomplete, unverified };
const char* cache_state_name(CacheState state);
// A model in one hub's cache.
struct ModelCacheState {
  std::string hub;                      // huggingface | modelscope
  std::vector<std::string> looked_in;   // host paths the model's directory was looked for at
  std::string directory;                // the model's directory (the first looked at when absent)
  std::string snapshot;                 // where its files are: snapshots/<commit> (Hugging Face), the directory (ModelScope)
  std::string revision;                 // Hugging Face: the commit refs/<revision> names
  CacheState state = CacheState::absent;
  std::vector<CachedFile> files;        // config.json, the index, every shard it names
  std::vector<CachedFile> partial;      // downloads cut short: blobs/*.incomplete, ._____temp/*
  std::string problem;                  // no index / no snapshot / a bad index, when one stopped the check
  std::optional<uint64_t> index_total_bytes;  // model.safetensors.index.json metadata.total_size
  std::optional<uint64_t> missing_bytes;      // still to download, when it can be told (incomplete only)
  std::optional<uint64_t> free_bytes;         // free to this user on the cache's filesystem (incomplete only)
  std::string download_command;         // hf download ... / modelscope download --model ...
};

struct DoctorReport {
  std::string platform;  // npu | cuda | none
  std::vector<CheckResult> checks;
  std::vector<LockFile> locks;
  std::optional<NpuSmiInfo> npu_smi;
  std::optional<double> free_fraction_min;  // the smallest free/total over devices, for fit
  std::string root;
  std::vector<ModelCacheState> model_caches;  // with DoctorOptions::model: Hugging Face's, then ModelScope's
};

DoctorReport run_doctor(const DoctorOptions& options, const Compat& compat);

// Removes one stale lock file. Refuses (invalid_argument) anything that is not a regular file
// whose name ends in ".lock", anything whose real path (symbolic links resolved) leaves the real
// root, and anything whose recorded owner is alive, not recorded or cannot be checked. The file is
// reached by openat from the root without following links and removed with unlinkat in the
// directory it was read from, so a link swapped in after the check cannot redirect the unlink.
Status remove_stale_lock(const std::string& root, const LockFile& lock);

}  // namespace preflight::doctor
