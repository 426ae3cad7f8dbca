// Issue 19, session 29's hostile pass: where a hub token came from, what a failed hub fetch leaves in the cache,
// the modes of what mindie --config-out writes, and output that cannot be written.
#include <gtest/gtest.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "../test_support.hpp"

namespace {

pftest::CliRun run_bounded(const std::string& args, const std::string& env = {}) { return pftest::run_cli(args, {.env = env + " timeout 60"}); }

// A shell line run as is: its exit status, and what it wrote to `err_file` (the tests redirect stdout themselves).
struct ShellRun {
  int code = -1;
  std::string err;
};
ShellRun run_shell(const std::string& line, const std::string& err_file) {
  const int status = std::system(line.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, pftest::read_all(err_file)};
}

// The environment of a hub run that reaches no server: no token but the one a test sets, caches under `dir`.
std::string hub_env(const std::string& dir) {
  return "env -u HF_TOKEN -u HUGGING_FACE_HUB_TOKEN -u HF_TOKEN_PATH HF_HOME=" + dir + "/hf-home XDG_CACHE_HOME=" + dir + "/xdg HF_ENDPOINT=http://127.0.0.1:9";
}

}  // namespace

// Issue 19: a control character in the token read from HF_TOKEN_PATH was refused as "HF_TOKEN: the token holds ...",
// naming a variable that was not set. The error names the file the token came from (never the token), before any
// request and before anything is made in the cache.
TEST(InputBounds29, Issue19_TokenErrorNamesTheFileItCameFrom) {
  const std::string dir = pftest::scratch_dir("ib29-token-file");
  std::ofstream(dir + "/token") << "hf_ab\rSECRETPART\n";
  const auto r = run_bounded("inspect hf:acme/tiny", hub_env(dir) + " HF_TOKEN_PATH=" + dir + "/token");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/token: the token holds control character 0x0d at byte 5"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("HF_TOKEN:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("SECRETPART"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/xdg")) << "the cache was touched";
  // The token file under HF_HOME (no HF_TOKEN_PATH) is named the same way; a variable is named when it was the source.
  std::filesystem::create_directories(dir + "/hf-home");
  std::ofstream(dir + "/hf-home/token") << "hf_\x01SECRETPART";
  const auto home = run_bounded("inspect hf:acme/tiny", hub_env(dir));
  EXPECT_EQ(home.code, 2) << home.out;
  EXPECT_NE(home.out.find(dir + "/hf-home/token: the token holds control character 0x01 at byte 3"), std::string::npos) << home.out;
  const auto var = run_bounded("inspect hf:acme/tiny", hub_env(dir) + " HUGGING_FACE_HUB_TOKEN=\"$(printf 'hf_\\nSECRETPART')\"");
  EXPECT_EQ(var.code, 2) << var.out;
  EXPECT_NE(var.out.find("HUGGING_FACE_HUB_TOKEN: the token holds control character 0x0a at byte 3"), std::string::npos) << var.out;
  EXPECT_EQ(var.out.find("SECRETPART"), std::string::npos) << var.out;
  std::filesystem::remove_all(dir);
}

// Issue 19: the metadata cache's place is the machine's, not the user's input: XDG_CACHE_HOME naming a file, or a
// place nothing can be created in, is exit 3 (environment) naming the directory, was exit 2 (io). Nothing is left.
// HF_HOME naming a file was exit 2 "cannot read the hub token file (HF_TOKEN_PATH)", a variable that was not set:
// exit 3, naming $HF_HOME/token.
TEST(InputBounds29, Issue19_HfHomeOrCacheThatIsAFileIsAnEnvironmentError) {
  const std::string dir = pftest::scratch_dir("ib29-cache-file");
  std::ofstream(dir + "/xdg") << "a file, not a directory\n";
  const auto file = run_bounded("inspect hf:acme/tiny", hub_env(dir));
  EXPECT_EQ(file.code, 3) << file.out;
  EXPECT_NE(file.out.find(dir + "/xdg/preflight/hub/127.0.0.1_9/acme/tiny: cannot create the metadata cache directory: Not a directory"), std::string::npos)
      << file.out;
  EXPECT_EQ(pftest::read_all(dir + "/xdg"), "a file, not a directory\n");
  const auto proc = run_bounded("inspect hf:acme/tiny", hub_env(dir) + " XDG_CACHE_HOME=/proc/preflight-ib29");
  EXPECT_EQ(proc.code, 3) << proc.out;
  EXPECT_NE(proc.out.find("/proc/preflight-ib29/preflight/hub/127.0.0.1_9/acme/tiny: cannot create the metadata cache directory: "), std::string::npos) << proc.out;
  const auto home = run_bounded("inspect hf:acme/tiny", hub_env(dir) + " HF_HOME=" + dir + "/xdg");
  EXPECT_EQ(home.code, 3) << home.out;
  EXPECT_NE(home.out.find(dir + "/xdg/token: cannot read the hub token file ($HF_HOME/token): cannot open: Not a directory"), std::string::npos) << home.out;
  std::filesystem::remove_all(dir);
}

// Issue 19: mindie --config-out wrote config.json and start.sh with the default mode and chmod'ed them after the
// rename, so for a moment each was readable by all under its final name. Each now has its mode (0640, 0750) before
// it gets its name: inotify sees the files moved into place and no attribute change on either name afterwards, on a
// first write and on a rewrite.
TEST(InputBounds29, Issue19_MindieConfigOutFilesHaveTheirModeFromTheStart) {
  const std::string dir = pftest::scratch_dir("ib29-mindie-mode");
  const std::string out = dir + "/out";
  std::filesystem::create_directories(out);
  const int fd = ::inotify_init1(IN_NONBLOCK);
  ASSERT_GE(fd, 0);
  ASSERT_GE(::inotify_add_watch(fd, out.c_str(), IN_ATTRIB | IN_MOVED_TO | IN_CLOSE_WRITE), 0);
  for (int round = 0; round < 2; ++round) {
    const auto r = run_bounded("plan Qwen/Qwen3-8B --devices 910B3 --engine mindie --context 8192 --config-out " + out);
    ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
    std::vector<std::pair<uint32_t, std::string>> events;
    alignas(inotify_event) char buf[16384];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
      for (char* p = buf; p < buf + n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(p);
        events.emplace_back(e->mask, e->len ? std::string(e->name) : std::string());
        p += sizeof(inotify_event) + e->len;
      }
    }
    int moved = 0;
    for (const auto& [mask, name] : events) {
      const bool final_name = name == "config.json" || name == "start.sh";
      if (final_name && (mask & IN_MOVED_TO)) ++moved;
      EXPECT_FALSE(final_name && (mask & (IN_ATTRIB | IN_CLOSE_WRITE))) << "round " << round << ": " << name << " changed after it had its name (mask " << mask << ")";
    }
    EXPECT_EQ(moved, 2) << "round " << round;
    struct stat st {};
    ASSERT_EQ(::stat((out + "/config.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    ASSERT_EQ(::stat((out + "/start.sh").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0750u);
  }
  ::close(fd);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(out)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"config.json", "start.sh"}));  // no temporary file left
  std::filesystem::remove_all(dir);
}

