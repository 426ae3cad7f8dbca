#include "doctor/doctor.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/file.hpp"
#include "../test_support.hpp"

namespace fs = std::filesystem;
namespace dr = preflight::doctor;

namespace {

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

// A fake Ascend host: CANN 8.3.RC1 toolkit, ATB with both cxx_abi directories, the driver's lib64,
// an npu-smi that prints the first field report's output (and fails like the second report's when
// the driver lib64 is not on LD_LIBRARY_PATH), a venv, glibc 2.31 on aarch64.
struct FakeRoot {
  std::string root;
  std::map<std::string, std::string> env;

  explicit FakeRoot(const std::string& name) : root(pftest::scratch_dir(name)) {
    const std::string asc = root + "/usr/local/Ascend";
    write(asc + "/ascend-toolkit/8.3.RC1/aarch64-linux/ascend_toolkit_install.info", "package_name=Ascend-cann-toolkit\nversion=8.3.RC1\narch=aarch64\n");
    fs::create_directory_symlink("8.3.RC1", asc + "/ascend-toolkit/latest");
    write(asc + "/ascend-toolkit/set_env.sh", "export ASCEND_HOME_PATH=x\n");
    write(asc + "/nnal/atb/8.3.RC1/atb/cxx_abi_0/lib/libatb.so", "");
    write(asc + "/nnal/atb/8.3.RC1/atb/cxx_abi_1/lib/libatb.so", "");
    fs::create_directories(asc + "/driver/lib64");
    write(root + "/lib/aarch64-linux-gnu/libc-2.31.so", "");
    // npu-smi: the first report's table, read from the report itself.
    std::istringstream seed(read_seed("seeds/000_4948bf09d896064c.txt"));
    std::string out, line;
    bool in_block = false;
    while (std::getline(seed, line)) {
      if (line.find("npu-smi 23.0.3") != std::string::npos) in_block = true;
      if (in_block && (line.empty() || (line[0] != '+' && line[0] != '|'))) {
        if (!out.empty()) break;
        continue;
      }
      if (in_block) out += line + "\n";
    }
    if (out.empty()) out = "(first line missing)\n";
    out = "+------+\n" + out;
    write(root + "/npu-smi.out", out);
    write(root + "/bin/npu-smi",
          "#!/bin/sh\ncase \":$LD_LIBRARY_PATH:\" in *:/usr/local/Ascend/driver/lib64:*) ;; *) echo \"npu-smi: error while loading shared libraries: "
          "libc_sec.so: cannot open shared object file: No such file or directory\" >&2; exit 127;; esac\nexec /bin/cat " +
              root + "/npu-smi.out\n");
    ::chmod((root + "/bin/npu-smi").c_str(), 0755);
    env = {{"PATH", "/bin"}, {"HOME", "/root"}, {"VIRTUAL_ENV", "/venv"},
           {"LD_LIBRARY_PATH", "/usr/local/Ascend/driver/lib64:/usr/local/Ascend/ascend-toolkit/latest/lib64:/usr/local/Ascend/nnal/atb/8.3.RC1/atb/cxx_abi_1/lib"}};
    write(root + "/venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n");
    write(root + "/venv/bin/activate", "VIRTUAL_ENV=/venv\nexport PATH\n");
  }
  static std::string read_seed(const std::string& rel) {
    auto t = preflight::read_text_file(pftest::shared_path(rel));
    return t ? *t : std::string();
  }
  std::string site() const { return root + "/venv/lib/python3.10/site-packages"; }
  void package(const std::string& name, const std::string& version, const std::string& extra = "") const {
    write(site() + "/" + name + "-" + version + ".dist-info/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n" + extra + "\nlong description\n");
  }
  void torch_abi(int abi) const {
    write(site() + "/torch/share/cmake/Torch/TorchConfig.cmake", "set(TORCH_CXX_FLAGS \"-D_GLIBCXX_USE_CXX11_ABI=" + std::to_string(abi) + "\")\n");
  }
  // The vllm-ascend 0.23.0 row, whole (reference section 6; seeds/001 section 3).
  void matching_stack() const {
    package("vllm", "0.23.0");
    package("vllm_ascend", "0.23.0");
    package("torch", "2.10.0+cpu");
    package("torch_npu", "2.10.0.post4");
    package("triton_ascend", "3.2.2");
    package("transformers", "5.5.4");
    package("torchvision", "0.25.0");
    package("fastapi", "0.123.0");
    for (const char* p : {"attrs", "cython", "numpy", "decorator", "sympy", "cffi", "PyYAML", "pathlib2", "psutil", "protobuf", "scipy", "requests", "absl-py"}) {
      package(p, "1.0");
    }
    torch_abi(1);
  }
  dr::DoctorReport doctor(std::optional<std::string> script = std::nullopt, std::vector<std::string> cache_dirs = {}) const {
    dr::DoctorOptions o;
    o.root = root;
    o.env = env;
    o.script_path = script;
    o.cache_dirs = std::move(cache_dirs);
    o.runner = dr::system_command_runner();
    auto compat = dr::load_compat();
    EXPECT_TRUE(compat) << compat.error().describe();
    return dr::run_doctor(o, *compat);
  }
};

const dr::CheckResult* find(const dr::DoctorReport& r, const std::string& id) {
  for (const auto& c : r.checks) if (c.id == id) return &c;
  return nullptr;
}

bool has_evidence(const dr::CheckResult& c, const std::string& fragment) {
  for (const auto& e : c.evidence) if (e.find(fragment) != std::string::npos) return true;
  return c.summary.find(fragment) != std::string::npos;
}

std::string dump(const dr::CheckResult& c) {
  std::string s = c.id + " [" + dr::check_status_name(c.status) + "] " + c.summary + "\n";
  for (const auto& e : c.evidence) s += "  " + e + "\n";
  return s + "  fix: " + c.fix;
}

// The pid of a child that has exited and been reaped: no process has it (until the kernel reuses it).
int64_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

using Run = pftest::CliRun;
// Runs the real binary; stdout and stderr together.
Run run(const std::string& args) { return pftest::run_cli(args); }

}  // namespace

