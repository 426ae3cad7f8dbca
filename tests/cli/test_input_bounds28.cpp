// Issue 19, session 28's hostile pass: what preflight writes (a FIFO, a directory, a symbolic link, an unwritable place
// named as the output), switches given a value, user text that reached a Kubernetes manifest's comments, and the
// hand-cut quotes of user text that split a UTF-8 character.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../test_support.hpp"
#include "base/utf8.hpp"

namespace {

// Every command here runs under timeout(1): a write that waits on a FIFO fails the test (exit 124) instead of hanging it.
pftest::CliRun run_bounded(const std::string& args) { return pftest::run_cli(args, {.env = "timeout 60"}); }

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

const std::string k_plan = "plan Qwen/Qwen3-8B --devices H100 --kubernetes ";

}  // namespace

// Issue 19: plan --kubernetes wrote through std::ofstream: it waited for ever on a FIFO, wrote through a symbolic link
// to wherever it pointed only by accident of open(2), and said "cannot write the manifests" (exit 2) with no reason for
// a place it could not write. Now: a FIFO, a directory, a dangling link and a link loop are refused by what they are
// (exit 2, nothing opened), a link to a file has that file replaced whole (the link stays), an unwritable place is exit
// 3 with the path and the system's reason, and no temporary file is left behind.
TEST(InputBounds28, Issue19_KubernetesOutputIsNeverAFifoOrAHalfWrittenFile) {
  const std::string dir = pftest::scratch_dir("ib28-kube");
  ASSERT_EQ(::mkfifo((dir + "/fifo.yaml").c_str(), 0644), 0);
  std::filesystem::create_directory(dir + "/dir.yaml");
  std::filesystem::create_symlink(dir + "/missing/x.yaml", dir + "/dangling.yaml");
  std::filesystem::create_symlink("loop.yaml", dir + "/loop.yaml");
  std::ofstream(dir + "/target.yaml") << "old manifests\n";
  std::filesystem::create_symlink("target.yaml", dir + "/link.yaml");
  const std::pair<std::string, std::string> refused[] = {
      {"fifo.yaml", "fifo.yaml: expected a regular file to write, found a FIFO; nothing written"},
      {"dir.yaml", "dir.yaml: expected a regular file to write, found a directory; nothing written"},
      {"dangling.yaml", "dangling.yaml: a symbolic link to '" + dir + "/missing/x.yaml', which does not exist"},
      {"loop.yaml", "loop.yaml: symbolic link loop (ELOOP), nothing written"}};
  for (const auto& [name, message] : refused) {
    const auto r = run_bounded(k_plan + dir + "/" + name);
    EXPECT_EQ(r.code, 2) << name << "\n" << r.out.substr(0, 400);
    EXPECT_NE(r.out.find(message), std::string::npos) << name << "\n" << r.out.substr(0, 400);
  }
  struct stat st {};
  ASSERT_EQ(::lstat((dir + "/fifo.yaml").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));  // left as it was

  const auto linked = run_bounded(k_plan + dir + "/link.yaml");
  ASSERT_EQ(linked.code, 0) << linked.out.substr(0, 400);
  ASSERT_EQ(::lstat((dir + "/link.yaml").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));  // the link stays a link
  const std::string written = pftest::read_all(dir + "/target.yaml");
  EXPECT_EQ(written.find("old manifests"), std::string::npos);
  EXPECT_NE(written.find("kind: Deployment"), std::string::npos) << written.substr(0, 300);

  // /proc takes no new files, not even as root: the place, not the input (exit 3), named with the reason.
  const auto unwritable = run_bounded(k_plan + "/proc/preflight-no-such-dir/m.yaml");
  EXPECT_EQ(unwritable.code, 3) << unwritable.out.substr(0, 400);
  EXPECT_NE(unwritable.out.find("/proc/preflight-no-such-dir/m.yaml: cannot create directory /proc/preflight-no-such-dir: "), std::string::npos)
      << unwritable.out.substr(0, 400);
  const auto unwritable_file = run_bounded(k_plan + "/proc/m.yaml");
  EXPECT_EQ(unwritable_file.code, 3) << unwritable_file.out.substr(0, 400);
  EXPECT_NE(unwritable_file.out.find("/proc/m.yaml: cannot create a temporary file beside it: "), std::string::npos) << unwritable_file.out.substr(0, 400);

  // Nothing but what the test made: no temporary file of a refused or failed write is left.
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"dangling.yaml", "dir.yaml", "fifo.yaml", "link.yaml", "loop.yaml", "target.yaml"}));
  std::filesystem::remove_all(dir);
}

