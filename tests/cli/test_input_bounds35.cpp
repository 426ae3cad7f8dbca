// Issue 19, session 35's hostile pass: vLLM's scheduler check of --max-num-seqs against max_num_batched_tokens
// (data/engines/scheduler_checks.json; `fit --max-num-seqs 2^62` said "fits"), the default max_num_seqs that vLLM 0.10.1+
// caps at max_num_batched_tokens, VLLM_PP_LAYER_PARTITION's sum as Python sums it, --hccl-buffsize bounded as
// --env HCCL_BUFFSIZE is, and fit's speed flags beyond max_model_len.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "../test_support.hpp"
#include "base/file.hpp"
#include "base/json_util.hpp"
#include "engine/compilation_config_keys.hpp"
#include "engine/scheduler_checks.hpp"
#include "estimate/fit_terms.hpp"

namespace {

pftest::CliRun run_bounded35(const std::string& args) { return pftest::run_cli(args, {.env = "timeout 60"}); }

// A shell word holding `text` as it is (no single quote inside).
std::string single_quoted35(const std::string& text) { return "'" + text + "'"; }

}  // namespace

// Issue 19 (hard35): SchedulerConfig._verify_args (vllm/config/scheduler.py; vllm/config.py before 0.10.2) raises
// "ValueError: max_num_batched_tokens (B) must be greater than or equal to max_num_seqs (S)." at every tag from v0.5.0 to
// v0.23.0, before anything loads. B is the value the engine settles on. The numbers below:
//   8192: vLLM 0.11.0's default max_num_batched_tokens for the API server on a card of >= 70 GiB that is not an A100
//         (EngineArgs._set_default_args; engines.json vllm@0.9.2-0.11.0 max_num_batched_tokens_large_device): H100 80 GB.
//   2048: the default elsewhere (an A100 is excluded from the large-card defaults by name).
//   1024: vLLM 0.9.2's default max_num_seqs on the H100 (max_num_seqs_large_device), which 0.9.2 does not cap; 0.11.0
//         caps it at max_num_batched_tokens when --max-num-seqs is not given (`min(default_max_num_seqs[ctx],
//         self.max_num_batched_tokens)`, from v0.10.1), so --max-num-batched-tokens 128 there runs 128 sequences.
TEST(InputBounds35, Issue19_MaxNumSeqsAboveBatchedTokensIsVllmsValueError) {
  struct Case {
    std::string args;
    int code;
    std::string shown;  // "" when nothing is asserted of the text
  };
  const std::string h100 = "fit Qwen/Qwen3-8B --device H100 --engine vllm@0.11.0 ";
  const std::vector<Case> cases = {
      {h100 + "--max-num-seqs 4611686018427387904", 2,
       "ValueError: max_num_batched_tokens (8192) must be greater than or equal to max_num_seqs (4611686018427387904)."},
      {h100 + "--max-num-seqs 8193", 2, "ValueError: max_num_batched_tokens (8192) must be greater than or equal to max_num_seqs (8193)."},
      {h100 + "--max-num-seqs 8192", 0, ""},  // 8192 < 8192 is false: vLLM starts
      {"fit Qwen/Qwen3-8B --device A100-80G --engine vllm@0.11.0 --max-num-seqs 4096 --max-num-batched-tokens 4096", 0, ""},  // both given, equal
      {"fit Qwen/Qwen3-8B --device A100-80G --engine vllm@0.11.0 --max-num-seqs 4096", 2,
       "max_num_seqs 4096 (given) exceeds max_num_batched_tokens 2048 (the engine's default on this card)"},
      {"fit Qwen/Qwen3-8B --device H100 --engine vllm@0.9.2 --max-num-batched-tokens 128", 2,
       "ValueError: max_num_batched_tokens (128) must be greater than or equal to max_num_seqs (1024)."},
      {h100 + "--max-num-batched-tokens 128", 0, "max_num_seqs 128 = max_num_batched_tokens: vllm 0.11.0 lowers its default max_num_seqs (1024)"},
  };
  for (const auto& c : cases) {
    const auto r = run_bounded35(c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.out.substr(0, 600);
    if (!c.shown.empty()) EXPECT_NE(r.out.find(c.shown), std::string::npos) << c.args << "\n" << r.out.substr(0, 600);
  }
  // plan: the row is refused with the same words (a card with larger defaults may still run it).
  const auto plan = run_bounded35("plan Qwen/Qwen3-8B --devices H100 --engine vllm@0.11.0 --max-num-seqs 100000");
  EXPECT_NE(plan.code, 0) << plan.out.substr(0, 600);
  EXPECT_NE(plan.out.find("must be greater than or equal to max_num_seqs (100000)"), std::string::npos) << plan.out.substr(0, 2000);
}

// Issue 19 (hard35): data/engines/scheduler_checks.json is read record by record: a record that could not be applied is
// corrupt, naming the file and the record.
TEST(InputBounds35, Issue19_SchedulerChecksFileIsCheckedRecordByRecord) {
  const auto& shipped = preflight::engine::shipped_scheduler_checks();
  ASSERT_TRUE(shipped) << shipped.error().message;
  ASSERT_EQ(shipped->records.size(), 2u);
  const std::string good_refuse =
      R"({"id": "r", "kind": "refuse", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "1.0.0", "message": "B {max_num_batched_tokens} S {max_num_seqs}", "source": "s"})";
  struct Case {
    std::string record;
    std::string error;  // "" when it loads
  };
  const std::vector<Case> cases = {
      {good_refuse, ""},
      {R"({"id": "r", "kind": "reject", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "1.0.0", "message": "", "source": "s"})",
       "kind: expected refuse or cap_default, found reject"},
      {R"({"id": "r", "kind": "refuse", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "1.0.0", "message": "no numbers", "source": "s"})",
       "a refuse record names {max_num_batched_tokens} and {max_num_seqs}"},
      {R"({"id": "r", "kind": "cap_default", "engines": [], "version_min": "0.6.0", "version_max": "1.0.0", "message": "", "source": "s"})", "engines is empty"},
      {R"({"id": "r", "kind": "cap_default", "engines": ["vllm"], "version_min": "2.0.0", "version_max": "1.0.0", "message": "", "source": "s"})", "bad version range"},
      {R"({"id": "r", "kind": "cap_default", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "1.0.0", "message": "", "source": " "})", "source is empty"},
      {R"({"id": "r", "kind": "cap_default", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "1.0.0", "message": "", "source": "s", "extra": 1})", "extra"},
  };
  for (const auto& c : cases) {
    const auto json = preflight::parse_json(R"({"schema_version": 1, "note": "n", "records": [)" + c.record + "]}", "t.json");
    ASSERT_TRUE(json) << c.record;
    const auto parsed = preflight::engine::parse_scheduler_checks(*json, "t.json");
    if (c.error.empty()) {
      EXPECT_TRUE(parsed) << c.record << "\n" << parsed.error().message;
    } else {
      ASSERT_FALSE(parsed) << c.record;
      EXPECT_EQ(parsed.error().kind, preflight::ErrorKind::corrupt) << c.record;
      EXPECT_NE(parsed.error().message.find(c.error), std::string::npos) << c.record << "\n" << parsed.error().message;
      EXPECT_NE(parsed.error().message.find("t.json"), std::string::npos) << parsed.error().message;
    }
  }
}

// Issue 19 (hard35): vllm/distributed/utils.py get_pp_indices compares Python's sum of VLLM_PP_LAYER_PARTITION, which has
// no bound, with num_hidden_layers; an int64 sum of "9223372036854775807,1" wrapped (signed overflow) and the message said
// "sum(partitions)=-9223372036854775808". 2^63 - 1 + 1 = 9223372036854775808; 3 x (2^63 - 1) = 27670116110564327421.
TEST(InputBounds35, Issue19_PipelinePartitionSumIsPythonsUnboundedSum) {
  const auto r = run_bounded35("fit Qwen/Qwen3-8B --device H100 -pp 2 --pp-layer-partition 9223372036854775807,1");
  EXPECT_EQ(r.code, 2) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("ValueError: sum(partitions)=9223372036854775808 does not match num_hidden_layers=36."), std::string::npos) << r.out.substr(0, 400);
  const auto three = preflight::estimate::pp_layer_partition(36, 3, {INT64_MAX, INT64_MAX, INT64_MAX});
  ASSERT_FALSE(three);
  EXPECT_EQ(three.error().message, "ValueError: sum(partitions)=27670116110564327421 does not match num_hidden_layers=36.");
  const auto negative = preflight::estimate::pp_layer_partition(36, 2, {INT64_MIN, -1});
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().message, "ValueError: sum(partitions)=-9223372036854775809 does not match num_hidden_layers=36.");
}