TEST(Compat, ShippedFileLoadsAndRejectsBadRows) {
  auto c = dr::load_compat();
  ASSERT_TRUE(c) << c.error().describe();
  ASSERT_NE(c->row_for("0.23.0"), nullptr);
  EXPECT_EQ(c->row_for("0.23.0")->torch_npu, "2.10.0.post4");
  EXPECT_EQ(c->row_for("0.23.0rc1")->torch_npu, "2.10.0.post2");
  EXPECT_EQ(c->row_for("0.26.0rc2")->vllm, "0.26.0");
  EXPECT_EQ(c->row_for("banana"), nullptr);
  EXPECT_DOUBLE_EQ(c->default_utilization("0.23.0"), 0.92);
  EXPECT_DOUBLE_EQ(c->default_utilization("0.18.0"), 0.9);
  const std::string lists = R"("cann_prefixes": {"values": ["/a"], "source": "s"}, "driver_lib_dir": {"values": ["/d"], "source": "s"},
    "tbe_python_deps": {"values": ["x"], "source": "s"}, "cuda_only_packages": {"values": ["y"], "source": "s"},
    "compile_cache_dirs": {"values": ["/c"], "source": "s"}, "gpu_memory_utilization_default": {"values": [{"from_vllm": "0.0.0", "value": 0.9}], "source": "s"})";
  const std::string row = R"({"vllm_ascend": "0.1.0", "vllm": "0.1.0", "python_min": "3.9", "python_below": "3.12", "cann": "8.0.0", "torch": "2.5.1", "torch_npu": "2.5.1", "triton_ascend": null, "source": "s"})";
  ASSERT_TRUE(dr::parse_compat(R"({"schema_version": 1, "rows": [)" + row + "], " + lists + "}", "c.json"));
  const struct {
    std::string text, fragment;
  } bad[] = {
      {R"({"schema_version": 1, "rows": [)" + row + "," + row + "], " + lists + "}", "duplicate row 0.1.0"},
      {R"({"schema_version": 1, "rows": [{"vllm_ascend": "0.1.0", "oops": 1}], )" + lists + "}", "oops"},
      {R"({"schema_version": 1, "rows": [{"vllm_ascend": "0.1.0", "vllm": "0.1.0", "python_min": "3.9", "python_below": "3.12", "cann": "8", "torch": "2", "torch_npu": "2"}], )" + lists + "}", "source"},
      {R"({"schema_version": 1, "rows": [)" + row + R"(], "cann_prefixes": {"values": ["/a"]}})", "source"},
      {R"({"schema_version": 3})", "schema_version 3"},
  };
  for (const auto& b : bad) {
    auto r = dr::parse_compat(b.text, "c.json");
    ASSERT_FALSE(r) << b.text;
    EXPECT_NE(r.error().describe().find(b.fragment), std::string::npos) << r.error().describe();
  }
}

TEST(Compat, VersionPins) {
  EXPECT_TRUE(dr::satisfies("2.10.0+cpu", "2.10.0"));
  EXPECT_FALSE(dr::satisfies("2.10.0.post2", "2.10.0.post4"));
  EXPECT_TRUE(dr::satisfies("2.9.0.post1+git4c901a4", "2.9.0.post1+git4c901a4"));
  EXPECT_TRUE(dr::satisfies("0.123.1", "<0.124.0"));
  EXPECT_FALSE(dr::satisfies("0.124.0", "<0.124.0"));
  EXPECT_TRUE(dr::satisfies("5.5.4", "==5.5.4"));
  EXPECT_FALSE(dr::satisfies("banana", "<1.0"));
  EXPECT_EQ(dr::compare_versions("3.10", "3.9"), 1);
  EXPECT_EQ(dr::compare_versions("x", "1"), std::nullopt);
}

TEST(Doctor, MatchingStackPassesPythonChecks) {
  FakeRoot f("doctor-match");
  f.matching_stack();
  const auto r = f.doctor();
  EXPECT_EQ(r.platform, "npu");
  const auto* st = find(r, "python.stack");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(st->status, dr::CheckStatus::ok) << dump(*st);
  EXPECT_EQ(find(r, "python.triton")->status, dr::CheckStatus::ok) << dump(*find(r, "python.triton"));
  EXPECT_EQ(find(r, "python.tbe_deps")->status, dr::CheckStatus::ok) << dump(*find(r, "python.tbe_deps"));
  EXPECT_EQ(find(r, "python.cuda_only")->status, dr::CheckStatus::ok);
  // CANN 8.3.RC1 while the 0.23.0 row says 9.1.0: a warning with the whole row as the fix.
  const auto* tk = find(r, "cann.toolkit");
  EXPECT_EQ(tk->status, dr::CheckStatus::warn) << dump(*tk);
  EXPECT_TRUE(has_evidence(*tk, "version 8.3.RC1 read from /usr/local/Ascend/ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info")) << dump(*tk);
  EXPECT_NE(tk->fix.find("CANN 9.1.0"), std::string::npos);
  const auto* atb = find(r, "cann.atb");
  EXPECT_EQ(atb->status, dr::CheckStatus::ok) << dump(*atb);
  EXPECT_TRUE(has_evidence(*atb, "cxx_abi_0/lib")) << dump(*atb);
  EXPECT_TRUE(has_evidence(*atb, "_GLIBCXX_USE_CXX11_ABI=1")) << dump(*atb);
}

