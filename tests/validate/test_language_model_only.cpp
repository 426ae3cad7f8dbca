// Issue 15: vLLM's --language-model-only. The flag sets the limit of every modality the model supports to 0 ("For
// hybrid-only models (Llama-4, Step3, Mistral-3, Qwen-3.5), a text-only mode can be enabled by setting all multimodal
// modalities to 0 using --language-model-only. This prevents loading multimodal modules", vLLM's multimodal-models
// page, https://www.mintlify.com/vllm-project/vllm/models/multimodal-models), and vLLM 0.23 prints "All limits of
// multimodal modalities supported by the model are set to 0, running in text-only mode." (vllm/multimodal/registry.py;
// github.com/joorklee/p2p-bench, results/2026-06-16_5060ti-16gb_2cards_gen3-x4_p2p-sweep-c1-2-4-8/logs/p2p_on-c1.log).
// The flag is read from a case, a log and the command line, and behaves as '{"image": 0, "video": 0}'.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "deploy/deployment.hpp"
#include "validate_support.hpp"

using namespace preflight;

namespace {

// The Qwen3-VL style tower of Qwen/Qwen3.5-27B (shared/models config.json vision_config: depth 27, hidden 1152,
// intermediate 4304, patch 16, temporal patch 2, 3 channels, 2304 position embeddings, spatial merge 2, out 5120),
// by hand, as vLLM's qwen3_vl vision blocks hold it (linears with biases, LayerNorm weight and bias):
//   block: qkv 1152 x 3456 + 3456 = 3,984,768; proj 1152 x 1152 + 1152 = 1,328,256; fc1 1152 x 4304 + 4304 =
//          4,962,512; fc2 4304 x 1152 + 1152 = 4,959,360; two norms 2 x 2 x 1152 = 4,608 -> 15,239,504; x 27 = 411,466,608
//   patch embed (3 x 2 x 16 x 16 = 1536) x 1152 + 1152 = 1,770,624; position embedding 2304 x 1152 = 2,654,208
//   merger (1152 x 2 x 2 = 4608 wide): norm 2 x 1152 = 2,304; fc1 4608 x 4608 + 4608 = 21,238,272;
//          fc2 4608 x 5120 + 5120 = 23,598,080
//   total 460,730,096 parameters, bf16: 921,460,192 bytes on one rank.
constexpr double k_tower_bytes = 460730096.0 * 2;

std::string scratch_dir_path() { return pftest::scratch_dir("lm-only-cli"); }

std::string scratch_cases(const std::string& name, const std::string& body) {
  const std::string dir = pftest::scratch_dir(name);
  const std::string path = dir + "/cases.jsonl";
  std::ofstream(path) << body;
  return path;
}

}  // namespace

// A case's language_model_only drops exactly the tower's bytes from "Model loading took" on vLLM >= 0.16 (the tower is
// built as StageMissingLayer), the same as a case that sets every limit to 0, and the profile run has no encoder pass.
TEST(LanguageModelOnly, Issue15_CaseLeavesTheVisionTowerOut) {
  const std::string head =
      R"J({"engine":"vllm","engine_version":"0.24.0","device":"NVIDIA H200","num_devices":1,"model":"Qwen/Qwen3.5-27B","max_model_len":32768,"available_kv_gib":50.0,)J";
  const std::string path = scratch_cases("lm-only-case", head + R"J("id":"plain"})J" "\n" + head + R"J("id":"lm","language_model_only":true})J" "\n" + head +
                                                             R"J("id":"limits","limit_mm_per_prompt":{"image":0,"video":0}})J" "\n" + head +
                                                             R"J("id":"off","language_model_only":false})J" "\n");
  auto r = pftest::validate_with_models({path});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 4u);
  for (const auto& row : r->rows) ASSERT_TRUE(row.skip_reason.empty()) << row.skip_reason;
  const auto& plain = r->rows[0].memory_terms;
  const auto& lm = r->rows[1].memory_terms;
  EXPECT_NEAR(plain.at("weights") - lm.at("weights"), k_tower_bytes, 1.0);
  EXPECT_DOUBLE_EQ(lm.at("weights"), r->rows[2].memory_terms.at("weights"));
  EXPECT_DOUBLE_EQ(lm.at("vision_unit"), 0.0);
  EXPECT_DOUBLE_EQ(lm.at("vision_live_tensors"), 0.0);
  EXPECT_GT(plain.at("vision_live_tensors"), 0.0);  // the plain case profiles the encoder (issue 15 vis28: its live tensors on vLLM)
  EXPECT_DOUBLE_EQ(r->rows[3].memory_terms.at("weights"), plain.at("weights"));  // false: the flag as not given
}