// Issue 19 (hard35): --hccl-buffsize took any whole number of MB, where --env HCCL_BUFFSIZE stops at 2^43 - 1 (its bytes,
// x 2^20, fit an int64): 2^63 MB printed "Available KV cache memory: -18014398509481958.00 GiB" for an expert-parallel
// MoE start on 910B3. Both now take the same range.
TEST(InputBounds35, Issue19_HcclBuffsizeFlagTakesWhatTheEnvTakes) {
  const auto big = run_bounded35("fit Qwen/Qwen3-30B-A3B --device 910B3 -tp 2 --enable-expert-parallel --hccl-buffsize 9223372036854775807");
  EXPECT_EQ(big.code, 2) << big.out.substr(0, 400);
  EXPECT_NE(big.out.find("--hccl-buffsize: HCCL_BUFFSIZE must be an integer greater than or equal to 1 (MB; at most 8796093022207)"), std::string::npos)
      << big.out.substr(0, 400);
  const auto bound = run_bounded35("fit Qwen/Qwen3-8B --device 910B3 --hccl-buffsize 8796093022207");
  EXPECT_EQ(bound.out.find("HCCL_BUFFSIZE must be"), std::string::npos) << bound.out.substr(0, 400);
}

// Issue 19 (hard35): fit's --input-len and --decode-context took any length: `--input-len 2^62` printed a TTFT of
// 1.2 x 10^31 ms and `--decode-context 2^62` a 2.6 x 10^14 ms decode step, exit 0. vLLM serves no request longer than
// max_model_len (its input processor refuses a longer prompt); Qwen3-8B's is 40,960 (max_position_embeddings).
TEST(InputBounds35, Issue19_SpeedFlagsBeyondMaxModelLenAreRefused) {
  struct Case {
    std::string args;
    int code;
    std::string shown;
  };
  const std::vector<Case> cases = {
      {"--input-len 4611686018427387904", 2, "--input-len 4611686018427387904: longer than max_model_len 40960"},
      {"--decode-context 40961", 2, "--decode-context 40961: longer than max_model_len 40960"},
      {"--max-model-len 8192 --input-len 8193", 2, "The decoder prompt (length 8193) is longer than the maximum model length of 8192."},
      {"--input-len 40960 --decode-context 40960", 0, "prefill         40,960 tokens"},
  };
  for (const auto& c : cases) {
    const auto r = run_bounded35("fit Qwen/Qwen3-8B --device H100 " + c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.out.substr(0, 600);
    EXPECT_NE(r.out.find(c.shown), std::string::npos) << c.args << "\n" << r.out.substr(0, 2000);
  }
}

// Issue 19 (hard35): a GPTQ / AWQ quantization_config whose group_size is 0 or below -1 was sized as group 128, exit 0.
// vLLM's create_weights (awq.py, gptq.py) takes `input_size_per_partition % group_size`: 0 stops it with
// ZeroDivisionError. Bad input naming the field, as a `dynamic` rule's group_size already was; -1 (one group per row)
// and a positive size are read as before.
TEST(InputBounds35, Issue19_GroupSizeZeroIsBadInput) {
  const std::string dir = pftest::scratch_dir("hard35-group");
  const std::string base = pftest::shared_path("models/Qwen__Qwen3-8B/config.json");
  for (const auto& [method, group, code] : std::vector<std::tuple<std::string, std::string, int>>{
           {"gptq", "0", 2}, {"awq", "0", 2}, {"gptq", "-2", 2}, {"gptq", "-1", 0}, {"awq", "128", 0}}) {
    const auto json = preflight::parse_json(preflight::read_text_file(base).value(), base);
    ASSERT_TRUE(json);
    auto config = *json;
    config["quantization_config"] = preflight::Json::parse(R"({"quant_method": ")" + method + R"(", "bits": 4, "group_size": )" + group + "}");
    const std::string model = dir + "/" + method + group;
    std::filesystem::create_directories(model);
    std::ofstream(model + "/config.json") << config.dump();
    const auto r = run_bounded35("fit " + model + " --device H100");
    EXPECT_EQ(r.code, code) << method << " " << group << "\n" << r.out.substr(0, 400);
    if (code == 2)
      EXPECT_NE(r.out.find("config.json: quantization_config.group_size " + group + ": expected a positive size or -1"), std::string::npos)
          << r.out.substr(0, 400);
  }
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard35): --moe-backend flashinfer_b12x sizes one workspace per MoE layer from max_num_batched_tokens x top_k
// routed rows; at 2^62 tokens that product wrapped (signed overflow) and the term printed "MoE backend workspace 0.00".
// hard35b: the flag now stops at 2^31 - 1 (vLLM's int32 token tensors), so the product cannot wrap; past the static
// cut-over every byte but the fixed static part and the E - 1 extra tiles grows with the routed rows, so 2^31 - 1 tokens
// hold (2^31 - 1) / 2^30 = 1.999999999 times the 2^30 ones, short of it by the fixed part (about 5 GiB of 642,497 GiB:
// under 10^-5 of the ratio).
TEST(InputBounds35, Issue19_MoeBackendWorkspaceDoesNotWrap) {
  const auto workspace = [](const std::string& tokens) {
    const auto r = run_bounded35("fit nvidia/Qwen3-30B-A3B-NVFP4 --device RTXPRO6000 --engine vllm@0.25.1 --max-model-len 32768 --moe-backend flashinfer_b12x "
                                 "--max-num-seqs 1 --max-num-batched-tokens " + tokens);
    const std::string key = "MoE backend workspace";
    const auto at = r.out.find(key);
    EXPECT_NE(at, std::string::npos) << r.out.substr(0, 600);
    return at == std::string::npos ? 0.0 : std::stod(r.out.substr(at + key.size()));
  };
  const double small = workspace("1073741824"), huge = workspace("2147483647");
  ASSERT_GT(small, 0.0);
  EXPECT_NEAR(huge / small, 2.0, 2.0 * 1e-5) << small << " " << huge;
  EXPECT_LT(huge / small, 2.0) << small << " " << huge;
  const auto refused = run_bounded35("fit nvidia/Qwen3-30B-A3B-NVFP4 --device RTXPRO6000 --engine vllm@0.25.1 --moe-backend flashinfer_b12x --max-num-batched-tokens 4611686018427387904");
  EXPECT_EQ(refused.code, 2) << refused.out.substr(0, 600);
}

// Issue 19 (hard35): a llama.cpp log's buffer line was read with strtod, which takes "nan" and "inf": `logs` printed a
// buffer of "nan" MiB and a total of "nan". llama.cpp prints "%8.2f MiB", so such a line is none of its own and is
// left out; the 95.75 MiB compute buffer beside it is read as before.
TEST(InputBounds35, Issue19_LlamaCppLogBufferOfNanIsNotRead) {
  const std::string dir = pftest::scratch_dir("hard35-llama-log");
  std::ofstream(dir + "/llama.log") << "llama_context: n_ctx                 = 1024\n"
                                       "load_tensors:        CUDA0 model buffer size = nan MiB\n"
                                       "llama_kv_cache:      CUDA0 KV buffer size = inf MiB\n"
                                       "sched_reserve:      CUDA0 compute buffer size =    95.75 MiB\n";
  const auto r = run_bounded35("logs " + dir + "/llama.log");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("nan"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("inf "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("95.75"), std::string::npos) << r.out;
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard35b): an unknown --compilation-config key was taken silently on every version. vLLM's CompilationConfig
// forbids extra fields from 0.13.0 ('@dataclass(config=ConfigDict(extra="forbid"))' at v0.13.0 - v0.15.1, the default of
// vllm.config.utils.config from v0.16.0), and arg_utils' parse_dataclass raises argparse.ArgumentTypeError(repr(e)) for
// pydantic's ValidationError, so `vllm serve` stops with "argument --compilation-config/-cc: N validation error(s) for
// CompilationConfig", one entry per key. hard36: pydantic_core's dataclass argument validator words an extra key
// "Unexpected keyword argument [type=unexpected_keyword_argument, ...]" (src/validators/dataclass.rs, ExtraBehavior::Forbid;
// "Extra inputs are not permitted" is a BaseModel's, which hard35b printed). The keys each version takes are the class's
// fields (data/engines/compilation_config_keys.json): "level" is one up to v0.17.1 and none from v0.18.0. vLLM 0.12.0's
// pydantic dataclass keeps pydantic's default extra="ignore" and starts; 0.9.0's standard-library dataclass raises
// TypeError in its from_cli lambda, which argparse words "invalid <lambda> value: <repr of the text>".
// input_value is Python's repr, cut by pydantic_core past 50 bytes to its first 25 and last 24: the 60-digit string
// "0123456789" x 6 has the 62-byte repr '0123...789' -> "'" + digits 0-23 ("012345678901234567890123"), "...", digits
// 37-59 ("78901234567890123456789") + "'".
TEST(InputBounds35, Issue19_UnknownCompilationConfigKeyIsVllmsValidationError) {
  struct Case {
    std::string engine, config;
    int code;
    std::string shown;  // "" when nothing is asserted of the text
  };
  const std::string refused = "vllm serve: error: argument --compilation-config/-cc: ";
  const std::string digits = "012345678901234567890123456789012345678901234567890123456789";
  const std::vector<Case> cases = {
      {"vllm@0.19.0", R"({"cudagraph_mode": "PIECEWISE", "level": 3})", 2,
       refused + "1 validation error for CompilationConfig\nlevel\n  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=3, input_type=int]"},
      {"vllm@0.17.1", R"({"cudagraph_mode": "PIECEWISE", "level": 3})", 0, ""},
      {"vllm@0.13.0", R"({"zeta": "x", "cudagraph_mode": "FULL", "alpha": [1, 2]})", 2,
       refused + "2 validation errors for CompilationConfig\nzeta\n  Unexpected keyword argument [type=unexpected_keyword_argument, input_value='x', input_type=str]\n"
                 "alpha\n  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=[1, 2], input_type=list]"},
      {"vllm@0.23.0", R"({"cache": ")" + digits + R"("})", 2,
       "cache\n  Unexpected keyword argument [type=unexpected_keyword_argument, input_value='012345678901234567890123...78901234567890123456789', input_type=str]"},
      {"vllm@0.12.0", R"({"cudagraph_mode": "PIECEWISE", "foo": 1})", 0, ""},
      {"vllm@0.9.0", R"({"foo": 1})", 2, R"(vllm serve: error: argument --compilation-config/-O: invalid <lambda> value: '{"foo": 1}')"},
  };
  for (const auto& c : cases) {
    const auto r = run_bounded35("fit Qwen/Qwen3-8B --device H100 --engine " + c.engine + " --compilation-config " + single_quoted35(c.config));
    EXPECT_EQ(r.code, c.code) << c.engine << " " << c.config << "\n" << r.out.substr(0, 800);
    if (!c.shown.empty()) EXPECT_NE(r.out.find(c.shown), std::string::npos) << c.engine << " " << c.config << "\n" << r.out.substr(0, 800);
    if (c.code == 0) EXPECT_EQ(r.out.find("Unexpected keyword"), std::string::npos) << r.out.substr(0, 800);
  }
  // The dotted form is merged into the same JSON before vLLM validates it; plan refuses a named version alike.
  const auto dotted = run_bounded35("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.19.0 -cc.foo_bar=1");
  EXPECT_EQ(dotted.code, 2) << dotted.out.substr(0, 800);
  EXPECT_NE(dotted.out.find("foo_bar\n  Unexpected keyword argument [type=unexpected_keyword_argument, input_value=1, input_type=int]"), std::string::npos) << dotted.out.substr(0, 800);
  const auto plan = run_bounded35("plan Qwen/Qwen3-8B --devices H100 --engine vllm@0.19.0 --compilation-config '{\"level\": 3}'");
  EXPECT_EQ(plan.code, 2) << plan.out.substr(0, 800);
  EXPECT_NE(plan.out.find(refused + "1 validation error for CompilationConfig\nlevel\n"), std::string::npos) << plan.out.substr(0, 800);
}

// Issue 19 (hard35b): data/engines/compilation_config_keys.json is read record by record; a record that could not be
// applied is corrupt, naming the file and the record.
TEST(InputBounds35, Issue19_CompilationConfigKeysFileIsCheckedRecordByRecord) {
  const auto& shipped = preflight::engine::shipped_compilation_config_keys();
  ASSERT_TRUE(shipped) << shipped.error().message;
  ASSERT_EQ(shipped->records.size(), 8u);  // 0.9.0, then 0.13.0 - 0.14.1, 0.15.0, 0.15.1, 0.16.0 - 0.17.1, 0.18.x, 0.19.x, 0.20.0 on
  EXPECT_EQ(shipped->find("vllm", {0, 12, 0}), nullptr);
  ASSERT_NE(shipped->find("vllm-ascend", {0, 18, 0}), nullptr);
  const auto& keys = shipped->find("vllm-ascend", {0, 18, 0})->keys;
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "level"), 0);
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "cudagraph_capture_sizes"), 1);
  const std::string good = R"({"id": "r", "engines": ["vllm"], "version_min": "0.13.0", "version_max": "1.0.0", "refusal": "extra_forbidden", "argument": "--compilation-config/-cc", "keys": ["mode"], "source": "s"})";
  struct Case {
    std::string record, error;  // error "" when it loads
  };
  const std::vector<Case> cases = {
      {good, ""},
      {R"({"id": "r", "engines": ["vllm"], "version_min": "0.13.0", "version_max": "1.0.0", "refusal": "warn", "argument": "--compilation-config/-cc", "keys": ["mode"], "source": "s"})",
       "refusal: expected extra_forbidden or type_error, found warn"},
      {R"({"id": "r", "engines": ["vllm"], "version_min": "0.13.0", "version_max": "1.0.0", "refusal": "type_error", "argument": "--compilation-config/-cc", "keys": [], "source": "s"})",
       "keys is empty"},
      {R"({"id": "r", "engines": ["vllm"], "version_min": "2.0.0", "version_max": "1.0.0", "refusal": "type_error", "argument": "--compilation-config/-cc", "keys": ["mode"], "source": "s"})",
       "bad version range"},
      {R"({"id": "r", "engines": ["vllm"], "version_min": "0.13.0", "version_max": "1.0.0", "refusal": "type_error", "argument": "-cc", "keys": ["mode"], "source": "s"})",
       "argument: expected the flag as argparse names it"},
      {R"({"id": "r", "engines": ["vllm"], "version_min": "0.13.0", "version_max": "1.0.0", "refusal": "type_error", "argument": "--compilation-config/-cc", "keys": ["mode"], "source": ""})",
       "source"},
  };
  for (const auto& c : cases) {
    const auto json = preflight::parse_json(R"({"schema_version": 1, "note": "n", "records": [)" + c.record + "]}", "t.json");
    ASSERT_TRUE(json) << c.record;
    const auto parsed = preflight::engine::parse_compilation_config_keys(*json, "t.json");
    if (c.error.empty()) {
      EXPECT_TRUE(parsed) << c.record << "\n" << parsed.error().message;
    } else {
      ASSERT_FALSE(parsed) << c.record;
      EXPECT_EQ(parsed.error().kind, preflight::ErrorKind::corrupt) << c.record;
      EXPECT_NE(parsed.error().message.find(c.error), std::string::npos) << c.record << "\n" << parsed.error().message;
      EXPECT_NE(parsed.error().message.find("t.json"), std::string::npos) << parsed.error().message;
    }
  }
}

