// base/file: what every reader in src/ shares. A FIFO, a directory or a device is refused at open
// without blocking (issue 19 item 4), a directory that cannot be listed is an error (item 12), a
// symbolic link loop is named as one (item 12). The CLI cases run the real binary under `timeout`,
// so a regression shows as exit 124 instead of a hung suite.
#include "base/file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include "../test_support.hpp"

namespace fs = std::filesystem;
using preflight::ErrorKind;

namespace {

void write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

void make_fifo(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0) << path;
}

// The real binary, killed after 10 s (exit 124) if it blocks.
pftest::CliRun run_bounded(const std::string& args, const std::string& env = "") {
  return pftest::run_cli(args, {env + " timeout 10"});
}

std::string real_config() {
  auto text = preflight::read_text_file(pftest::shared_path("models/Qwen__Qwen2.5-7B/config.json"));
  EXPECT_TRUE(text) << text.error().describe();
  return text ? *text : std::string();
}

}  // namespace

TEST(File, Issue19_FifoRefusedWithoutBlocking) {
  const std::string dir = pftest::scratch_dir("file-fifo");
  make_fifo(dir + "/pipe");
  const auto start = std::chrono::steady_clock::now();
  auto reader = preflight::FileReader::open(dir + "/pipe");
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(reader.error().describe().find(dir + "/pipe"), std::string::npos) << reader.error().describe();
  EXPECT_NE(reader.error().describe().find("found a FIFO"), std::string::npos) << reader.error().describe();
  auto text = preflight::read_text_file(dir + "/pipe");
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().describe().find("found a FIFO"), std::string::npos) << text.error().describe();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// Issue 19: the one atomic writer (plan --kubernetes, report --html, mindie --config-out, bw/calibrate --save) never
// opens its target: a FIFO or a directory there is refused by what it is, a symbolic link has its target replaced and
// stays a link, a new file gets 0666 less the umask (it was 0644 whatever the umask), an existing file keeps its mode,
// and an unwritable place is an environment error (exit 3) naming the path.
TEST(File, Issue19_AtomicWriteRefusesWhatIsNotAFileAndFollowsLinks) {
  const std::string dir = pftest::scratch_dir("file-write");
  make_fifo(dir + "/pipe");
  const auto start = std::chrono::steady_clock::now();
  auto fifo = preflight::write_text_file_atomically(dir + "/pipe", "x");
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(fifo.error().describe().find(dir + "/pipe: expected a regular file to write, found a FIFO"), std::string::npos) << fifo.error().describe();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  auto directory = preflight::write_text_file_atomically(dir, "x");
  ASSERT_FALSE(directory);
  EXPECT_NE(directory.error().describe().find("found a directory"), std::string::npos) << directory.error().describe();
  EXPECT_FALSE(preflight::write_text_file_atomically("", "x"));

  write(dir + "/real.txt", "old");
  ::chmod((dir + "/real.txt").c_str(), 0600);
  fs::create_symlink("real.txt", dir + "/link.txt");
  ASSERT_TRUE(preflight::write_text_file_atomically(dir + "/link.txt", "new"));
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir + "/link.txt")));
  EXPECT_EQ(pftest::read_all(dir + "/real.txt"), "new");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/real.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  const mode_t old_mask = ::umask(077);
  const auto fresh = preflight::write_text_file_atomically(dir + "/fresh.txt", "x");
  ::umask(old_mask);
  ASSERT_TRUE(fresh);
  ASSERT_EQ(::stat((dir + "/fresh.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);

  auto unwritable = preflight::write_text_file_atomically("/proc/preflight-test.txt", "x");
  ASSERT_FALSE(unwritable);
  EXPECT_EQ(unwritable.error().kind, ErrorKind::environment);
  EXPECT_NE(unwritable.error().describe().find("/proc/preflight-test.txt: cannot create a temporary file beside it: "), std::string::npos)
      << unwritable.error().describe();
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"fresh.txt", "link.txt", "pipe", "real.txt"}));  // no temporary file left
  fs::remove_all(dir);
}

TEST(File, OnlyRegularFilesOpen) {
  const std::string dir = pftest::scratch_dir("file-kinds");
  write(dir + "/plain", "abc");
  const struct {
    std::string path;
    bool opens;
    ErrorKind kind;
    std::string fragment;
  } cases[] = {
      {dir + "/plain", true, ErrorKind::invalid_argument, ""},
      {dir, false, ErrorKind::invalid_argument, "found a directory"},
      {"/dev/null", false, ErrorKind::invalid_argument, "found a character device"},
      {dir + "/absent", false, ErrorKind::not_found, "No such file"},
  };
  for (const auto& c : cases) {
    auto r = preflight::FileReader::open(c.path);
    EXPECT_EQ(r.has_value(), c.opens) << c.path;
    if (r) {
      auto bytes = r->read_at(0, r->size_bytes());
      ASSERT_TRUE(bytes);
      EXPECT_EQ(std::string(bytes->begin(), bytes->end()), "abc");
      continue;
    }
    EXPECT_EQ(r.error().kind, c.kind) << c.path;
    EXPECT_NE(r.error().describe().find(c.fragment), std::string::npos) << r.error().describe();
  }
}