TEST(Doctor, MismatchedStackAndUpstreamTriton) {
  FakeRoot f("doctor-mismatch");
  f.package("vllm", "0.23.0", "Requires-Dist: flashinfer-python==0.4.1\nRequires-Dist: tilelang; platform_machine == \"x86_64\"");
  f.package("vllm_ascend", "0.18.0");
  f.package("torch", "2.10.0");
  f.package("torch_npu", "2.10.0.post4");
  f.package("triton", "3.6.0");
  f.package("triton_ascend", "3.2.0");
  f.package("flashinfer_python", "0.4.1");
  f.package("attrs", "23.1");
  f.torch_abi(1);
  const auto r = f.doctor();
  const auto* st = find(r, "python.stack");
  EXPECT_EQ(st->status, dr::CheckStatus::fail) << dump(*st);
  EXPECT_TRUE(has_evidence(*st, "mismatch: vllm 0.23.0 (row: 0.18.0)")) << dump(*st);
  EXPECT_TRUE(has_evidence(*st, "mismatch: torch 2.10.0 (row: 2.9.0)")) << dump(*st);
  EXPECT_NE(st->fix.find("torch==2.9.0"), std::string::npos);
  const auto* tr = find(r, "python.triton");
  EXPECT_EQ(tr->status, dr::CheckStatus::fail) << dump(*tr);
  EXPECT_NE(tr->fix.find("pip uninstall -y triton triton-ascend"), std::string::npos);
  const auto* cu = find(r, "python.cuda_only");
  EXPECT_EQ(cu->status, dr::CheckStatus::warn) << dump(*cu);
  EXPECT_TRUE(has_evidence(*cu, "vllm metadata requires flashinfer-python==0.4.1")) << dump(*cu);
  const auto* tbe = find(r, "python.tbe_deps");
  EXPECT_EQ(tbe->status, dr::CheckStatus::fail);
  EXPECT_TRUE(has_evidence(*tbe, "decorator")) << dump(*tbe);
  EXPECT_FALSE(has_evidence(*tbe, "attrs ")) << dump(*tbe);
}

TEST(Doctor, CxxAbiOnTheLibraryPathMustMatchTorch) {
  FakeRoot f("doctor-abi");
  f.matching_stack();
  f.env["LD_LIBRARY_PATH"] = "/usr/local/Ascend/driver/lib64:/usr/local/Ascend/nnal/atb/8.3.RC1/atb/cxx_abi_0/lib";
  auto atb = *find(f.doctor(), "cann.atb");
  EXPECT_EQ(atb.status, dr::CheckStatus::fail) << dump(atb);
  EXPECT_NE(atb.fix.find("cxx_abi_1/lib"), std::string::npos);
  f.env["LD_LIBRARY_PATH"] = "/usr/local/Ascend/driver/lib64";
  atb = *find(f.doctor(), "cann.atb");
  EXPECT_EQ(atb.status, dr::CheckStatus::warn) << dump(atb);
}

TEST(Doctor, EnvironmentPersistedForTheChildProcess) {
  FakeRoot f("doctor-persist");
  f.matching_stack();
  f.env["LD_LIBRARY_PATH"] = "/usr/local/Ascend/driver/lib64";
  auto per = *find(f.doctor(), "cann.persisted");
  EXPECT_EQ(per.status, dr::CheckStatus::fail) << dump(per);
  EXPECT_TRUE(has_evidence(per, "/venv/bin/activate: toolkit not set, ATB not set")) << dump(per);
  // seeds/000 section 2.3: the exports appended to the venv's activate script.
  write(f.root + "/venv/bin/activate",
        "export LD_LIBRARY_PATH=/usr/local/Ascend/nnal/atb/8.3.RC1/atb/cxx_abi_0/lib:$LD_LIBRARY_PATH\n"
        "export LD_LIBRARY_PATH=/usr/local/Ascend/ascend-toolkit/latest/lib64:$LD_LIBRARY_PATH\n");
  per = *find(f.doctor(), "cann.persisted");
  EXPECT_EQ(per.status, dr::CheckStatus::ok) << dump(per);
}