// Issue 19: --kubernetes with no candidate that fits wrote nothing and said nothing, so an older file there passed for
// this plan's manifests.
TEST(InputBounds28, Issue19_KubernetesWithNoCandidateSaysNothingWasWritten) {
  const std::string dir = pftest::scratch_dir("ib28-kube-none");
  std::ofstream(dir + "/old.yaml") << "old manifests\n";
  const auto r = run_bounded("plan deepseek-ai/DeepSeek-V3 --devices T4 --max-devices 1 --kubernetes " + dir + "/old.yaml");
  EXPECT_EQ(r.code, 1) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("--kubernetes: no candidate fits, nothing written to " + dir + "/old.yaml (a file there is left as it was)"), std::string::npos)
      << r.out.substr(0, 600);
  EXPECT_EQ(pftest::read_all(dir + "/old.yaml"), "old manifests\n");
  std::filesystem::remove_all(dir);
}

// Issue 19: the manifests' header comments quote --image; a newline in it began a YAML line before the first "---",
// which is a document of its own: `--image $'x:1\nkind: Secret'` wrote a Secret. The image is now checked (no
// whitespace or control character in an image reference), and every line of a note stays a comment.
TEST(InputBounds28, Issue19_ImageTextCannotAddADocumentToTheManifests) {
  const std::string dir = pftest::scratch_dir("ib28-kube-image");
  const auto r = run_bounded(k_plan + dir + "/m.yaml --image \"$(printf 'vllm/vllm-openai:v0.11.0\\nkind: Secret')\"");
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 400);
  // The refused text is quoted as JSON: the newline shows as \n, not as a line break in the message (redteam28's note).
  EXPECT_NE(r.out.find("--image: expected an image reference (registry/name:tag), found \"vllm/vllm-openai:v0.11.0\\nkind: Secret\""), std::string::npos)
      << r.out.substr(0, 400);
  EXPECT_EQ(r.out.find("v0.11.0\nkind"), std::string::npos) << r.out.substr(0, 400);
  EXPECT_FALSE(std::filesystem::exists(dir + "/m.yaml"));
  const auto empty = run_bounded(k_plan + dir + "/m.yaml --image ''");
  EXPECT_EQ(empty.code, 2) << empty.out.substr(0, 400);
  const auto ok = run_bounded(k_plan + dir + "/m.yaml --image registry.example/vllm:v0.11.0");
  ASSERT_EQ(ok.code, 0) << ok.out.substr(0, 400);
  EXPECT_NE(pftest::read_all(dir + "/m.yaml").find("image: \"registry.example/vllm:v0.11.0\""), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Issue 19: a switch given a value ran as if the value were not there: "--enable-chunked-prefill=false" turned chunked
// prefill on, "--fix=no" would have run doctor's fix, "--json=false" printed JSON. vLLM's argparse refuses the same
// text ("ignored explicit argument 'false'"); so does preflight now, naming the opposite switch where there is one.
TEST(InputBounds28, Issue19_SwitchGivenAValueIsRefused) {
  const std::pair<std::string, std::string> cases[] = {
      {"fit Qwen/Qwen3-8B --device H100 --enable-chunked-prefill=false",
       "--enable-chunked-prefill is a switch and takes no value, found '--enable-chunked-prefill=false'; --no-enable-chunked-prefill is its opposite"},
      {"fit Qwen/Qwen3-8B --device H100 --no-enable-chunked-prefill=1",
       "--no-enable-chunked-prefill is a switch and takes no value, found '--no-enable-chunked-prefill=1'; --enable-chunked-prefill is its opposite"},
      {"fit Qwen/Qwen3-8B --device H100 --json=false", "--json is a switch and takes no value, found '--json=false'"},
      {"doctor --fix=no", "--fix is a switch and takes no value, found '--fix=no'"},
      {"fit Qwen/Qwen3-8B --device H100 --enforce-eager=", "--enforce-eager is a switch and takes no value, found '--enforce-eager='"}};
  for (const auto& [cmd, message] : cases) {
    const auto r = run_bounded(cmd);
    EXPECT_EQ(r.code, 2) << cmd << "\n" << r.out.substr(0, 400);
    EXPECT_NE(r.out.find(message), std::string::npos) << cmd << "\n" << r.out.substr(0, 400);
  }
  // The plain switch still works. Both forms together, which vLLM's argparse settles by taking the last, are refused
  // since hard32 as a flag given twice is (InputBounds32.Issue19_FlagGivenTwiceIsRefused).
  const auto off = run_bounded("fit Qwen/Qwen3-8B --device H100 --no-enable-chunked-prefill");
  EXPECT_EQ(off.code, 0) << off.out.substr(0, 400);
  EXPECT_NE(off.out.find("chunked prefill off (as stated)"), std::string::npos) << off.out.substr(0, 400);
  const auto both = run_bounded("fit Qwen/Qwen3-8B --device H100 --enable-chunked-prefill --no-enable-chunked-prefill");
  EXPECT_EQ(both.code, 2) << both.out.substr(0, 400);
  EXPECT_NE(both.out.find("--enable-chunked-prefill and --no-enable-chunked-prefill contradict each other; give one"), std::string::npos) << both.out.substr(0, 400);
}

// Issue 19: two hand-rolled twins of base/text's clip_text quoted user text cut at byte 40, which can fall inside a
// UTF-8 character (the message then held a lone lead byte) and named the length without "in all": --device-memory's
// size text and a device text too long to be a name. Each now goes through clip_text.
TEST(InputBounds28, Issue19_QuotedUserTextIsCutOnACharacter) {
  std::string size_text = "1";
  for (int i = 0; i < 40; ++i) size_text += "\xc3\xa9";  // "é", two bytes; byte 40 is the lead byte of the 20th
  size_text += "GiB";
  const auto mem = run_bounded("fit Qwen/Qwen3-8B --device-memory '" + size_text + "'");
  EXPECT_EQ(mem.code, 2) << mem.out.substr(0, 300);
  EXPECT_TRUE(preflight::is_valid_utf8(mem.out)) << mem.out;
  EXPECT_NE(mem.out.find("... (84 bytes in all)'"), std::string::npos) << mem.out;

  std::string device_text = "H";
  for (int i = 0; i < 600; ++i) device_text += "\xc3\xa9";
  const auto dev = run_bounded("fit Qwen/Qwen3-8B --device '" + device_text + "'");
  EXPECT_EQ(dev.code, 2) << dev.out.substr(0, 300);
  EXPECT_TRUE(preflight::is_valid_utf8(dev.out)) << dev.out.substr(0, 300);
  EXPECT_NE(dev.out.find("a device text ('H"), std::string::npos) << dev.out.substr(0, 300);
  EXPECT_NE(dev.out.find("... (1201 bytes in all)'): a name or description is at most 1024 bytes"), std::string::npos) << dev.out.substr(0, 300);
}

// Issue 19: bench --db, calibrate --db and report --from-db on a FIFO said "disk I/O error" (SQLite's words) and on
// a directory "unable to open database file"; each is now named as what it is, exit 2. A database that cannot be
// created is the place, not the input: exit 3.
TEST(InputBounds28, Issue19_DatabasePathThatIsNotAFileIsNamed) {
  const std::string dir = pftest::scratch_dir("ib28-db");
  ASSERT_EQ(::mkfifo((dir + "/db.fifo").c_str(), 0644), 0);
  std::filesystem::create_directory(dir + "/db.dir");
  const std::pair<std::string, std::string> cases[] = {
      {"calibrate --db " + dir + "/db.fifo", dir + "/db.fifo: expected a SQLite database file, found a FIFO"},
      {"report --html " + dir + "/r.html --from-db " + dir + "/db.dir", dir + "/db.dir: expected a SQLite database file, found a directory"},
      {"bench --url http://127.0.0.1:1/ --model m --num-prompts 1 --db " + dir + "/db.fifo", dir + "/db.fifo: expected a SQLite database file, found a FIFO"}};
  for (const auto& [cmd, message] : cases) {
    const auto r = run_bounded(cmd);
    EXPECT_EQ(r.code, 2) << cmd << "\n" << r.out.substr(0, 400);
    EXPECT_NE(r.out.find(message), std::string::npos) << cmd << "\n" << r.out.substr(0, 400);
  }
  const auto proc = run_bounded("bench --url http://127.0.0.1:1/ --model m --num-prompts 1 --db /proc/preflight.db");
  EXPECT_EQ(proc.code, 3) << proc.out.substr(0, 400);
  EXPECT_NE(proc.out.find("/proc/preflight.db"), std::string::npos) << proc.out.substr(0, 400);
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.html"));
  std::filesystem::remove_all(dir);
}

// Issue 19: --models on a FIFO said "expected a directory, found a file".
TEST(InputBounds28, Issue19_ModelsDirectoryNamesWhatItFound) {
  const std::string dir = pftest::scratch_dir("ib28-models");
  ASSERT_EQ(::mkfifo((dir + "/m.fifo").c_str(), 0644), 0);
  const auto r = run_bounded("fit Qwen/Qwen3-8B --device H100 --models " + dir + "/m.fifo");
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("m.fifo': expected a directory, found a FIFO"), std::string::npos) << r.out.substr(0, 400);
  std::filesystem::remove_all(dir);
}

