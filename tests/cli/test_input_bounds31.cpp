// Issue 19, session 31's hostile pass: model ids that join into the hub caches, a local folder that llama.cpp plans took
// for a hub repo, repeated keys in the files preflight owns, and --env.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../test_support.hpp"

namespace {

// A folder `dir`/`name` holding Qwen3-0.6B's published config.json.
std::string model_folder(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  std::filesystem::create_directories(path);
  std::filesystem::copy_file(pftest::shared_path("models/Qwen__Qwen3-0.6B/config.json"), path + "/config.json");
  return path;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

// Issue 19 (hard31): a model id with ".." joined into the ModelScope cache path: with MODELSCOPE_CACHE=<d>/ms and a
// folder <d>/victim holding a config.json, `fit y/../../victim` read <d>/ms/models/y/../../victim (= <d>/victim) and
// printed a fit, exit 0. An id with '/' that is no local path and no repo id by the hub's rules is refused before any
// cache path is built, exit 2; hub references and doctor take the same rule.
TEST(InputBounds31, Issue19_ModelIdOutsideTheHubRulesNeverJoinsACachePath) {
  const std::string dir = pftest::scratch_dir("ib31-cache-escape");
  std::filesystem::create_directories(dir + "/ms/models/y");
  std::filesystem::create_directories(dir + "/ms/y");
  std::filesystem::create_directories(dir + "/work");
  model_folder(dir, "victim");
  const std::string env = "cd " + dir + "/work && MODELSCOPE_CACHE=" + dir + "/ms HF_HUB_CACHE=" + dir + "/hf HOME=" + dir;
  const auto r = pftest::run_cli("fit 'y/../../victim' --device H100", {env});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("model 'y/../../victim' is not a local path, not in the catalogue, and not a hub repo id org/name"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("max_model_len"), std::string::npos) << r.out;
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"fit 'hf:org/a..b' --device H100 --offline", "hf:org/a..b: expected a hub repo id org/name"},
      {"fit 'ms:a--b/c' --device H100 --offline", "ms:a--b/c: expected a hub repo id org/name"},
      {"doctor 'org/x--y' --root " + dir, "--model: expected a hub repo id org/name (letters, digits, '-', '_', '.'), found \"org/x--y\": it holds \"--\" or \"..\""},
      {"fit 'org/na;me' --device H100", "not a hub repo id org/name (letters, digits, '-', '_', '.'): the name holds ';'"},
  };
  for (const auto& c : cases) {
    const auto e = pftest::run_cli(c.args, {env});
    EXPECT_EQ(e.code, 2) << c.args << "\n" << e.out;
    EXPECT_NE(e.out.find(c.message), std::string::npos) << c.args << "\n" << e.out;
  }
  // A repo id by the rules is still looked up in the cache: the same config under <d>/ms/models/org/name is read.
  model_folder(dir + "/ms/models", "org/name");
  const auto ok = pftest::run_cli("fit org/name --device H100", {env});
  EXPECT_EQ(ok.code, 0) << ok.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard31): `plan dir/name --engine llama.cpp` for a local safetensors folder wrote "hf download dir/name