TEST(Doctor, NpuSmiNeedsTheDriverLibraryAndShowsMemoryInUse) {
  FakeRoot f("doctor-smi");
  f.matching_stack();
  auto r = f.doctor();
  const auto* smi = find(r, "driver.npu_smi");
  EXPECT_EQ(smi->status, dr::CheckStatus::ok) << dump(*smi);
  EXPECT_TRUE(has_evidence(*smi, "npu-smi 23.0.3")) << dump(*smi);
  const auto* mem = find(r, "driver.npu_memory");
  ASSERT_NE(mem, nullptr);
  EXPECT_EQ(mem->status, dr::CheckStatus::warn) << dump(*mem);
  EXPECT_TRUE(has_evidence(*mem, "NPU 0 910B4: 31793 MB of 30271 MB in use")) << dump(*mem);
  ASSERT_TRUE(r.free_fraction_min);
  EXPECT_DOUBLE_EQ(*r.free_fraction_min, 0.0);
  // seeds/001 section 8: without the driver's lib64 npu-smi cannot find libc_sec.so.
  f.env["LD_LIBRARY_PATH"] = "/usr/local/Ascend/nnal/atb/8.3.RC1/atb/cxx_abi_1/lib";
  r = f.doctor();
  smi = find(r, "driver.npu_smi");
  EXPECT_EQ(smi->status, dr::CheckStatus::fail) << dump(*smi);
  EXPECT_TRUE(has_evidence(*smi, "libc_sec.so")) << dump(*smi);
  EXPECT_NE(smi->fix.find("export LD_LIBRARY_PATH=/usr/local/Ascend/driver/lib64"), std::string::npos) << smi->fix;
}

TEST(Doctor, NpuSmiTableWithHbmColumnAndProcesses) {
  const std::string text =
      "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n"
      "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n"
      "| 0     910B3               | OK            | 95.1        40                0    / 0             |\n"
      "| 0                         | 0000:C1:00.0  | 0           0    / 0          58432/ 65536         |\n"
      "| 1     910B3               | OK            | 90.0        39                0    / 0             |\n"
      "| 0                         | 0000:C2:00.0  | 0           0    / 0          3396 / 65536         |\n"
      "| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |\n"
      "| 0       0                 | 4242          | python3                  | 55000                   |\n";
  const auto info = dr::parse_npu_smi_info(text);
  ASSERT_EQ(info.memory.size(), 2u);
  EXPECT_EQ(info.memory[0].used_mb, 58432);
  EXPECT_EQ(info.memory[0].total_mb, 65536);
  EXPECT_EQ(info.memory[1].npu, 1);
  EXPECT_EQ(info.memory[1].used_mb, 3396);
  ASSERT_EQ(info.processes.size(), 1u);
  EXPECT_EQ(info.processes[0].pid, 4242);
  EXPECT_EQ(info.processes[0].memory_mb, 55000);
  EXPECT_TRUE(dr::parse_npu_smi_info("garbage | | |\n|||\n| x | y | z |").memory.empty());
}

TEST(Doctor, GlibcAgainstTheWheelTag) {
  FakeRoot f("doctor-glibc");
  auto gl = *find(f.doctor(), "glibc");  // nothing installed: the newest row with wheel data (0.23.0)
  EXPECT_EQ(gl.status, dr::CheckStatus::fail) << dump(gl);
  EXPECT_TRUE(has_evidence(gl, "manylinux_2_34")) << dump(gl);
  f.package("vllm_ascend", "0.23.0");
  gl = *find(f.doctor(), "glibc");
  EXPECT_EQ(gl.status, dr::CheckStatus::warn) << dump(gl);
  fs::remove(f.root + "/lib/aarch64-linux-gnu/libc-2.31.so");
  write(f.root + "/lib/aarch64-linux-gnu/libc.so.6", std::string("\x7f" "ELF junk GNU C Library (Ubuntu GLIBC 2.35-0ubuntu3.1) stable release version 2.35.\n"));
  gl = *find(f.doctor(), "glibc");
  EXPECT_EQ(gl.status, dr::CheckStatus::ok) << dump(gl);
  EXPECT_TRUE(has_evidence(gl, "glibc 2.35")) << dump(gl);
}

TEST(Doctor, LockFilesLiveDeadAndFixRemovesOnlyStaleOnes) {
  FakeRoot f("doctor-locks");
  const std::string tree = f.root + "/root/build/vllm-ascend";
  write(tree + "/vllm_ascend/worker/block_table.py", "# source\n");
  write(tree + "/csrc/transpose_kv_cache_by_block.cpp", "// source\n");
  const int64_t gone = dead_pid();
  write(tree + "/kernel_meta/a.lock", std::to_string(gone) + "\n");
  write(tree + "/b.lock.d/inner", std::to_string(gone) + "\n");
  const int64_t live_pid = ::getpid();
  write(tree + "/kernel_meta/live.lock", "pid=" + std::to_string(live_pid) + "\n");
  write(tree + "/kernel_meta/nopid.lock", "");
  fs::create_symlink(tree + "/vllm_ascend/worker/block_table.py", tree + "/link.lock");
  auto r = f.doctor(std::nullopt, {"/root/build/vllm-ascend"});
  const auto* lk = find(r, "locks");
  EXPECT_EQ(lk->status, dr::CheckStatus::fail) << dump(*lk);
  ASSERT_EQ(r.locks.size(), 3u) << dump(*lk);
  int stale = 0;
  for (const auto& l : r.locks) stale += l.stale();
  EXPECT_EQ(stale, 1);
  // The library refuses anything but a stale *.lock.
  EXPECT_FALSE(dr::remove_stale_lock(f.root, {"/root/build/vllm-ascend/vllm_ascend/worker/block_table.py", gone, dr::LockOwner::dead}));
  EXPECT_FALSE(dr::remove_stale_lock(f.root, {"/root/build/vllm-ascend/kernel_meta/live.lock", live_pid, dr::LockOwner::dead}));
  EXPECT_FALSE(dr::remove_stale_lock(f.root, {"/root/build/vllm-ascend/link.lock", gone, dr::LockOwner::dead}));
  // The real binary with --fix.
  const auto out = run("doctor --root " + f.root + " --cache-dir /root/build/vllm-ascend --fix");
  EXPECT_NE(out.out.find("removing /root/build/vllm-ascend/kernel_meta/a.lock"), std::string::npos) << out.out;
  EXPECT_FALSE(fs::exists(tree + "/kernel_meta/a.lock"));
  for (const char* kept : {"/vllm_ascend/worker/block_table.py", "/csrc/transpose_kv_cache_by_block.cpp", "/b.lock.d/inner", "/kernel_meta/live.lock",
                           "/kernel_meta/nopid.lock"}) {
    EXPECT_TRUE(fs::exists(tree + kept)) << kept;
  }
  EXPECT_TRUE(fs::is_symlink(tree + "/link.lock"));
  EXPECT_EQ(out.out.find("removing", out.out.find("a.lock") + 1), std::string::npos) << out.out;
}