// Issue 19 (hard36): only the top-level --compilation-config keys were checked. vLLM validates two nested configs as
// strictly (data/engines/compilation_config_keys.json nested_records): PassConfig (validate_pass_config_before:
// 'return PassConfig(**value)') and DynamicShapesConfig, both ConfigDict(extra="forbid") from v0.13.0. Their fields,
// read at the tags: PassConfig's "enable_fusion" is one at v0.12.0 and none at v0.13.0 (renamed fuse_norm_quant);
// "fuse_rope_kvcache" first at v0.17.0; DynamicShapesConfig's "assume_32_bit_indexing" first at v0.14.0. An unknown
// nested key is one more entry of CompilationConfig's ValidationError, located "pass_config.KEY". "mode" (from
// v0.11.1, mode_records): validate_mode_before upper-cases a str and raises "Invalid compilation mode: {value}. Valid
// modes are: NONE, STOCK_TORCH_COMPILE, DYNAMO_TRACE_ONCE, VLLM_COMPILE" (pydantic prefixes "Value error, "); another
// value must be an IntEnum value 0..3 ("Input should be 0, 1, 2 or 3", type=enum; lax: 3.0 is 3). pydantic reports the
// fields' errors in field order (mode, pass_config, dynamic_shapes_config) and then the unknown top-level keys; the
// three-error case below checks that order (the words checked with pydantic 2.13.4 on dataclasses of vLLM's shape).
TEST(InputBounds35, Issue19_NestedCompilationConfigKeysAndModeAreVllmsValidationError) {
  struct Case {
    std::string engine, config;
    int code;
    std::string shown;  // "" when nothing is asserted of the text
  };
  const std::string cc = "vllm serve: error: argument --compilation-config/-cc: ";
  const std::string one = "1 validation error for CompilationConfig\n";
  const std::string unexpected = "  Unexpected keyword argument [type=unexpected_keyword_argument, ";
  const std::vector<Case> cases = {
      {"vllm@0.13.0", R"({"pass_config": {"enable_fusion": true}})", 2, cc + one + "pass_config.enable_fusion\n" + unexpected + "input_value=True, input_type=bool]"},
      {"vllm@0.12.0", R"({"pass_config": {"enable_fusion": true}})", 0, ""},
      {"vllm@0.13.0", R"({"pass_config": {"fuse_norm_quant": true}})", 0, ""},
      {"vllm@0.16.0", R"({"pass_config": {"fuse_rope_kvcache": true}})", 2, "pass_config.fuse_rope_kvcache\n" + unexpected + "input_value=True, input_type=bool]"},
      {"vllm@0.17.0", R"({"pass_config": {"fuse_rope_kvcache": true}})", 0, ""},
      {"vllm@0.13.0", R"({"dynamic_shapes_config": {"assume_32_bit_indexing": true}})", 2, "dynamic_shapes_config.assume_32_bit_indexing\n" + unexpected},
      {"vllm@0.14.0", R"({"dynamic_shapes_config": {"assume_32_bit_indexing": true}})", 0, ""},
      {"vllm@0.20.0", R"({"zz": 1, "dynamic_shapes_config": {"foo": "bar"}, "mode": 4})", 2,
       cc + "3 validation errors for CompilationConfig\nmode\n  Input should be 0, 1, 2 or 3 [type=enum, input_value=4, input_type=int]\n"
            "dynamic_shapes_config.foo\n" + unexpected + "input_value='bar', input_type=str]\nzz\n" + unexpected + "input_value=1, input_type=int]"},
      {"vllm@0.11.1", R"({"mode": "fast"})", 2,
       "vllm serve: error: argument --compilation-config/-O: " + one +
           "mode\n  Value error, Invalid compilation mode: fast. Valid modes are: NONE, STOCK_TORCH_COMPILE, DYNAMO_TRACE_ONCE, VLLM_COMPILE "
           "[type=value_error, input_value='fast', input_type=str]"},
      {"vllm@0.19.0", R"({"mode": 2.5})", 2, "mode\n  Input should be 0, 1, 2 or 3 [type=enum, input_value=2.5, input_type=float]"},
      {"vllm@0.19.0", R"({"mode": "vllm_compile"})", 0, ""},
      {"vllm@0.19.0", R"({"mode": 3.0})", 0, ""},
      {"vllm@0.11.0", R"({"mode": 9})", 0, ""},  // no "mode" field before v0.11.1; pydantic's extra="ignore" drops it
  };
  for (const auto& c : cases) {
    const auto r = run_bounded35("fit Qwen/Qwen3-8B --device H100 --engine " + c.engine + " --compilation-config " + single_quoted35(c.config));
    EXPECT_EQ(r.code, c.code) << c.engine << " " << c.config << "\n" << r.out.substr(0, 800);
    if (!c.shown.empty()) EXPECT_NE(r.out.find(c.shown), std::string::npos) << c.engine << " " << c.config << "\n" << r.out.substr(0, 800);
  }
  // The dotted form reaches the nested object as vLLM's FlexibleArgumentParser builds it.
  const auto dotted = run_bounded35("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.23.0 -cc.pass_config.enable_noop=true");
  EXPECT_EQ(dotted.code, 2) << dotted.out.substr(0, 800);
  EXPECT_NE(dotted.out.find("pass_config.enable_noop\n" + unexpected + "input_value=True, input_type=bool]"), std::string::npos) << dotted.out.substr(0, 800);
  // The nested and mode lists are read record by record like the top-level one.
  const std::string top = R"({"schema_version": 1, "note": "n", "records": [], )";
  for (const auto& [extra, error] : std::vector<std::pair<std::string, std::string>>{
           {R"("nested_records": [{"id": "p", "engines": ["vllm"], "version_min": "0.13.0", "version_max": "1.0.0", "field": "pass_config", "class": "PassConfig", "keys": [], "source": "s"}]})", "keys is empty"},
           {R"("mode_records": [{"id": "m", "engines": ["vllm"], "version_min": "0.13.0", "version_max": "1.0.0", "argument": "--compilation-config/-cc", "field": "level", "values": ["NONE"], "source": "s"}]})", "field: expected mode"}}) {
    const auto json = preflight::parse_json(top + extra, "t.json");
    ASSERT_TRUE(json) << extra;
    const auto parsed = preflight::engine::parse_compilation_config_keys(*json, "t.json");
    ASSERT_FALSE(parsed) << extra;
    EXPECT_NE(parsed.error().message.find(error), std::string::npos) << parsed.error().message;
  }
  const auto& shipped = preflight::engine::shipped_compilation_config_keys();
  ASSERT_TRUE(shipped) << shipped.error().message;
  EXPECT_EQ(shipped->nested_at("vllm-ascend", {0, 22, 1}).size(), 2u);  // pass_config and dynamic_shapes_config
  EXPECT_TRUE(shipped->nested_at("vllm", {0, 12, 0}).empty());
}

