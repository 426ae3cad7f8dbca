// Issue 19, session 30's hostile pass: a local folder's name reaches the start commands plan writes (and the MindIE
// start.sh), a half-downloaded folder's index its assumptions, the speed and devices overlays the catalogue.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../test_support.hpp"

namespace {

// A folder named `name` under `dir` holding Qwen3-8B's published config.json.
std::string model_folder(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  std::filesystem::create_directories(path);
  std::filesystem::copy_file(pftest::shared_path("models/Qwen__Qwen3-8B/config.json"), path + "/config.json");
  return path;
}

// The first line of `text` that begins with `prefix`; "" when none does.
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

// `command_line` run by bash in `dir` with `vllm` a function that prints its arguments one a line:
// what the program would have been given, and whatever else the line ran.
std::string run_in_shell(const std::string& dir, const std::string& command_line) {
  std::ofstream(dir + "/run.sh") << "vllm() { printf 'ARG[%s]\\n' \"$@\"; }\n" << command_line << "\n";
  const int status = std::system(("cd " + dir + " && bash run.sh > run.out 2>&1").c_str());
  EXPECT_EQ(status, 0);
  return pftest::read_all(dir + "/run.out");
}

}  // namespace

// Issue 19 (hard30): plan wrote a local folder's path into `vllm serve` and --served-model-name as it is: for a folder
// named "a b;touch PWNED$(id)" the start command, pasted into a shell, ran `touch PWNED...` (and the Kubernetes
// manifest's bash -c ran it in the container). The path and the served name are one shell word each; the command
// gives vLLM exactly the folder and runs nothing else.
TEST(InputBounds30, Issue19_HostileFolderNameIsOneShellWordInTheStartCommand) {
  const std::string dir = pftest::scratch_dir("ib30-shell");
  const std::string name = "a b;touch PWNED$(id)`id`'q\"";
  const std::string folder = model_folder(dir, name);
  const auto r = pftest::run_cli("plan '" + dir + "/a b;touch PWNED$(id)`id`'\\''q\"' --devices H100");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string serve = line_starting(r.out, "vllm serve ");
  ASSERT_FALSE(serve.empty()) << r.out;
  const std::string out = run_in_shell(dir, serve);
  EXPECT_FALSE(std::filesystem::exists(dir + "/PWNED")) << serve;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) EXPECT_NE(entry.path().filename().string().rfind("PWNED", 0), 0u) << serve;
  EXPECT_EQ(out.rfind("ARG[serve]\nARG[" + folder + "]\nARG[--served-model-name]\nARG[a b;touch pwned$(id)`id`'q\"]\nARG[--tensor-parallel-size]\n", 0), 0u)
      << serve << "\n" << out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): a relative folder whose name begins with '-' (`plan --devices H100 -rf`) started `vllm serve -rf
// --served-model-name -rf`, which vLLM's argparse reads as options. The path is given as ./-rf and the served name
// without its leading '-'.
TEST(InputBounds30, Issue19_RelativeFolderBeginningWithADashIsNotAnOption) {
  const std::string dir = pftest::scratch_dir("ib30-dash");
  model_folder(dir, "-rf");
  const auto r = pftest::run_cli("plan --devices H100 -rf", {.env = "cd " + dir + " &&"});
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string serve = line_starting(r.out, "vllm serve ");
  EXPECT_EQ(serve.rfind("vllm serve ./-rf --served-model-name rf --tensor-parallel-size 1 ", 0), 0u) << r.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): a conversion recipe's commands carry the model id unquoted, as shell words (hf download {model_id})
