// `plan --engine mindie` (issue 18): the config.json it writes is checked against a JSON schema written from
// MindIE's documentation (tests/plan/mindie_config.schema.json, source in its $comment) by the small validator
// below (type, required, additionalProperties false, properties, items, minItems/maxItems, minimum/maximum, enum),
// plus the documented cross-key rules. Expected values are derived by hand in the comments.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include "device/device_spec.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/mindie.hpp"
#include "model/model_source.hpp"
#include "model/model_spec.hpp"
#include "plan/mindie_config.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

bool type_matches(const Json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "string") return v.is_string();
  return false;
}

// Appends one line per violation, each naming the JSON path.
void validate(const Json& v, const Json& schema, const std::string& path, std::vector<std::string>& errors) {
  if (schema.contains("type") && !type_matches(v, schema["type"])) {
    errors.push_back(path + ": expected " + schema["type"].get<std::string>() + ", found " + v.type_name());
    return;
  }
  if (schema.contains("enum") && std::find(schema["enum"].begin(), schema["enum"].end(), v) == schema["enum"].end())
    errors.push_back(path + ": " + v.dump() + " is not one of " + schema["enum"].dump());
  if (v.is_number() && schema.contains("minimum") && v.get<double>() < schema["minimum"].get<double>()) errors.push_back(path + ": below minimum");
  if (v.is_number() && schema.contains("maximum") && v.get<double>() > schema["maximum"].get<double>()) errors.push_back(path + ": above maximum");
  if (v.is_array()) {
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>()) errors.push_back(path + ": too few items");
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>()) errors.push_back(path + ": too many items");
    if (schema.contains("items"))
      for (size_t i = 0; i < v.size(); ++i) validate(v[i], schema["items"], path + "[" + std::to_string(i) + "]", errors);
  }
  if (v.is_object()) {
    for (const auto& key : schema.value("required", Json::array()))
      if (!v.contains(key.get<std::string>())) errors.push_back(path + ": missing required key " + key.get<std::string>());
    const Json props = schema.value("properties", Json::object());
    for (const auto& [k, child] : v.items()) {
      if (props.contains(k)) validate(child, props[k], path + "." + k, errors);
      else if (schema.value("additionalProperties", true) == false) errors.push_back(path + ": undocumented key " + k);
    }
  }
}

Json load_schema() {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/plan/mindie_config.schema.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

// The documented rules between keys (service_parameter_configuration.md).
std::vector<std::string> cross_key_errors(const Json& c) {
  std::vector<std::string> e;
  const auto& b = c["BackendConfig"];
  const auto& d = b["ModelDeployConfig"];
  const auto& m = d["ModelConfig"][0];
  const auto& s = b["ScheduleConfig"];
  if (s["maxPrefillTokens"].get<int64_t>() < d["maxInputTokenLen"].get<int64_t>()) e.push_back("maxPrefillTokens < maxInputTokenLen");
  if (s["maxIterTimes"].get<int64_t>() > d["maxSeqLen"].get<int64_t>()) e.push_back("maxIterTimes > maxSeqLen");
  if (s["maxPrefillBatchSize"].get<int64_t>() > s["maxBatchSize"].get<int64_t>()) e.push_back("maxPrefillBatchSize > maxBatchSize");
  if (s["maxPreemptCount"].get<int64_t>() > s["maxBatchSize"].get<int64_t>()) e.push_back("maxPreemptCount > maxBatchSize");
  if (m["npuMemSize"].get<int64_t>() == 0) e.push_back("npuMemSize 0");
  if (!b.value("multiNodesInferEnabled", false) && m["worldSize"].get<int64_t>() != static_cast<int64_t>(b["npuDeviceIds"][0].size()))
    e.push_back("worldSize != NPUs in npuDeviceIds");
  return e;
}

struct Setup {
  model::ModelSpec model;
  device::DeviceSpec device;
  estimate::MindieCatalog catalog;
};

Setup setup(const std::string& id) {
  Setup s;
  s.model = *model::resolve_model(id);
  auto devices = device::load_device_catalog();
  s.device = *device::find_device(*devices, "910B3");
  s.catalog = *estimate::load_mindie_catalog();
  return s;
}

}  // namespace

