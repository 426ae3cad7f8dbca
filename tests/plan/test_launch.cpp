// plan/launch: start commands that run as written. A quantized variant names a checkpoint that has
// that format (published, or produced by the conversion printed before the serve line), every node
// of a multi-node layout sets up its environment before `ray start`, and an agent start carries the
// tool-call and reasoning parsers of its model family.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/launch_rules.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "engine/speed_profile.hpp"
#include "model/model_source.hpp"
#include "model/quant_variant.hpp"
#include "plan/launch.hpp"
#include "plan/planner.hpp"
#include "plan_catalogs.hpp"
#include "plan_test_models.hpp"
#include "report/render_plan.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

using test::catalogs;
using test::dev;

engine::EngineProfile engine_for(const std::string& platform) {
  auto e = engine::select_engine(catalogs().engines, engine::default_engine_for(platform), "");
  EXPECT_TRUE(e.has_value());
  return *e;
}

model::ModelSpec model_of(const std::string& id) {
  auto m = model::resolve_model(id);
  EXPECT_TRUE(m.has_value()) << id;
  return *m;
}

// A candidate as the planner hands it to build_launch: only the fields the start command reads.
plan::Candidate candidate(const std::string& model_id, const std::string& quantization, int64_t devices) {
  plan::Candidate c;
  c.model_id = model_id;
  c.quantization_flag = quantization;
  // The planner's variant for each flag (data/variants/quant_variants.json).
  c.variant_id = quantization == "ascend" ? "w8a8" : quantization == "fp8" ? "fp8_tensor" : quantization;
  c.variant = quantization.empty() ? "as published" : quantization;
  c.num_devices = devices;
  c.tensor_parallel_size = std::min<int64_t>(devices, 8);
  c.pipeline_parallel_size = std::max<int64_t>(1, devices / 8);
  c.context_tokens = 32768;
  c.fit.gpu_memory_utilization = 0.9;
  c.fit.kv_cache_dtype = "auto";
  return c;
}

plan::Launch launch(const std::string& model_id, const std::string& platform, const std::string& quantization, int64_t devices,
                    plan::Workload workload = plan::Workload::chat) {
  return plan::build_launch(model_of(model_id), candidate(model_id, quantization, devices), engine_for(platform), catalogs().rules, 8,
                            plan::LaunchOptions{.workload = workload});
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The checkpoint `vllm serve` loads (the word after "vllm serve ").
std::string served_checkpoint(const std::string& serve) {
  const std::string head = "vllm serve ";
  if (serve.rfind(head, 0) != 0) return "";
  const auto end = serve.find(' ', head.size());
  return serve.substr(head.size(), end == std::string::npos ? std::string::npos : end - head.size());
}

// "--quantization X" in the serve line, or "".
std::string quantization_of(const std::string& serve) {
  const std::string key = " --quantization ";
  const auto at = serve.find(key);
  if (at == std::string::npos) return "";
  const auto end = serve.find(' ', at + key.size());
  return serve.substr(at + key.size(), end == std::string::npos ? std::string::npos : end - at - key.size());
}

// Index of the first line containing `part`, or -1.
int line_of(const std::vector<std::string>& lines, const std::string& part) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (has(lines[i], part)) return static_cast<int>(i);
  return -1;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  if (start < text.size()) out.push_back(text.substr(start));
  return out;
}

}  // namespace

// Issue 16: `plan Qwen/Qwen3-14B --devices 910B4 --context 32768` recommended
// `vllm serve Qwen/Qwen3-14B ... --quantization ascend` on the BF16 repository. No W8A8 upload of
// Qwen3-14B is catalogued, so the msModelSlim conversion comes first and the serve line loads its output.
TEST(Launch, Issue16_Qwen3_14B_On910B4_ConvertsBeforeServingW8A8) {
  plan::PlanTargets t;
  t.context_tokens = 32768;
  const auto r = plan::plan_for_model(model_of("Qwen/Qwen3-14B"), {dev("910B4")}, catalogs().inputs(), t, 16);
  ASSERT_FALSE(r.recommended.empty());
  const auto& top = r.recommended.front();
  ASSERT_EQ(top.quantization_flag, "ascend") << top.variant;
  const auto& l = *top.launch;
  EXPECT_EQ(served_checkpoint(l.serve), "/models/Qwen3-14B-W8A8") << l.serve;
  EXPECT_EQ(quantization_of(l.serve), "ascend") << l.serve;
  const int quant = line_of(l.prepare, "msmodelslim quant ");
  ASSERT_GE(quant, 0);
  EXPECT_TRUE(has(l.prepare[quant], "--model_path /models/Qwen3-14B --save_path /models/Qwen3-14B-W8A8")) << l.prepare[quant];
  EXPECT_TRUE(has(l.prepare[quant], "--quant_type w8a8")) << l.prepare[quant];
  EXPECT_GE(line_of(l.prepare, "hf download Qwen/Qwen3-14B --local-dir /models/Qwen3-14B"), 0);
  // Printed in order: toolkit environment, conversion, serve.
  const auto text = split_lines(report::render_plan(r, "q", report::PlanFormat::text, 5));
  const int env = line_of(text, "ascend-toolkit/set_env.sh"), conv = line_of(text, "msmodelslim quant "), serve = line_of(text, "vllm serve ");
  EXPECT_TRUE(env >= 0 && env < conv && conv < serve) << env << " " << conv << " " << serve;
  EXPECT_EQ(line_of(text, "vllm serve Qwen/Qwen3-14B "), -1);
  bool ram_noted = false;
  for (const auto& n : l.notes) ram_noted |= has(n, "msmodelslim-w8a8: ") && has(n, "host memory");
  EXPECT_TRUE(ram_noted);
  // --json carries the same: the checkpoint served and the conversion before it.
  const auto written = report::render_plan_json(r, "q");
  ASSERT_TRUE(written.has_value()) << written.error().describe();
  const Json j = Json::parse(*written);
  const Json& jl = j["recommended"][0]["launch"];
  EXPECT_EQ(jl["checkpoint"], "/models/Qwen3-14B-W8A8");
  ASSERT_TRUE(jl["prepare"].is_array());
  EXPECT_EQ(jl["prepare"].size(), l.prepare.size());
}

