// Issue 15 (v0eng29): a log that shows vLLM's V0 engine is read as V0, and a V0 deployment takes V0's defaults
// (data/engines/engine_cores.json) wherever it is resolved: `logs`, the case `logs --emit-case` writes, `validate`.
// Expected values come from vLLM's own strings and defaults as the catalogue record's source quotes them (the lines are
// quoted from the public logs of data/evidence/vllm-startup-public.jsonl), never from the code under test.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "deploy/deployment.hpp"
#include "engine/attention_backends.hpp"
#include "engine/engine_core.hpp"
#include "engine/engine_profile.hpp"
#include "logs/engine_log.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

const logs::SignatureSet& sigs() {
  static const logs::SignatureSet s = [] {
    auto loaded = logs::load_signatures();
    if (!loaded) throw std::runtime_error(loaded.error().describe());
    return *loaded;
  }();
  return s;
}

bool has(const std::vector<std::string>& list, const std::string& fragment) {
  for (const auto& s : list)
    if (s.find(fragment) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& s : list) out += s + "\n";
  return out;
}

// The V0 run of pub-cmontemuino-llama31-8b-instruct-mi300x-v0-rocm091-fp16-u0.8-len131072 (its quoted lines, with the
// log's own prefixes): VLLM_USE_V1=0, the V0 engine line, the V0 worker's summary and the V0 executor's block line.
const char* k_v0_rocm_log =
    "+ export VLLM_USE_V1=0\n"
    "INFO 08-07 18:58:41 [llm_engine.py:230] Initializing a V0 LLM engine (v0.9.2.dev364+gb432b7a28) with config: "
    "model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.float16, max_seq_len=131072, tensor_parallel_size=1, chunked_prefill_enabled=False\n"
    "INFO 08-07 18:59:02 [model_runner.py:1171] Model loading took 15.3047 GiB and 17.361203 seconds\n"
    "INFO 08-07 18:59:20 [worker.py:294] the current vLLM instance can use total_gpu_memory (191.98GiB) x gpu_memory_utilization (0.80) = 153.59GiB\n"
    "INFO 08-07 18:59:20 [worker.py:294] model weights take 15.30GiB; non_torch_memory takes 0.66GiB; PyTorch activation peak memory takes "
    "14.63GiB; the rest of the memory reserved for KV Cache is 122.99GiB.\n"
    "INFO 08-07 18:59:20 [executor_base.py:113] # rocm blocks: 62971, # CPU blocks: 2048\n"
    "INFO 08-07 18:59:20 [executor_base.py:118] Maximum concurrency for 131072 tokens per request: 7.69x\n";

}  // namespace