TEST(Doctor, DeployScriptSetUTrap) {
  const struct {
    std::string script;
    std::vector<int64_t> lines;
  } cases[] = {
      {"#!/bin/bash\nset -u\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n", {3}},
      {"#!/bin/bash\nset -eu\n. /usr/local/Ascend/ascend-toolkit/set_env.sh\n", {3}},
      {"#!/bin/bash\nset -euo pipefail\ncd /x && source /usr/local/Ascend/nnal/atb/set_env.sh\n", {3}},
      {"#!/bin/bash -u\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n", {2}},
      {"#!/bin/bash\nset -o nounset\nsource /a/set_env.sh\nset +o nounset\nsource /b/set_env.sh\n", {3}},
      {"#!/bin/bash\nset -u\nset +u; source /usr/local/Ascend/ascend-toolkit/set_env.sh; set -u\n", {}},
      {"#!/bin/bash\nset -e\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n", {}},
      {"#!/bin/bash\nset -u\n# source /usr/local/Ascend/ascend-toolkit/set_env.sh\necho hi\n", {}},
  };
  for (const auto& c : cases) {
    const auto findings = dr::scan_deploy_script(c.script);
    std::vector<int64_t> got;
    for (const auto& fnd : findings) got.push_back(fnd.line);
    EXPECT_EQ(got, c.lines) << c.script;
  }
  FakeRoot f("doctor-script");
  const std::string script = f.root + "/deploy.sh";
  write(script, "#!/bin/bash\nset -u\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\nvllm serve x\n");
  const auto report = f.doctor(script);
  const auto* sc = find(report, "script.set_u");
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(sc->status, dr::CheckStatus::fail);
  EXPECT_TRUE(has_evidence(*sc, "line 3: source /usr/local/Ascend/ascend-toolkit/set_env.sh (set -u from line 2)")) << dump(*sc);
  const auto report_missing = f.doctor(f.root + "/nope.sh");
  const auto* missing = find(report_missing, "script.set_u");
  EXPECT_EQ(missing->status, dr::CheckStatus::fail);
  EXPECT_TRUE(has_evidence(*missing, "nope.sh")) << dump(*missing);
}

// seeds/001 section 3: `find -name '*lock*'` to clear TBE lock files also deleted block_table.py and
// transpose_kv_cache_by_block.cpp. A script line that deletes by a glob with '*' before "lock" fails the check; an
// exact '*.lock', a prefix 'lock*', a listing without deletion and a comment do not.
TEST(Doctor, Seed001_ScriptDeletingBySubstringLockGlobFails) {
  const std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
      {"find . -name '*lock*' -delete\n", {1}},
      {"#!/bin/bash\nfind /root/.cache -name \"*lock\" | xargs rm -f\n", {2}},
      {"rm -f /tmp/kernel_meta/*lock*\n", {1}},
      {"find . -iname '*LOCK*' -exec rm {} \\;\n", {1}},
      {"find /root/.cache -name '*.lock' -delete\n", {}},
      {"rm -rf build/lock*\n", {}},
      {"find . -name '*lock*'\n", {}},
      {"# find . -name '*lock*' -delete\n", {}},
  };
  for (const auto& [script, lines] : cases) {
    std::vector<int64_t> got;
    for (const auto& fnd : dr::scan_lock_globs(script)) got.push_back(fnd.line);
    EXPECT_EQ(got, lines) << script;
  }
  FakeRoot f("doctor-lock-glob");
  const std::string script = f.root + "/clean.sh";
  write(script, "#!/bin/bash\nset -e\nfind /root/ascend -name '*lock*' -delete\nvllm serve x\n");
  const auto report = f.doctor(script);
  const auto* lg = find(report, "script.lock_glob");
  ASSERT_NE(lg, nullptr);
  EXPECT_EQ(lg->status, dr::CheckStatus::fail);
  EXPECT_TRUE(has_evidence(*lg, "line 3: find /root/ascend -name '*lock*' -delete")) << dump(*lg);
  EXPECT_NE(lg->fix.find("'*.lock'"), std::string::npos) << lg->fix;

  // The lines both script checks quote are the script's text: without its escape sequences (issue 19 item 12).
  write(script, "#!/bin/bash\nset -u\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh \x1b]0;t\x07\nrm -f /x/*lock* \x1b[2J\n");
  const auto escaped = f.doctor(script);
  for (const char* id : {"script.set_u", "script.lock_glob"}) {
    const auto* c = find(escaped, id);
    ASSERT_NE(c, nullptr) << id;
    EXPECT_EQ(c->status, dr::CheckStatus::fail) << id;
    for (const auto& e : c->evidence) EXPECT_EQ(e.find('\x1b'), std::string::npos) << id << ": " << e;
  }
}