// Issue 16: `plan Qwen/Qwen3-235B-A22B --devices 910B4,910B3,H100` started with
// `vllm serve Qwen/Qwen3-235B-A22B --quantization awq` on the BF16 repository. Every recommended row
// now names a checkpoint in its format: the vLLM-Ascend W8A8 upload on ModelScope for the NPUs, the
// llm-compressor AWQ output for the H100, labelled compressed-tensors W4A16 and served with
// --quantization compressed-tensors, the method that output's config.json states.
TEST(Launch, Issue16_Qwen3_235B_MixedDevices_NoFlagOnTheBf16Repo) {
  const auto r = plan::plan_for_model(model_of("Qwen/Qwen3-235B-A22B"), {dev("910B4"), dev("910B3"), dev("H100-SXM")}, catalogs().inputs(), {}, 16);
  ASSERT_FALSE(r.recommended.empty());
  bool saw_awq = false, saw_ascend = false, saw_w4a8 = false;
  for (const auto& c : r.recommended) {
    const auto& l = *c.launch;
    const std::string ckpt = served_checkpoint(l.serve);
    SCOPED_TRACE(c.device_id.str() + " " + c.variant.str() + ": " + l.serve);
    EXPECT_NE(c.variant_id, "awq");  // no AWQ upload of Qwen3-235B-A22B is catalogued
    if (c.quantization_flag.empty()) {
      EXPECT_EQ(ckpt, "Qwen/Qwen3-235B-A22B");
      EXPECT_EQ(quantization_of(l.serve), "");
    } else if (c.variant_id == "w4a8_dynamic") {
      // Fewer NPUs hold the 4-bit variant than the W8A8 one: msModelSlim's W4A8 conversion, then its output.
      saw_w4a8 = true;
      EXPECT_EQ(ckpt, "/models/Qwen3-235B-A22B-W4A8");
      EXPECT_EQ(quantization_of(l.serve), "ascend");
      EXPECT_GE(line_of(l.prepare, "--quant_type w4a8 "), 0);
    } else if (c.quantization_flag == "ascend") {
      saw_ascend = true;
      EXPECT_EQ(ckpt, "vllm-ascend/Qwen3-235B-A22B-W8A8");
      EXPECT_EQ(quantization_of(l.serve), "ascend");
      EXPECT_TRUE(l.prepare.empty());
      bool modelscope = false;
      for (const auto& e : l.env) modelscope |= e == "VLLM_USE_MODELSCOPE=true";
      EXPECT_TRUE(modelscope);
    } else if (c.variant_id == "ct_w4a16") {
      // Issue 16: no AWQ checkpoint of the model is published, so the 4-bit row is what llm-compressor's AWQ
      // recipe writes, compressed-tensors W4A16 (symmetric), and it says so: never "AWQ int4 (AutoAWQ GEMM,
      // group 128, zero points)" above a command that produces another format.
      saw_awq = true;
      EXPECT_EQ(c.variant, "compressed-tensors W4A16 (int4 group 128, symmetric)");
      EXPECT_EQ(ckpt, "/models/Qwen3-235B-A22B-AWQ-W4A16");
      EXPECT_EQ(quantization_of(l.serve), "compressed-tensors");
      const int conv = line_of(l.prepare, "from llmcompressor import oneshot");
      ASSERT_GE(conv, 0);
      EXPECT_TRUE(has(l.prepare[conv], "model=\"Qwen/Qwen3-235B-A22B\"")) << l.prepare[conv];
      EXPECT_TRUE(has(l.prepare[conv], "output_dir=\"/models/Qwen3-235B-A22B-AWQ-W4A16\"")) << l.prepare[conv];
    } else if (c.quantization_flag == "fp8") {
      EXPECT_EQ(ckpt, "Qwen/Qwen3-235B-A22B");
      EXPECT_EQ(quantization_of(l.serve), "fp8");
    }
  }
  EXPECT_TRUE(saw_awq);
  EXPECT_FALSE(saw_ascend);  // W8A8 needs more cards than W4A8_DYNAMIC on both NPUs: the cheaper count wins
  EXPECT_TRUE(saw_w4a8);
}

// Issue 16: a published checkpoint in the catalogue is served by its repo id, with the flag its
// format needs; a checkpoint that is already quantized keeps its own id and no flag.
TEST(Launch, Issue16_PublishedCheckpointsServedByRepoId) {
  struct Row {
    const char* model;
    const char* platform;
    const char* quantization;
    const char* checkpoint;
    const char* flag;
  };
  const Row rows[] = {
      {"Qwen/Qwen3-32B", "npu", "ascend", "vllm-ascend/Qwen3-32B-W8A8", "ascend"},
      // ux28: an AWQ checkpoint is served without --quantization (vLLM reads awq from its config.json and upgrades it to
      // awq_marlin where the card has Marlin; --quantization awq forced the slower kernel, vllm#20112).
      {"Qwen/Qwen3-32B", "cuda", "awq", "Qwen/Qwen3-32B-AWQ", ""},
      {"Qwen/Qwen3-8B", "cuda", "awq", "Qwen/Qwen3-8B-AWQ", ""},
      {"Qwen/Qwen3-32B-FP8", "cuda", "", "Qwen/Qwen3-32B-FP8", ""},
      {"Qwen/Qwen3-32B", "cuda", "fp8", "Qwen/Qwen3-32B", "fp8"},  // vLLM quantizes BF16 to FP8 while loading
  };
  for (const auto& row : rows) {
    const auto l = launch(row.model, row.platform, row.quantization, 2);
    SCOPED_TRACE(std::string(row.model) + " " + row.quantization + ": " + l.serve);
    EXPECT_EQ(served_checkpoint(l.serve), row.checkpoint);
    EXPECT_EQ(quantization_of(l.serve), row.flag);
    EXPECT_TRUE(l.prepare.empty());
    EXPECT_EQ(l.checkpoint, row.checkpoint);
  }
}