// Issue 19 (hard36): --speculative-config's max_model_len was taken whatever its value. vLLM's
// SpeculativeConfig._maybe_override_draft_max_model_len (v0.6.0 - v0.23.0, data/engines/speculative_methods.json
// max_model_len_checks) raises "speculative_max_model_len=V cannot be larger than draft_max_model_len=D", then the same
// against target_max_model_len; from v0.9.1 the pydantic dataclass reports it as "1 validation error for
// SpeculativeConfig\n  Value error, ...", before it a plain ValueError; from v0.11.1 the field is 'Field(ge=1)'.
// D is the draft ModelConfig's length: Qwen/Qwen3-0.6B's config.json max_position_embeddings 40960; for DeepSeek-V3's
// MTP the target's own checkpoint, max_position_embeddings 163840. The target's is --max-model-len (8192) where given.
// ngram has no draft model config and is not checked.
TEST(InputBounds35, Issue19_SpeculativeMaxModelLenIsCheckedAgainstDrafterAndTarget) {
  struct Case {
    std::string args;
    int code;
    std::string shown;
  };
  const std::string pyd = "pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig\n  Value error, ";
  const auto draft06 = [](const std::string& extra) {
    return R"('{"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 2)" + extra + "}'";
  };
  const std::vector<Case> cases = {
      {"fit Qwen/Qwen3-8B --device H100 --engine vllm@0.19.0 --speculative-config " + draft06(R"(, "max_model_len": 50000)"), 2,
       pyd + "speculative_max_model_len=50000 cannot be larger than draft_max_model_len=40960 (vllm 0.19.0"},
      {"fit Qwen/Qwen3-8B --device H100 --engine vllm@0.19.0 --max-model-len 8192 --speculative-config " + draft06(R"(, "max_model_len": 10000)"), 2,
       pyd + "speculative_max_model_len=10000 cannot be larger than target_max_model_len=8192"},
      {"fit Qwen/Qwen3-8B --device H100 --engine vllm@0.19.0 --max-model-len 8192 --speculative-config " + draft06(R"(, "max_model_len": 8192)"), 0, ""},
      {"fit Qwen/Qwen3-8B --device H100 --engine vllm@0.19.0 --speculative-config " + draft06(R"(, "max_model_len": 0)"), 2,
       "max_model_len\n  Input should be greater than or equal to 1 [type=greater_than_equal, input_value=0, input_type=int]"},
      {"fit Qwen/Qwen3-8B --device H100 --engine vllm@0.7.3 --speculative-model Qwen/Qwen3-0.6B --num-speculative-tokens 2 --speculative-max-model-len 50000", 2,
       "--speculative-max-model-len: ValueError: speculative_max_model_len=50000 cannot be larger than draft_max_model_len=40960 (vllm 0.7.3"},
      {"fit Qwen/Qwen3-8B --device H100 --engine vllm@0.19.0 --speculative-config "
       R"('{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_max": 3, "max_model_len": 50000}')", 0, ""},
      {"fit deepseek-ai/DeepSeek-V3 --device H200 -tp 8 --engine vllm@0.19.0 --speculative-config "
       R"('{"method": "mtp", "num_speculative_tokens": 1, "max_model_len": 200000}')", 2,
       pyd + "speculative_max_model_len=200000 cannot be larger than draft_max_model_len=163840"},
  };
  for (const auto& c : cases) {
    const auto r = run_bounded35(c.args);
    EXPECT_EQ(r.code, c.code) << c.args << "\n" << r.out.substr(0, 800);
    if (!c.shown.empty()) EXPECT_NE(r.out.find(c.shown), std::string::npos) << c.args << "\n" << r.out.substr(0, 800);
  }
}