// Issue 16 (ux32): seeds/001 section 5 turns the fusion pass off under ascend_fusion_config, where vllm-ascend does not
// read the switch (the pass stays on); doctor --script names the line and gives the spelling the engine reads.
TEST(Doctor, Issue16_ScriptFusionKeyWhereTheEngineReadsIt) {
  FakeRoot f("doctor-fusion-key");
  const std::string script = f.root + "/serve.sh";
  write(script, "#!/bin/bash\n# vllm serve x --additional-config '{\"ascend_fusion_config\": {\"fuse_qknorm_rope\": false}}'\n"
                "vllm serve /models/Qwen3-8B --additional-config '{\"ascend_fusion_config\": {\"fuse_qknorm_rope\": false}}'\n");
  const auto report = f.doctor(script);
  const auto* fk = find(report, "script.fusion_key");
  ASSERT_NE(fk, nullptr);
  EXPECT_EQ(fk->status, dr::CheckStatus::fail) << dump(*fk);
  EXPECT_EQ(fk->evidence.size(), 1u) << dump(*fk);  // the commented line is not code
  EXPECT_TRUE(has_evidence(*fk, "line 3: vllm serve /models/Qwen3-8B")) << dump(*fk);
  EXPECT_NE(fk->fix.find("ascend_compilation_config"), std::string::npos) << fk->fix;
  write(script, "#!/bin/bash\nvllm serve /models/Qwen3-8B --additional-config '{\"ascend_compilation_config\": {\"fuse_qknorm_rope\": false}}'\n");
  const auto fixed = f.doctor(script);
  const auto* right = find(fixed, "script.fusion_key");
  ASSERT_NE(right, nullptr);
  EXPECT_EQ(right->status, dr::CheckStatus::ok) << dump(*right);
}

// Issue 19 (hard33, session 32's leftover): the misplaced fusion key was checked twice, in doctor's script scan (by text)
// and in fit's --additional-config note (by JSON); one check, on text, serves both (cli/serve_line_flags calls it).
TEST(Doctor, Issue19_OneFusionKeyCheckForScriptAndFlag) {
  struct Case {
    std::string text;
    bool misplaced;
  };
  const std::vector<Case> cases = {
      {R"({"ascend_fusion_config": {"fuse_qknorm_rope": false}})", true},
      {R"(vllm serve x --additional-config '{"ascend_fusion_config": {"fuse_qknorm_rope": false}}' \)", true},
      {R"({"ascend_compilation_config": {"fuse_qknorm_rope": false}})", false},
      {R"({"ascend_fusion_config": {"fuse_allreduce_rms": true}})", false},
      {R"({"fuse_qknorm_rope": false})", false},
      {"", false},
  };
  for (const auto& c : cases) EXPECT_EQ(dr::names_misplaced_fusion_key(c.text), c.misplaced) << c.text;
  EXPECT_EQ(std::string(dr::k_fusion_key_fix), R"(--additional-config '{"ascend_compilation_config": {"fuse_qknorm_rope": false}}')");
}

TEST(Doctor, OddTreesAreReportedNotFatal) {
  FakeRoot f("doctor-odd");
  f.package("vllm_ascend", "banana");
  f.package("torch", "");
  fs::create_directories(f.site() + "/weird-1.0.dist-info/METADATA");  // a directory where a file belongs
  write(f.root + "/usr/local/Ascend/ascend-toolkit/8.3.RC1/aarch64-linux/ascend_toolkit_install.info", "version=garbage\n");
  write(f.root + "/root/atc_data", "a file where a directory belongs\n");
  const auto r = f.doctor();
  EXPECT_EQ(find(r, "python.stack")->status, dr::CheckStatus::warn) << dump(*find(r, "python.stack"));
  EXPECT_TRUE(has_evidence(*find(r, "python.stack"), "banana"));
  EXPECT_TRUE(has_evidence(*find(r, "python.stack"), "weird-1.0.dist-info/METADATA")) << dump(*find(r, "python.stack"));
  EXPECT_TRUE(has_evidence(*find(r, "cann.toolkit"), "unrecognised version string 'garbage'")) << dump(*find(r, "cann.toolkit"));
  EXPECT_TRUE(has_evidence(*find(r, "locks"), "cannot list directory")) << dump(*find(r, "locks"));
  if (::geteuid() != 0) {
    fs::create_directories(f.root + "/root/atc_data2/x");
    ::chmod((f.root + "/root/atc_data2").c_str(), 0);
    dr::DoctorOptions o;
    o.root = f.root;
    o.cache_dirs = {"/root/atc_data2"};
    const auto r2 = dr::run_doctor(o, *dr::load_compat());
    EXPECT_TRUE(has_evidence(*find(r2, "locks"), "Permission denied")) << dump(*find(r2, "locks"));
    ::chmod((f.root + "/root/atc_data2").c_str(), 0755);
  }
  // An empty root: every check skips or reports, none crashes.
  dr::DoctorOptions empty;
  empty.root = pftest::scratch_dir("doctor-empty");
  const auto r3 = dr::run_doctor(empty, *dr::load_compat());
  EXPECT_EQ(r3.platform, "none");
  for (const auto& c : r3.checks) EXPECT_NE(c.status, dr::CheckStatus::fail) << dump(c);
}