TEST(EngineCore, Issue15_LogLinesShowTheEngineCore) {
  const auto v0 = logs::parse_engine_log(k_v0_rocm_log, sigs());
  ASSERT_TRUE(v0.engine_core.has_value());
  EXPECT_EQ(v0.engine_core->core, logs::EngineCoreShown::v0);
  EXPECT_EQ(v0.engine_core->line, 2);  // the engine's own line outranks VLLM_USE_V1 on line 1
  EXPECT_EQ(v0.engine_core->text.rfind("Initializing a V0 LLM engine (v0.9.2.dev364+gb432b7a28)", 0), 0u) << v0.engine_core->text;
  ASSERT_TRUE(v0.printed.num_gpu_blocks.has_value());  // "# rocm blocks" is the V0 executor's line on ROCm
  EXPECT_EQ(v0.printed.num_gpu_blocks->value, 62971);
  EXPECT_EQ(v0.printed.num_gpu_blocks->line, 6);
  EXPECT_FALSE(v0.printed.kv_cache_tokens.has_value());  // V0 prints no "GPU KV cache size"

  struct Case {
    std::string log;
    logs::EngineCoreShown core;
    int64_t line;
    std::string text_start;
  };
  const Case cases[] = {
      // vllm-ascend #1425 (vLLM 0.9.1): the V1 oracle's fallback.
      {"WARNING 06-23 10:00:01 [arg_utils.py:1642] --kv-cache-dtype is not supported by the V1 Engine. Falling back to V0. \n", logs::EngineCoreShown::v0, 1,
       "--kv-cache-dtype is not supported by the V1 Engine. Falling back to V0."},
      // Only the V0 executor's block line (pub-rocmblog-llama3-8b-mi300x-v0-len8192: 'gpu_executor.py:121] # GPU blocks').
      {"INFO 05-01 12:00:00 gpu_executor.py:121] # GPU blocks: 78897, # CPU blocks: 2048\n", logs::EngineCoreShown::v0, 1, "# GPU blocks: 78897, # CPU blocks: 2048"},
      // Before 0.8 the V0 engine line names no engine core.
      {"INFO 11-22 09:00:00 llm_engine.py:249] Initializing an LLM engine (v0.6.4.post1) with config: model='m'\n", logs::EngineCoreShown::v0, 1,
       "Initializing an LLM engine (v0.6.4.post1)"},
      // The environment alone, in the forms logs show it.
      {"export VLLM_USE_V1=0\nvllm serve m\n", logs::EngineCoreShown::v0, 1, "VLLM_USE_V1=0"},
      {"env: {'VLLM_USE_V1': '1', 'HCCL_BUFFSIZE': '1024'}\n", logs::EngineCoreShown::v1, 1, "VLLM_USE_V1': '1'"},
      // V1 (pub-ascend1249, VLLM_USE_V1=1) and the engine line of every V1 log.
      {"export VLLM_USE_V1=1\n(EngineCore_0 pid=9) INFO 06-10 [core.py:75] Initializing a V1 LLM engine (v0.9.0) with config: model='m'\n",
       logs::EngineCoreShown::v1, 2, "Initializing a V1 LLM engine (v0.9.0)"},
  };
  for (const auto& c : cases) {
    const auto log = logs::parse_engine_log(c.log, sigs());
    ASSERT_TRUE(log.engine_core.has_value()) << c.log;
    EXPECT_EQ(log.engine_core->core, c.core) << c.log;
    EXPECT_EQ(log.engine_core->line, c.line) << c.log;
    EXPECT_EQ(log.engine_core->text.rfind(c.text_start, 0), 0u) << log.engine_core->text;
  }
  // Neither: a V1 log without the engine line, and a variable that only contains the name.
  for (const char* none : {"INFO [gpu_worker.py:276] Available KV cache memory: 3.5 GiB\nINFO [kv_cache_utils.py:1087] GPU KV cache size: 10 tokens\n",
                           "MY_VLLM_USE_V1=0 echo\n"})
    EXPECT_FALSE(logs::parse_engine_log(none, sigs()).engine_core.has_value()) << none;
}