// --local-dir /models/name" (the folder's path taken for a hub repo) and converted the download. A folder read here is
// converted where it lies, with a line that says it is the local folder; the path is one shell word.
TEST(InputBounds31, Issue19_LlamaCppPlanConvertsALocalFolderWhereItLies) {
  const std::string dir = pftest::scratch_dir("ib31-llama-folder");
  model_folder(dir, "mdl/qwen");
  const auto r = pftest::run_cli("plan mdl/qwen --engine llama.cpp --device H100", {"cd " + dir + " &&"});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("hf download"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# llama.cpp loads GGUF files only and the local folder mdl/qwen (read here, not a hub repo) holds safetensors"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\npython3 llama.cpp/convert_hf_to_gguf.py mdl/qwen --outtype bf16 --outfile /models/qwen-BF16.gguf\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nllama.cpp/build/bin/llama-server -m /models/qwen-BF16.gguf "), std::string::npos) << r.out;
  // A hostile folder name: the conversion's arguments are one shell word each.
  const std::string hostile = "a b;touch PWNED";
  model_folder(dir, hostile);
  const auto h = pftest::run_cli("plan '" + hostile + "' --engine llama.cpp --device H100", {"cd " + dir + " &&"});
  ASSERT_EQ(h.code, 0) << h.out;
  bool converted = false;
  for (const auto& line : lines_of(h.out)) {
    if (line.rfind("python3 llama.cpp/convert_hf_to_gguf.py ", 0) != 0) continue;
    converted = true;
    EXPECT_EQ(line, "python3 llama.cpp/convert_hf_to_gguf.py 'a b;touch PWNED' --outtype bf16 --outfile '/models/a b;touch PWNED-BF16.gguf'");
  }
  EXPECT_TRUE(converted) << h.out;
  EXPECT_NE(h.out.find("llama-server -m '/models/a b;touch PWNED-BF16.gguf' "), std::string::npos) << h.out;
  // A catalogue id that is no folder here keeps its download.
  const auto hub = pftest::run_cli("plan Qwen/Qwen3-0.6B --engine llama.cpp --device H100", {"cd " + dir + " &&"});
  ASSERT_EQ(hub.code, 0) << hub.out;
  EXPECT_NE(hub.out.find("\nhf download Qwen/Qwen3-0.6B --local-dir /models/Qwen3-0.6B\n"), std::string::npos) << hub.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard31): a validate case is preflight's own record; a key a line repeats took the last value silently (two
// "num_devices" of a copy-edited line evaluated the case at the second). Bad input naming file, line and key, exit 2.
TEST(InputBounds31, Issue19_ValidateCaseWithARepeatedKeyIsRefused) {
  const std::string dir = pftest::scratch_dir("ib31-case-repeat");
  std::ofstream(dir + "/cases.jsonl")
      << R"({"id": "twice", "source": "s", "engine": "vllm", "engine_version": "0.10.0", "device": "H100", "num_devices": 1, "model": "Qwen/Qwen3-8B", "kv_cache_tokens": 100000, "num_devices": 2})"
      << "\n";
  const auto r = pftest::run_cli("validate " + dir + "/cases.jsonl");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/cases.jsonl:1: num_devices: key appears twice in one object"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard31): bw --save --device cpu read the devices overlay it merges into with read_text_file's 64 MiB default
// and no repeated-key check (fit reads the same file within 4 MiB and refuses a repeat): an overlay naming
// "measured_copy_bandwidth_bytes_per_s" twice was rewritten with the last value, the first lost without a word. It is
// refused and the file left as it was.
TEST(InputBounds31, Issue19_BwSaveRefusesAnOverlayWithARepeatedKey) {
  const std::string dir = pftest::scratch_dir("ib31-bw-repeat");
  const std::string overlay = dir + "/devices.json";
  const std::string text = R"({"schema_version": 1, "devices": [{"id": "910B4", "runtime_total_bytes": 31665479680, "runtime_total_bytes": 1, "source": "npu-smi"}]})";
  std::ofstream(overlay) << text;
  const auto r = pftest::run_cli("bw --target host --device cpu --save --size 8 --threads 1 --repeats 2 --warmup 1", {"PREFLIGHT_DEVICE_OVERRIDES=" + overlay});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(overlay + ": devices[].runtime_total_bytes: key appears twice in one object"), std::string::npos) << r.out;
  EXPECT_EQ(pftest::read_all(overlay), text);
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard31): --env with a 100,000-byte name echoed the name whole at the head of the message (8 KB, cut only
// by the last-resort bound); the name is cut to 60 bytes where it names the flag, as the value already was.
TEST(InputBounds31, Issue19_EnvNameIsCutInTheMessage) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --env " + std::string(100000, 'A') + "=1");
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 300);
  EXPECT_LT(r.out.size(), 600u) << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("is not an environment variable the estimate follows"), std::string::npos) << r.out.substr(0, 300);
}

// Issue 19 (hard31): doctor --revision refused only '/' and '..', and the text went into the fix it prints ("fix: hf
// download org/name --revision x;touch PWNED$(id)"), a second command once pasted; a newline split the line. The
// revision takes a hub reference's rule (letters, digits, '-', '_', '.'), exit 2 before any check runs.
TEST(InputBounds31, Issue19_DoctorRevisionIsAPlainNameBeforeItReachesTheFix) {
  const std::string dir = pftest::scratch_dir("ib31-doctor-revision");
  const std::string env = "HOME=" + dir + " HF_HUB_CACHE=" + dir + "/hf MODELSCOPE_CACHE=" + dir + "/ms";
  for (const std::string revision : {"'x;touch PWNED$(id)'", "$'a\\nb'", "'a b'", "''"}) {
    const auto r = pftest::run_cli("doctor org/name --revision " + revision, {env});
    EXPECT_EQ(r.code, 2) << revision << "\n" << r.out;
    EXPECT_NE(r.out.find("--revision: expected a branch or commit name of letters, digits, '-', '_' and '.' (no '..', not beginning with '-' or '.', not "
                         "ending with '.'), found"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("fix: hf download"), std::string::npos) << r.out;
  }
  const auto ok = pftest::run_cli("doctor org/name --revision v1.0-rc_2", {env});
  EXPECT_NE(ok.out.find("fix: hf download org/name --revision v1.0-rc_2 "), std::string::npos) << ok.out;
  std::filesystem::remove_all(dir);
}