// Issue 19: a result that could not be written ended with exit 0: stdout on a full disk (/dev/full), stdout closed,
// or a pipe whose reader had gone while SIGPIPE is ignored (as under a supervisor that ignores it). Each is now exit
// 3 with one line that says so; a plan of about 600 KB to a reader that takes 10 bytes is the pipe case.
TEST(InputBounds29, Issue19_OutputThatCannotBeWrittenIsNotSuccess) {
  const std::string dir = pftest::scratch_dir("ib29-output");
  const std::string bin = PREFLIGHT_BINARY;
  const std::string err = dir + "/err";
  const auto full = run_shell(bin + " fit Qwen/Qwen3-8B --device H100 >/dev/full 2>" + err, err);
  EXPECT_EQ(full.code, 3) << full.err;
  EXPECT_EQ(full.err, "preflight: cannot write the output to standard output: No space left on device; what was written is incomplete\n");
  const auto closed = run_shell(bin + " inspect Qwen/Qwen3-8B >&- 2>" + err, err);
  EXPECT_EQ(closed.code, 3) << closed.err;
  EXPECT_EQ(closed.err, "preflight: cannot write the output to standard output: Bad file descriptor; what was written is incomplete\n");
  const auto piped = run_shell("trap '' PIPE; { " + bin + " plan --device H100 --all --json 2>" + err + "; echo $? > " + dir + "/rc; } | head -c 10 >/dev/null", err);
  EXPECT_EQ(pftest::read_all(dir + "/rc"), "3\n") << piped.err;
  EXPECT_EQ(piped.err, "preflight: cannot write the output to standard output: Broken pipe; what was written is incomplete\n");
  // A reader that takes everything: exit 0 and nothing on stderr.
  const auto whole = run_shell("trap '' PIPE; { " + bin + " plan --device H100 --all --json 2>" + err + "; echo $? > " + dir + "/rc; } | wc -c >/dev/null", err);
  EXPECT_EQ(pftest::read_all(dir + "/rc"), "0\n");
  EXPECT_EQ(whole.err, "");
  std::filesystem::remove_all(dir);
}