// The validator itself fails on what the documentation forbids (so the passing case below means something).
TEST(MindiePlan, Issue18_SchemaValidatorRejectsUndocumentedAndOutOfRange) {
  auto s = setup("Qwen/Qwen3-8B");
  auto o = estimate::mindie_default_options(s.catalog);
  const Json good = plan::render_mindie_config(o, "qwen3-8b", "/home/weight/qwen3-8b", 1, 8, s.catalog);
  const Json schema = load_schema();
  std::vector<std::string> errors;
  validate(good, schema, "$", errors);
  EXPECT_TRUE(errors.empty()) << errors.front();

  const std::vector<std::pair<std::function<void(Json&)>, std::string>> bad{
      {[](Json& c) { c["BackendConfig"]["ScheduleConfig"].erase("cacheBlockSize"); }, "missing required key cacheBlockSize"},
      {[](Json& c) { c["BackendConfig"]["ScheduleConfig"]["cacheBlockSize"] = 256; }, "cacheBlockSize: above maximum"},
      {[](Json& c) { c["ServerConfig"]["port"] = "1025"; }, "port: expected integer"},
      {[](Json& c) { c["BackendConfig"]["ModelDeployConfig"]["ModelConfig"][0]["backendType"] = "torch"; }, "backendType"},
      {[](Json& c) { c["BackendConfig"]["ModelDeployConfig"]["ModelConfig"][0]["npuMemSizeGB"] = 1; }, "undocumented key npuMemSizeGB"},
  };
  for (const auto& [edit, fragment] : bad) {
    Json c = good;
    edit(c);
    errors.clear();
    validate(c, schema, "$", errors);
    ASSERT_FALSE(errors.empty()) << fragment;
    EXPECT_NE(errors.front().find(fragment), std::string::npos) << errors.front();
  }
}