// Issue 18 / seeds/000: the Ray lines came before `source .../set_env.sh` and only the head node got
// the environment, so workers lacked libatb.so. Each node now sources the toolkit and ATB (with the
// matching cxx_abi) and exports the interface variables before its own `ray start`.
TEST(Launch, Issue18_EveryNodeSourcesEnvironmentBeforeRayStart) {
  const auto l = launch("Qwen/Qwen3-235B-A22B", "npu", "ascend", 16);
  ASSERT_EQ(l.nodes.size(), 2u);
  EXPECT_EQ(l.nodes[0].role, "head");
  EXPECT_EQ(l.nodes[1].role, "worker");
  for (const auto& node : l.nodes) {
    SCOPED_TRACE(node.role);
    const int toolkit = line_of(node.lines, "source /usr/local/Ascend/ascend-toolkit/set_env.sh");
    const int atb = line_of(node.lines, "source /usr/local/Ascend/nnal/atb/set_env.sh --cxx_abi=");
    const int nic = line_of(node.lines, "export HCCL_SOCKET_IFNAME=");
    const int ray = line_of(node.lines, "ray start ");
    ASSERT_GE(ray, 0);
    EXPECT_TRUE(toolkit >= 0 && toolkit < ray);
    EXPECT_TRUE(atb >= 0 && atb < ray);
    EXPECT_TRUE(nic >= 0 && nic < ray);
    EXPECT_EQ(ray, static_cast<int>(node.lines.size()) - 1);
  }
  EXPECT_EQ(l.nodes[0].lines.back(), "ray start --head --port=6379");
  EXPECT_EQ(l.nodes[1].lines.back().rfind("ray start --address=", 0), 0u);
  EXPECT_TRUE(has(l.serve, "--distributed-executor-backend ray"));

  // The printed text: both nodes source ATB before their ray start, and serve comes last.
  plan::PlanResult r;
  plan::Candidate c = candidate("Qwen/Qwen3-235B-A22B", "ascend", 16);
  c.meets = true;
  c.launch = l;
  r.recommended.push_back(c);
  const auto text = split_lines(report::render_plan(r, "q", report::PlanFormat::text, 5));
  std::vector<int> atb_lines, ray_lines;
  for (size_t i = 0; i < text.size(); ++i) {
    if (has(text[i], "nnal/atb/set_env.sh --cxx_abi=")) atb_lines.push_back(static_cast<int>(i));
    if (text[i].rfind("ray start ", 0) == 0) ray_lines.push_back(static_cast<int>(i));
  }
  ASSERT_EQ(atb_lines.size(), 2u);
  ASSERT_EQ(ray_lines.size(), 2u);
  EXPECT_LT(atb_lines[0], ray_lines[0]);
  EXPECT_LT(ray_lines[0], atb_lines[1]);
  EXPECT_LT(atb_lines[1], ray_lines[1]);
  EXPECT_LT(ray_lines[1], line_of(text, "vllm serve "));
}

// Issue 18: GPUs across nodes export the NCCL/gloo interface on every node before ray start; a
// single node gets no interface variables at all.
TEST(Launch, Issue18_GpuNodesExportInterfaceBeforeRayStart) {
  const auto l = launch("Qwen/Qwen3-235B-A22B", "cuda", "", 16);
  ASSERT_EQ(l.nodes.size(), 2u);
  for (const auto& node : l.nodes) {
    const int nccl = line_of(node.lines, "export NCCL_SOCKET_IFNAME=");
    const int gloo = line_of(node.lines, "export GLOO_SOCKET_IFNAME=");
    const int ray = line_of(node.lines, "ray start ");
    EXPECT_TRUE(nccl >= 0 && nccl < ray) << node.role;
    EXPECT_TRUE(gloo >= 0 && gloo < ray) << node.role;
  }
  const auto one = launch("Qwen/Qwen3-32B", "cuda", "", 8);
  EXPECT_TRUE(one.nodes.empty());
  EXPECT_TRUE(one.multi_node.empty());
  for (const auto& e : one.env) EXPECT_EQ(e.find("SOCKET_IFNAME"), std::string::npos) << e;
}

// Issue 18, agent workloads: the tool-call and reasoning parsers each family needs, only when asked.
TEST(Launch, Issue18_AgentWorkloadCarriesToolAndReasoningParsers) {
  struct Row {
    const char* model;
    std::vector<std::string> present;
    std::vector<std::string> absent;
  };
  const Row rows[] = {
      {"Qwen/Qwen3-8B", {"--enable-auto-tool-choice", "--tool-call-parser hermes", "--reasoning-parser qwen3"}, {"enable_thinking"}},
      {"Qwen/Qwen3-30B-A3B", {"--tool-call-parser hermes", "--reasoning-parser qwen3"}, {}},
      {"Qwen/Qwen2.5-7B", {"--enable-auto-tool-choice", "--tool-call-parser hermes"}, {"--reasoning-parser"}},
      {"deepseek-ai/DeepSeek-R1", {"--reasoning-parser deepseek_r1"}, {"--tool-call-parser"}},
      {"deepseek-ai/DeepSeek-V3", {"--enable-auto-tool-choice", "--tool-call-parser deepseek_v3"}, {"deepseek_v31", "--reasoning-parser"}},
      {"deepseek-ai/DeepSeek-V3.1", {"--tool-call-parser deepseek_v31", "--reasoning-parser deepseek_v3"}, {"--tool-call-parser deepseek_v3 "}},
      {"meta-llama/Llama-3.3-70B-Instruct", {"--enable-auto-tool-choice", "--tool-call-parser llama3_json"}, {"--reasoning-parser"}},
      {"mistralai/Mixtral-8x7B-v0.1", {"--tool-call-parser mistral"}, {}},
      {"zai-org/GLM-4.5-Air", {"--tool-call-parser glm45", "--reasoning-parser glm45"}, {}},
      {"openai/gpt-oss-120b", {"--enable-auto-tool-choice", "--tool-call-parser openai"}, {}},
      {"moonshotai/Kimi-K2-Instruct", {"--tool-call-parser kimi_k2", "--trust-remote-code"}, {}},
  };
  for (const auto& row : rows) {
    const auto agent = launch(row.model, "cuda", "", 8, plan::Workload::agent);
    const auto chat = launch(row.model, "cuda", "", 8, plan::Workload::chat);
    SCOPED_TRACE(std::string(row.model) + "\n agent: " + agent.serve + "\n chat: " + chat.serve);
    for (const auto& p : row.present) EXPECT_TRUE(has(agent.serve + " ", p)) << p;
    for (const auto& a : row.absent) EXPECT_FALSE(has(agent.serve + " ", a)) << a;
    EXPECT_FALSE(has(chat.serve, "--tool-call-parser"));
    EXPECT_FALSE(has(chat.serve, "--reasoning-parser"));
    EXPECT_FALSE(has(chat.serve, "--enable-auto-tool-choice"));
  }
  // Chat keeps Qwen3 thinking off for every client; Kimi-K2 needs its remote code in any workload.
  EXPECT_TRUE(has(launch("Qwen/Qwen3-8B", "cuda", "", 1).serve, "enable_thinking"));
  EXPECT_TRUE(has(launch("moonshotai/Kimi-K2-Instruct", "cuda", "", 8).serve, "--trust-remote-code"));
}