// Issue 19: validate keeps every case's result for its summary, and a 60 MB file of 20 million "{}" lines (under the
// 64 MiB file cap) grew to 21 GB before it was killed. One run takes at most 10,000 cases, counted before any is
// evaluated: 10,001 real cases (16 ms each) are refused at once (timeout 60 s) with the file, the line and the limit.
TEST(InputBounds29, Issue19_ValidateCaseCountIsBounded) {
  const std::string dir = pftest::scratch_dir("ib29-validate-many");
  {
    std::ifstream seeds(pftest::shared_path("validation/seed-cases.jsonl"));
    std::string real_case;
    std::getline(seeds, real_case);
    ASSERT_GT(real_case.size(), 100u);
    std::ofstream f(dir + "/many.jsonl");
    for (int i = 0; i < 10'001; ++i) f << real_case << "\n";
  }
  const auto r = run_bounded("validate " + dir + "/many.jsonl --json");
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find(dir + "/many.jsonl: line 10001: more than 10000 cases in one validate run"), std::string::npos) << r.out.substr(0, 400);
  // One line is one case of about 1 KB: a line over 2 MiB (a 60 MB array of numbers parsed to a 1 GB tree) is refused by
  // its size before it is parsed.
  {
    std::ofstream f(dir + "/long.jsonl");
    f << "{\"source\": [";
    for (int i = 0; i < 1'100'000; ++i) f << "1,";
    f << "1]}\n";
  }
  const auto long_line = run_bounded("validate " + dir + "/long.jsonl");
  EXPECT_EQ(long_line.code, 2) << long_line.out.substr(0, 400);
  EXPECT_NE(long_line.out.find(dir + "/long.jsonl: line 1: a case of 2200015 bytes, more than the 2097152 accepted for one case"), std::string::npos)
      << long_line.out.substr(0, 400);
  std::filesystem::remove_all(dir);
}

