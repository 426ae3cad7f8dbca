#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "validate/case_flags.hpp"
#include "validate/validation.hpp"
#include "validate_support.hpp"
#include "../test_support.hpp"

using namespace preflight;

TEST(Validation, SharedCasesMeetTheTargets) {
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({pftest::shared_path("validation/seed-cases.jsonl"), pftest::shared_path("validation/vllm-startup.dev.jsonl")}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->cases, r->evaluated + r->skipped);
  for (const auto& row : r->rows) {
    if (row.skipped) EXPECT_FALSE(row.skip_reason.empty()) << row.id;
  }
  ASSERT_TRUE(r->fields.count("weights_gib"));
  EXPECT_LE(r->fields["weights_gib"].median_abs_pct, 2.0);
  // Issue 3: median absolute error at most 3% for the KV budget and the token count, every verdict right.
  ASSERT_TRUE(r->fields.count("available_kv_gib"));
  ASSERT_TRUE(r->fields.count("kv_cache_tokens"));
  EXPECT_GE(r->fields["available_kv_gib"].n, 12);
  EXPECT_LE(r->fields["available_kv_gib"].median_abs_pct, 3.0);
  EXPECT_LE(r->fields["kv_cache_tokens"].median_abs_pct, 3.0);
  EXPECT_GT(r->verdicts_n, 10);
  // Issue 14: validate evaluates what a case records. seed2-qwen38-27b-910b3 records no --skip-mm-profiling,
  // and with the encoder pass its KV cache is below max_model_len, so it is predicted refused though it
  // started: the one wrong verdict (README "Where the estimator stands").
  EXPECT_EQ(r->verdicts_correct, r->verdicts_n - 1);
  // The bands are calibrated, not decorative: most observations lie inside them (the README's known gaps are
  // the ones outside).
  for (const char* field : {"available_kv_gib", "kv_cache_tokens"}) {
    const auto& s = r->fields[field];
    EXPECT_EQ(s.banded, s.n) << field;
    // seed2-qwen38-27b-910b3, evaluated as recorded (issue 14), lies outside the kv_cache_tokens band: the
    // three-quarters bar holds for the rest.
    const int recorded_miss = std::string(field) == "kv_cache_tokens" ? 1 : 0;
    EXPECT_GE(4 * (s.in_band + recorded_miss), 3 * s.banded) << field << ": " << s.in_band << " of " << s.banded;
  }
}