// The rules' new `when` keys are validated like the old ones.
TEST(LaunchRules, Issue18_RejectsBadWorkloadFilter) {
  const auto ok = Json::parse(R"({"schema_version":1,"rules":[{"id":"a","engine":"vllm","version_min":"0.1.0","version_max":"1.0.0",
      "when":{"model_types":["qwen3"],"workload":"agent","model_id_contains":["x"],"model_id_excludes":["y"],"multi_node":false},
      "flags":["--x"],"note":"n","source":"s"}]})");
  auto parsed = engine::parse_launch_rules(ok, "launch.json", {});
  ASSERT_TRUE(parsed.has_value()) << parsed.error().describe();
  EXPECT_EQ(parsed->rules[0].workload, "agent");
  Json bad = ok;
  bad["rules"][0]["when"]["workload"] = "batch";
  auto r1 = engine::parse_launch_rules(bad, "launch.json", {});
  ASSERT_FALSE(r1.has_value());
  EXPECT_NE(r1.error().describe().find("expected chat or agent"), std::string::npos) << r1.error().describe();
  Json none = ok;
  none["rules"][0]["when"] = Json::parse(R"({"workload":"agent"})");
  auto r2 = engine::parse_launch_rules(none, "launch.json", {});
  ASSERT_FALSE(r2.has_value());
  EXPECT_NE(r2.error().describe().find("no condition"), std::string::npos);
}

// Issue 16 (launch950): when.device_families narrows a rule to cards of those device-catalogue families; a family the
// catalogue does not know is a corrupt error naming the file and the rule.
TEST(LaunchRules, Issue16_DeviceFamilies) {
  const auto ok = Json::parse(R"({"schema_version":1,"rules":[{"id":"a2-only","engine":"vllm-ascend","version_min":"0.1.0","version_max":"99.0.0",
      "when":{"model_types":["qwen3"],"device_families":["ascend-a2"]},"flags":["--x-a2"],"note":"n","source":"s"}]})");
  const std::vector<std::string> known{"ascend-a2", "ascend-950"};
  auto parsed = engine::parse_launch_rules(ok, "launch.json", known);
  ASSERT_TRUE(parsed.has_value()) << parsed.error().describe();
  EXPECT_EQ(parsed->rules[0].device_families, std::vector<std::string>{"ascend-a2"});
  Json bad = ok;
  bad["rules"][0]["when"]["device_families"] = Json::parse(R"(["ascend-a2", "ascend-a9"])");
  auto r1 = engine::parse_launch_rules(bad, "launch.json", known);
  ASSERT_FALSE(r1.has_value());
  EXPECT_EQ(r1.error().kind, ErrorKind::corrupt);
  const std::string msg = r1.error().describe();
  EXPECT_NE(msg.find("launch.json: rules[a2-only]: when.device_families 'ascend-a9' is not a family"), std::string::npos) << msg;
  Json not_list = ok;
  not_list["rules"][0]["when"]["device_families"] = "ascend-a2";
  EXPECT_FALSE(engine::parse_launch_rules(not_list, "launch.json", known).has_value());
  // The shipped device catalogue names the Ascend generations the shipped rule uses.
  const auto families = device::load_device_families();
  ASSERT_TRUE(families.has_value());
  for (const char* f : {"ascend-910", "ascend-a2", "ascend-a3", "ascend-310p", "ascend-950", "hopper"})
    EXPECT_NE(std::find(families->begin(), families->end(), f), families->end()) << f;
  // build_launch: the rule holds for an ascend-a2 card only (Qwen3-8B, model_type qwen3; the default NPU engine).
  const auto m = model_of("Qwen/Qwen3-8B");
  const auto c = candidate("Qwen/Qwen3-8B", "", 1);
  const auto eng = engine_for("npu");
  EXPECT_TRUE(has(plan::build_launch(m, c, eng, *parsed, 8, {.device_family = "ascend-a2"}).serve, " --x-a2"));
  EXPECT_FALSE(has(plan::build_launch(m, c, eng, *parsed, 8, {.device_family = "ascend-950"}).serve, "--x-a2"));
  EXPECT_FALSE(has(plan::build_launch(m, c, eng, *parsed, 8, {}).serve, "--x-a2"));
}

// Issue 16: a config with an auto_map starts with --trust-remote-code (and says why); one without does not.
TEST(Launch, Issue16_TrustRemoteCodeWhereTheConfigHasAnAutoMap) {
  auto ds = model::resolve_model(pftest::shared_path("models/deepseek-ai__DeepSeek-V3/config.json"));
  ASSERT_TRUE(ds.has_value()) << ds.error().describe();
  const auto with = plan::build_launch(*ds, candidate(ds->id, "", 8), engine_for("cuda"), catalogs().rules, 8, {});
  EXPECT_NE(with.serve.find(" --trust-remote-code"), std::string::npos) << with.serve;
  bool noted = false;
  for (const auto& n : with.notes) noted |= has(n, "--trust-remote-code: config.json has an auto_map");
  EXPECT_TRUE(noted);
  const auto without = launch("Qwen/Qwen3-32B", "cuda", "", 2);
  EXPECT_EQ(without.serve.find("--trust-remote-code"), std::string::npos) << without.serve;
}

// Issue 16, commands that run as written: a model given as a hub reference (ModelSpec::id "hf:org/name@rev",
// "ms:org/name@rev") was served as `vllm serve hf:deepseek-ai/DeepSeek-V3@main --served-model-name
// deepseek-v3@main`, which vLLM cannot resolve. The serve line names the repo id, a revision other than the
// hub's default goes to --revision, ModelScope repos set VLLM_USE_MODELSCOPE=true, --trust-remote-code follows
// the fetched config's auto_map, and the published-checkpoint catalogue is looked up by the repo id.
TEST(Launch, Issue16_HubReferencesServeTheRepoId) {
  auto ds = model::resolve_model(pftest::shared_path("models/deepseek-ai__DeepSeek-V3/config.json"));
  ASSERT_TRUE(ds.has_value()) << ds.error().describe();
  struct Row {
    std::string id, serve_prefix;
    bool modelscope;
  };
  const std::vector<Row> rows = {
      {"hf:deepseek-ai/DeepSeek-V3@main", "vllm serve deepseek-ai/DeepSeek-V3 --served-model-name deepseek-v3 ", false},
      {"hf:deepseek-ai/DeepSeek-V3@86518964eaef84e3fdd98e9861759a1384f9c29d",
       "vllm serve deepseek-ai/DeepSeek-V3 --served-model-name deepseek-v3 --revision 86518964eaef84e3fdd98e9861759a1384f9c29d ", false},
      {"ms:deepseek-ai/DeepSeek-V3@master", "vllm serve deepseek-ai/DeepSeek-V3 --served-model-name deepseek-v3 ", true},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.id);
    model::ModelSpec m = *ds;
    m.id = row.id;
    const auto l = plan::build_launch(m, candidate(row.id, "", 8), engine_for("cuda"), catalogs().rules, 8, {});
    EXPECT_EQ(l.serve.rfind(row.serve_prefix, 0), 0u) << l.serve;
    EXPECT_EQ(l.serve.find("hf:"), std::string::npos) << l.serve;
    EXPECT_EQ(l.serve.find('@'), std::string::npos) << l.serve;
    EXPECT_NE(l.serve.find(" --trust-remote-code"), std::string::npos) << l.serve;
    bool modelscope = false;
    for (const auto& e : l.env) modelscope |= e == "VLLM_USE_MODELSCOPE=true";
    EXPECT_EQ(modelscope, row.modelscope);
  }
  // The AWQ upload of Qwen3-32B is found from the hub reference too.
  const auto awq = launch("Qwen/Qwen3-32B", "cuda", "awq", 2);
  auto qwen = model_of("Qwen/Qwen3-32B");
  qwen.id = "hf:Qwen/Qwen3-32B@main";
  const auto l = plan::build_launch(qwen, candidate(qwen.id, "awq", 2), engine_for("cuda"), catalogs().rules, 8, {});
  EXPECT_EQ(served_checkpoint(l.serve), "Qwen/Qwen3-32B-AWQ") << l.serve;
  EXPECT_EQ(served_checkpoint(l.serve), served_checkpoint(awq.serve));
  EXPECT_TRUE(l.prepare.empty());
}