// and inside Python strings (oneshot(model="{model_id}")): a folder named "my dir;id" gave `python3 -c '... "DIR" ...'`
// lines that split or ran the rest. An id that is not one plain shell word gets no recipe, and the row says why.
TEST(InputBounds30, Issue19_NoConversionRecipeForAnIdThatIsNotAShellWord) {
  const std::string dir = pftest::scratch_dir("ib30-recipe");
  model_folder(dir, "my dir;id/Qwen3-8B");
  const auto r = pftest::run_cli("plan '" + dir + "/my dir;id/Qwen3-8B' --devices H100 --variant awq --max-devices 1");
  EXPECT_NE(r.out.find("no start command: no published checkpoint of " + dir + "/my dir;id/Qwen3-8B in this variant (AWQ int4 (AutoAWQ GEMM, group 128, zero points)), "
                       "and the model id '" + dir + "/my dir;id/Qwen3-8B' is not one plain shell word"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(line_starting(r.out, "python3 -c").empty()) << r.out;
  // A folder whose path is one plain word keeps its recipe.
  model_folder(dir, "plain/Qwen3-8B");
  const auto plain = pftest::run_cli("plan " + dir + "/plain/Qwen3-8B --devices H100 --variant awq --max-devices 1");
  EXPECT_FALSE(line_starting(plain.out, "python3 -c").empty()) << plain.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): a recipe for a model read from a local folder began `hf download /the/folder --local-dir
// /models/NAME`, which the hub client refuses (a path is no repo id), and converted the download. The recipe reads the
// folder itself and downloads nothing (msModelSlim, AutoAWQ and the GGUF conversion alike); a hub id keeps its download.
TEST(InputBounds30, Issue19_LocalFolderRecipeReadsTheFolderWithoutADownload) {
  const std::string dir = pftest::scratch_dir("ib30-local");
  const std::string folder = model_folder(dir, "local/Qwen3-8B");
  const auto w8a8 = pftest::run_cli("plan " + folder + " --devices 910B3 --variant w8a8 --max-devices 1");
  EXPECT_TRUE(line_starting(w8a8.out, "hf download").empty()) << w8a8.out;
  EXPECT_EQ(line_starting(w8a8.out, "msmodelslim quant ").rfind("msmodelslim quant --model_path " + folder + " --save_path /models/Qwen3-8B-W8A8 --device npu ", 0), 0u)
      << w8a8.out;
  EXPECT_NE(line_starting(w8a8.out, "vllm serve ").find("vllm serve /models/Qwen3-8B-W8A8 "), std::string::npos) << w8a8.out;
  const auto awq = pftest::run_cli("plan " + folder + " --devices H100 --variant awq --max-devices 1");
  EXPECT_TRUE(line_starting(awq.out, "hf download").empty()) << awq.out;
  EXPECT_NE(line_starting(awq.out, "python3 -c").find("from_pretrained(\"" + folder + "\""), std::string::npos) << awq.out;
  const auto gguf = pftest::run_cli("plan " + folder + " --devices H100 --variant gguf_q4_k_m --max-devices 1");
  EXPECT_TRUE(line_starting(gguf.out, "hf download").empty()) << gguf.out;
  EXPECT_EQ(line_starting(gguf.out, "python3 llama.cpp/convert_hf_to_gguf.py "), "python3 llama.cpp/convert_hf_to_gguf.py " + folder + " --outtype bf16 --outfile " + folder + "-BF16.gguf")
      << gguf.out;
  EXPECT_EQ(line_starting(gguf.out, "llama.cpp/build/bin/llama-quantize "), "llama.cpp/build/bin/llama-quantize " + folder + "-BF16.gguf /models/Qwen3-8B-Q4_K_M.gguf Q4_K_M") << gguf.out;
  EXPECT_EQ(line_starting(gguf.out, "vllm serve ").rfind("vllm serve /models/Qwen3-8B-Q4_K_M.gguf ", 0), 0u) << gguf.out;
  const auto hub = pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B3 --variant w8a8 --max-devices 1");
  EXPECT_EQ(line_starting(hub.out, "hf download"), "hf download Qwen/Qwen3-8B --local-dir /models/Qwen3-8B") << hub.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): MindIE's start.sh opened with "# preflight plan --engine mindie: MODEL ...": a newline in a local
// folder's name ended the comment, and the rest of the name ran as a line of the script. The comment stays one line.
TEST(InputBounds30, Issue19_MindieStartScriptCommentStaysOneLine) {
  const std::string dir = pftest::scratch_dir("ib30-mindie");
  model_folder(dir, "nl\ntouch " + dir + "/PWNED\n#");
  const auto r = pftest::run_cli("plan '" + dir + "/nl\ntouch " + dir + "/PWNED\n#' --devices 910B3 --engine mindie --config-out " + dir + "/out");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string script = pftest::read_all(dir + "/out/start.sh");
  std::istringstream in(script);
  std::string first, second, third;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, third);
  EXPECT_EQ(first, "#!/bin/bash");
  EXPECT_EQ(second.rfind("# preflight plan --engine mindie: " + dir + "/nl touch " + dir + "/PWNED # on 1 x 910B3", 0), 0u) << script;
  EXPECT_EQ(third, "set -e") << script;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): the shard names of a half-downloaded folder's model.safetensors.index.json were printed in its
// assumption as they are: an OSC sequence retitled the terminal, a CSI one cleared it. Shown without them.
TEST(InputBounds30, Issue19_MissingShardNamesReachTheTerminalWithoutEscapes) {
  const std::string dir = pftest::scratch_dir("ib30-half");
  const std::string folder = model_folder(dir, "half");
  std::ofstream(folder + "/model.safetensors.index.json")
      << R"({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "\u001b]0;OWNED\u0007\u001b[2Jmodel-00002-of-00002.safetensors"}})";
  const std::string header = R"({"model.norm.weight": {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}})";
  std::string shard(8, '\0');
  const uint64_t length = header.size();
  std::memcpy(shard.data(), &length, 8);
  std::ofstream(folder + "/model-00001-of-00002.safetensors", std::ios::binary) << shard << header << std::string(8, '\0');
  const auto r = pftest::run_cli("inspect " + folder);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("2 shard files and 1 of them are not in the folder (model-00002-of-00002.safetensors)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): the speed overlay (PREFLIGHT_SPEED_OVERRIDES, calibrate --save's file) matched each record against
// every profile before it: 20,000 device profiles (2 MB) held `fit` for 45 s, 400,000 (43 MB, read whole) for hours.
// The merge is one index (20,000 profiles under 10 s here, was 45 s), and the file is read up to 4 MiB, as the devices
// overlay: a larger one is refused by its size, exit 2.
TEST(InputBounds30, Issue19_SpeedOverlayIsBoundedAndMergedInLinearTime) {
  const std::string dir = pftest::scratch_dir("ib30-speed");
  const auto write_overlay = [&](const std::string& path, int n) {
    std::ofstream out(path);
    out << R"({"schema_version": 1, "profiles": [)";
    for (int i = 0; i < n; ++i)
      out << (i ? "," : "") << R"({"engine": "vllm", "platform": "cuda", "device": "dev)" << i << R"(", "bandwidth_efficiency": 0.8, "evidence": "x"})";
    out << "]}";
  };
  write_overlay(dir + "/speed.json", 20000);
  const auto start = std::chrono::steady_clock::now();
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM", {.env = "PREFLIGHT_SPEED_OVERRIDES=" + dir + "/speed.json timeout 60"});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_LT(seconds, 10.0);
  write_overlay(dir + "/big.json", 60000);
  ASSERT_GT(std::filesystem::file_size(dir + "/big.json"), 4u << 20);
  const auto big = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM", {.env = "PREFLIGHT_SPEED_OVERRIDES=" + dir + "/big.json timeout 60"});
  EXPECT_EQ(big.code, 2) << big.out;
  EXPECT_NE(big.out.find(dir + "/big.json: file is "), std::string::npos) << big.out;
  EXPECT_NE(big.out.find("more than the 4194304 accepted"), std::string::npos) << big.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): a devices overlay naming one card twice was applied twice, the last values silently winning (a
// copy-edited 1e12 left under an earlier 3e12) and the override listed twice; a key repeated inside one record (or a
// speed overlay's profile) kept its last value in silence. Both are refused by file and place.
TEST(InputBounds30, Issue19_DevicesOverlayNamingACardTwiceIsRefused) {
  const std::string dir = pftest::scratch_dir("ib30-devices");
  std::ofstream(dir + "/devices.json") << R"({"schema_version": 1, "devices": [
      {"id": "H100-SXM", "hbm_bandwidth_bytes_per_s": 3.0e12, "source": "a"},
      {"id": "H100-SXM", "hbm_bandwidth_bytes_per_s": 1.0e12, "source": "b"}]})";
  const auto r = pftest::run_cli("devices", {.env = "PREFLIGHT_DEVICE_OVERRIDES=" + dir + "/devices.json"});
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(dir + "/devices.json: devices[H100-SXM]: duplicate id (H100-SXM is named by an earlier record)"), std::string::npos) << r.out;
  // The same card's key given twice in its record: the first value was dropped in silence (1e10, 10 GB/s, won).
  std::ofstream(dir + "/keys.json") << R"({"schema_version": 1, "devices": [{"id": "H100-SXM", "hbm_bandwidth_bytes_per_s": 3.0e12, "source": "a", "hbm_bandwidth_bytes_per_s": 1.0e10}]})";
  const auto keys = pftest::run_cli("devices", {.env = "PREFLIGHT_DEVICE_OVERRIDES=" + dir + "/keys.json"});
  EXPECT_EQ(keys.code, 2) << keys.out;
  EXPECT_NE(keys.out.find(dir + "/keys.json: devices[].hbm_bandwidth_bytes_per_s: key appears twice in one object"), std::string::npos) << keys.out;
  std::ofstream(dir + "/speed.json") << R"({"schema_version": 1, "profiles": [{"engine": "vllm", "platform": "cuda", "evidence": "x", "bandwidth_efficiency": 0.8, "bandwidth_efficiency": 0.08}]})";
  const auto speed = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM", {.env = "PREFLIGHT_SPEED_OVERRIDES=" + dir + "/speed.json"});
  EXPECT_EQ(speed.code, 2) << speed.out;
  EXPECT_NE(speed.out.find(dir + "/speed.json: profiles[].bandwidth_efficiency: key appears twice in one object"), std::string::npos) << speed.out;
  std::ofstream(dir + "/one.json") << R"({"schema_version": 1, "devices": [{"id": "H100-SXM", "hbm_bandwidth_bytes_per_s": 3.0e12, "source": "a"}]})";
  const auto one = pftest::run_cli("devices", {.env = "PREFLIGHT_DEVICE_OVERRIDES=" + dir + "/one.json"});
  EXPECT_EQ(one.code, 0) << one.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard30): bench took a --url holding CR/LF (or a space): every request failed inside libcurl ("URL using
// bad/illegal format") and the run was stored with the URL's text raw, the CR printed to the terminal; a --model with an
// escape sequence was stored and shown by every report of the database. Both are bad input before anything is sent or
// stored.
TEST(InputBounds30, Issue19_BenchRefusesControlCharactersInUrlAndModel) {
  const std::string dir = pftest::scratch_dir("ib30-bench-url");
  const auto url = pftest::run_cli("bench --url \"$(printf 'http://127.0.0.1:9/v1\\r\\nX-Evil: 1')\" --model m --num-prompts 1 --db " + dir + "/b.db");
  EXPECT_EQ(url.code, 2) << url.out;
  EXPECT_NE(url.out.find("--url: holds control character 0x0d at byte 21 (a URL has none: percent-encode it)"), std::string::npos) << url.out;
  const auto space = pftest::run_cli("bench --url 'http://127.0.0.1:9/v1 x' --model m --num-prompts 1 --db " + dir + "/b.db");
  EXPECT_EQ(space.code, 2) << space.out;
  EXPECT_NE(space.out.find("--url: holds a space 0x20 at byte 21 (a URL has none: percent-encode it)"), std::string::npos) << space.out;
  const auto model = pftest::run_cli("bench --url http://127.0.0.1:9 --model \"$(printf 'm\\033]0;OWNED\\007')\" --num-prompts 1 --db " + dir + "/b.db");
  EXPECT_EQ(model.code, 2) << model.out;
  EXPECT_NE(model.out.find("--model: holds control character 0x1b at byte 1"), std::string::npos) << model.out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/b.db"));
  std::filesystem::remove_all(dir);
}