// The flag overrides --limit-mm-per-prompt (vLLM sets every limit to 0 whatever that says) and is named in the
// deployment's provenance; a non-boolean value in a case is bad input naming the field.
TEST(LanguageModelOnly, Issue15_FlagSetsEveryLimitToZero) {
  deploy::Flags f;
  f.limit_mm_per_prompt = deploy::Given<std::string>{R"({"image": 2, "video": 1})", "test"};
  f.language_model_only = deploy::Given<bool>{true, "test"};
  auto d = deploy::deployment_from_flags(f);
  ASSERT_TRUE(d.has_value()) << d.error().describe();
  EXPECT_TRUE(d->no_images);
  EXPECT_TRUE(d->no_video);
  EXPECT_TRUE(d->language_model_only);
  f.language_model_only = deploy::Given<bool>{false, "test"};
  auto off = deploy::deployment_from_flags(f);
  ASSERT_TRUE(off.has_value());
  EXPECT_FALSE(off->no_images);
  EXPECT_FALSE(off->no_video);

  const std::string path = scratch_cases(
      "lm-only-bad",
      R"J({"id":"bad","engine":"vllm","engine_version":"0.24.0","device":"NVIDIA H200","num_devices":1,"model":"Qwen/Qwen3.5-27B","available_kv_gib":50.0,"language_model_only":"yes"})J" "\n");
  auto bad = pftest::validate_with_models({path});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().describe().find("language_model_only"), std::string::npos) << bad.error().describe();
}

// `preflight logs` reads it back from the non-default args dict, the command line and vLLM's text-only line.
TEST(LanguageModelOnly, Issue15_ReadBackFromTheLog) {
  const auto dict = pftest::parse_log(
      "(APIServer pid=1416581) INFO 06-16 20:45:51 [api_utils.py:273] non-default args: {'model': '/data/models/qwen3.6-27b-text-nvfp4-mtp', "
      "'max_model_len': 65535, 'quantization': 'modelopt', 'tensor_parallel_size': 2, 'language_model_only': True, 'max_num_seqs': 1}\n");
  ASSERT_TRUE(dict.args.language_model_only);
  EXPECT_TRUE(dict.args.language_model_only->value);
  EXPECT_EQ(dict.args.language_model_only->line, 1);
  const auto cmd = pftest::parse_log("vllm serve Qwen/Qwen3.6-27B-FP8 --language-model-only --max-model-len 8192\n");
  ASSERT_TRUE(cmd.args.language_model_only);
  EXPECT_TRUE(cmd.args.language_model_only->value);
  EXPECT_EQ(cmd.args.max_model_len->value, 8192);
  const auto line = pftest::parse_log(
      "(APIServer pid=1) INFO 06-16 20:45:51 [model.py:611] Resolved architecture: Qwen3_5ForConditionalGeneration\n"
      "(APIServer pid=1) INFO 06-16 20:45:54 [registry.py:134] All limits of multimodal modalities supported by the model are set to 0, running in "
      "text-only mode.\n");
  ASSERT_TRUE(line.args.language_model_only);
  EXPECT_EQ(line.args.language_model_only->line, 2);
  const auto none = pftest::parse_log("vllm serve Qwen/Qwen3.6-27B-FP8 --max-model-len 8192\n");
  EXPECT_FALSE(none.args.language_model_only);
}