// Issue 16 leftovers: DeepSeek-V3 is published in FP8 (block 128x128) only and msModelSlim quantizes BF16
// weights, so its W4A8_DYNAMIC row on NPUs casts the checkpoint to BF16 first (DeepSeek's fp8_cast_bf16.py),
// then runs msModelSlim on the cast's output and serves what msModelSlim writes: never `vllm serve
// deepseek-ai/DeepSeek-V3 --quantization ascend` (the FP8 repo is not an msModelSlim checkpoint).
// Sizes in the notes, by hand from config.json (hidden 7168, 61 layers of which the first 3 dense,
// intermediate 18432, 256 routed + 1 shared experts of 2048, MLA q_lora 1536, kv_lora 512, 128 heads of
// 128 + 64 rope, v 128, vocab 129280, untied):
//   attention 7168x1536 + 1536 + 1536x24576 + 7168x576 + 512 + 512x32768 + 16384x7168 = 187,107,328
//   dense layer: + 2 x 7168 norms + 3 x 7168 x 18432 = 583,483,392
//   MoE layer: + 2 x 7168 + 257 x 3 x 7168 x 2048 + 256 x 7168 router + 256 bias = 11,507,286,272
//   3 x 583,483,392 + 58 x 11,507,286,272 + 2 x 129280 x 7168 + 7168 = 671,026,419,200 parameters
//   msModelSlim loads them in BF16: 1,342,052,838,400 B = 1250 GiB of host RAM.
//   The cast writes every tensor, the MTP layer too (layer 61: one MoE layer 11,507,286,272 + enorm, hnorm,
//   shared_head.norm 3 x 7168 + eh_proj 7168 x 14336 = 102,760,448 + its own embed_tokens and shared_head.head
//   2 x 926,679,040): 13,463,426,304; (671,026,419,200 + 13,463,426,304) x 2 B = 1,368,979,691,008 B = 1275 GiB.
TEST(Launch, Issue16_Fp8CheckpointIsCastToBf16BeforeMsModelSlim) {
  const auto m = model_of("deepseek-ai/DeepSeek-V3");
  ASSERT_TRUE(m.quant.quantized());
  auto c = candidate("deepseek-ai/DeepSeek-V3", "ascend", 16);
  c.variant_id = "w4a8_dynamic";
  c.variant = "msModelSlim W4A8_DYNAMIC (attention W8A8_DYNAMIC)";
  const auto l = plan::build_launch(m, c, engine_for("npu"), catalogs().rules, 8, {});
  SCOPED_TRACE(l.serve);
  EXPECT_EQ(served_checkpoint(l.serve), "/models/DeepSeek-V3-W4A8");
  EXPECT_EQ(quantization_of(l.serve), "ascend");
  const int download = line_of(l.prepare, "hf download deepseek-ai/DeepSeek-V3 --local-dir /models/DeepSeek-V3");
  const int cast = line_of(l.prepare, "python fp8_cast_bf16.py --input-fp8-hf-path /models/DeepSeek-V3 --output-bf16-hf-path /models/DeepSeek-V3-BF16)");
  const int config = line_of(l.prepare, "c.pop('quantization_config', None); json.dump(c, open('/models/DeepSeek-V3-BF16/config.json'");
  const int quant = line_of(l.prepare, "msmodelslim quant --model_path /models/DeepSeek-V3-BF16 --save_path /models/DeepSeek-V3-W4A8 ");
  ASSERT_GE(download, 0);
  EXPECT_LT(download, cast);
  EXPECT_LT(cast, config);
  EXPECT_LT(config, quant);
  EXPECT_TRUE(has(l.prepare[quant], "--model_type DeepSeek-V3 --quant_type w4a8")) << l.prepare[quant];
  int downloads = 0;
  for (const auto& p : l.prepare) downloads += has(p, "hf download") ? 1 : 0;
  EXPECT_EQ(downloads, 1);  // msModelSlim reads the cast's output, not a second download over it
  bool cast_note = false, ram_note = false;
  for (const auto& n : l.notes) {
    cast_note |= has(n, "deepseek-fp8-cast-bf16: ") && has(n, "plus 1275 GiB for the BF16 copy") && has(n, "https://github.com/deepseek-ai/DeepSeek-V3");
    ram_note |= has(n, "msmodelslim-w4a8: ") && has(n, "about 1250 GiB of RAM");
  }
  EXPECT_TRUE(cast_note);
  EXPECT_TRUE(ram_note);
  // A published checkpoint of that variant is served as it is: DeepSeek-R1 in W8A8 from vllm-ascend's upload.
  const auto r1 = launch("deepseek-ai/DeepSeek-R1", "npu", "ascend", 16);
  EXPECT_EQ(served_checkpoint(r1.serve), "vllm-ascend/DeepSeek-R1-W8A8");
  EXPECT_TRUE(r1.prepare.empty());
  // A repo the catalogue lists as a release of a BF16 original (Qwen/Qwen3-32B-FP8 of Qwen/Qwen3-32B) starts
  // from that original: the published W8A8 upload of it, or msModelSlim on a download of it; no cast.
  const auto fp8_w8a8 = launch("Qwen/Qwen3-32B-FP8", "npu", "ascend", 2);
  EXPECT_EQ(served_checkpoint(fp8_w8a8.serve), "vllm-ascend/Qwen3-32B-W8A8");
  EXPECT_TRUE(fp8_w8a8.prepare.empty());
  auto q = candidate("Qwen/Qwen3-32B-FP8", "ascend", 2);
  q.variant_id = "w4a8_dynamic";
  const auto fp8_w4a8 = plan::build_launch(model_of("Qwen/Qwen3-32B-FP8"), q, engine_for("npu"), catalogs().rules, 8, {});
  EXPECT_EQ(served_checkpoint(fp8_w4a8.serve), "/models/Qwen3-32B-W4A8");
  EXPECT_GE(line_of(fp8_w4a8.prepare, "hf download Qwen/Qwen3-32B --local-dir /models/Qwen3-32B"), 0);
  EXPECT_GE(line_of(fp8_w4a8.prepare, "msmodelslim quant --model_path /models/Qwen3-32B --save_path /models/Qwen3-32B-W4A8 --device npu:0,1 --model_type Qwen3-32B "), 0);
  EXPECT_LT(line_of(fp8_w4a8.prepare, "fp8_cast_bf16.py"), 0);
  // A checkpoint whose format has no cast to BF16 (ModelOpt NVFP4) and that the catalogue does not list as a release of
  // its original: the row names the gap, not the repo.
  auto nv = candidate("nvidia/Qwen3.6-27B-NVFP4", "ascend", 2);
  const auto lnv = plan::build_launch(model_of("nvidia/Qwen3.6-27B-NVFP4"), nv, engine_for("npu"), catalogs().rules, 8, {});
  EXPECT_EQ(served_checkpoint(lnv.serve), "/models/Qwen3.6-27B-NVFP4-w8a8");
  ASSERT_EQ(lnv.prepare.size(), 1u);
  EXPECT_TRUE(has(lnv.prepare[0], "no cast of that format back to BF16")) << lnv.prepare[0];
  // h-quant12: nvidia/Qwen3-32B-NVFP4 is catalogued as the modelopt_nvfp4 release of Qwen/Qwen3-32B, so like Qwen's FP8
  // releases it starts from its original's published W8A8 upload (it named the gap before).
  auto nv32 = candidate("nvidia/Qwen3-32B-NVFP4", "ascend", 2);
  const auto lnv32 = plan::build_launch(model_of("nvidia/Qwen3-32B-NVFP4"), nv32, engine_for("npu"), catalogs().rules, 8, {});
  EXPECT_EQ(served_checkpoint(lnv32.serve), "vllm-ascend/Qwen3-32B-W8A8");
  EXPECT_TRUE(lnv32.prepare.empty());
}