// Issue 16 (mindie34): MTP is written as MindIE's MTP page writes it, a JSON text in ModelConfig.plugin_params
// ('"plugin_params": "{\"plugin_type\":\"mtp\",\"num_speculative_tokens\": 1}"'); without MTP the key is absent.
TEST(MindiePlan, Issue16_MtpWritesPluginParams) {
  auto s = setup("Qwen/Qwen3-8B");
  auto o = estimate::mindie_default_options(s.catalog);
  const Json off = plan::render_mindie_config(o, "qwen3-8b", "/home/weight/qwen3-8b", 1, 8, s.catalog);
  EXPECT_FALSE(off["BackendConfig"]["ModelDeployConfig"]["ModelConfig"][0].contains("plugin_params"));
  o.num_speculative_tokens = 2;
  const Json on = plan::render_mindie_config(o, "qwen3-8b", "/home/weight/qwen3-8b", 1, 8, s.catalog);
  EXPECT_EQ(on["BackendConfig"]["ModelDeployConfig"]["ModelConfig"][0]["plugin_params"], R"({"plugin_type":"mtp","num_speculative_tokens":2})");
  std::vector<std::string> errors;
  validate(on, load_schema(), "$", errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
}

// Qwen3-8B, context 8192 on one 910B3: maxIterTimes min(512, 8192 / 2) = 512, maxInputTokenLen 8192 - 512 = 7680,
// maxPrefillTokens max(8192, 7680) = 8192. Blocks per request Ceil(7680/128) + Ceil(512/128) = 60 + 4 = 64.
// KV pool (pessimistic end, as in test_mindie: 34,845,704,192 B) / 18,874,368 B = 1846 blocks -> 1846 / 64 = 28 requests:
// maxBatchSize 28, maxPrefillBatchSize min(50, 28) = 28. worldSize 1, npuDeviceIds [[0]].
TEST(MindiePlan, Issue18_SingleCardConfigIsCompleteAndSized) {
  auto s = setup("Qwen/Qwen3-8B");
  plan::MindiePlanRequest req;
  req.base = estimate::mindie_default_options(s.catalog);
  req.context_tokens = 8192;
  auto p = plan::plan_mindie(s.model, s.device, req, s.catalog);
  ASSERT_TRUE(p.has_value()) << p.error().describe();
  std::vector<std::string> errors;
  validate(p->config, load_schema(), "$", errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_TRUE(cross_key_errors(p->config).empty());
  const auto& b = p->config["BackendConfig"];
  EXPECT_EQ(b["npuDeviceIds"], Json::parse("[[0]]"));
  EXPECT_EQ(b["ModelDeployConfig"]["ModelConfig"][0]["worldSize"], 1);
  EXPECT_EQ(b["ModelDeployConfig"]["ModelConfig"][0]["modelName"], "Qwen3-8B");
  EXPECT_EQ(b["ModelDeployConfig"]["ModelConfig"][0]["modelWeightPath"], "/home/weight/Qwen3-8B");
  EXPECT_EQ(b["ModelDeployConfig"]["maxSeqLen"], 8192);
  EXPECT_EQ(b["ModelDeployConfig"]["maxInputTokenLen"], 7680);
  EXPECT_EQ(b["ScheduleConfig"]["maxPrefillTokens"], 8192);
  EXPECT_EQ(b["ScheduleConfig"]["maxIterTimes"], 512);
  EXPECT_EQ(b["ScheduleConfig"]["maxBatchSize"], 28);
  EXPECT_EQ(b["ScheduleConfig"]["maxPrefillBatchSize"], 28);
  EXPECT_EQ(b["multiNodesInferEnabled"], false);
  EXPECT_NE(p->start_script.find("unset RANKTABLEFILE"), std::string::npos);
  EXPECT_NE(p->start_script.find("mindieservice_daemon"), std::string::npos);
  EXPECT_LT(p->start_script.find("set_env.sh"), p->start_script.find("mindie_llm_server"));
}

// Qwen2.5-72B bf16 (~145 GB): per card 1 -> ~135 GiB and 2 -> ~68 GiB exceed 64 GiB x 0.8 less 3.04 GiB system (48.2 GiB),
// 4 -> ~34 GiB leaves ~13 GiB of KV: 80 layers x 2 heads x 256 x 2 B = 81,920 B per token, 256 + 4 blocks per
// 32768-token request -> a few requests fit. The plan is worldSize 4 with two rejected layouts that say why.
TEST(MindiePlan, Issue18_SmallestWorldSizeThatFits) {
  auto s = setup("Qwen/Qwen2.5-72B");
  plan::MindiePlanRequest req;
  req.base = estimate::mindie_default_options(s.catalog);
  req.context_tokens = 32768;
  auto p = plan::plan_mindie(s.model, s.device, req, s.catalog);
  ASSERT_TRUE(p.has_value()) << p.error().describe();
  EXPECT_EQ(p->options.world_size, 4);
  ASSERT_EQ(p->rejected.size(), 2u);
  EXPECT_NE(p->rejected[0].find("weight loading"), std::string::npos) << p->rejected[0];
  EXPECT_EQ(p->config["BackendConfig"]["npuDeviceIds"], Json::parse("[[0,1,2,3]]"));
  EXPECT_TRUE(cross_key_errors(p->config).empty());
}

// Qwen3-235B-A22B bf16 (~470 GB): 8 cards give ~55 GiB of weights per card (> 48.2), 16 cards ~27 GiB: two nodes of 8.
// Multi-node: multiNodesInferEnabled, npuDeviceIds of one node ([[0..7]]), RANKTABLEFILE and MIES_CONTAINER_IP per node.
TEST(MindiePlan, Issue18_TwoNodesUseRanktable) {
  auto s = setup("Qwen/Qwen3-235B-A22B");
  plan::MindiePlanRequest req;
  req.base = estimate::mindie_default_options(s.catalog);
  req.context_tokens = 8192;
  auto p = plan::plan_mindie(s.model, s.device, req, s.catalog);
  ASSERT_TRUE(p.has_value()) << p.error().describe();
  EXPECT_EQ(p->options.world_size, 16);
  EXPECT_EQ(p->nodes, 2);
  std::vector<std::string> errors;
  validate(p->config, load_schema(), "$", errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(p->config["BackendConfig"]["multiNodesInferEnabled"], true);
  EXPECT_EQ(p->config["BackendConfig"]["npuDeviceIds"], Json::parse("[[0,1,2,3,4,5,6,7]]"));
  EXPECT_NE(p->start_script.find("RANKTABLEFILE"), std::string::npos);
  EXPECT_NE(p->start_script.find("MIES_CONTAINER_IP"), std::string::npos);
  EXPECT_LT(p->start_script.find("set_env.sh"), p->start_script.find("RANKTABLEFILE="));
}

// The CLI end to end: fit prints MindIE's numbers and exits by the verdict; plan --config-out writes the files.
// Issue 15 (evid33): MindIE sizes a multimodal model's npuMemSize -1 pool from maxBatchSize x maxIterTimes, and the plan
// sets maxBatchSize from the pool, so the plan writes npuMemSize itself: the largest whole GiB that leaves the 26 GiB
// MindIE's post-warm-up check asks of a 60 GiB-or-more card at maxInputTokenLen 7680 (> 4096) and fits the fraction.
// Qwen2.5-VL-7B on one 910B3 (runtime total 65,452,113,920 B) at context 8192: runtime band high end =
// 2 x (8192 x (2 x 3584 + 2 x 18944) x 2 + 50 x 152,064 x 4) = 1,537,220,608 B; the free-memory bound
// 65,452,113,920 - weights - 1,537,220,608 - 26 x 2^30 is below the fraction bound 0.8 x 65,452,113,920 - weights -
// 1,537,220,608 (0.2 x the total is 12.2 GiB, less than 26), so npuMemSize = floor(that / 2^30).
TEST(MindiePlan, Issue15_MultimodalPlanWritesNpuMemSize) {
  auto s = setup("Qwen/Qwen2.5-VL-7B-Instruct");
  plan::MindiePlanRequest req;
  req.base = estimate::mindie_default_options(s.catalog);
  req.context_tokens = 8192;
  auto p = plan::plan_mindie(s.model, s.device, req, s.catalog);
  ASSERT_TRUE(p.has_value()) << p.error().describe();
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double weights = model::compute_weight_bytes(s.model).total;
  const auto expected = static_cast<int64_t>(std::floor((65452113920.0 - weights - 1537220608.0 - 26.0 * gib) / gib));
  EXPECT_GT(expected, 0);
  EXPECT_EQ(p->config["BackendConfig"]["ModelDeployConfig"]["ModelConfig"][0]["npuMemSize"], expected);
  EXPECT_EQ(p->estimate.verdict, estimate::MindieVerdict::fits) << p->estimate.reason;
}

TEST(MindieCli, Issue18_FitAndPlanEndToEnd) {
  auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine mindie --npu-mem-size 20");
  EXPECT_EQ(fit.code, 0) << fit.out;
  EXPECT_NE(fit.out.find("Total Block Num 1137 to 1137"), std::string::npos) << fit.out;
  EXPECT_NE(fit.out.find("verdict: fits"), std::string::npos) << fit.out;

  auto json = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine mindie --npu-mem-size 20 --json", {.with_stderr = false});
  ASSERT_EQ(json.code, 0);
  const Json j = Json::parse(json.out);
  EXPECT_EQ(j["engine"], "mindie");
  EXPECT_EQ(j["mindie"]["total_blocks"], Json::parse("[1137,1137]"));
  EXPECT_EQ(j["mindie"]["blocks_per_request"], 20);

  auto big = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine mindie --npu-mem-size 40");
  EXPECT_EQ(big.code, 1) << big.out;
  auto bad = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine mindie --cache-block-size 256");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("cacheBlockSize = 256"), std::string::npos) << bad.out;
  auto gpu = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --engine mindie");
  EXPECT_EQ(gpu.code, 2) << gpu.out;
  EXPECT_NE(gpu.out.find("Ascend NPUs"), std::string::npos) << gpu.out;

  const std::string dir = pftest::scratch_dir("mindie-plan");
  auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B3 --engine mindie --context 8192 --config-out " + dir);
  EXPECT_EQ(plan.code, 0) << plan.out;
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/config.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  std::ifstream in(dir + "/config.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const Json config = Json::parse(ss.str());
  std::vector<std::string> errors;
  validate(config, load_schema(), "$", errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(config["BackendConfig"]["ScheduleConfig"]["maxBatchSize"], 28);
  EXPECT_EQ(::stat((dir + "/start.sh").c_str(), &st), 0);

  auto pj = pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B3 --engine mindie --context 8192 --json", {.with_stderr = false});
  ASSERT_EQ(pj.code, 0);
  const Json planned = Json::parse(pj.out);
  EXPECT_EQ(planned["engine"], "mindie");
  EXPECT_EQ(planned["mindie"]["nodes"], 1);
  EXPECT_EQ(planned["config"], config);
  EXPECT_NE(planned["start_script"].get<std::string>().find("Daemon start success"), std::string::npos);
}

// Issue 16 (ux28), "compare vLLM-Ascend with MindIE for Qwen3-32B on 910B3": a vLLM user types vLLM's flags.
// `fit ... --engine mindie --tensor-parallel-size 2` said "unknown flag --tensor-parallel-size; did you mean
// --npu-mem-size", and `fit --engine mindie --help` printed vLLM's help, which names no MindIE flag. Each vLLM flag is
// now refused with MindIE's own spelling (exit 2), --help lists MindIE's flags (and llama.cpp's for --engine llama.cpp),
// and a plan with no worldSize that holds the targets is "nothing fits", exit 1 as `plan --help` says (it was exit 2,
// bad input): Qwen2.5-72B bf16 (~135 GiB) at worldSize 1 on a 910B4 (29.49 GiB usable) cannot load at any fraction.
TEST(MindieCli, Issue16_VllmSpellingsHelpAndNothingFits) {
  const auto tp = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B3 --engine mindie --tensor-parallel-size 2");
  EXPECT_EQ(tp.code, 2) << tp.out;
  EXPECT_NE(tp.out.find("--tensor-parallel-size is vLLM's flag; with --engine mindie use --world-size N (ModelConfig.worldSize)"), std::string::npos) << tp.out;
  const auto len = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B3 --engine mindie --max-model-len 8192");
  EXPECT_EQ(len.code, 2) << len.out;
  EXPECT_NE(len.out.find("use --max-seq-len N"), std::string::npos) << len.out;
  const auto two = pftest::run_cli("fit Qwen/Qwen3-32B --device 910B3 --engine mindie --world-size 2", {.with_stderr = false});
  EXPECT_EQ(two.code, 0) << two.out;

  const auto help = pftest::run_cli("fit Qwen/Qwen3-32B --engine mindie --help", {.with_stderr = false});
  EXPECT_EQ(help.code, 0);
  for (const char* flag : {"--npu-mem-size N", "--world-size N", "--max-seq-len N", "--npu-memory-fraction F"}) EXPECT_NE(help.out.find(flag), std::string::npos) << flag;
  EXPECT_EQ(help.out.find("--gpu-memory-utilization U       "), std::string::npos);
  const auto llama = pftest::run_cli("fit model.gguf --engine llama.cpp --help", {.with_stderr = false});
  EXPECT_EQ(llama.code, 0);
  EXPECT_NE(llama.out.find("--ctx-size N"), std::string::npos) << llama.out.substr(0, 600);

  const auto none = pftest::run_cli("plan Qwen/Qwen2.5-72B --devices 910B4 --engine mindie --world-size 1", {.with_stderr = false});
  EXPECT_EQ(none.code, 1) << none.out;
  EXPECT_NE(none.out.find("nothing fits"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("at any NPU_MEMORY_FRACTION"), std::string::npos) << none.out;
}

// Issue 16 (mindie34): MindIE's decode speed comes from the speed catalogue's mindie/npu profile (ATB graphs), never the
// vLLM-Ascend one. Qwen3-8B on one 910B3 with the defaults (input 2048, output 512): decode at 2048 + 512 / 2 = 2304
// tokens. A step reads every text weight but the input embedding (16,381,470,720 B less 151,936 x 4,096 x 2 B =
// 1,244,659,712 B: 15,136,811,008 B; lm_head is untied) and 2304 x 147,456 B of KV (36 layers x 8 x 256 x 2 B) =
// 339,738,624 B: 15,476,549,632 B, at the 910B3's measured 1,267 GB/s copy bandwidth x the profile's efficiency,
// plus its step cost and one sequence's cost (the profile's constants, read here from the catalogue).
TEST(MindieCli, Issue16_FitPrintsDecodeSpeedOnTheMindieProfile) {
  auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(speeds.has_value());
  const engine::SpeedProfile* m = speeds->find("mindie", "npu");
  const engine::SpeedProfile* v = speeds->find("vllm-ascend", "npu");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->engine, "mindie");
  const auto step = [](const engine::SpeedProfile& p) {
    return 15476549632.0 / (1267e9 * p.bandwidth_efficiency) + p.step_overhead_s + p.sequence_overhead_s;
  };
  auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine mindie --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 0) << fit.out;
  const Json j = Json::parse(fit.out);
  ASSERT_TRUE(j["speed"].is_object()) << fit.out;
  EXPECT_EQ(j["speed"]["profile"], "mindie/npu");
  EXPECT_EQ(j["speed"]["context_tokens"], 2304);
  ASSERT_GE(j["speed"]["points"].size(), 2u);
  const Json& one = j["speed"]["points"][0];
  EXPECT_EQ(one["concurrency"], 1);
  EXPECT_NEAR(one["per_stream_tokens_per_s"].get<double>(), 1.0 / step(*m), 0.005 / step(*m));
  EXPECT_GT(std::abs(one["per_stream_tokens_per_s"].get<double>() - 1.0 / step(*v)), 1.0);  // not the vLLM-Ascend rule
  // The second point is the full-length requests the pessimistic pool holds (92, test_mindie), capped by maxBatchSize 200.
  EXPECT_EQ(j["speed"]["points"][1]["concurrency"], 92);
  auto text = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine mindie");
  EXPECT_NE(text.out.find("decode (mindie/npu speed profile, at context 2304)"), std::string::npos) << text.out;
}

// Issue 16 (mindie35, the first seed's "MindIE beside vLLM-Ascend on the same model"): fit and plan --engine mindie also
// give vLLM-Ascend's decode speed for the same workload: the same model and card, TP = worldSize, the same context (2304)
// and the same stream counts (1 and the pool's 92), on the vllm-ascend/npu profile. At one stream both read the same
// 15,476,549,632 B per step (weights less the input embedding, and 2304 tokens of KV: the test above) at the 910B3's
// 1,267 GB/s, each with its own efficiency, step and per-sequence cost; the ratio printed is MindIE's over vLLM-Ascend's.
TEST(MindieCli, Issue16_FitPrintsVllmAscendSpeedBesideMindie) {
  auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(speeds.has_value());
  const engine::SpeedProfile* m = speeds->find("mindie", "npu");
  const engine::SpeedProfile* v = speeds->find("vllm-ascend", "npu");
  ASSERT_NE(m, nullptr);
  ASSERT_NE(v, nullptr);
  const auto step = [](const engine::SpeedProfile& p) {
    return 15476549632.0 / (1267e9 * p.bandwidth_efficiency) + p.step_overhead_s + p.sequence_overhead_s;
  };
  for (const std::string cmd : {"fit Qwen/Qwen3-8B --device 910B3 --engine mindie --json", "plan Qwen/Qwen3-8B --devices 910B3 --engine mindie --context 2560 --json"}) {
    auto r = pftest::run_cli(cmd, {.with_stderr = false});
    ASSERT_EQ(r.code, 0) << cmd << "\n" << r.out;
    const Json j = Json::parse(r.out);
    ASSERT_TRUE(j["speed_vllm_ascend"].is_object()) << r.out;
    const Json& beside = j["speed_vllm_ascend"];
    EXPECT_EQ(beside["profile"], "vllm-ascend/npu") << cmd;
    EXPECT_EQ(beside["context_tokens"], j["speed"]["context_tokens"]) << cmd;
    ASSERT_EQ(beside["points"].size(), j["speed"]["points"].size()) << cmd;
    for (size_t i = 0; i < beside["points"].size(); ++i) EXPECT_EQ(beside["points"][i]["concurrency"], j["speed"]["points"][i]["concurrency"]) << cmd;
    EXPECT_NEAR(beside["points"][0]["per_stream_tokens_per_s"].get<double>(), 1.0 / step(*v), 0.005 / step(*v)) << cmd;
  }
  auto text = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine mindie");
  const std::string ratio = fmt::format("(MindIE {:.2f}x)", step(*v) / step(*m));
  EXPECT_NE(text.out.find("beside vLLM-Ascend (vllm-ascend/npu speed profile, same cards, context and streams): " +
                          fmt::format("{:.1f} tok/s per stream at 1 stream ", 1.0 / step(*v)) + ratio),
            std::string::npos)
      << text.out;
  // A MindIE start that does not fit has no speed on either engine (Qwen3-14B's 27.5 GiB of weights on one 32 GB 910B4).
  auto none = pftest::run_cli("fit Qwen/Qwen3-14B --device 910B4 --engine mindie --json", {.with_stderr = false});
  EXPECT_EQ(none.code, 1) << none.out;
  EXPECT_TRUE(Json::parse(none.out)["speed_vllm_ascend"].is_null()) << none.out;
}

// Issue 16 (mindie35): beside MindIE's pool, fit and plan --engine mindie give vLLM-Ascend's memory for the same model and
// card, TP = worldSize and max_model_len = MindIE's full-length request (input + output: 2048 + 512 = 2560 with the
// defaults, 7680 + 512 = 8192 for plan --context 8192), as `fit --engine vllm-ascend` gives it: the same profile, KV
// tokens and verdict. On one 32 GB 910B4 Qwen3-14B's 27.5 GiB of bf16 weights fit neither (vLLM-Ascend kv_negative,
// MindIE above 0.8 of the runtime total); Qwen3-8B fits both.
TEST(MindieCli, Issue16_FitPrintsVllmAscendMemoryBesideMindie) {
  struct Row {
    std::string mindie, vllm;
  };
  for (const Row& row : {Row{"fit Qwen/Qwen3-8B --device 910B3 --engine mindie", "fit Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend --tensor-parallel-size 1 --max-model-len 2560"},
                         Row{"plan Qwen/Qwen3-8B --devices 910B4 --engine mindie --context 8192", "fit Qwen/Qwen3-8B --device 910B4 --engine vllm-ascend --tensor-parallel-size 1 --max-model-len 8192"},
                         Row{"fit Qwen/Qwen3-14B --device 910B4 --engine mindie", "fit Qwen/Qwen3-14B --device 910B4 --engine vllm-ascend --tensor-parallel-size 1 --max-model-len 2560"}}) {
    const auto m = pftest::run_cli(row.mindie + " --json", {.with_stderr = false});
    const auto v = pftest::run_cli(row.vllm + " --json", {.with_stderr = false});
    const Json mj = Json::parse(m.out), vj = Json::parse(v.out);
    ASSERT_TRUE(mj["vllm_ascend"].is_object()) << m.out;
    const Json& beside = mj["vllm_ascend"];
    EXPECT_EQ(beside["engine"], vj["engine"]) << row.mindie;
    EXPECT_EQ(beside["fits"], vj["fits"]) << row.mindie;
    EXPECT_EQ(beside["failure"], vj["failure"]) << row.mindie;
    EXPECT_EQ(beside["kv_cache_tokens"], vj["kv_cache"]["tokens"]) << row.mindie;
  }
  const auto qwen14 = pftest::run_cli("fit Qwen/Qwen3-14B --device 910B4 --engine mindie");
  EXPECT_EQ(qwen14.code, 1) << qwen14.out;
  EXPECT_NE(qwen14.out.find("beside vLLM-Ascend (TP 1, max_model_len 2560): "), std::string::npos) << qwen14.out;
  EXPECT_NE(qwen14.out.find("does not fit (kv_negative); MindIE: does not fit"), std::string::npos) << qwen14.out;
  const auto qwen8 = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine mindie");
  EXPECT_NE(qwen8.out.find("requests of 2560 tokens; MindIE: 92 to 93 full-length requests"), std::string::npos) << qwen8.out;
}

// Issue 16 (mindie34): validate evaluates a MindIE case's decode speed on the mindie/npu profile, its layout resolved as on
// vLLM-Ascend; a MindIE case with memory fields only is skipped with the reason (its pool is fit --engine mindie's).
TEST(MindieCli, Issue16_ValidateScoresMindieSpeedOnItsOwnProfile) {
  const std::string dir = pftest::scratch_dir("mindie-validate");
  const std::string file = dir + "/cases.jsonl";
  {
    std::ofstream out(file);
    out << R"({"id": "m-speed", "engine": "mindie", "engine_version": null, "device": "Ascend 910B3", "num_devices": 1, "model": "Qwen/Qwen3-8B", )"
        << R"("config_hint": "Qwen/Qwen3-8B", "tensor_parallel_size": 1, "concurrency": 1, "decode_context_tokens": 2304, "tokens_per_s": 70})" << "\n";
    out << R"({"id": "m-memory", "engine": "mindie", "device": "Ascend 910B3", "num_devices": 1, "model": "Qwen/Qwen3-8B", "config_hint": "Qwen/Qwen3-8B", )"
        << R"("tensor_parallel_size": 1, "available_kv_gib": 30.0})" << "\n";
  }
  auto r = pftest::run_cli("validate --json " + file, {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  const Json j = Json::parse(r.out);
  auto speeds = engine::load_speed_catalog();
  const engine::SpeedProfile* m = speeds->find("mindie", "npu");
  ASSERT_NE(m, nullptr);
  bool speed_row = false, memory_row = false;
  for (const auto& row : j["rows"]) {
    if (row["id"] == "m-speed") {
      speed_row = true;
      EXPECT_EQ(row["engine"], "mindie");
      EXPECT_EQ(row["speed_profile"], "mindie/npu");
      const double step = 15476549632.0 / (1267e9 * m->bandwidth_efficiency) + m->step_overhead_s + m->sequence_overhead_s;  // as above
      EXPECT_NEAR(row["fields"]["tokens_per_s"]["predicted"].get<double>(), 1.0 / step, 0.005 / step);
    }
  }
  for (const auto& skipped : j["skipped"]) {
    if (skipped["id"] != "m-memory") continue;
    memory_row = true;
    EXPECT_NE(skipped["reason"].get<std::string>().find("validate compares MindIE's decode speed only"), std::string::npos) << skipped.dump();
  }
  EXPECT_TRUE(speed_row);
  EXPECT_TRUE(memory_row);
  std::filesystem::remove_all(dir);
}
