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

// A plan --json's rows: those that meet the targets, then the rejected ones (--all).
nlohmann::json plan_rows(const std::string& out) {
  const auto j = nlohmann::json::parse(out);
  nlohmann::json rows = nlohmann::json::array();
  for (const char* k : {"recommended", "rejected"})
    if (j.contains(k))
      for (const auto& row : j[k]) rows.push_back(row);
  return rows;
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

// Issue 16 (planq32): plan on a local ModelSlim W8A8 folder at vLLM-Ascend 0.13.0, a version that does not detect
// quant_model_description.json by itself (engines.json quantization_auto_detect), sized the rows as bf16 (30.6 GiB of
// weights per card at TP 2, 4 cards recommended) and started them without --quantization ascend, while
// `fit ... -tp 2 -q ascend` fits on 2 cards. The rows now take the flag: the TP 2 row is fit's answer with it.
TEST(Ux32, Issue16_PlanServesModelSlimFolderWithAscendFlagOnOlderVersion) {
  const std::string dir = w8a8_folder();
  const auto plan = pftest::run_cli("plan " + dir + " --devices 910B4 --context 32768 --engine vllm-ascend@0.13.0 --json", {.with_stderr = false});
  ASSERT_EQ(plan.code, 0) << plan.out.substr(0, 400);
  const auto fit = pftest::run_cli("fit " + dir + " --device 910B4 -tp 2 --max-model-len 32768 --engine vllm-ascend@0.13.0 -q ascend --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 0) << fit.out.substr(0, 400);
  const auto p = plan_rows(plan.out), f = nlohmann::json::parse(fit.out);
  const nlohmann::json* two = nullptr;
  for (const auto& row : p)
    if (row["num_devices"] == 2 && row["tensor_parallel_size"] == 2) two = &row;
  ASSERT_NE(two, nullptr) << plan.out.substr(0, 400);
  EXPECT_EQ((*two)["quantization"], "ascend");
  EXPECT_TRUE((*two)["meets"].get<bool>()) << (*two)["reason"];
  EXPECT_EQ((*two)["kv_cache_tokens"], f["kv_cache"]["tokens"]);
  EXPECT_NE((*two)["launch"]["serve"].get<std::string>().find("--quantization ascend"), std::string::npos) << (*two)["launch"]["serve"];
  // At a version that detects the descriptor in a local folder (0.17+) the start line is the engine's own choice, sized the same.
  const auto newer = pftest::run_cli("plan " + dir + " --devices 910B4 --context 32768 --engine vllm-ascend@0.23.0 --json", {.with_stderr = false});
  ASSERT_EQ(newer.code, 0) << newer.out.substr(0, 400);
  for (const auto& row : plan_rows(newer.out))
    if (row["num_devices"] == 2 && row["tensor_parallel_size"] == 2) EXPECT_EQ(row["quantization"], "") << row["reason"];
}

// Issue 16 (planq32): plan --dtype D, as fit --dtype takes it: a card without bfloat16 is refused per card with fit's
// words, the other card's rows are sized in D and started with --dtype D; float32 doubles the weights of the bf16 rows.
TEST(Ux32, Issue16_PlanTakesDtypeAsFitDoes) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device V100-SXM2-32G --dtype bfloat16");
  EXPECT_EQ(fit.code, 2) << fit.out;
  const size_t at = fit.out.find("ValueError: Bfloat16 is only supported");
  ASSERT_NE(at, std::string::npos) << fit.out;
  const std::string words = fit.out.substr(at, fit.out.find('\n', at) - at);
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices V100-SXM2-32G,A100-80G-SXM --context 8192 --dtype bfloat16 --all --json", {.with_stderr = false});
  ASSERT_EQ(plan.code, 0) << plan.out.substr(0, 400);
  size_t refused = 0, started = 0;
  for (const auto& row : plan_rows(plan.out)) {
    if (row["device"] == "V100-SXM2-32G") {
      EXPECT_FALSE(row["meets"].get<bool>());
      if (row["variant_id"] != "") continue;  // a variant the card refuses first (fp8, AWQ: capability 75) says that
      EXPECT_NE(row["reason"].get<std::string>().find(words), std::string::npos) << row["reason"];
      ++refused;
    } else if (row["meets"].get<bool>()) {
      EXPECT_NE(row["launch"]["serve"].get<std::string>().find(" --dtype bfloat16"), std::string::npos) << row["launch"]["serve"];
      ++started;
    }
  }
  EXPECT_GT(refused, 0u);
  EXPECT_GT(started, 0u);
  // float32: the one-card A100 row holds twice the bf16 row's weights, as fit --dtype float32 gives them.
  const auto f32 = pftest::run_cli("plan Qwen/Qwen3-8B --devices A100-80G-SXM --context 8192 --dtype float32 --json", {.with_stderr = false});
  const auto bf16 = pftest::run_cli("plan Qwen/Qwen3-8B --devices A100-80G-SXM --context 8192 --json", {.with_stderr = false});
  const auto fit32 = pftest::run_cli("fit Qwen/Qwen3-8B --device A100-80G-SXM --max-model-len 8192 --dtype float32 --json", {.with_stderr = false});
  ASSERT_EQ(f32.code, 0) << f32.out.substr(0, 400);
  const auto one = [](const std::string& j) {
    for (const auto& row : plan_rows(j))
      if (row["num_devices"] == 1 && row["variant_id"] == "" && row["meets"].get<bool>()) return row;
    return nlohmann::json();
  };
  const auto a = one(f32.out), b = one(bf16.out);
  ASSERT_FALSE(a.is_null()) << f32.out.substr(0, 400);
  ASSERT_FALSE(b.is_null()) << bf16.out.substr(0, 400);
  EXPECT_NEAR(a["weights_gib_per_device"].get<double>(), 2 * b["weights_gib_per_device"].get<double>(), 0.5);
  EXPECT_EQ(a["kv_cache_tokens"], nlohmann::json::parse(fit32.out)["kv_cache"]["tokens"]);
  EXPECT_NE(a["launch"]["serve"].get<std::string>().find(" --dtype float32"), std::string::npos) << a["launch"]["serve"];
}

// Issue 16 (planq32): plan takes the rest of a pasted `vllm serve` line as fit does and carries it into the start
// commands: --host, --port, the user's --served-model-name instead of plan's, --trust-remote-code, --additional-config
// once (vLLM keeps only the last of two, so a launch rule's own is said in the notes, not added).
TEST(Ux32, Issue16_PlanCarriesPastedServeLineFlags) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B4 --context 8192 --host 0.0.0.0 --port 8001 --served-model-name qwen --trust-remote-code "
                                 "--additional-config '{\"ascend_compilation_config\": {\"fuse_qknorm_rope\": false}}' --json",
                                 {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  size_t started = 0;
  for (const auto& row : plan_rows(r.out)) {
    if (!row["meets"].get<bool>()) continue;
    const std::string serve = row["launch"]["serve"];
    EXPECT_NE(serve.find(" --host 0.0.0.0"), std::string::npos) << serve;
    EXPECT_NE(serve.find(" --port 8001"), std::string::npos) << serve;
    EXPECT_NE(serve.find(" --served-model-name qwen"), std::string::npos) << serve;
    EXPECT_EQ(count_of(serve, "--served-model-name"), 1u) << serve;
    EXPECT_EQ(count_of(serve, "--trust-remote-code"), 1u) << serve;
    EXPECT_EQ(count_of(serve, "--additional-config"), 1u) << serve;
    EXPECT_NE(serve.find("--additional-config '{\"ascend_compilation_config\": {\"fuse_qknorm_rope\": false}}'"), std::string::npos) << serve;
    ++started;
  }
  EXPECT_GT(started, 0u);
  const auto bad = pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B4 --port http");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--port: expected a port number"), std::string::npos) << bad.out;
}