// Issue 3's seed bar for Qwen3-VL-8B: within 3% of 254,336 tokens and 7.76x. Issue 14: the 27B hybrid row is
// evaluated as recorded (no flag inferred from its observed start): with the encoder pass the KV cache holds
// fewer tokens than max_model_len, so it shows as wrong instead of meeting its bar through an inferred flag.
TEST(Validation, Issue14_SeedRowsEvaluatedAsRecorded) {
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({pftest::shared_path("validation/seed-cases.jsonl")}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  auto row_of = [&](const std::string& id) -> const validate::CaseResult* {
    for (const auto& row : r->rows) if (row.id == id) return &row;
    return nullptr;
  };
  auto field = [&](const std::string& id, const std::string& name) -> const validate::FieldComparison* {
    if (const auto* row = row_of(id))
      for (const auto& f : row->fields)
        if (f.field == name) return &f;
    return nullptr;
  };
  for (const char* name : {"kv_cache_tokens", "max_concurrency"}) {
    const auto* f = field("seed2-qwen3-vl-8b-910b3", name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_LE(std::fabs(f->predicted - f->observed) / f->observed * 100.0, 3.0) << name << ": " << f->predicted << " vs " << f->observed;
  }
  const auto* hybrid = row_of("seed2-qwen38-27b-910b3");
  ASSERT_NE(hybrid, nullptr);
  for (const auto& a : hybrid->assumptions)  // no flag assumed (the session-12 note only says the lines match a run without the pass)
    if (a.rfind("the printed lines are a run without", 0) != 0) EXPECT_EQ(a.find("--skip-mm-profiling"), std::string::npos) << a;
  ASSERT_TRUE(hybrid->observed_fits && hybrid->predicted_fits);
  EXPECT_TRUE(*hybrid->observed_fits);
  EXPECT_FALSE(*hybrid->predicted_fits);
  EXPECT_EQ(hybrid->predicted_failure, "max_model_len_too_large");
  const auto* tokens = field("seed2-qwen38-27b-910b3", "kv_cache_tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_LT(tokens->predicted, 32768);  // below the recorded concurrency_len, as the engine would refuse it
}

// Issue 14: the observed outcome never chooses an input. A run recorded as started that the engine would refuse
// with the encoder pass is evaluated with the pass (and shows as wrong); the skip_mm_profiling field, where a
// case records it, is read like any other input.
TEST(Validation, Issue14_NoInputInferredFromTheOutcome) {
  const std::string path = ::testing::TempDir() + "/inferred.jsonl";
  const std::string head = R"J({"engine":"vllm-ascend","engine_version":"0.23.0","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3.5-27B","max_model_len":32768,)J";
  std::ofstream(path) << head << R"J("id":"started","kv_cache_tokens":53739})J" "\n"
                      << head << R"J("id":"refused","fits":false,"failure":"max_model_len_too_large"})J" "\n"
                      << head << R"J("id":"recorded-flag","skip_mm_profiling":true,"kv_cache_tokens":53739})J" "\n";
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({path}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  auto tokens = [](const validate::CaseResult& row) {
    for (const auto& f : row.fields) if (f.field == "kv_cache_tokens") return f.predicted;
    return -1.0;
  };
  ASSERT_TRUE(r->rows[0].predicted_fits && r->rows[1].predicted_fits && r->rows[2].predicted_fits);
  EXPECT_FALSE(*r->rows[0].predicted_fits);  // as recorded: the pass is in, the engine refuses; observed started
  EXPECT_FALSE(*r->rows[1].predicted_fits);
  EXPECT_TRUE(*r->rows[2].predicted_fits);   // the recorded flag takes the pass out
  EXPECT_GT(tokens(r->rows[2]), tokens(r->rows[0]));
  EXPECT_EQ(r->verdicts_n, 3);
  EXPECT_EQ(r->verdicts_correct, 2);  // "started" is wrong, and shows as wrong
}

// The public NPU vision-language logs the calibration also rests on (data/evidence): every verdict right and
// the KV budget within 5% on each.
namespace {
// One of the project's evidence files (data/evidence), with the shared model configs.
Expected<validate::ValidationReport> evidence(const std::string& file) {
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  return validate::run_validation({std::string(PREFLIGHT_SOURCE_DIR) + "/data/evidence/" + file}, o);
}
}  // namespace

TEST(Validation, ProjectEvidenceOfTheNpuEncoderPass) {
  auto r = evidence("vllm-ascend-vl-startup.jsonl");
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->skipped, 0);
  ASSERT_TRUE(r->fields.count("available_kv_gib"));
  EXPECT_EQ(r->fields["available_kv_gib"].n, 4);
  EXPECT_LE(r->fields["available_kv_gib"].max_abs_pct, 5.0);
  EXPECT_EQ(r->verdicts_correct, r->verdicts_n);
}

// The CUDA vision-language logs (data/evidence): Qwen2.5-VL-7B profiling a 114,688-token dummy video on an A100
// (-14.28 GiB printed) and one image on an L4 (1.81 GiB): the verdicts right, the budget inside the band.
TEST(Validation, ProjectEvidenceOfTheCudaEncoderPass) {
  auto r = evidence("vllm-cuda-vl-startup.jsonl");
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_EQ(r->skipped, 0);
  ASSERT_TRUE(r->fields.count("available_kv_gib"));
  const auto& kv = r->fields["available_kv_gib"];
  EXPECT_EQ(kv.n, 2);
  EXPECT_EQ(kv.in_band, kv.banded);
  EXPECT_LE(kv.max_abs_pct, 12.0);
  EXPECT_EQ(r->verdicts_correct, r->verdicts_n);
}

// A case without engine_version is dated by its own text: "0.1.dev7548+gbaba038 (main, ~v0.9.2)" or notes
// such as "V0 engine (~v0.6.4, ...)" pick the profile of that era, and the row says so.
TEST(Validation, EngineEraFromTheCaseText) {
  const std::string path = ::testing::TempDir() + "/era.jsonl";
  std::ofstream(path) << R"J({"id":"a","engine":"vllm","device":"NVIDIA GeForce RTX 3090 24GB","model":"Qwen/Qwen3-8B","max_model_len":8192,"kv_cache_tokens":1000,"notes":"V0 engine (~v0.6.4, 'Memory profiling results' line). V1 later."})J" "\n"
                      << R"J({"id":"b","engine":"vllm","engine_version":"0.1.dev7548+gbaba038 (main, ~v0.9.2)","device":"NVIDIA L4 24GB","model":"Qwen/Qwen3-8B","kv_cache_tokens":1000})J" "\n"
                      << R"J({"id":"c","engine":"vllm","device":"NVIDIA L4 24GB","model":"Qwen/Qwen3-8B","kv_cache_tokens":1000,"notes":"V1 engine, no version"})J" "\n";
  auto r = validate::run_validation({path}, {});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(r->rows[0].engine, "vllm@0.6-0.7");
  EXPECT_EQ(r->rows[1].engine, "vllm@0.9.2-0.11.0");
  EXPECT_EQ(r->rows[2].engine, "vllm@0.28-0.30");
  auto says = [](const validate::CaseResult& row, const std::string& text) {
    for (const auto& a : row.assumptions) if (a.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(says(r->rows[0], "engine version 0.6.4, dated by the case notes"));
  EXPECT_TRUE(says(r->rows[1], "engine version 0.9.2, dated by the engine_version"));
}

// Issue 15: a case without a version whose source gives a date is run on the newest profile released by then
// (vLLM-Ascend v0.13.0rc1 came out 2025-12-27, v0.15.0rc1 2026-02-27); its engine_detail's date when the source has none.
TEST(Validation, Issue15_UndatedCaseDatedByItsSourceDate) {
  const std::string path = ::testing::TempDir() + "/source_date.jsonl";
  std::ofstream(path) << R"J({"id":"s","engine":"vllm-ascend","source":"github.com/vllm-project/vllm-ascend/issues/5629 (2026-01-06)","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3-8B","kv_cache_tokens":1000})J" "\n"
                      << R"J({"id":"d","engine":"vllm-ascend","source":"a blog","engine_detail":"image built 2026-03-01","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3-8B","kv_cache_tokens":1000})J" "\n"
                      << R"J({"id":"n","engine":"vllm-ascend","source":"a blog","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3-8B","kv_cache_tokens":1000})J" "\n";
  auto r = validate::run_validation({path}, {});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(r->rows[0].engine, "vllm-ascend@0.13-0.14");
  EXPECT_EQ(r->rows[1].engine, "vllm-ascend@0.15-0.17");
  EXPECT_EQ(r->rows[2].engine, "vllm-ascend@0.23-0.26");
  auto says = [](const validate::CaseResult& row, const std::string& text) {
    for (const auto& a : row.assumptions) if (a.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(says(r->rows[0], "dated by the case source's date 2026-01-06"));
  EXPECT_TRUE(says(r->rows[1], "dated by the case engine_detail's date 2026-03-01"));
  EXPECT_FALSE(says(r->rows[2], "dated by the case"));
}

// Issue 15, vLLM: a case whose version text names none is dated by its source's date (v0.21.0 was out by 2026-05-15,
// v0.26.0 by 2026-07-26: engines.json first_release), and one nothing dates is scored on the newest profile with its
// prediction across all eight vLLM profiles beside it (version_band), never silently.
TEST(Validation, Issue15_UndatedVllmCaseDatedOrGivenAcrossVersions) {
  const std::string path = ::testing::TempDir() + "/vllm_dates.jsonl";
  const std::string tail = R"J("device":"NVIDIA L4 24GB","model":"Qwen/Qwen3-8B","max_model_len":8192,"kv_cache_tokens":1000})J";
  std::ofstream(path) << R"J({"id":"dated","engine":"vllm","engine_detail":"vLLM V1 (a recipe, June 2026; version not in the excerpt)","source":"github.com/noonghunna/club-3090/issues/294 (boot of 2026-06-01)",)J" << tail << "\n"
                      << R"J({"id":"undated","engine":"vllm","source":"a blog",)J" << tail << "\n"
                      << R"J({"id":"stated","engine":"vllm","engine_version":"0.23.0","source":"a blog",)J" << tail << "\n";
  auto r = validate::run_validation({path}, {});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  auto says = [](const validate::CaseResult& row, const std::string& text) {
    for (const auto& a : row.assumptions) if (a.find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_EQ(r->rows[0].engine, "vllm@0.21-0.25");
  EXPECT_TRUE(says(r->rows[0], "dated by the case source's date 2026-06-01: vllm@0.21-0.25, the newest profile released by then (0.21.0 on 2026-05-15"));
  EXPECT_TRUE(r->rows[0].version_band.points.empty());
  EXPECT_EQ(r->rows[1].engine, "vllm@0.28-0.30");
  // user36: of the nine vLLM profiles, vllm@0.6-0.7 predates Qwen3ForCausalLM (first in vLLM 0.8.4,
  // data/engines/model_support.json) and vllm@0.8-0.9.1 is sized from 0.8.4: eight plausible points.
  ASSERT_EQ(r->rows[1].version_band.points.size(), 8u);
  EXPECT_EQ(r->rows[1].version_band.points.front().engine_id, "vllm@0.8-0.9.1 from 0.8.4");
  EXPECT_EQ(r->rows[1].version_band.points.back().engine_id, "vllm@0.28-0.30");
  EXPECT_TRUE(says(r->rows[1], "no version stated or dated: vllm@0.28-0.30, the newest profile, is scored; across the 8 vllm profiles (vllm@0.8-0.9.1 from 0.8.4 to vllm@0.28-0.30)"));
  // The scored prediction is the band's newest point.
  double scored = -1;
  for (const auto& f : r->rows[1].fields) if (f.field == "kv_cache_tokens") scored = f.predicted;
  EXPECT_EQ(scored, static_cast<double>(r->rows[1].version_band.points.back().kv_tokens));
  EXPECT_EQ(r->rows[2].engine, "vllm@0.21-0.25");
  EXPECT_TRUE(r->rows[2].version_band.points.empty());
  EXPECT_FALSE(says(r->rows[2], "no version stated or dated"));
  // The JSON row carries the band.
  const Json j = validate::validation_to_json(*r);
  ASSERT_TRUE(j["rows"][1].contains("version_band"));
  EXPECT_EQ(j["rows"][1]["version_band"]["versions"].size(), 8u);
  EXPECT_EQ(j["rows"][1]["version_band"]["kv_tokens_max"].get<int64_t>(), r->rows[1].version_band.kv_tokens_max);
  EXPECT_FALSE(j["rows"][0].contains("version_band"));
}

// Issue 14: free-text notes never set an input: whatever they say about --skip-mm-profiling, every row is
// evaluated with the same inputs.
TEST(Validation, Issue14_NotesNeverSetAFlag) {
  const std::string path = ::testing::TempDir() + "/flags.jsonl";
  const std::string head = R"J({"engine":"vllm-ascend","engine_version":"0.23.0","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3-VL-8B-Instruct","max_model_len":32768,"kv_cache_tokens":250000,)J";
  std::ofstream(path) << head << R"J("id":"used","notes":"--skip-mm-profiling was required (first attempt OOMed in ViT profiling)"})J" "\n"
                      << head << R"J("id":"negated","notes":"started without --skip-mm-profiling"})J" "\n"
                      << head << R"J("id":"clause","notes":"first start was not OOM; --skip-mm-profiling added for the second"})J" "\n";
  auto r = validate::run_validation({path}, {});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  auto tokens = [](const validate::CaseResult& row) {
    for (const auto& f : row.fields) if (f.field == "kv_cache_tokens") return f.predicted;
    return -1.0;
  };
  for (const auto& row : r->rows) {
    EXPECT_DOUBLE_EQ(tokens(row), tokens(r->rows[1])) << row.id;
    for (const auto& a : row.assumptions) EXPECT_EQ(a.find("skip-mm-profiling"), std::string::npos) << row.id << ": " << a;
  }
}

// Issue 19 item 10: a case's bad input is an error naming the file, line, case and field (exit 2 in the cli),
// never a value silently used.
TEST(Validation, Issue19_Item10_BadCaseInputsAreErrors) {
  const std::string head = R"J({"engine":"vllm-ascend","engine_version":"0.23.0","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3-8B","kv_cache_tokens":250000,"id":"bad",)J";
  const std::pair<const char*, const char*> rows[] = {
      {R"J("gpu_memory_utilization":5.0})J", "bad.jsonl:1 (case bad): gpu_memory_utilization: expected a number in (0, 1], found 5"},
      {R"J("tensor_parallel_size":-1})J", "bad.jsonl:1 (case bad): tensor_parallel_size: expected an integer of at least 1, found -1"},
      {R"J("num_devices":"two"})J", "num_devices"},
      {R"J("kv_cache_dtype":"fp4"})J", "(case bad): kv_cache_dtype: expected one of"},
      {R"J("max_num_seqs":0})J", "(case bad): max_num_seqs: expected an integer of at least 1, found 0"},
      {R"J("num_devices":3,"pipeline_parallel_size":2})J", "(case bad): num_devices: 3 devices do not divide into pipeline stages 2"},
  };
  const std::string path = ::testing::TempDir() + "/bad.jsonl";
  for (const auto& [fields, fragment] : rows) {
    std::ofstream(path) << head << fields << "\n";
    auto r = validate::run_validation({path}, {});
    ASSERT_FALSE(r.has_value()) << fields;
    EXPECT_NE(r.error().describe().find(fragment), std::string::npos) << r.error().describe();
  }
}

// Issue 19: a case's dtype was never read, so "dtype": 5 or an unknown dtype passed in silence. It is vLLM's --dtype
// (auto, half, float16, bfloat16, float, float32: vllm/engine/arg_utils.py's choices); anything else is an error naming
// the case and the field. The values the shared and evidence files record (bfloat16, float16, null) are taken.
TEST(Validation, Issue19_CaseDtypeIsVllmsDtype) {
  const std::string head = R"J({"engine":"vllm","engine_version":"0.11.0","device":"H100","model":"Qwen/Qwen3-8B","kv_cache_tokens":250000,"id":"dt",)J";
  const std::string path = ::testing::TempDir() + "/dtype.jsonl";
  const std::pair<const char*, const char*> refused[] = {
      {R"J("dtype":5})J", "dtype"},
      {R"J("dtype":"fp8"})J", "dtype.jsonl:1 (case dt): dtype: expected one of auto|half|float16|bfloat16|float|float32 (vLLM's --dtype), found 'fp8'"},
      {R"J("dtype":"BF16"})J", "(case dt): dtype: expected one of auto|half|float16|bfloat16|float|float32 (vLLM's --dtype), found 'BF16'"},
  };
  for (const auto& [fields, fragment] : refused) {
    std::ofstream(path) << head << fields << "\n";
    auto r = validate::run_validation({path}, {});
    ASSERT_FALSE(r.has_value()) << fields;
    EXPECT_NE(r.error().describe().find(fragment), std::string::npos) << r.error().describe();
  }
  for (const char* fields : {R"J("dtype":"bfloat16"})J", R"J("dtype":"float16"})J", R"J("dtype":"auto"})J", R"J("dtype":null})J"}) {
    std::ofstream(path) << head << fields << "\n";
    auto r = validate::run_validation({path}, {});
    EXPECT_TRUE(r.has_value()) << fields << ": " << r.error().describe();
  }
}

// Issue 4: decode speeds through validate: median absolute error at most 15%; no case off by more
// than 2x (README "Speed model" explains the skipped cases).
TEST(Validation, DecodeSpeedCasesMeetTheTargets) {
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({pftest::shared_path("validation/decode-speed.dev.jsonl")}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_TRUE(r->fields.count("tokens_per_s"));
  EXPECT_GE(r->fields["tokens_per_s"].n, 9);
  EXPECT_LE(r->fields["tokens_per_s"].median_abs_pct, 15.0);
  for (const auto& row : r->rows)
    for (const auto& f : row.fields)
      if (f.field == "tokens_per_s") {
        EXPECT_LT(f.predicted, 2.0 * f.observed) << row.id;
        EXPECT_GT(f.predicted, 0.5 * f.observed) << row.id;
        EXPECT_FALSE(row.speed_terms.empty()) << row.id;
      }
}

// Issue 15 (dsvtp16): kv_role and additional_config.layer_sharding are read as flags; a value of the wrong kind is
// an error naming the file, line and field.
TEST(Validation, Issue15_KvRoleAndLayerShardingMustBeWellFormed) {
  const std::string dir = pftest::scratch_dir("validate-kvrole");
  const std::string head = R"J({"id": "x", "engine": "vllm-ascend", "engine_version": "0.16.0", "device": "Atlas A3", "model": "deepseek-ai/DeepSeek-V3.2", "tensor_parallel_size": 16, "weights_gib": 28.19, )J";
  std::ofstream(dir + "/role.jsonl") << head << R"J("kv_role": "prefill"})J" << "\n";
  auto r = validate::run_validation({dir + "/role.jsonl"}, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().describe().find("kv_role 'prefill'"), std::string::npos) << r.error().describe();
  EXPECT_NE(r.error().describe().find("role.jsonl:1"), std::string::npos) << r.error().describe();
  std::ofstream(dir + "/shard.jsonl") << head << R"J("additional_config": {"layer_sharding": "o_proj"}})J" << "\n";
  r = validate::run_validation({dir + "/shard.jsonl"}, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().describe().find("additional_config.layer_sharding must be a list"), std::string::npos) << r.error().describe();
}

// Issue 15 (evid25): additional_config.eplb_config.num_redundant_experts is read as a count; anything but a whole
// number of 0 or more is an error naming the file, line and field.
TEST(Validation, Issue15_EplbRedundantExpertsMustBeACount) {
  const std::string dir = pftest::scratch_dir("validate-eplb");
  const std::string head = R"J({"id": "x", "engine": "vllm-ascend", "engine_version": "0.16.0", "device": "Atlas A3", "model": "Qwen/Qwen3-235B-A22B", "tensor_parallel_size": 4, "weights_gib": 17.2, )J";
  for (const char* bad : {R"J(-16)J", R"J(1.5)J", R"J("16")J"}) {
    std::ofstream(dir + "/eplb.jsonl") << head << R"J("additional_config": {"eplb_config": {"num_redundant_experts": )J" << bad << "}}}\n";
    auto r = validate::run_validation({dir + "/eplb.jsonl"}, {});
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().describe().find("additional_config.eplb_config.num_redundant_experts must be a whole number"), std::string::npos) << r.error().describe();
    EXPECT_NE(r.error().describe().find("eplb.jsonl:1"), std::string::npos) << r.error().describe();
  }
}

// Issue 15 (evid26): additional_config.eplb_config.dynamic_eplb is true / false or the strings "true" / "false" (the
// nightly configs write "true"); anything else is an error naming the file, line and field.
TEST(Validation, Issue15_DynamicEplbMustBeTrueOrFalse) {
  const std::string dir = pftest::scratch_dir("validate-dyn-eplb");
  const std::string head = R"J({"id": "x", "engine": "vllm-ascend", "engine_version": "0.16.0", "device": "Atlas A3", "model": "Qwen/Qwen3-235B-A22B", "tensor_parallel_size": 4, "weights_gib": 17.2, )J";
  for (const char* bad : {R"J(1)J", R"J("yes")J", R"J([true])J"}) {
    std::ofstream(dir + "/eplb.jsonl") << head << R"J("additional_config": {"eplb_config": {"dynamic_eplb": )J" << bad << "}}}\n";
    auto r = validate::run_validation({dir + "/eplb.jsonl"}, {});
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().describe().find("additional_config.eplb_config.dynamic_eplb must be true or false"), std::string::npos) << r.error().describe();
    EXPECT_NE(r.error().describe().find("eplb.jsonl:1"), std::string::npos) << r.error().describe();
  }
}

TEST(Validation, MalformedLineNamesFileAndLine) {
  const std::string dir = pftest::scratch_dir("validate");
  std::ofstream(dir + "/bad.jsonl") << "{\"id\": \"x\", \"model\": 3}\n";
  auto r = validate::run_validation({dir + "/bad.jsonl"}, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().describe().find("bad.jsonl:1"), std::string::npos) << r.error().describe();
}

// Issue 15: the public DP + EP start-up logs (DeepSeek-V3.1/V3.2 W8A8 on Ascend, DP 2-4 x TP 4-8 with expert
// parallel and MTP; Qwen3-235B-A22B BF16 DP 2 x TP 8 EP on two A2 nodes, vllm-ascend #5493) print the weights per rank.
// Qwen3-235B is predicted within 2%. Known misses, kept visible (each must stay evaluated, and stay a miss until its
// mechanism is found: then move it into the checked set): vllm-ascend #2191 (DeepSeek-V3 W8A8, v0.9.1rc2 torchair,
// 44.16 GiB against 45.44), #5629 (DeepSeek-V3.1 W8A8, MLA MLAPO weights not modelled) and the DeepSeek-V3.2 nightly
// runs. Issue 15 (dsv32): with the vLLM-Ascend shared-expert split, the SFA MLAPO weights and kv_b_proj / indexer wk in
// bf16, all four DeepSeek-V3.2 runs (FLASHCOMM1 0 and 1, EP 16 and 32, 8,192 and 4,096 batched tokens) are predicted
// low by one common gap of 1.00 - 1.07 GiB. Issue 15 (dsvw): 0.721 GiB of it is the indexer's wq_b in bf16 (msModelSlim's
// DeepSeek-V3.2 practices exclude '*wq_b'; 62 layers x (8,192 x 1,536 x 2 B - the W8A8 layout's 12,582,912 + 8,192 x 12 B)
// = 774,045,696 B), leaving 1.001 - 0.721 = 0.28 to 1.065 - 0.721 = 0.344 GiB, not located (the MTP's own
// shared_head.head under QuaRot, 0.216 GiB, is a lead; docs/memory-model.md "vLLM-Ascend DSA context parallel").
// Issue 15 (ev): eight more public DP + EP logs. Within 2%: vllm-ascend #4661 (Qwen3-235B-A22B-Instruct-2507 BF16,
// DP 2 x TP 8 EP on two 910B2 pods, torchair) and the five DeepSeek-V3.2 nightly runs with MTP 3 (vLLM 0.16-0.18;
// dual-node DP 4 x TP 8 at 68,000 tokens, single-node DP 2 x TP 8 at u 0.98). Issue 15 (dsvtp16): the two
// disaggregated-prefill runs at TP 16 (DP 2, EP 32, eager, FLASHCOMM1 on, kv_role kv_producer, layer_sharding
// [q_b_proj, o_proj]) print 28.19 / 28.15 GiB; they were predicted 1.5 GiB high until the prefill instance's DSA CP
// path (o_proj whole, no o_proj_full_pool, q_b_proj / o_proj weights kept on 1 rank of 32 + 2 windows: -1.99 GiB,
// tests/estimate/test_fit_ep.cpp) was modelled; now 1.63 / 1.48% low (0.46 / 0.42 GiB), within 2%.
// Issue 15 (ev round 6): the same single-node and dual-node MTP 3 commands on 2026-03-22 and 03-23 (vLLM 0.18.0, the
// vllm-ascend builds either side of PR #7427) print the same weights as the 03-26 runs already checked (50.2183 and
// 30.7694 GB per rank, all ranks), so their four rows join the checked set (13 = 9 + 4).
// Issue 15 (evid25, round 12): five nightly rows with a printed weights line join it (18 = 13 + 5): Qwen3-235B-A22B-W8A8
// DP 4 x TP 4 EP on one A3 node (15.5644 GB), the same job's EPLB case with 16 redundant experts (17.2220 GB; 9.9% low
// until additional_config.eplb_config.num_redundant_experts was read, tests/estimate/test_eplb.cpp), Kimi-K2-Instruct-W8A8
// DP 4 x TP 8 on two A3 nodes (32.5601 GB) and the Qwen3-235B-A22B PD prefill instance on 0.16.0 and 0.17.0 (28.5036 /
// 28.5029 GB).
TEST(Validation, Issue15_DataParallelExpertParallelWeightsFromPublicLogs) {
  auto r = pftest::validate_public_evidence([](const std::string& id) { return id.find("-dp") != std::string::npos && id.find("-ep") != std::string::npos; });
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  int checked = 0;
  int misses = 0;
  int dsv32 = 0;
  for (const auto& row : r->rows) {
    if (row.id.find("-dp") == std::string::npos || row.id.find("-ep") == std::string::npos) continue;
    const bool nightly = row.id.find("ascendci-dsv32-") != std::string::npos;
    const bool prefill_tp16 = nightly && row.id.find("-prefill-") != std::string::npos;
    const bool nightly_dsv32 = nightly && !prefill_tp16 && row.id.find("-mtp2-") != std::string::npos;
    const bool known_miss = row.id.find("ascend2191-") != std::string::npos || row.id.find("ascend5629-") != std::string::npos;
    for (const auto& f : row.fields) {
      if (f.field != "weights_gib") continue;
      if (nightly_dsv32) {
        // Issue 15 (acc31): 0.28 - 0.34 GiB before the MLA rotary caches were read from source (+0.049 GiB on V3.2).
        EXPECT_GT(f.observed - f.predicted, 0.20) << row.id << ": the common 0.23 - 0.30 GiB gap closed? update docs and this test";
        EXPECT_LT(f.observed - f.predicted, 0.32) << row.id << ": observed " << f.observed << " predicted " << f.predicted;
        ++dsv32;
        continue;
      }
      if (known_miss) {
        EXPECT_GT(f.abs_pct, 2.0) << row.id << " is now within 2%: move it into the checked set";
        ++misses;
        continue;
      }
      EXPECT_LT(f.abs_pct, 2.0) << row.id << ": observed " << f.observed << " predicted " << f.predicted;
      ++checked;
    }
  }
  // Round 15 (evid28): +7 checked (five MTP 3 nightly lines, the 03-12 prefill line, the 8 x H100 DP 8 x EP 8 line)
  // and +2 nightly MTP 2 lines (2026-01-30, 2026-02-03), all inside their bounds.
  EXPECT_EQ(checked, 25);
  EXPECT_EQ(misses, 2);
  EXPECT_EQ(dsv32, 6);
}

// Issue 20: a llama.cpp-on-CPU case reads at min(threads x 11.9 GB/s, 0.67 x socket peak) on the llama.cpp CPU
// profile (efficiency 1.0, 0.3 ms per token), the socket peak being the installed memory the case states, else
// the catalogue CPU's rated peak (cpus.json), else none. Hand-derived bandwidths:
//   a: 4 threads, memory_peak 25.6 GB/s (DDR3L-1600 x 2): min(47.6, 17.152) = 17.152 GB/s (socket)
//   b: 2 threads on an i3-1315U (DDR5-5200 x 2 = 83.2 GB/s): min(23.8, 55.744) = 23.8 GB/s (threads)
//   c: 8 threads on the same CPU: min(95.2, 55.744) = 55.744 GB/s (socket)
//   d: 10 threads, CPU not stated: 119 GB/s (threads alone)
// Each step is bytes / bandwidth + 0.3 ms + 1 x 20 us per sequence; e (no threads) is skipped and says why.
TEST(Validation, Issue20_LlamaCppCpuCaseReadsAtTheThreadAndSocketBound) {
  const std::string path = ::testing::TempDir() + "/cpu.jsonl";
  const std::string head = R"J({"engine":"llama.cpp","device":"CPU: test host","model":"meta-llama/Llama-2-7b-hf","quantization":"GGUF Q4_0","tokens_per_s":4.0,"concurrency":1,)J";
  std::ofstream(path) << head << R"J("id":"a","threads":4,"cpu":"i5-6500","memory_peak_bytes_per_s":25.6e9})J" "\n"
                      << head << R"J("id":"b","threads":2,"cpu":"i3-1315U"})J" "\n"
                      << head << R"J("id":"c","threads":8,"cpu":"Intel Core i3-1315U"})J" "\n"
                      << head << R"J("id":"d","threads":10})J" "\n"
                      << head << R"J("id":"e"})J" "\n";
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({path}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 5u);
  const double expected_bw[] = {17.152e9, 23.8e9, 55.744e9, 119e9};
  for (int i = 0; i < 4; ++i) {
    const auto& row = r->rows[static_cast<size_t>(i)];
    ASSERT_TRUE(row.speed_terms.count("copy_bandwidth")) << row.id << " " << row.skip_reason;
    EXPECT_EQ(row.speed_profile, "llama.cpp/cpu") << row.id;
    EXPECT_NEAR(row.speed_terms.at("copy_bandwidth"), expected_bw[i], 1e3) << row.id;
    const double step = row.speed_terms.at("bytes") / expected_bw[i] + 0.3e-3 + 20e-6;
    EXPECT_NEAR(row.speed_terms.at("predicted_step_s"), step, 1e-9) << row.id;
  }
  EXPECT_NE(r->rows[4].skip_reason.find("records no threads"), std::string::npos) << r->rows[4].skip_reason;
  // An unknown CPU or a thread count of 0 is a bad input naming the field.
  for (const auto& [fields, fragment] : std::vector<std::pair<std::string, std::string>>{{R"J("id":"x","threads":4,"cpu":"Pentium 90"})J", "cpu: 'Pentium 90' is not in"},
                                                                                      {R"J("id":"y","threads":0})J", "threads: expected a positive thread count, found 0"}}) {
    std::ofstream(path) << head << fields << "\n";
    auto bad = validate::run_validation({path}, o);
    ASSERT_FALSE(bad.has_value()) << fields;
    EXPECT_NE(bad.error().describe().find(fragment), std::string::npos) << bad.error().describe();
  }
}

// Issue 20: a llama.cpp multi-GPU case that states --split-mode row is skipped with the reason (the row split is
// not modelled); without it the layer split is evaluated, at one GPU's bandwidth, with no all-reduce.
TEST(Validation, Issue20_LlamaCppRowSplitIsSkippedLayerSplitEvaluated) {
  const std::string path = ::testing::TempDir() + "/split.jsonl";
  const std::string head = R"J({"engine":"llama.cpp","device":"2x NVIDIA GeForce RTX 4090","num_devices":2,"model":"meta-llama/Llama-2-7b-hf","quantization":"GGUF Q4_0","tokens_per_s":100,"concurrency":1,)J";
  std::ofstream(path) << head << R"J("id":"row","split_mode":"row"})J" "\n" << head << R"J("id":"layer"})J" "\n";
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({path}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_NE(r->rows[0].skip_reason.find("--split-mode row"), std::string::npos) << r->rows[0].skip_reason;
  ASSERT_TRUE(r->rows[1].speed_terms.count("allreduce_latency_units")) << r->rows[1].skip_reason;
  EXPECT_EQ(r->rows[1].speed_terms.at("allreduce_latency_units"), 0.0);
  EXPECT_GT(r->rows[1].speed_terms.at("bytes"), 3e9);  // every weight of the 7B model, not half of them
}

// Issue 15: a case's recorded environment is an input. Qwen3-30B-A3B on 910B3, DP 2 x TP 2 with expert parallel:
// env HCCL_BUFFSIZE 1024 against the CANN default 200 moves the budget by 2 x (1024 - 200) MiB = 1648 MiB (the mc2
// communicator's send and receive buffers); a value that is not an integer >= 1 is an error naming the field.
TEST(Validation, Issue15_CaseEnvironmentSizesTheEpCommunicators) {
  const std::string head = R"J({"engine":"vllm-ascend","engine_version":"0.13.0","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3-30B-A3B","max_model_len":4096,"tensor_parallel_size":2,"data_parallel_size":2,"enable_expert_parallel":true,"available_kv_gib":30.0,)J";
  const std::string path = ::testing::TempDir() + "/env.jsonl";
  std::ofstream(path) << head << R"J("id":"default"})J" "\n" << head << R"J("id":"big","env":{"HCCL_BUFFSIZE":1024}})J" "\n"
                      << head << R"J("id":"text","env":{"HCCL_BUFFSIZE":"1024"}})J" "\n";
  validate::ValidateOptions o;
  o.model_dirs = {pftest::shared_path("models")};
  auto r = validate::run_validation({path}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  auto term = [](const validate::CaseResult& row, const char* key) {
    const auto it = row.memory_terms.find(key);
    return it == row.memory_terms.end() ? -1.0 : it->second;
  };
  EXPECT_DOUBLE_EQ(term(r->rows[0], "ep_communicators"), 2.0 * (200 + 200 + 50) * 1048576.0);
  EXPECT_DOUBLE_EQ(term(r->rows[1], "ep_communicators"), 2.0 * (1024 + 200 + 50) * 1048576.0);
  EXPECT_DOUBLE_EQ(term(r->rows[2], "ep_communicators"), term(r->rows[1], "ep_communicators"));
  EXPECT_NEAR(term(r->rows[0], "available") - term(r->rows[1], "available"), 1648.0 * 1048576.0, 1.0);

  std::ofstream(path) << head << R"J("id":"bad","env":{"HCCL_BUFFSIZE":"lots"}})J" "\n";
  auto bad = validate::run_validation({path}, o);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().describe().find("(case bad): env.HCCL_BUFFSIZE: HCCL_BUFFSIZE must be an integer greater than or equal to 1"), std::string::npos)
      << bad.error().describe();
}

// Issue 15: a case's speculative drafter is read from the --models directories like the case's model. The DFlash
// drafter below exists only in a scratch directory given to validate; its weights are those of
// FitSpec.Issue15_DflashDrafterSizedFromItsOwnConfig (5 layers of Qwen3.5-27B's width with an fc of 5 x 5120 x 5120:
// 1,730,208,000 params x 2 B = 3,460,416,000 B), so the case with it loads that much more than the case without.
TEST(Validation, Issue15_CaseDrafterReadFromTheModelsDirectories) {
  const std::string dir = pftest::scratch_dir("validate-drafter");
  std::filesystem::create_directories(dir + "/z-lab__Qwen3.5-27B-DFlash");
  std::ofstream(dir + "/z-lab__Qwen3.5-27B-DFlash/config.json")
      << R"({"architectures": ["DFlashDraftModel"], "model_type": "qwen3", "hidden_size": 5120, "num_hidden_layers": 5,
             "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 17408,
             "vocab_size": 248320, "max_position_embeddings": 262144, "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16",
             "tie_word_embeddings": false})";
  const std::string head = R"J({"engine":"vllm","engine_version":"0.24.0","device":"NVIDIA H200","num_devices":1,"model":"Qwen/Qwen3.5-27B","max_model_len":32768,"available_kv_gib":50.0,)J";
  const std::string path = dir + "/cases.jsonl";
  std::ofstream(path) << head << R"J("id":"plain"})J" "\n"
                      << head << R"J("id":"dflash","speculative_config":{"method":"dflash","model":"z-lab/Qwen3.5-27B-DFlash","num_speculative_tokens":7}})J" "\n";
  validate::ValidateOptions o;
  o.model_dirs = {pftest::shared_path("models"), dir};
  auto r = validate::run_validation({path}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 2u);
  ASSERT_TRUE(r->rows[1].skip_reason.empty()) << r->rows[1].skip_reason;
  EXPECT_NEAR(r->rows[1].memory_terms.at("weights") - r->rows[0].memory_terms.at("weights"), 3460416000.0, 1.0);
}

// Issue 15 (mc2): vllm-ascend #5993 (DeepSeek-V3.1 W8A8, DP 4 x TP 4 EP over two A2 nodes) died on "Failed to allocate
// resource[qp]" in the profile run's MC2 pass; its source states no NPU driver, and the driver decides that pass
// (#9005: 23.0.7 failed, 25.5.0 started). As recorded the verdict is undecided, counted neither right nor wrong; the
// same line with a driver the source would have stated is decided by it (23.0.7: the failure, right; 25.5.0: fits, and
// shows as wrong against the recorded failure); a driver that is not a version is bad input naming the field.
TEST(Validation, Issue15_Mc2TransportVerdictUndecidedWithoutTheDriver) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/data/evidence/vllm-startup-public.jsonl");
  std::string line, recorded;
  while (std::getline(in, line))
    if (line.find("\"pub-ascend5993-dsv31-w8a8-mtp-2xa2-dp4-tp4-ep-FAIL\"") != std::string::npos) recorded = line;
  ASSERT_FALSE(recorded.empty());
  auto with_driver = [&](const std::string& id, const std::string& driver) {
    auto j = parse_json(recorded, "case");
    EXPECT_TRUE(j.has_value());
    (*j)["id"] = id;
    (*j)["npu_driver_version"] = driver;
    return j->dump();
  };
  const std::string path = ::testing::TempDir() + "/mc2.jsonl";
  std::ofstream(path) << recorded << "\n" << with_driver("old", "23.0.7") << "\n" << with_driver("upgraded", "25.5.0") << "\n";
  auto r = pftest::validate_with_models({path});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(r->verdicts_undecided, 1);
  EXPECT_EQ(r->verdicts_n, 2);
  EXPECT_EQ(r->verdicts_correct, 1);
  const auto& as_recorded = r->rows[0];
  EXPECT_EQ(as_recorded.observed_failure, "mc2_transport");
  ASSERT_TRUE(as_recorded.predicted_fits.has_value());
  EXPECT_TRUE(*as_recorded.predicted_fits);  // the memory verdict, which the row says is undecided
  EXPECT_NE(as_recorded.verdict_depends_on.find("the NPU driver version, not stated"), std::string::npos) << as_recorded.verdict_depends_on;
  const auto& old = r->rows[1];
  EXPECT_TRUE(old.verdict_depends_on.empty());
  EXPECT_EQ(old.predicted_failure, "mc2_transport");
  EXPECT_NE(old.predicted_failure_message.find("Failed to allocate resource[qp]"), std::string::npos) << old.predicted_failure_message;
  EXPECT_EQ(r->rows[2].predicted_failure, "none");
  const Json out = validate::validation_to_json(*r);
  EXPECT_EQ(out["verdicts"]["undecided"].get<int>(), 1);
  EXPECT_TRUE(out["rows"][0].contains("verdict_depends_on"));
  EXPECT_FALSE(out["rows"][1].contains("verdict_depends_on"));

  std::ofstream(path) << with_driver("bad", "25.x.0") << "\n";
  auto bad = pftest::validate_with_models({path});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(bad.error().message.find("npu_driver_version: NPU driver version '25.x.0'"), std::string::npos) << bad.error().message;
}

// Issue 19 (lead, session 25): a bound on an input must not drop real evidence. Every held-out public line is
// evaluated; the only lines skipped are those whose model has no config here ("model not resolvable"). The 256-byte
// device-text bound first chosen skipped three lines whose device text quotes a blog post (278 bytes), and the
// held-out verdicts fell from 112 to 109 without any test failing.
TEST(Validation, Issue19_EveryHeldOutLineIsEvaluatedUnlessItsModelIsMissing) {
  validate::ValidateOptions o;
  o.model_dirs.push_back(pftest::shared_path("models"));
  auto r = validate::run_validation({std::string(PREFLIGHT_SOURCE_DIR) + "/data/evidence/vllm-startup-public.jsonl"}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  EXPECT_GE(r->evaluated, 120);
  for (const auto& row : r->rows)
    if (row.skipped) EXPECT_EQ(row.skip_reason.rfind("model not resolvable", 0), 0u) << row.id << ": " << row.skip_reason;
}

// Issue 19: a negative observed size, count or rate was compared as it was ("observed -1, predicted 2.586e+05:
// 25856100.00%", exit 0) and weighed in the accuracy figures; a concurrency_len of 0 likewise. Each is an error naming
// the file, line and field. available_kv_gib may be negative (vLLM prints a negative KV budget before it fails).
TEST(Validation, Issue19_NegativeObservationsAreErrors) {
  const std::string head = R"J({"engine":"vllm-ascend","engine_version":"0.23.0","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3-8B","id":"neg",)J";
  const std::pair<const char*, const char*> rows[] = {
      {R"J("weights_gib":-1})J", "neg.jsonl:1: weights_gib is -1, expected a number >= 0"},
      {R"J("kv_cache_tokens":-1})J", "neg.jsonl:1: kv_cache_tokens is -1, expected a number >= 0"},
      {R"J("max_concurrency":-0.5})J", "neg.jsonl:1: max_concurrency is -0.5, expected a number >= 0"},
      {R"J("tokens_per_s":-3})J", "neg.jsonl:1: tokens_per_s is -3, expected a number >= 0"},
      {R"J("max_concurrency":2,"concurrency_len":0})J", "neg.jsonl:1: concurrency_len is 0, expected a token count >= 1"},
  };
  const std::string path = ::testing::TempDir() + "/neg.jsonl";
  for (const auto& [fields, fragment] : rows) {
    std::ofstream(path) << head << fields << "\n";
    auto r = validate::run_validation({path}, {});
    ASSERT_FALSE(r.has_value()) << fields;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt) << fields;
    EXPECT_NE(r.error().describe().find(fragment), std::string::npos) << r.error().describe();
  }
  // A negative available KV budget is a record of a failed start, read as before.
  std::ofstream(path) << head << R"J("available_kv_gib":-0.87,"fits":false})J" << "\n";
  EXPECT_TRUE(validate::run_validation({path}, {}).has_value());
}

// Issue 19: a case's device text stating a 400-digit size made std::stod throw out_of_range, uncaught (validate aborted,
// exit 134). The size states nothing; the case is then skipped with its device not found.
TEST(Validation, Issue19_DeviceTextWithA400DigitSizeIsRead) {
  const std::string path = ::testing::TempDir() + "/digits.jsonl";
  std::ofstream(path) << R"J({"engine":"vllm","engine_version":"0.10.0","model":"Qwen/Qwen3-8B","id":"digits","kv_cache_tokens":100000,"device":")J"
                      << std::string(400, '1') << R"J( B"})J" << "\n";
  auto r = validate::run_validation({path}, {});
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_TRUE(r->rows[0].skipped);
  EXPECT_NE(r->rows[0].skip_reason.find("device not in the catalogue and no total memory stated"), std::string::npos) << r->rows[0].skip_reason;
}

// Issue 15 (warmup32): a case's dtype is vLLM's --dtype, applied to the model. The llm-d-planner sweep's Llama-3.1-8B
// run with --dtype float32 on vLLM 0.19.0 (data/evidence/vllm-startup-public.jsonl, pub-llmdplanner-llama31-8b-fp32-...)
// printed 'weights memory: 29.98GiB' and 'Available KV cache memory: 42.8 GiB'; before the dtype was applied the
// prediction was 14.99 / 58.57 GiB (the bf16 checkpoint as published). float16 on the bf16 checkpoint keeps 2 B per
// parameter (14.99 GiB as the sweep's bf16 runs print), and float32 doubles every weight and the rotary cache (exactly
// twice); bfloat16 on a T4 is vLLM's ValueError, naming the field.
TEST(Validation, Issue15_DtypeOfTheCaseCastsTheWeights) {
  const std::string dir = pftest::scratch_dir("validate-dtype");
  const std::string head = R"J({"engine":"vllm","engine_version":"0.19.0","device":"NVIDIA H100 80GB HBM3","num_devices":1,"model":"meta-llama/Llama-3.1-8B-Instruct","gpu_memory_utilization":0.95,"max_model_len":8192,"enable_prefix_caching":false,)J";
  const std::string path = dir + "/cases.jsonl";
  std::ofstream(path) << head << R"J("id":"fp32","dtype":"float32","weights_gib":29.98,"available_kv_gib":42.8,"fits":true})J" "\n"
                      << head << R"J("id":"fp16","dtype":"float16","weights_gib":14.99})J" "\n";
  validate::ValidateOptions o;
  o.model_dirs = {pftest::shared_path("models")};
  auto r = validate::run_validation({path}, o);
  ASSERT_TRUE(r.has_value()) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 2u);
  auto field = [](const validate::CaseResult& row, const std::string& name) {
    for (const auto& f : row.fields)
      if (f.field == name) return f;
    return validate::FieldComparison{};
  };
  ASSERT_TRUE(r->rows[0].skip_reason.empty()) << r->rows[0].skip_reason;
  EXPECT_NEAR(field(r->rows[0], "weights_gib").predicted, 29.98, 29.98 * 0.01);
  EXPECT_NEAR(field(r->rows[0], "available_kv_gib").predicted, 42.8, 42.8 * 0.03);
  EXPECT_NEAR(field(r->rows[1], "weights_gib").predicted, 14.99, 14.99 * 0.01);
  EXPECT_NEAR(r->rows[0].memory_terms.at("weights"), 2.0 * r->rows[1].memory_terms.at("weights"), 1.0);

  std::ofstream(path) << R"J({"id":"t4","engine":"vllm","engine_version":"0.19.0","device":"Tesla T4","num_devices":1,"model":"meta-llama/Llama-3.1-8B-Instruct","max_model_len":2048,"dtype":"bfloat16","available_kv_gib":1.0})J" "\n";
  auto t4 = validate::run_validation({path}, o);
  const std::string text = t4 ? (t4->rows.empty() ? std::string() : t4->rows[0].skip_reason) : t4.error().describe();
  EXPECT_NE(text.find("(case t4): dtype: ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0"), std::string::npos) << text;
}

// Issue 19 (hard32): a case's env read as the engine reads each variable (deploy/engine_env), where HCCL_BUFFSIZE went
// through strtod ("0x10" sized as 16 MB) and the switches were compared with 1.0 (2, which bool(int(value)) turns on,
// read as off; "on" read as off without a word).
TEST(Validation, Issue19_CaseEnvReadAsTheEngineReadsIt) {
  auto flags_of = [](const std::string& text) {
    const auto json = preflight::Json::parse(text);
    return preflight::validate::read_case_flags(preflight::JsonObject(json, "cases.jsonl"), "cases.jsonl:1", std::nullopt);
  };
  const auto two = flags_of(R"({"env": {"VLLM_ASCEND_ENABLE_FLASHCOMM1": 2, "VLLM_ASCEND_ENABLE_MLAPO": "0", "HCCL_BUFFSIZE": "0512"}})");
  ASSERT_TRUE(two.has_value()) << two.error().describe();
  ASSERT_TRUE(two->flashcomm1.has_value());
  EXPECT_TRUE(two->flashcomm1->value);
  ASSERT_TRUE(two->mlapo.has_value());
  EXPECT_FALSE(two->mlapo->value);
  ASSERT_TRUE(two->hccl_buffsize_mb.has_value());
  EXPECT_DOUBLE_EQ(two->hccl_buffsize_mb->value, 512.0);
  struct Bad {
    std::string env, message;
  };
  const std::vector<Bad> bad = {
      {R"({"HCCL_BUFFSIZE": "0x10"})", "cases.jsonl:1: env.HCCL_BUFFSIZE: HCCL_BUFFSIZE must be an integer greater than or equal to 1 (MB, in decimal digits"},
      {R"({"HCCL_BUFFSIZE": 1e3})", "found '1000.0'"},
      {R"({"VLLM_ASCEND_ENABLE_FLASHCOMM1": "on"})",
       "cases.jsonl:1: env.VLLM_ASCEND_ENABLE_FLASHCOMM1: the engine reads it as bool(int(value)) and fails: ValueError: invalid literal for int() with base 10: 'on'"},
      {R"({"VLLM_USE_FLASHINFER_SAMPLER": true})", "env.VLLM_USE_FLASHINFER_SAMPLER: the engine reads it as bool(int(value)) and fails"},
  };
  for (const auto& b : bad) {
    const auto f = flags_of(R"({"env": )" + b.env + "}");
    ASSERT_FALSE(f.has_value()) << b.env;
    EXPECT_EQ(f.error().kind, preflight::ErrorKind::invalid_argument) << b.env;
    EXPECT_NE(f.error().describe().find(b.message), std::string::npos) << f.error().describe();
  }
}