// Issue 16 (h-conv12): vLLM's bitsandbytes loader raises "Prequant BitsAndBytes models with tensor parallelism is not
// supported. Please try with pipeline parallelism." for a pre-quantized bnb checkpoint when TP > 1, and quantizes a
// BF16 checkpoint itself at any TP. unsloth's NF4 export of Llama-3.1-8B-Instruct is served at TP 1; at TP 2 the row
// serves the BF16 original with --quantization bitsandbytes and says why. Before, TP 2 served the unsloth repo.
TEST(Launch, Issue16_PrequantizedBitsAndBytesOnlyAtTp1ElseInFlight) {
  model::ModelSpec m = model_of(pftest::shared_path("models/meta-llama__Meta-Llama-3.1-8B/config.json"));
  m.id = "meta-llama/Llama-3.1-8B-Instruct";  // the same architecture; the catalogue's base_model
  for (int64_t tp : {1, 2}) {
    SCOPED_TRACE(tp);
    plan::Candidate c = candidate(m.id, "bitsandbytes", tp);
    c.variant_id = "bnb_4bit";
    const auto l = plan::build_launch(m, c, engine_for("cuda"), catalogs().rules, 8, {});
    const std::string expect = tp == 1 ? "unsloth/meta-llama-3.1-8b-instruct-bnb-4bit" : "meta-llama/Llama-3.1-8B-Instruct";
    EXPECT_EQ(served_checkpoint(l.serve), expect) << l.serve;
    EXPECT_TRUE(has(l.serve, " --quantization bitsandbytes")) << l.serve;
    EXPECT_TRUE(l.prepare.empty());
    bool why = false;
    for (const auto& n : l.notes) why |= has(n, "vLLM raises \"ValueError: Prequant BitsAndBytes models with tensor parallelism is not supported.");
    EXPECT_EQ(why, tp > 1);
  }
}

// Issue 19 (round 18): unservable_reason writes none of a start command's text (no notes, no conversion commands) but
// must answer as build_launch does: for every catalogue model, every variant of the catalogue and both engines at TP 1
// and TP 8, the reason is "" exactly where build_launch's `prepare` has no "# ...: produce ... first" line, and where it
// is not "" that line is "# " + the reason after "no start command: ".
TEST(Launch, Issue19_UnservableReasonAnswersAsTheStartCommandDoes) {
  const auto& variants = model::load_variant_catalog();
  ASSERT_TRUE(variants.has_value());
  size_t served = 0, unservable = 0;
  for (const auto& m : preflight::test::catalogue_model_specs())
    for (const char* platform : {"npu", "cuda"}) {
      const engine::EngineProfile e = engine_for(platform);
      for (const auto& v : variants->variants)
        for (const int64_t devices : {1, 8}) {
          plan::Candidate c = candidate(m.id, v.engine_quantization, devices);
          c.variant_id = v.id;
          c.variant = v.name;
          const std::string reason = plan::unservable_reason(m, c, e, catalogs().rules.quantized);
          const plan::Launch l = plan::build_launch(m, c, e, catalogs().rules, 8);
          std::string gap_line;
          for (const auto& line : l.prepare)
            if (line.rfind("# ", 0) == 0 && line.find(": produce ") != std::string::npos && line.size() > 6 && line.compare(line.size() - 6, 6, " first") == 0)
              gap_line = line;
          const std::string at = m.id + " " + v.id + " " + platform + " x" + std::to_string(devices);
          if (reason.empty()) {
            EXPECT_EQ(gap_line, "") << at;
            ++served;
          } else {
            const std::string prefix = "no start command: ";
            ASSERT_EQ(reason.rfind(prefix, 0), 0u) << at << ": " << reason;
            EXPECT_EQ(gap_line.rfind("# " + reason.substr(prefix.size()) + ": produce ", 0), 0u) << at << ": " << gap_line;
            ++unservable;
          }
        }
    }
  EXPECT_GT(served, 100u);
  EXPECT_GT(unservable, 100u);
}