TEST(File, Issue19_DirectoryListingErrorsAndSymlinkLoops) {
  const std::string dir = pftest::scratch_dir("file-listing");
  write(dir + "/b", "");
  write(dir + "/a", "");
  auto names = preflight::read_directory_names(dir);
  ASSERT_TRUE(names);
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
  auto missing = preflight::read_directory_names(dir + "/absent");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().describe().find("cannot list directory"), std::string::npos) << missing.error().describe();
  EXPECT_NE(missing.error().describe().find(dir + "/absent"), std::string::npos) << missing.error().describe();
  fs::create_symlink("loop-b", dir + "/loop-a");
  fs::create_symlink("loop-a", dir + "/loop-b");
  EXPECT_TRUE(preflight::is_symlink_loop(dir + "/loop-a"));
  EXPECT_FALSE(preflight::is_symlink_loop(dir + "/a"));
  EXPECT_FALSE(preflight::is_symlink_loop(dir + "/absent"));
  auto looped = preflight::FileReader::open(dir + "/loop-a");
  ASSERT_FALSE(looped);
  EXPECT_NE(looped.error().describe().find("symbolic link loop (ELOOP)"), std::string::npos) << looped.error().describe();
}

// Issue 19 item 4: each reader the CLI reaches with a FIFO in place of its file: exit 2, the file named.
TEST(FileCli, Issue19_FifoModelFilesExitTwo) {
  const std::string dir = pftest::scratch_dir("file-cli-fifo");
  make_fifo(dir + "/cfg-fifo/config.json");
  write(dir + "/shard-fifo/config.json", real_config());
  make_fifo(dir + "/shard-fifo/model.safetensors");
  make_fifo(dir + "/gguf/model-Q4_K_M.gguf");
  const struct {
    std::string args;
    std::string named;
  } cases[] = {
      {"inspect " + dir + "/cfg-fifo", dir + "/cfg-fifo/config.json"},
      {"inspect " + dir + "/cfg-fifo/config.json", dir + "/cfg-fifo/config.json"},
      {"inspect " + dir + "/shard-fifo", "model.safetensors"},
      {"fit " + dir + "/shard-fifo --device H100", "model.safetensors"},
      {"inspect " + dir + "/gguf/model-Q4_K_M.gguf", dir + "/gguf/model-Q4_K_M.gguf"},
  };
  for (const auto& c : cases) {
    const auto r = run_bounded(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.named), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find("FIFO"), std::string::npos) << c.args << "\n" << r.out;
  }
}

// Issue 19 item 4: HF_TOKEN_PATH naming a FIFO is refused before any request (the endpoint is a
// closed loopback port, so nothing could answer anyway).
TEST(FileCli, Issue19_FifoTokenFileExitTwo) {
  const std::string dir = pftest::scratch_dir("file-cli-token");
  make_fifo(dir + "/token");
  const std::string env = "env -u HF_TOKEN -u HUGGING_FACE_HUB_TOKEN XDG_CACHE_HOME=" + dir + "/xdg HF_HOME=" + dir + "/hf HF_HUB_CACHE=" + dir +
                          "/hub HF_ENDPOINT=http://127.0.0.1:9 HF_TOKEN_PATH=" + dir + "/token";
  const auto r = run_bounded("inspect hf:acme/tiny", env);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/token"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FIFO"), std::string::npos) << r.out;
}

// Issue 19 item 12: a model directory that cannot be listed is an error, not a model without shards.
// Run as an unprivileged user (root reads any directory), via setpriv when the tests run as root.
TEST(FileCli, Issue19_UnlistableModelDirectoryIsAnError) {
  std::string prefix;
  if (::geteuid() == 0) {
    if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "running as root and no setpriv to drop privileges";
    prefix = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups";
  }
  const std::string dir = pftest::scratch_dir("file-cli-unlistable");
  ::chmod(dir.c_str(), 0755);
  const std::string model = dir + "/model";
  write(model + "/config.json", real_config());
  write(model + "/model.safetensors", "");
  ::chmod((model + "/config.json").c_str(), 0644);
  ::chmod(model.c_str(), 0311);  // enter and open files by name, but not list
  const auto r = pftest::run_cli("inspect " + model, {"timeout 10 " + prefix});
  ::chmod(model.c_str(), 0755);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(model + ": cannot list directory"), std::string::npos) << r.out;
}

// Issue 19 item 12: a symbolic link loop as MODEL is named as one, not answered with "did you mean".
TEST(FileCli, Issue19_SymlinkLoopModelNamed) {
  const std::string dir = pftest::scratch_dir("file-cli-loop");
  fs::create_symlink(dir + "/mistral-7b", dir + "/mistral-7b");
  const auto r = run_bounded("fit " + dir + "/mistral-7b --device H100");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/mistral-7b: symbolic link loop (ELOOP)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("did you mean"), std::string::npos) << r.out;
}