TEST(EngineCore, Issue15_V0RecordsByVersion) {
  auto cores = engine::load_engine_cores();
  ASSERT_TRUE(cores.has_value()) << cores.error().describe();
  // vLLM 0.8 - 0.10 run V1 by default and keep V0 (removed in 0.11.0); V0's defaults: 2048 batched tokens when chunked
  // prefill is on and 256 sequences on every card, chunked prefill off up to 32K on CUDA.
  const auto* r091 = cores->v0_engine("vllm", {0, 9, 1});
  ASSERT_NE(r091, nullptr);
  EXPECT_EQ(r091->default_core, engine::EngineCore::v1);
  EXPECT_EQ(r091->max_num_batched_tokens_large_device, 2048);
  EXPECT_EQ(r091->max_num_seqs_large_device, 256);
  EXPECT_EQ(r091->unchunked_prefill_up_to, 32768);
  EXPECT_FALSE(r091->prints_kv_memory_line);
  EXPECT_NE(cores->v0_engine("vllm", {0, 10, 2}), nullptr);
  EXPECT_EQ(cores->v0_engine("vllm", {0, 11, 0}), nullptr);
  ASSERT_NE(cores->v0_engine("vllm", {0, 7, 3}), nullptr);
  EXPECT_EQ(cores->v0_engine("vllm", {0, 7, 3})->default_core, engine::EngineCore::v0);
  EXPECT_EQ(cores->v0_engine("vllm-ascend", {0, 9, 1}), nullptr);

  const std::string good = R"({"id": "a", "engine": "vllm", "version_min": "0.8.0", "version_max": "0.10.99", "default_core": "v1",
      "max_num_batched_tokens_large_device": 2048, "max_num_seqs_large_device": 256, "unchunked_prefill_up_to": 32768, "source": "s"})";
  const std::pair<std::string, std::string> corrupt[] = {
      {"[" + good + ", " + good + "]", "records[a]: duplicate id"},
      {"[" + std::string(good).replace(good.find("\"v1\""), 4, "\"v2\"") + "]", "records[a]: default_core: expected v0 or v1, found 'v2'"},
      {"[" + std::string(good).replace(good.find("\"source\""), 8, "\"sorce\"") + "]", "unknown key records[a].sorce"},
      {"[" + good + ", " + std::string(good).replace(good.find("\"a\""), 3, "\"b\"") + "]", "records[b]: version range overlaps records[a]"},
  };
  for (const auto& [records, fragment] : corrupt) {
    auto json = parse_json(R"({"schema_version": 1, "records": )" + records + "}", "cores.json");
    ASSERT_TRUE(json.has_value()) << records;
    auto parsed = engine::parse_engine_cores(*json, "cores.json");
    ASSERT_FALSE(parsed.has_value()) << records;
    EXPECT_NE(parsed.error().describe().find(fragment), std::string::npos) << parsed.error().describe();
  }
}

TEST(EngineCore, Issue15_V0DeploymentTakesV0Defaults) {
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  auto resolve = [&](const std::string& engine, const std::string& version, std::optional<engine::EngineCore> core, std::vector<std::string>& notes,
                     deploy::VersionBasis& basis) {
    deploy::EngineInput in;
    in.engine = engine;
    in.version = version;
    in.origin = "engine_version";
    in.unknown = deploy::UnknownVersion::newest;
    in.engine_core = core;
    in.engine_core_origin = "log line 2: Initializing a V0 LLM engine (v0.9.1)";
    return deploy::resolve_engine(in, *engines, "cuda", notes, basis);
  };
  std::vector<std::string> notes;
  deploy::VersionBasis basis{};
  // V1, the default of 0.9.1: the large-device defaults (get_batch_defaults: 8192 tokens, 1024 sequences).
  auto v1 = resolve("vllm", "0.9.1", std::nullopt, notes, basis);
  ASSERT_TRUE(v1.has_value());
  EXPECT_EQ(v1->max_num_seqs_large_device, 1024);
  EXPECT_EQ(v1->max_num_batched_tokens_large_device, 8192);
  EXPECT_EQ(v1->unchunked_prefill_up_to, 0);
  // V0 on the same version: V0's defaults on every card, chunked prefill off up to 32K, no KV memory line; said.
  notes.clear();
  auto v0 = resolve("vllm", "0.9.1", engine::EngineCore::v0, notes, basis);
  ASSERT_TRUE(v0.has_value());
  EXPECT_EQ(v0->id, "vllm@0.8-0.9.1");
  EXPECT_EQ(v0->max_num_seqs_large_device, 256);
  EXPECT_EQ(v0->max_num_batched_tokens_large_device, 2048);
  EXPECT_EQ(v0->unchunked_prefill_up_to, 32768);
  EXPECT_TRUE(v0->kv_line.empty());
  EXPECT_TRUE(has(notes, "V0 engine (log line 2: Initializing a V0 LLM engine (v0.9.1)): vllm-v0@0.8-0.10's defaults replace vllm@0.8-0.9.1's")) << joined(notes);
  // Undated: the V0 engine dates it, the newest version that has one (0.10.x).
  notes.clear();
  auto undated = resolve("vllm", "", engine::EngineCore::v0, notes, basis);
  ASSERT_TRUE(undated.has_value());
  EXPECT_EQ(undated->id, "vllm@0.9.2-0.11.0");
  EXPECT_EQ(basis, deploy::VersionBasis::dated);
  EXPECT_EQ(undated->max_num_seqs_large_device, 256);
  EXPECT_TRUE(has(notes, "engine version dated by the V0 engine (log line 2: Initializing a V0 LLM engine (v0.9.1)): vllm has V0 up to 0.10.99")) << joined(notes);
  // A version without V0, and an engine without a V0 record: said, V1 rules kept.
  notes.clear();
  auto v012 = resolve("vllm", "0.12.0", engine::EngineCore::v0, notes, basis);
  ASSERT_TRUE(v012.has_value());
  EXPECT_EQ(v012->max_num_seqs_large_device, 1024);
  EXPECT_TRUE(has(notes, "the V0 engine (log line 2: Initializing a V0 LLM engine (v0.9.1)) is not in vllm 0.12.0")) << joined(notes);
  notes.clear();
  auto ascend = deploy::resolve_engine({.engine = "vllm-ascend", .version = "0.9.1", .origin = "engine_version", .engine_core = engine::EngineCore::v0,
                                        .engine_core_origin = "case engine_core"},
                                       *engines, "npu", notes, basis);
  ASSERT_TRUE(ascend.has_value());
  EXPECT_TRUE(has(notes, "the V0 engine (case engine_core) is not in vllm-ascend 0.9.1")) << joined(notes);
}