TEST(Doctor, CudaHostBasics) {
  const std::string root = pftest::scratch_dir("doctor-cuda");
  write(root + "/proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:54 UTC 2024\n");
  write(root + "/bin/nvidia-smi", "#!/bin/sh\necho '0, NVIDIA A100-SXM4-80GB, 550.54.15, 70000, 81920'\n");
  ::chmod((root + "/bin/nvidia-smi").c_str(), 0755);
  write(root + "/venv/lib/python3.11/site-packages/torch-2.5.1+cu124.dist-info/METADATA", "Name: torch\nVersion: 2.5.1+cu124\n");
  dr::DoctorOptions o;
  o.root = root;
  o.env = {{"PATH", "/bin"}, {"VIRTUAL_ENV", "/venv"}};
  o.runner = dr::system_command_runner();
  auto r = dr::run_doctor(o, *dr::load_compat());
  EXPECT_EQ(r.platform, "cuda");
  const auto* drv = find(r, "cuda.driver");
  ASSERT_NE(drv, nullptr);
  EXPECT_EQ(drv->status, dr::CheckStatus::warn) << dump(*drv);  // 70000 of 81920 MiB in use
  EXPECT_TRUE(has_evidence(*drv, "550.54.15")) << dump(*drv);
  EXPECT_EQ(find(r, "cuda.torch")->status, dr::CheckStatus::ok) << dump(*find(r, "cuda.torch"));
  fs::remove_all(root + "/venv/lib/python3.11/site-packages/torch-2.5.1+cu124.dist-info");
  write(root + "/venv/lib/python3.11/site-packages/torch-2.5.1+cpu.dist-info/METADATA", "Name: torch\nVersion: 2.5.1+cpu\n");
  r = dr::run_doctor(o, *dr::load_compat());
  EXPECT_EQ(find(r, "cuda.torch")->status, dr::CheckStatus::fail);
}

TEST(DoctorCli, JsonEnvelopeAndExitCodes) {
  FakeRoot f("doctor-cli");
  f.matching_stack();
  const auto r = run("doctor --root " + f.root + " --venv /venv --json");
  EXPECT_EQ(r.code, 1) << r.out;  // glibc 2.31 below the wheel's 2.34 and more
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["command"], "doctor");
  EXPECT_TRUE(j.contains("schema_version"));
  EXPECT_EQ(j["platform"], "npu");
  EXPECT_GE(j["checks"].size(), 8u);
  EXPECT_EQ(run("doctor extra-arg").code, 2);
  EXPECT_EQ(run("doctor --bogus").code, 2);
}

// Issue 19 item 1: --fix must not leave the root through a symlinked cache directory.
TEST(Doctor, Issue19_SymlinkedCacheDirOutsideRootRefused) {
  const std::string base = pftest::scratch_dir("doctor-issue19-symlink");
  const std::string root = base + "/root", outside = base + "/outside";
  const int64_t gone = dead_pid();
  write(root + "/cache/inside.lock", std::to_string(gone) + "\n");
  write(outside + "/dead.lock", std::to_string(gone) + "\n");
  fs::create_directory_symlink("../outside", root + "/cache3");
  // The library refuses the path through the link, whatever the caller claims about the owner.
  const auto direct = dr::remove_stale_lock(root, {"/cache3/dead.lock", gone, dr::LockOwner::dead});
  ASSERT_FALSE(direct);
  EXPECT_NE(direct.error().describe().find("outside the root"), std::string::npos) << direct.error().describe();
  EXPECT_TRUE(fs::exists(outside + "/dead.lock"));
  // The real binary: the directory is refused in the report, the file outside survives, the one inside goes.
  const auto out = run("doctor --root " + root + " --cache-dir /cache,/cache3 --fix");
  EXPECT_TRUE(fs::exists(outside + "/dead.lock")) << out.out;
  EXPECT_FALSE(fs::exists(root + "/cache/inside.lock")) << out.out;
  EXPECT_NE(out.out.find("refused /cache3"), std::string::npos) << out.out;
  EXPECT_EQ(out.out.find("removing /cache3"), std::string::npos) << out.out;
  // A root that is itself reached through a link is resolved, not refused.
  fs::create_directory_symlink(root, base + "/root-link");
  write(root + "/cache/again.lock", std::to_string(gone) + "\n");
  EXPECT_TRUE(dr::remove_stale_lock(base + "/root-link", {"/cache/again.lock", gone, dr::LockOwner::dead}));
  EXPECT_FALSE(fs::exists(root + "/cache/again.lock"));
}