// Issue 16 (ux28): `plan Qwen/Qwen3-8B --engine llama.cpp --variant gguf_q4_k_m` sized its row as GGUF Q4_K_M
// (4.9 bits per weight) and started `llama-server -m /models/Qwen3-8B-BF16.gguf`, the BF16 file convert_hf_to_gguf.py
// writes (16 bits per weight, three times the bytes the row was sized with). The start now quantizes that file with
// llama.cpp's llama-quantize (usage: model-f32.gguf [model-quant.gguf] type [nthreads]; type names from
// tools/quantize/quantize.cpp QUANT_OPTIONS) and serves the quantized file; the row as published still serves BF16.
// user37: the serve line ran a `llama-server` from PATH that no line installed (a fresh machine has only the checkout the
// conversion cloned): the checkout now builds llama-server too (its CMake target, tools/server) and the row runs that one.
TEST(Launch, Issue16_GgufPresetRowServesTheQuantizedFile) {
  auto engines = engine::select_engine(catalogs().engines, "llama.cpp", "");
  ASSERT_TRUE(engines.has_value()) << engines.error().describe();
  const model::ModelSpec m = model_of("Qwen/Qwen3-8B");
  struct Row {
    const char* variant_id;
    const char* served;
    const char* quantize;  // "" = no llama-quantize step
  };
  const Row rows[] = {
      {"gguf_q4_k_m", "/models/Qwen3-8B-Q4_K_M.gguf", "llama.cpp/build/bin/llama-quantize /models/Qwen3-8B-BF16.gguf /models/Qwen3-8B-Q4_K_M.gguf Q4_K_M"},
      {"gguf_q8_0", "/models/Qwen3-8B-Q8_0.gguf", "llama.cpp/build/bin/llama-quantize /models/Qwen3-8B-BF16.gguf /models/Qwen3-8B-Q8_0.gguf Q8_0"},
      {"", "/models/Qwen3-8B-BF16.gguf", ""},
  };
  for (const auto& row : rows) {
    plan::Candidate c = candidate(m.id, row.variant_id[0] ? "gguf" : "", 1);
    c.variant_id = row.variant_id;
    const plan::Launch l = plan::build_launch(m, c, *engines, catalogs().rules, 8, plan::LaunchOptions{});
    SCOPED_TRACE(std::string(row.variant_id) + ": " + l.serve);
    EXPECT_EQ(l.serve.rfind(std::string("llama.cpp/build/bin/llama-server -m ") + row.served + " -c 32768 ", 0), 0u);
    const int convert = line_of(l.prepare, "python3 llama.cpp/convert_hf_to_gguf.py /models/Qwen3-8B --outtype bf16 --outfile /models/Qwen3-8B-BF16.gguf");
    ASSERT_GE(convert, 0);
    if (row.quantize[0]) {
      const int build = line_of(l.prepare, "cmake --build llama.cpp/build --target llama-quantize llama-server -j");
      const int quantize = line_of(l.prepare, row.quantize);
      EXPECT_GT(build, convert);
      EXPECT_GT(quantize, build);
    } else {
      EXPECT_EQ(line_of(l.prepare, "llama-quantize"), -1);
      EXPECT_GT(line_of(l.prepare, "cmake --build llama.cpp/build --target llama-server -j"), convert);
    }
  }
}

// Issue 16: a GGUF preset row on vLLM (quant29's recipe) serves the one .gguf file llama-quantize writes with
// --quantization gguf and the base repository's tokenizer: vLLM's GGUF page ("We recommend using the tokenizer from base
// model instead of GGUF model", `vllm serve ./tinyllama-1.1b-chat-v1.0.Q4_K_M.gguf --tokenizer TinyLlama/TinyLlama-1.1B-Chat-v1.0`,
// https://docs.vllm.ai/en/v0.9.2/features/quantization/gguf.html). Without it vLLM converts the GGUF vocabulary itself.
TEST(Launch, Issue16_VllmGgufRowPassesTheBaseTokenizer) {
  auto engines = engine::select_engine(catalogs().engines, "vllm", "");
  ASSERT_TRUE(engines.has_value()) << engines.error().describe();
  const model::ModelSpec m = model_of("Qwen/Qwen3-8B");
  plan::Candidate c = candidate(m.id, "gguf", 1);
  c.variant_id = "gguf_q4_k_m";
  const plan::Launch l = plan::build_launch(m, c, *engines, catalogs().rules, 8, plan::LaunchOptions{});
  SCOPED_TRACE(l.serve);
  EXPECT_EQ(l.serve.rfind("vllm serve /models/Qwen3-8B-Q4_K_M.gguf ", 0), 0u);
  EXPECT_NE(l.serve.find(" --quantization gguf"), std::string::npos);
  EXPECT_NE(l.serve.find(" --tokenizer Qwen/Qwen3-8B"), std::string::npos);
  // A published (hub) checkpoint row names no separate tokenizer.
  const plan::Launch bf16 = plan::build_launch(m, candidate(m.id, "", 1), *engines, catalogs().rules, 8, plan::LaunchOptions{});
  EXPECT_EQ(bf16.serve.find("--tokenizer"), std::string::npos) << bf16.serve;
}

// Issue 16: an AutoRound row served `--quantization auto-round`, a name vLLM 0.16's argparse refuses (its choices list
// `inc` instead; data/engines/quantization_methods.json). vLLM's AutoRound page serves the checkpoint with no flag
// (`vllm serve Intel/DeepSeek-R1-0528-Qwen3-8B-int4-AutoRound`, https://docs.vllm.ai/en/v0.11.2/features/quantization/auto_round/):
// the method comes from its config, at every version.
TEST(Launch, Issue16_AutoRoundRowsPassNoQuantizationFlag) {
  auto engines = engine::select_engine(catalogs().engines, "vllm", "");
  ASSERT_TRUE(engines.has_value()) << engines.error().describe();
  const model::ModelSpec m = model_of("Qwen/Qwen3-8B");
  plan::Candidate c = candidate(m.id, "auto-round", 1);
  c.variant_id = "autoround";
  const plan::Launch l = plan::build_launch(m, c, *engines, catalogs().rules, 8, plan::LaunchOptions{});
  SCOPED_TRACE(l.serve);
  EXPECT_EQ(l.serve.rfind("vllm serve Intel/Qwen3-8B-int4-AutoRound ", 0), 0u);
  EXPECT_EQ(l.serve.find("--quantization"), std::string::npos);
}