// `logs` reads the V0 log as V0 (the line says which and where), and the case it emits carries engine_core, which
// validate reads back.
TEST(EngineCore, Issue15_LogsAndItsCaseRunAsV0) {
  const std::string dir = pftest::scratch_dir("engine_core");
  const std::string log_path = dir + "/v0-mi300x.log";
  std::ofstream(log_path) << k_v0_rocm_log;
  const std::string models = pftest::shared_path("models");
  const auto text = pftest::run_cli("logs " + log_path + " --device MI300X --models " + models);
  EXPECT_NE(text.out.find("engine core: V0 (line 2: Initializing a V0 LLM engine (v0.9.2.dev364+gb432b7a28)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("KV cache blocks"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("V0 engine (log line 2: Initializing a V0 LLM engine"), std::string::npos) << text.out;
  const auto emitted = pftest::run_cli("logs " + log_path + " --device MI300X --models " + models + " --emit-case", {.with_stderr = false});
  const auto line = nlohmann::json::parse(emitted.out, nullptr, false);
  ASSERT_FALSE(line.is_discarded()) << emitted.out;
  EXPECT_EQ(line.value("engine_core", ""), "v0");
  EXPECT_EQ(line.value("num_gpu_blocks", 0), 62971);
  const std::string case_path = dir + "/v0-case.jsonl";
  std::ofstream(case_path) << emitted.out;
  const auto validated = pftest::run_cli("validate " + case_path + " --models " + models + " --json", {.with_stderr = false});
  EXPECT_EQ(validated.code, 0) << validated.out;
  EXPECT_NE(validated.out.find("V0 engine (case engine_core)"), std::string::npos) << validated.out;
  // A case whose engine_core is neither: the file, the case and the field named, exit 2.
  const std::string bad_path = dir + "/bad-core.jsonl";
  auto bad = line;
  bad["engine_core"] = "v3";
  std::ofstream(bad_path) << bad.dump() << "\n";
  const auto refused = pftest::run_cli("validate " + bad_path + " --models " + models);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("engine_core: expected v0 or v1, found 'v3'"), std::string::npos) << refused.out;
}

// Issue 15 (v0eng29): an fp8 KV cache on vLLM-Ascend (A2, A3, 310P) is taken at start-up and then fails in the ATB
// ReshapeCache operator (vllm-ascend #8102 on 910B2, #1425 on 310P3): fit refuses it with the engine's words, exit 2;
// the model's dtype, another engine, and the 950 (not recorded) are not refused.
TEST(EngineCore, Issue15_AscendFp8KvCacheIsRefused) {
  const std::string engine_message =
      "RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current working operator name is "
      "ReshapeCacheOperation.";
  for (const std::string args : {std::string("--device 910B3 --engine vllm-ascend@0.23 --kv-cache-dtype fp8"),
                                 std::string("--device 910B2 --engine vllm-ascend@0.18 --kv-cache-dtype FP8_E5M2"),
                                 std::string("--device 910C --engine vllm-ascend@0.13 --kv-cache-dtype fp8_e4m3"),
                                 std::string("--device 310P3 --engine vllm-ascend@0.9.1 --kv-cache-dtype fp8")}) {
    const auto r = pftest::run_cli("fit Qwen/Qwen3-8B " + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("--kv-cache-dtype: fp8"), std::string::npos) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(engine_message), std::string::npos) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("--kv-cache-dtype auto"), std::string::npos) << args << "\n" << r.out;
  }
  for (const std::string args : {std::string("--device 910B3 --engine vllm-ascend@0.23 --kv-cache-dtype auto"),
                                 std::string("--device H100 --engine vllm@0.23 --kv-cache-dtype fp8"),
                                 std::string("--device 950DT --engine vllm-ascend@0.23 --kv-cache-dtype fp8")}) {
    const auto r = pftest::run_cli("fit Qwen/Qwen3-8B " + args);
    EXPECT_NE(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("ReshapeCacheOperation"), std::string::npos) << args << "\n" << r.out;
  }
  // plan: the card that cannot take it is a rejected row with the same words; a plan with no other card is refused, exit 2.
  const auto only_npu = pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B3 --kv-cache-dtype fp8");
  EXPECT_EQ(only_npu.code, 2) << only_npu.out;
  EXPECT_NE(only_npu.out.find("--kv-cache-dtype: fp8 on 910B3 (ascend-a2, vllm-ascend@0.23-0.26)"), std::string::npos) << only_npu.out;
  EXPECT_NE(only_npu.out.find(engine_message), std::string::npos) << only_npu.out;
  const auto mixed = pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B3,H100 --kv-cache-dtype fp8");
  EXPECT_EQ(mixed.code, 0) << mixed.out;
  EXPECT_NE(mixed.out.find("on 1x 910B3: --kv-cache-dtype: fp8 on 910B3"), std::string::npos) << mixed.out;
  EXPECT_NE(mixed.out.find("--kv-cache-dtype fp8"), std::string::npos) << mixed.out;  // the H100 row's start command keeps it
}

