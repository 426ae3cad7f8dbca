// Session 32's user journeys (issues 15, 16, 19): the seeds' engineer with 910B4 / 910B3 / A100 / MI300X and a laptop,
// pasting their own `vllm serve` lines into fit and plan. Each test runs the real binary.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "../test_support.hpp"

namespace {

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// A ModelSlim W8A8 export of Qwen3-32B as msModelSlim writes it: the published config.json (../shared/models) and a
// quant_model_description.json naming every linear weight of the 64 layers W8A8, norms and embeddings FLOAT.
std::string w8a8_folder() {
  const std::string dir = pftest::scratch_dir("ux32-qwen3-32b-w8a8");
  std::ofstream(dir + "/config.json") << pftest::read_all(pftest::shared_path("models/Qwen__Qwen3-32B/config.json"));
  nlohmann::json d = {{"model_quant_type", "W8A8"}, {"version", "1.0.0"}, {"model.embed_tokens.weight", "FLOAT"}, {"lm_head.weight", "FLOAT"}};
  for (int i = 0; i < 64; ++i) {
    for (const char* m : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"})
      d["model.layers." + std::to_string(i) + "." + m + ".weight"] = "W8A8";
    d["model.layers." + std::to_string(i) + ".input_layernorm.weight"] = "FLOAT";
  }
  std::ofstream(dir + "/quant_model_description.json") << d.dump();
  return dir;
}

}  // namespace

// Issue 16: vLLM's short names. The seed's `vllm serve ... -tp 2` pasted into fit printed only the usage line, and
// -q / -pp / -dp likewise; vLLM's arg_utils declares "-tp", "-pp", "-dp", "-q" beside the long names.
TEST(Ux32, Issue16_FitTakesVllmShortNames) {
  const auto short_tp = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 -tp 2 --json", {.with_stderr = false});
  const auto long_tp = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --tensor-parallel-size 2 --json", {.with_stderr = false});
  ASSERT_EQ(short_tp.code, 0) << short_tp.out.substr(0, 300);
  const auto a = nlohmann::json::parse(short_tp.out), b = nlohmann::json::parse(long_tp.out);
  EXPECT_EQ(a["kv_cache"]["tokens"], b["kv_cache"]["tokens"]);
  EXPECT_EQ(a["layout"]["tensor_parallel_size"], 2);
  const auto pp = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 -pp 2");
  EXPECT_EQ(pp.code, 0) << pp.out;
  EXPECT_NE(pp.out.find("TP 1, PP 2"), std::string::npos) << pp.out;
}

// Issue 16: a dash and a letter no flag declares ("-x", "-device") was taken as a second MODEL and answered with the
// bare usage line; it is an unknown flag, with the nearest name.
TEST(Ux32, Issue16_UnknownShortFlagIsNamed) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B -device 910B4");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown flag -device; did you mean --device"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("usage:"), std::string::npos) << r.out;
}