// Issue 19: a log line quoted as a diagnosis's evidence was cut at byte 400 by hand, inside a two-byte character of this
// OOM line (the text output then held a lone lead byte), with "..." and no length. It goes through clip_text.
TEST(InputBounds28, Issue19_LogEvidenceIsCutOnACharacter) {
  const std::string dir = pftest::scratch_dir("ib28-log-evidence");
  std::string line =
      "(EngineCore_DP0 pid=2) ERROR 10-12 12:00:05 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
      "total capacity of 79.19 GiB of which 1.00 GiB is free. ";
  for (int i = 0; i < 300; ++i) line += "\xc3\xa9";
  std::ofstream(dir + "/oom.log") << "INFO 10-12 12:00:00 [__init__.py:216] Automatically detected platform cuda.\n" << line << "\n";
  const auto r = run_bounded("logs " + dir + "/oom.log");
  EXPECT_EQ(r.code, 1) << r.out.substr(0, 600);  // a failed start
  EXPECT_TRUE(preflight::is_valid_utf8(r.out)) << r.out.substr(0, 800);
  EXPECT_NE(r.out.find("... (" + std::to_string(line.size()) + " bytes in all)"), std::string::npos) << r.out.substr(0, 800);
  std::filesystem::remove_all(dir);
}

// Issue 19: plan --engine mindie --config-out writes config.json and start.sh as one result. A directory named start.sh
// there left a fresh config.json without its script; both are now checked before either is written. A --config-out
// that is a file is bad input (exit 2, it said "cannot create the directory: Not a directory"); a place that cannot be
// created is the environment (exit 3).
TEST(InputBounds28, Issue19_MindieConfigOutIsWholeOrNothing) {
  const std::string dir = pftest::scratch_dir("ib28-mindie");
  const std::string plan = "plan Qwen/Qwen3-8B --devices 910B3 --engine mindie --context 8192 --config-out ";
  std::filesystem::create_directories(dir + "/out/start.sh");
  const auto half = run_bounded(plan + dir + "/out");
  EXPECT_EQ(half.code, 2) << half.out.substr(0, 400);
  EXPECT_NE(half.out.find(dir + "/out/start.sh: expected a regular file to write, found a directory; nothing written"), std::string::npos) << half.out.substr(0, 400);
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/config.json"));
  std::ofstream(dir + "/file") << "x";
  const auto file = run_bounded(plan + dir + "/file");
  EXPECT_EQ(file.code, 2) << file.out.substr(0, 400);
  EXPECT_NE(file.out.find("--config-out " + dir + "/file: expected a directory, found a regular file"), std::string::npos) << file.out.substr(0, 400);
  const auto proc = run_bounded(plan + "/proc/preflight-mindie");
  EXPECT_EQ(proc.code, 3) << proc.out.substr(0, 400);
  EXPECT_NE(proc.out.find("--config-out /proc/preflight-mindie: cannot create the directory: "), std::string::npos) << proc.out.substr(0, 400);
  std::filesystem::remove_all(dir);
}

// Issue 19: the prescans that send fit to the llama.cpp or MindIE model took any --engine: "--engine mindie --engine
// vllm-ascend" printed MindIE's KV pool and "--engine llama.cpp --engine vllm" refused a catalogue model as not a GGUF
// file. Since hard32 a flag given twice is refused by every command's parser (InputBounds32.Issue19_FlagGivenTwiceIsRefused),
// whichever model the prescan chose: neither prints an estimate.
TEST(InputBounds28, Issue19_RepeatedEngineIsRefusedWhicheverModelRuns) {
  for (const std::string args : {"fit Qwen/Qwen3-8B --device 910B3 --engine mindie --engine vllm-ascend", "fit Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend --engine=mindie",
                                 "fit Qwen/Qwen3-8B --device H100 --engine llama.cpp --engine vllm"}) {
    const auto r = run_bounded(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out.substr(0, 400);
    EXPECT_NE(r.out.find("--engine is given twice"), std::string::npos) << args << "\n" << r.out.substr(0, 400);
    EXPECT_EQ(r.out.find("MindIE Service"), std::string::npos) << r.out.substr(0, 400);
    EXPECT_EQ(r.out.find("GGUF"), std::string::npos) << r.out.substr(0, 400);
  }
}