// Issue 19 (hard35b): a compressed-tensors weights group_size of 0 or below -1, and a ModelOpt group_size of 0 or below
// (config.json's quantization_config, hf_quant_config.json's quantization and a MIXED_PRECISION layer), were sized as the
// default group (16 for 4-bit floats, 128 for 4-bit integers), exit 0. vLLM's schemes divide the input rows by it
// (create_weights: input_size_per_partition // group_size): 0 stops the engine, a negative size makes no groups. Bad input
// naming the file and the field; compressed-tensors' -1 (the channel strategy) and a positive size are read as before.
TEST(InputBounds35, Issue19_CompressedTensorsAndModelOptGroupSizeIsChecked) {
  const std::string dir = pftest::scratch_dir("hard35b-group");
  const std::string base = pftest::shared_path("models/Qwen__Qwen3-8B/config.json");
  struct Case {
    std::string name, quantization_config, hf_quant_config;  // hf_quant_config "" when none is written
    int code;
    std::string shown;
  };
  const auto ct = [](const std::string& type, const std::string& group) {
    return R"({"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": ")" +
           type + R"(", "strategy": "group", "group_size": )" + group + R"(, "symmetric": true}}}, "ignore": ["lm_head"]})";
  };
  const std::vector<Case> cases = {
      {"ct0", ct("int", "0"), "", 2, "config.json: quantization_config.config_groups.group_0.weights.group_size 0: expected a positive size or -1"},
      {"ct-2", ct("int", "-2"), "", 2, "quantization_config.config_groups.group_0.weights.group_size -2: expected a positive size or -1"},
      {"ctfp4-5", ct("float", "-5"), "", 2, "weights.group_size -5: expected a positive size or -1"},
      {"ct-1", ct("int", "-1"), "", 0, ""},
      {"ct128", ct("int", "128"), "", 0, ""},
      {"mo0", R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 0})", "", 2, "config.json: quantization_config.group_size 0: expected a positive size"},
      {"mo16", R"({"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16})", "", 0, ""},
      {"hq-16", "", R"({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "group_size": -16}})", 2,
       "hf_quant_config.json: quantization.group_size -16: expected a positive size"},
      {"hqmixed", "",
       R"({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": {"model.layers.0.mlp.down_proj": {"quant_algo": "W4A16_AWQ", "group_size": 0}}}})",
       2, "quantization.quantized_layers.model.layers.0.mlp.down_proj.group_size 0: expected a positive size"},
  };
  for (const auto& c : cases) {
    const auto json = preflight::parse_json(preflight::read_text_file(base).value(), base);
    ASSERT_TRUE(json);
    auto config = *json;
    if (!c.quantization_config.empty()) config["quantization_config"] = preflight::Json::parse(c.quantization_config);
    const std::string model = dir + "/" + c.name;
    std::filesystem::create_directories(model);
    std::ofstream(model + "/config.json") << config.dump();
    if (!c.hf_quant_config.empty()) std::ofstream(model + "/hf_quant_config.json") << c.hf_quant_config;
    const auto r = run_bounded35("fit " + model + " --device H100");
    EXPECT_EQ(r.code, c.code) << c.name << "\n" << r.out.substr(0, 600);
    if (!c.shown.empty()) EXPECT_NE(r.out.find(c.shown), std::string::npos) << c.name << "\n" << r.out.substr(0, 600);
  }
  std::filesystem::remove_all(dir);
}