// Issue 19 item 1: liveness comes from this machine's process table, never from <root>/proc.
TEST(Doctor, Issue19_LockWithLiveOwnerKept) {
  const std::string root = pftest::scratch_dir("doctor-issue19-live");
  const int64_t gone = dead_pid();
  write(root + "/cache/own.lock", std::to_string(::getpid()) + "\n");
  write(root + "/cache/parent.lock", "pid=" + std::to_string(::getppid()));
  write(root + "/cache/dead.lock", std::to_string(gone) + "\n");
  fs::create_directories(root + "/proc/" + std::to_string(gone));  // a fake /proc must not make it alive
  EXPECT_EQ(dr::process_state(::getpid()), dr::LockOwner::alive);
  EXPECT_EQ(dr::process_state(::getppid()), dr::LockOwner::alive);
  EXPECT_EQ(dr::process_state(1), dr::LockOwner::alive);  // init: EPERM for a normal user, still alive
  EXPECT_EQ(dr::process_state(gone), dr::LockOwner::dead);
  const auto own = dr::remove_stale_lock(root, {"/cache/own.lock", ::getpid(), dr::LockOwner::dead});
  ASSERT_FALSE(own);
  EXPECT_NE(own.error().describe().find("is alive"), std::string::npos) << own.error().describe();
  const auto out = run("doctor --root " + root + " --cache-dir /cache --fix");
  EXPECT_TRUE(fs::exists(root + "/cache/own.lock")) << out.out;
  EXPECT_TRUE(fs::exists(root + "/cache/parent.lock")) << out.out;
  EXPECT_FALSE(fs::exists(root + "/cache/dead.lock")) << out.out;
  EXPECT_NE(out.out.find("owner alive: kept"), std::string::npos) << out.out;
}

// Issue 19 item 1: "build 42 owner <pid>" is not pid 42; only the documented forms are pids.
TEST(Doctor, Issue19_LockPidParsedStrictly) {
  const struct {
    std::string text;
    std::optional<int64_t> pid;
  } cases[] = {
      {"123", 123},         {"123\n", 123},     {" 123 \r\n", 123}, {"pid=77\n", 77},    {"4194304", 4194304},
      {"build 42 owner 7", std::nullopt}, {"42 7", std::nullopt},  {"12a", std::nullopt},  {"0", std::nullopt},
      {"-5", std::nullopt}, {"4194305", std::nullopt},        {"99999999999999999999", std::nullopt},     {"", std::nullopt},
      {"pid=", std::nullopt}, {"pid= 5", std::nullopt},       {"owner=5", std::nullopt}, {"+5", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(dr::parse_lock_pid(c.text), c.pid) << "'" << c.text << "'";
  const std::string root = pftest::scratch_dir("doctor-issue19-garbage");
  const int64_t gone = dead_pid();
  write(root + "/cache/garbage.lock", "build 42 owner " + std::to_string(gone) + "\n");
  write(root + "/cache/long.lock", std::to_string(gone) + std::string(300, ' '));
  const auto r = [&] {
    dr::DoctorOptions o;
    o.root = root;
    o.cache_dirs = {"/cache"};
    return dr::run_doctor(o, *dr::load_compat());
  }();
  ASSERT_EQ(r.locks.size(), 2u);
  for (const auto& l : r.locks) EXPECT_EQ(l.owner, dr::LockOwner::not_recorded) << l.path;
  EXPECT_TRUE(has_evidence(*find(r, "locks"), "unknown owner: kept")) << dump(*find(r, "locks"));
  EXPECT_FALSE(dr::remove_stale_lock(root, {"/cache/garbage.lock", gone, dr::LockOwner::dead}));
  const auto out = run("doctor --root " + root + " --cache-dir /cache --fix");
  EXPECT_TRUE(fs::exists(root + "/cache/garbage.lock")) << out.out;
  EXPECT_TRUE(fs::exists(root + "/cache/long.lock")) << out.out;
}

// Issue 19 item 4: `doctor --script FIFO` is refused at once (exit 2, the file named), never read.
TEST(DoctorCli, Issue19_FifoScriptExitTwo) {
  FakeRoot f("doctor-issue19-fifo");
  const std::string fifo = f.root + "/deploy.sh";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const auto r = pftest::run_cli("doctor --root " + f.root + " --script " + fifo, {"timeout 10"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(fifo), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FIFO"), std::string::npos) << r.out;
  // The library never blocks on it either: the check fails with the reason.
  const auto report = f.doctor(fifo);
  const auto* sc = find(report, "script.set_u");
  ASSERT_NE(sc, nullptr);
  EXPECT_EQ(sc->status, dr::CheckStatus::fail);
  EXPECT_TRUE(has_evidence(*sc, "found a FIFO")) << dump(*sc);
}

// Issue 19: a --root that is not a directory was checked as an empty tree (every check skipped, exit 0), so a typo in
// the path read as "nothing wrong". A missing path, a regular file, a FIFO and a dangling link are usage errors.
TEST(DoctorCli, Issue19_RootThatIsNotADirectoryExitTwo) {
  FakeRoot f("doctor-issue19-root");
  const std::string file = f.root + "/file", fifo = f.root + "/fifo", dangling = f.root + "/dangling";
  std::ofstream(file) << "x\n";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_EQ(::symlink((f.root + "/nowhere").c_str(), dangling.c_str()), 0);
  for (const std::string& root : {f.root + "/no/such/root", file, fifo, dangling}) {
    const auto r = pftest::run_cli("doctor --root " + root, {"timeout 10"});
    EXPECT_EQ(r.code, 2) << root << "\n" << r.out;
    EXPECT_NE(r.out.find("--root " + root + ": not a directory"), std::string::npos) << r.out;
  }
  EXPECT_NE(pftest::run_cli("doctor --root " + f.root).code, 2);  // the fake root itself is checked as before
}