// The three p2p-bench runs that state 'language_model_only': True (data/evidence/vllm-startup-public.jsonl) print
// "Model loading took" within 2.5% once the tower is left out (documented tolerance: 7.1 GiB printed for the FP8
// checkpoint at TP 4; 9.43 GiB for the text-only NVFP4 checkpoint at TP 2, sized as the ModelOpt NVFP4 variant of
// Qwen/Qwen3.6-27B that its printed "Checkpoint size: 18.29 GiB" matches), and the NVFP4 run, which started, is
// predicted to start (with nvidia's mixed FP8/NVFP4 checkpoint and the tower it was predicted not to fit).
TEST(LanguageModelOnly, Issue15_PublicTextOnlyRunsLoadWithoutTheTower) {
  auto r = pftest::validate_public_evidence([](const std::string& id) { return id.rfind("pub-p2pbench-qwen36-27b", 0) == 0; });
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  int checked = 0;
  for (const auto& row : r->rows) {
    if (row.id.rfind("pub-p2pbench-qwen36-27b", 0) != 0) continue;
    ASSERT_TRUE(row.skip_reason.empty()) << row.id << ": " << row.skip_reason;
    for (const auto& f : row.fields) {
      if (f.field != "weights_gib") continue;
      EXPECT_LT(f.abs_pct, 2.5) << row.id << ": observed " << f.observed << " predicted " << f.predicted;
      ++checked;
    }
    ASSERT_TRUE(row.observed_fits && row.predicted_fits) << row.id;
    EXPECT_EQ(*row.predicted_fits, *row.observed_fits) << row.id << ": " << row.predicted_failure_message;
  }
  EXPECT_EQ(checked, 3);
}

// End to end: `logs --emit-case` writes the field validate reads, and `fit --language-model-only` names the flag in its
// assumptions and leaves the tower's bytes out of the weights term (Qwen/Qwen3.5-27B bf16 at TP 1: 921,460,192 B less,
// derived above).
TEST(LanguageModelOnly, Issue15_LogsEmitCaseAndFitTakeTheFlag) {
  const std::string dir = scratch_dir_path();
  std::ofstream(dir + "/p2p.log")
      << "(APIServer pid=1) INFO 06-16 20:45:51 [api_utils.py:339]   version 0.23.0\n"
         "(APIServer pid=1) INFO 06-16 20:45:51 [api_utils.py:273] non-default args: {'model': '/data/models/qwen3.6-27b-text-nvfp4-mtp', "
         "'max_model_len': 65535, 'tensor_parallel_size': 2, 'language_model_only': True}\n"
         "(Worker_TP0 pid=2) INFO 06-16 20:46:16 [gpu_model_runner.py:5187] Model loading took 9.43 GiB memory and 5.636328 seconds\n"
         "(Worker_TP0 pid=2) INFO 06-16 20:47:05 [gpu_worker.py:456] Available KV cache memory: 2.04 GiB\n";
  const auto emitted = pftest::run_cli("logs " + dir + "/p2p.log --emit-case", {.env = "", .with_stderr = false});
  ASSERT_EQ(emitted.code, 0) << emitted.out;
  const auto j = nlohmann::json::parse(emitted.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << emitted.out;
  EXPECT_EQ(j.value("language_model_only", false), true) << emitted.out;

  const std::string common = "fit Qwen/Qwen3.5-27B --models " + pftest::shared_path("models") + " --device H200 --engine vllm@0.24.0 --max-model-len 32768 --json";
  const auto plain = pftest::run_cli(common, {.env = "", .with_stderr = false});
  const auto lm = pftest::run_cli(common + " --language-model-only", {.env = "", .with_stderr = false});
  const auto jp = nlohmann::json::parse(plain.out, nullptr, false), jl = nlohmann::json::parse(lm.out, nullptr, false);
  ASSERT_FALSE(jp.is_discarded() || jl.is_discarded()) << plain.out << lm.out;
  EXPECT_NE(lm.out.find("--language-model-only: the profile run is text only"), std::string::npos) << lm.out;
  EXPECT_EQ(plain.out.find("--language-model-only"), std::string::npos);
  auto weights_gib = [](const nlohmann::json& fit) {
    for (const auto& t : fit["memory_per_device"]["terms"])
      if (t.value("name", "") == "weights") return t.value("gib", 0.0);
    return 0.0;
  };
  EXPECT_NEAR(weights_gib(jp) - weights_gib(jl), k_tower_bytes / (1024.0 * 1024.0 * 1024.0), 1e-6);
}