// Issue 19 (hard35b): --max-num-batched-tokens took any int64. vLLM's V1 model runner holds a step's tokens in int32
// tensors (gpu_model_runner.py: input_ids is _make_buffer(max_num_tokens, dtype=torch.int32), query_start_loc int32 the
// step's cumulative token counts; max_num_tokens is max_num_batched_tokens), so INT32_MAX = 2^31 - 1 = 2147483647 is
// the most. "2G" is human_readable_int's 2 x 1024^3 = 2147483648, one above it; the origin keeps the text as given.
TEST(InputBounds35, Issue19_MaxNumBatchedTokensIsBoundedByInt32) {
  struct Case {
    std::string tokens;
    int code;
    std::string shown;
  };
  const std::vector<Case> cases = {
      {"2147483648", 2,
       "--max-num-batched-tokens: max_num_batched_tokens 2147483648 is above 2147483647, the most tokens one scheduler step can hold (vLLM's model runner indexes "
       "a step's tokens in int32 tensors: input_ids, query_start_loc)"},
      {"9223372036854775807", 2, "max_num_batched_tokens 9223372036854775807 is above 2147483647"},
      {"2G", 2, "--max-num-batched-tokens 2G: max_num_batched_tokens 2147483648 is above 2147483647"},
      {"2147483647", 1, "does not fit"},  // taken: a 2^31-token profile forward needs many times the card
  };
  for (const auto& c : cases) {
    const auto r = run_bounded35("fit Qwen/Qwen3-8B --device H100 --engine vllm@0.19.0 --max-num-batched-tokens " + c.tokens);
    EXPECT_EQ(r.code, c.code) << c.tokens << "\n" << r.out.substr(0, 600);
    if (!c.shown.empty()) EXPECT_NE(r.out.find(c.shown), std::string::npos) << c.tokens << "\n" << r.out.substr(0, 600);
    if (c.code != 2) EXPECT_EQ(r.out.find("is above 2147483647"), std::string::npos) << r.out.substr(0, 600);
  }
}