// Issue 16 (ux28): the download step was `huggingface-cli download REPO --local-dir DIR`. Since huggingface_hub 1.0 that
// entry point prints "`huggingface-cli` is deprecated and no longer works" and exits 1 (setup.py console_scripts
// huggingface-cli=huggingface_hub.cli.deprecated_cli:main), and transformers 5, which vLLM-Ascend 0.23 pins, needs
// huggingface_hub 1.x: the first line of every conversion failed as pasted. The CLI is `hf download` (huggingface_hub >= 0.34).
TEST(QuantizedCatalog, Issue16_DownloadsUseTheHfCommand) {
  auto shipped = engine::load_quantized_catalog();
  ASSERT_TRUE(shipped.has_value()) << shipped.error().describe();
  int downloads = 0;
  auto check = [&](const std::string& id, const std::vector<std::string>& commands) {
    for (const auto& cmd : commands) {
      EXPECT_EQ(cmd.find("huggingface-cli"), std::string::npos) << id << ": " << cmd;
      if (cmd.rfind("hf download ", 0) == 0) ++downloads;
    }
  };
  for (const auto& c : shipped->conversions) check(c.id, c.commands);
  for (const auto& c : shipped->casts) check(c.id, c.commands);
  EXPECT_GE(downloads, 5);
  const auto l = launch("Qwen/Qwen3-14B", "npu", "ascend", 1);
  EXPECT_GE(line_of(l.prepare, "hf download Qwen/Qwen3-14B --local-dir /models/Qwen3-14B"), 0);
  for (const auto& p : l.prepare) EXPECT_EQ(p.find("huggingface-cli"), std::string::npos) << p;
}

// Issue 16 (ux28), seeds/000 section 4.3.1: the seed served Eco-Tech/Qwen3.6-27B-w8a8 (ModelScope; msModelSlim's
// quant_model_description.json in its file list) with --quantization ascend, and the vLLM-Ascend tutorial
// Qwen3.5-27B-Qwen3.6-27B serves the same repo at TP 2. plan printed "no published checkpoint ... is known" and a
// msModelSlim conversion needing ~51 GiB of host memory; the W8A8 row now starts from that upload.
TEST(Launch, Issue16_Qwen36_27BW8A8ServesThePublishedUpload) {
  const auto l = launch("Qwen/Qwen3.6-27B", "npu", "ascend", 2);
  EXPECT_EQ(served_checkpoint(l.serve), "Eco-Tech/Qwen3.6-27B-w8a8") << l.serve;
  EXPECT_EQ(quantization_of(l.serve), "ascend");
  EXPECT_TRUE(l.prepare.empty()) << l.prepare.front();
  EXPECT_NE(std::find(l.env.begin(), l.env.end(), "VLLM_USE_MODELSCOPE=true"), l.env.end());
}

// Issue 16 (ux28): `plan Qwen/Qwen3-14B --devices RTX4090 --variant awq` started `vllm serve Qwen/Qwen3-14B-AWQ ...
// --quantization awq`. vLLM then logs "Detected that the model can run with awq_marlin, however you specified
// quantization=awq explicitly, so forcing awq. Use quantization=awq_marlin for faster inference" and "awq quantization
// is not fully optimized yet" (vllm#20112, the same checkpoint): the slow GEMM kernel. Without the flag vLLM reads
// quant_method from config.json and picks awq_marlin where the card has Marlin (and plain awq where it does not, so the
// line runs on every card). The same holds for a GPTQ conversion output (gptq_marlin).
TEST(Launch, Issue16_AwqAndGptqCheckpointsLeaveTheMethodToTheirConfig) {
  for (const char* q : {"awq", "gptq"}) {
    const auto l = launch("Qwen/Qwen3-14B", "cuda", q, 1);
    SCOPED_TRACE(std::string(q) + ": " + l.serve);
    EXPECT_EQ(quantization_of(l.serve), "");
    EXPECT_NE(line_of(l.notes, std::string("no --quantization: vLLM reads quant_method from the checkpoint's config.json") ), -1);
  }
  EXPECT_EQ(served_checkpoint(launch("Qwen/Qwen3-14B", "cuda", "awq", 1).serve), "Qwen/Qwen3-14B-AWQ");
  // A method vLLM has no faster kernel for keeps its flag: FP8 quantized at load, ModelSlim on NPU.
  EXPECT_EQ(quantization_of(launch("Qwen/Qwen3-32B", "cuda", "fp8", 1).serve), "fp8");
  EXPECT_EQ(quantization_of(launch("Qwen/Qwen3-32B", "npu", "ascend", 1).serve), "ascend");
}

// Issue 19 (planfast13): the head of a serve line ("vllm serve CHECKPOINT --served-model-name NAME [--revision R]") is
// kept per thread by the checkpoint, the model id and whether the plan's settings give --served-model-name. Built in
// turn for two models, with and without the user's --served-model-name, each line is that of its own inputs: the name
// is the repo's last part in lower case (served_name: "Qwen3-32B" -> "qwen3-32b"), left out where the settings carry
// their own (planq32: the user's is written once, among the settings' arguments), and a revision other than "main"
// goes to --revision. With the settings' switch left out of the key, the third line named the model twice.
TEST(Launch, Issue19_ServeHeadIsThatOfItsOwnInputs) {
  const auto qwen32 = model_of("Qwen/Qwen3-32B");
  auto pinned = qwen32;
  pinned.id = "hf:Qwen/Qwen3-32B@abc123";
  const auto qwen8 = model_of("Qwen/Qwen3-8B");
  const plan::EngineArgs named{.serve_args = {"--served-model-name mine"}};
  const auto cuda = engine_for("cuda");
  const auto line = [&](const model::ModelSpec& m, const plan::EngineArgs* args) {
    return plan::build_launch(m, candidate(m.id, "", 2), cuda, catalogs().rules, 8, {.engine_args = args}).serve;
  };
  for (int round = 0; round < 2; ++round) {  // the second round finds every head kept
    SCOPED_TRACE(round);
    EXPECT_EQ(line(qwen32, nullptr).rfind("vllm serve Qwen/Qwen3-32B --served-model-name qwen3-32b --tensor-parallel-size 2 ", 0), 0u);
    const std::string own = line(qwen32, &named);
    EXPECT_EQ(own.rfind("vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 ", 0), 0u) << own;
    EXPECT_EQ(own.find("--served-model-name"), own.rfind("--served-model-name")) << own;  // the user's, once
    EXPECT_NE(own.find(" --served-model-name mine"), std::string::npos) << own;
    EXPECT_EQ(line(qwen8, nullptr).rfind("vllm serve Qwen/Qwen3-8B --served-model-name qwen3-8b --tensor-parallel-size 2 ", 0), 0u);
    EXPECT_EQ(line(pinned, nullptr).rfind("vllm serve Qwen/Qwen3-32B --served-model-name qwen3-32b --revision abc123 --tensor-parallel-size 2 ", 0), 0u);
    EXPECT_EQ(line(qwen8, &named).rfind("vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2 ", 0), 0u);
  }
}