// Issue 16: plan --commands printed the first row's start twice (under "start the first one" and again in the list of
// every row's). Now once, in the list, with the first row's notes kept under the table.
TEST(Ux32, Issue16_PlanCommandsPrintsEachStartOnce) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4 --variant w4a8_dynamic --context 24064 --commands", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count_of(r.out, "\nvllm serve "), 1u) << r.out;
  EXPECT_EQ(count_of(r.out, "\nmsmodelslim quant "), 1u) << r.out;
  EXPECT_NE(r.out.find("notes on the first one's start"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# qknorm-rope-fusion-a2:"), std::string::npos) << r.out;
  // Without --commands the one start stays under the table.
  const auto plain = pftest::run_cli("plan Qwen/Qwen3-32B --devices 910B4 --variant w4a8_dynamic --context 24064", {.with_stderr = false});
  EXPECT_EQ(count_of(plain.out, "\nvllm serve "), 1u) << plain.out;
  EXPECT_NE(plain.out.find("start the first one"), std::string::npos) << plain.out;
}

// Issue 16: a ModelSlim checkpoint served without --quantization: the note named "vllm-ascend 0.26.99", the profile's
// internal upper bound, a version that does not exist; it names the profile's range as the header does.
TEST(Ux32, Issue16_NotesNameNoSentinelVersion) {
  const auto r = pftest::run_cli("fit " + w8a8_folder() + " --device 910B4 -tp 2", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find(".99"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vllm-ascend 0.23-0.26 without --quantization"), std::string::npos) << r.out;
  const auto named = pftest::run_cli("fit " + w8a8_folder() + " --device 910B4 -tp 2 --engine vllm-ascend@0.23.0", {.with_stderr = false});
  EXPECT_NE(named.out.find("vllm-ascend 0.23.0 without --quantization"), std::string::npos) << named.out;
}

// Issue 16: a dense ModelSlim W8A8 checkpoint read "linear modelslim_w8a8, experts modelslim_w8a8" (it has no experts).
TEST(Ux32, Issue16_DenseModelSlimNamesNoExperts) {
  const auto r = pftest::run_cli("inspect " + w8a8_folder(), {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("ModelSlim: linear modelslim_w8a8 (no expert tensors)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("experts modelslim_w8a8"), std::string::npos) << r.out;
}

// Issue 16: the seeds' start lines pasted whole. --trust-remote-code, --host, --port, --served-model-name and
// --additional-config were unknown flags (exit 2); they change no number, say so, and --additional-config is checked as
// vLLM checks it. The seed's ascend_fusion_config spelling leaves the fusion pass on, which fit now says.
TEST(Ux32, Issue16_FitTakesAPastedServeLine) {
  const std::string base = "fit Qwen/Qwen3-8B --device 910B4 --max-model-len 4096";
  const auto plain = pftest::run_cli(base + " --json", {.with_stderr = false});
  const auto pasted = pftest::run_cli(base +
                                          " --trust-remote-code --host 0.0.0.0 --port 8000 --served-model-name qwen3-8b"
                                          " --additional-config '{\"ascend_fusion_config\": {\"fuse_qknorm_rope\": false}}' --json",
                                      {.with_stderr = false});
  ASSERT_EQ(pasted.code, 0) << pasted.out.substr(0, 300);
  const auto a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(pasted.out);
  EXPECT_EQ(a["kv_cache"]["tokens"], b["kv_cache"]["tokens"]);
  const std::string notes = b["assumptions"].dump();
  EXPECT_NE(notes.find("--trust-remote-code, --host, --port, --served-model-name: as vLLM takes them"), std::string::npos) << notes;
  EXPECT_NE(notes.find("the qknorm-rope fusion pass stays on"), std::string::npos) << notes;
  const auto right = pftest::run_cli(base + " --additional-config '{\"ascend_compilation_config\": {\"fuse_qknorm_rope\": false}}'", {.with_stderr = false});
  EXPECT_EQ(right.code, 0) << right.out;
  EXPECT_EQ(right.out.find("stays on"), std::string::npos) << right.out;
  const auto bad = pftest::run_cli(base + " --additional-config '{ascend: 1}'");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--additional-config: expected a JSON object"), std::string::npos) << bad.out;
  const auto port = pftest::run_cli(base + " --port http");
  EXPECT_EQ(port.code, 2) << port.out;
  EXPECT_NE(port.out.find("--port: expected a port number"), std::string::npos) << port.out;
}

// Issue 16: seeds/000 names its server "Atlas 800 A2" (no I or T); it was an unknown device. It resolves as the
// Atlas 800I / 800T A2 names do, to the 64 GB 910B3, and says which card was assumed and how to name a 32 GB one.
TEST(Ux32, Issue16_SeedServerNameResolves) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device \"Atlas 800 A2\" --max-model-len 4096", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("on 1 x 910B3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("a 32 GB server must be named 910B4"), std::string::npos) << r.out;
}

// Issue 16: a name outside the catalogue (the seeds' laptop, "i7-12700H") got only "did you mean V100, A100, H100"; the
// message now says how such a device is sized.
TEST(Ux32, Issue16_UnknownDeviceSaysHowToSizeIt) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device i7-12700H");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown device 'i7-12700H'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--device-memory SIZE --platform cuda|npu|rocm|cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--device cpu with --engine llama.cpp"), std::string::npos) << r.out;
}

// Issue 16: plan's table kept the device column 10 wide, so "A100-40G-SXM" (the A100 box of the seeds' engineer) pushed
// its row's layout, context and token columns out of line with the header.
TEST(Ux32, Issue16_PlanTableColumnsLineUpWithLongDeviceIds) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3-30B-A3B --devices \"910B4 32G,A100-SXM4-40GB\" --context 8192", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  std::istringstream lines(r.out);
  std::string line;
  size_t layout_col = std::string::npos, rows = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("model ", 0) == 0) layout_col = line.find("layout");
    if (line.rfind("Qwen/Qwen3-30B-A3B ", 0) != 0 || layout_col == std::string::npos) continue;
    ++rows;
    EXPECT_EQ(line.find("1x TP"), layout_col) << line;
  }
  EXPECT_EQ(rows, 2u) << r.out;
  EXPECT_NE(r.out.find("A100-40G-SXM"), std::string::npos) << r.out;
}