// Issue 15 (v0eng29): --attention-backend is checked against the record of the version the deployment runs, so records
// split inside one profile's range (vllm@0.11.1-0.13 spans 0.11.1 to 0.13.x) each decide their own versions.
TEST(EngineCore, Issue15_AttentionBackendRecordOfTheVersionNamed) {
  auto json = parse_json(R"({"schema_version": 1, "records": [
      {"id": "old", "engines": ["vllm"], "version_min": "0.6.0", "version_max": "0.11.99", "names": ["FLASH_ATTN", "XFORMERS"], "valid_options": ["FLASH_ATTN", "XFORMERS"],
       "rejection": "old: '{name}'", "source": "s"},
      {"id": "new", "engines": ["vllm"], "version_min": "0.12.0", "version_max": "0.99.99", "names": ["FLASH_ATTN"], "valid_options": ["FLASH_ATTN"],
       "rejection": "new: '{name}'", "source": "s"}]})",
                         "ab.json");
  ASSERT_TRUE(json.has_value());
  auto names = engine::parse_attention_backends(*json, "ab.json");
  ASSERT_TRUE(names.has_value()) << names.error().describe();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  auto at = [&](const std::string& version) {
    auto p = engine::select_engine(*engines, "vllm", version);
    EXPECT_TRUE(p.has_value()) << version;
    return *p;
  };
  EXPECT_EQ(at("0.11.1").id, "vllm@0.11.1-0.13");
  EXPECT_TRUE(engine::check_attention_backend(*names, at("0.11.1"), "xformers", "--attention-backend").has_value());
  const auto refused = engine::check_attention_backend(*names, at("0.13.0"), "xformers", "--attention-backend");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().message, "--attention-backend: new: 'XFORMERS'");
}