// Issue 19: a devices overlay is read whole and parsed to a tree about 18 times its size: a 60 MB overlay took 1.09 GB.
// An overlay over 4 MiB (twenty times the shipped catalogue) is refused with its path and the limit; one under it loads.
TEST(InputBounds29, Issue19_DevicesOverlaySizeIsBounded) {
  const std::string dir = pftest::scratch_dir("ib29-overlay");
  std::ofstream(dir + "/big.json") << R"({"schema_version": 1, "devices": []})" << std::string(5u << 20, ' ') << "\n";
  const auto big = run_bounded("fit Qwen/Qwen3-8B --device H100", "PREFLIGHT_DEVICE_OVERRIDES=" + dir + "/big.json");
  EXPECT_EQ(big.code, 2) << big.out.substr(0, 400);
  EXPECT_NE(big.out.find(dir + "/big.json: file is 5242917 bytes, more than the 4194304 accepted for a text file"), std::string::npos) << big.out.substr(0, 400);
  std::ofstream(dir + "/small.json") << R"({"schema_version": 1, "devices": []})" << std::string(1u << 20, ' ') << "\n";
  const auto small = run_bounded("fit Qwen/Qwen3-8B --device H100", "PREFLIGHT_DEVICE_OVERRIDES=" + dir + "/small.json");
  EXPECT_EQ(small.code, 0) << small.out.substr(0, 400);
  std::filesystem::remove_all(dir);
}

// Issue 19: on a terminal, TERM=dumb (a terminal that takes no escape sequences) still got colour; NO_COLOR already
// turned it off. Run under script(1) for a pseudo-terminal; without script the test has nothing to run on.
TEST(InputBounds29, Issue19_DumbTerminalGetsNoColour) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) not installed: no pseudo-terminal to run on";
  const std::string dir = pftest::scratch_dir("ib29-term");
  const std::string bin = PREFLIGHT_BINARY;
  auto on_tty = [&](const std::string& env) {
    std::system(("script -qec '" + env + " " + bin + " inspect Qwen/Qwen3-8B' /dev/null > " + dir + "/tty.txt 2>&1").c_str());
    return pftest::read_all(dir + "/tty.txt");
  };
  EXPECT_NE(on_tty("env TERM=xterm-256color").find("\x1b["), std::string::npos);  // the control: colour on a terminal
  const std::string dumb = on_tty("env TERM=dumb");
  EXPECT_NE(dumb.find("Qwen/Qwen3-8B"), std::string::npos) << dumb.substr(0, 300);
  EXPECT_EQ(dumb.find("\x1b["), std::string::npos) << dumb.substr(0, 300);
  EXPECT_EQ(on_tty("env NO_COLOR=1").find("\x1b["), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard29's note on closed descriptors): `bench --db F 2>&-` opened its database as descriptor 2, and the first
// progress line's fmt::print threw on the failed write: std::terminate, exit 134 (any file taking the number would also
// have received every line printed to standard error). Standard error on a full disk ended the same way. A descriptor
// closed at start is now held on /dev/null (the run ends as it does with standard error open, the database untouched by
// printed text), and a standard stream that cannot be written ends the command with exit 3.
TEST(InputBounds29, Issue19_ClosedOrFullStandardErrorIsNoCrash) {
  const std::string dir = pftest::scratch_dir("ib29-closed-stderr");
  const std::string bin = PREFLIGHT_BINARY;
  const std::string err = dir + "/err";
  const std::string bench = bin + " bench --url http://127.0.0.1:9 --model m --num-prompts 2 --db ";
  const auto open_stderr = run_shell(bench + dir + "/open.db >/dev/null 2>" + err, err);
  EXPECT_EQ(open_stderr.code, 1) << open_stderr.err;  // no server: every request failed
  const auto closed = run_shell(bench + dir + "/closed.db >/dev/null 2>&-", err);
  EXPECT_EQ(closed.code, open_stderr.code);
  const std::string db = pftest::read_all(dir + "/closed.db");
  EXPECT_EQ(db.rfind(std::string("SQLite format 3\0", 16), 0), 0u) << db.substr(0, 64);
  EXPECT_EQ(db.find("preflight bench"), std::string::npos);
  const auto full = run_shell(bench + dir + "/full.db >/dev/null 2>/dev/full", err);
  EXPECT_EQ(full.code, 3);
  std::filesystem::remove_all(dir);
}
