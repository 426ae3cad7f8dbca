// Issue 15 (v0eng29): a log that shows vLLM's V0 engine is read as V0, and a V0 deployment takes V0's defaults
// (data/engines/engine_cores.json) wherever it is resolved: `logs`, the case `logs --emit-case` writes, `validate`.
// Expected values come from vLLM's own strings and defaults as the catalogue record's source quotes them (the lines are
// quoted from the public logs of data/evidence/vllm-startup-public.jsonl), never from the code under test.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../logs/signatures_support.hpp"
#include "base/text.hpp"
#include "deploy/deployment.hpp"
#include "deploy/engine_core.hpp"
#include "engine/attention_backends.hpp"
#include "engine/engine_core.hpp"
#include "engine/engine_profile.hpp"
#include "logs/engine_log.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

const auto& sigs = pftest::shipped_signatures;

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
  ASSERT_NE(cores->v0_engine("vllm-ascend", {0, 9, 1}), nullptr);  // v0eng30: vLLM-Ascend's V0 path
  EXPECT_EQ(cores->v0_engine("vllm-ascend", {0, 9, 1})->default_core, engine::EngineCore::v1);
  ASSERT_NE(cores->v0_engine("vllm-ascend", {0, 7, 3}), nullptr);
  EXPECT_EQ(cores->v0_engine("vllm-ascend", {0, 7, 3})->default_core, engine::EngineCore::v0);
  EXPECT_EQ(cores->v0_engine("vllm-ascend", {0, 11, 0}), nullptr);

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
  // v0eng30: vLLM-Ascend 0.9.1 has V0 (vllm-ascend #1425): its record's defaults and the NPU executor's lines.
  EXPECT_TRUE(has(notes, "V0 engine (case engine_core): vllm-ascend-v0@0.8-0.10's defaults replace")) << joined(notes);
  ASSERT_TRUE(ascend->v0_lines.has_value());
  EXPECT_EQ(ascend->v0_lines->device_name, "npu");
  EXPECT_TRUE(ascend->kv_line.empty());
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


namespace {

// The lines under "the engine will print" of a fit's text output.
std::vector<std::string> engine_lines(const std::string& out) {
  std::vector<std::string> lines;
  const size_t at = out.find("  the engine will print\n");
  if (at == std::string::npos) return lines;
  size_t p = at + std::string("  the engine will print\n").size();
  while (p < out.size() && out.compare(p, 4, "    ") == 0) {
    const size_t end = out.find('\n', p);
    lines.push_back(out.substr(p + 4, end - p - 4));
    if (end == std::string::npos) break;
    p = end + 1;
  }
  return lines;
}

// The N and M of the V0 executor's "# <word> blocks: N, # CPU blocks: M" among `lines`, with the word; nullopt when none.
struct BlocksLine {
  std::string word;
  long long gpu_blocks = 0, cpu_blocks = 0;
  size_t index = 0;
};
std::optional<BlocksLine> blocks_line(const std::vector<std::string>& lines) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& l = lines[i];
    const size_t cpu = l.find(", # CPU blocks: ");
    if (l.rfind("# ", 0) != 0 || cpu == std::string::npos) continue;
    const size_t word_end = l.find(" blocks: ");
    BlocksLine b{l.substr(2, word_end - 2), std::stoll(l.substr(word_end + 9, cpu - word_end - 9)), std::stoll(l.substr(cpu + 16)), i};
    return b;
  }
  return std::nullopt;
}

std::string two_places(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

}  // namespace

// Issue 15 (v0eng30): a V0 deployment's predicted lines are V0's own, in text and JSON. The V0 run of
// pub-cmontemuino-llama31-8b-instruct-mi300x-v0-rocm091-fp16-u0.8-len131072 (vLLM 0.9.1 on ROCm, VLLM_USE_V1=0, Llama-3.1-8B,
// util 0.8, 131072 tokens, chunked prefill off) printed the worker's 'the current vLLM instance can use total_gpu_memory ...'
// and 'model weights take ...; the rest of the memory reserved for KV Cache is 122.99GiB.', then '# rocm blocks: 62971, # CPU
// blocks: 2048' and 'Maximum concurrency for 131072 tokens per request: 7.69x'. The 2048 CPU blocks are vLLM's default 4 GiB
// swap space over one 16-token block of 32 layers x 2 (K and V) x 8 KV heads x 128 x 2 B = 2 MiB; the concurrency is vLLM's
// num_gpu_blocks x 16 / 131072 of the block count the line prints. No V1 line ("GPU KV cache size") is predicted.
TEST(EngineCore, Issue15_V0DeploymentPrintsV0Lines) {
  const std::string args =
      "fit meta-llama/Meta-Llama-3.1-8B --device MI300X --engine vllm@0.9.1 --max-model-len 131072 --gpu-memory-utilization 0.8 --no-enable-chunked-prefill";
  const auto r = pftest::run_cli(args, {.env = "VLLM_USE_V1=0"});
  ASSERT_EQ(r.code, 0) << r.out;
  const auto lines = engine_lines(r.out);
  const auto blocks = blocks_line(lines);
  ASSERT_TRUE(blocks.has_value()) << r.out;
  EXPECT_EQ(blocks->word, "rocm");
  EXPECT_EQ(blocks->cpu_blocks, 2048);
  EXPECT_NEAR(static_cast<double>(blocks->gpu_blocks), 62971.0, 62971.0 * 0.02) << r.out;  // the log's count, within the estimate's 2%
  ASSERT_LT(blocks->index + 1, lines.size());
  EXPECT_EQ(lines[blocks->index + 1], "Maximum concurrency for 131072 tokens per request: " + two_places(blocks->gpu_blocks * 16.0 / 131072.0) + "x");
  EXPECT_TRUE(has(lines, "the current vLLM instance can use total_gpu_memory (")) << joined(lines);
  EXPECT_TRUE(has(lines, "x gpu_memory_utilization (0.80) = ")) << joined(lines);
  EXPECT_TRUE(has(lines, "PyTorch activation peak memory takes ")) << joined(lines);
  EXPECT_TRUE(has(lines, "GiB; the rest of the memory reserved for KV Cache is ")) << joined(lines);
  EXPECT_FALSE(has(lines, "GPU KV cache size")) << joined(lines);
  EXPECT_NE(r.out.find("V0 engine (environment VLLM_USE_V1=0): vllm-v0@0.8-0.10's defaults replace"), std::string::npos) << r.out;
  // The same without VLLM_USE_V1: V1's lines.
  const auto v1 = pftest::run_cli(args);
  EXPECT_TRUE(has(engine_lines(v1.out), "GPU KV cache size: ")) << v1.out;
  EXPECT_FALSE(blocks_line(engine_lines(v1.out)).has_value()) << v1.out;
  // JSON: the same lines.
  const auto json = pftest::run_cli(args + " --json", {.env = "VLLM_USE_V1=0", .with_stderr = false});
  const auto doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out;
  const auto printed = doc["engine_lines"].get<std::vector<std::string>>();
  EXPECT_TRUE(has(printed, "# rocm blocks: ")) << doc["engine_lines"].dump();
  EXPECT_TRUE(has(printed, ", # CPU blocks: 2048")) << doc["engine_lines"].dump();
  EXPECT_NEAR(doc["kv_cache"]["max_concurrency"].get<double>(), blocks->gpu_blocks * 16.0 / 131072.0, 1e-9);
  // VLLM_USE_V1 that vLLM's int() refuses is refused, naming the variable.
  const auto bad = pftest::run_cli(args, {.env = "VLLM_USE_V1=yes"});
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("VLLM_USE_V1: expected an integer, 0 (the V0 engine) or 1 (V1), found 'yes'"), std::string::npos) << bad.out;
}

// Issue 15 (v0eng30): the V0 lines by version, as each version's executor wrote them. Qwen3-8B in bf16, 16-token blocks:
// one block over its 36 layers is 16 x 36 x 2 x 8 KV heads x 128 x 2 B = 2,359,296 B, so 4 GiB of swap is 1820 CPU blocks
// (4,294,967,296 // 2,359,296 = 1820, the count the 310P log of vllm-ascend #1425 prints for the same bytes per block).
//   0.6.2: gpu_executor.py "# GPU blocks", no concurrency line (vLLM PR #8831 came after 0.6.2)
//   0.6.3: the same and "Maximum concurrency for 8192 tokens per request" (no thousands separator, unlike V1's "8,192")
//   0.7.2: executor_base.py with current_platform.dispatch_key: "# CUDA blocks"
//   0.7.3: current_platform.device_name: "# cuda blocks"
TEST(EngineCore, Issue15_V0LinesByVersion) {
  struct Case {
    std::string version, word;
    bool concurrency;
  };
  for (const Case& c : {Case{"0.6.2", "GPU", false}, Case{"0.6.3", "GPU", true}, Case{"0.7.2", "CUDA", true}, Case{"0.7.3", "cuda", true}}) {
    // arch31: Llama-3.1-8B, which these versions load (Qwen3 needs 0.8.4: data/engines/model_support.json); 16-token
    // blocks of 16 x 32 x 2 x 8 x 128 x 2 B = 2,097,152 B, so 4 GiB of swap is 2048 CPU blocks.
    const auto r = pftest::run_cli("fit meta-llama/Meta-Llama-3.1-8B --device \"RTX 3090\" --engine vllm@" + c.version + " --max-model-len 8192", {.env = "env -u VLLM_USE_V1"});
    ASSERT_EQ(r.code, 0) << c.version << "\n" << r.out;
    const auto lines = engine_lines(r.out);
    const auto blocks = blocks_line(lines);
    ASSERT_TRUE(blocks.has_value()) << c.version << "\n" << r.out;
    EXPECT_EQ(blocks->word, c.word) << c.version;
    EXPECT_EQ(blocks->cpu_blocks, 2048) << c.version;
    const bool has_concurrency = blocks->index + 1 < lines.size() && lines[blocks->index + 1].rfind("Maximum concurrency for 8192 tokens per request: ", 0) == 0;
    EXPECT_EQ(has_concurrency, c.concurrency) << c.version << "\n" << joined(lines);
    if (c.concurrency) EXPECT_EQ(lines[blocks->index + 1], "Maximum concurrency for 8192 tokens per request: " + two_places(blocks->gpu_blocks * 16.0 / 8192.0) + "x");
    EXPECT_FALSE(has(lines, "GPU KV cache size")) << c.version;
    EXPECT_NE(r.out.find("V0 engine, the default of vllm " + c.version), std::string::npos) << r.out;
  }
}

// Issue 15 (v0eng30): a V0 deployment whose cache holds less than one request at max_model_len fails with the V0 worker's
// ValueError (vllm/worker/worker.py raise_if_cache_size_invalid), its token count the printed blocks x 16, after the blocks
// line is printed; V1's message ("To serve at least one request with the models's max seq len") is not the one given.
TEST(EngineCore, Issue15_V0TooLongIsV0sValueError) {
  // arch31: a model vLLM 0.7.3's registry has (Qwen3 needs 0.8.4: data/engines/model_support.json).
  const auto r = pftest::run_cli("fit meta-llama/Meta-Llama-3.1-8B --device \"RTX 3090\" --engine vllm@0.7.3 --max-model-len 131072");
  EXPECT_EQ(r.code, 1) << r.out;
  const auto blocks = blocks_line(engine_lines(r.out));
  ASSERT_TRUE(blocks.has_value()) << r.out;
  EXPECT_NE(r.out.find("ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (" +
                       std::to_string(blocks->gpu_blocks * 16) +
                       "). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine."),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("To serve at least one request"), std::string::npos) << r.out;
}

// Issue 15 (v0eng30): vLLM 0.8 - 0.10's V1 oracle (vllm/engine/arg_utils.py _is_v1_supported_oracle) sends a card below
// compute capability 8.0, and an fp8 KV cache on a card without FlashAttention 3, back to V0 with its warning; fit says so
// with vLLM's words and sizes V0. Hopper's fp8 KV, an auto KV cache on Ampere and vLLM 0.12 (no V0) stay V1. With
// VLLM_USE_V1=1 vLLM refuses the feature instead (_raise_or_fallback's NotImplementedError).
TEST(EngineCore, Issue15_V1OracleFallsBackToV0) {
  const std::string cc_warning = "Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0.";
  const std::string kv_warning = "--kv-cache-dtype is not supported by the V1 Engine. Falling back to V0.";
  const auto v100 = pftest::run_cli("fit Qwen/Qwen3-8B --device V100 --engine vllm@0.9.1 --max-model-len 8192");
  auto lines = engine_lines(v100.out);
  ASSERT_FALSE(lines.empty()) << v100.out;
  EXPECT_EQ(lines.front(), cc_warning) << v100.out;
  ASSERT_TRUE(blocks_line(lines).has_value()) << v100.out;
  EXPECT_EQ(blocks_line(lines)->word, "cuda");
  EXPECT_NE(v100.out.find("V0 engine by vLLM's V1 oracle (vllm 0.9.1 on V100-SXM2-32G, volta): \"" + cc_warning + "\""), std::string::npos) << v100.out;
  const auto a100_fp8 = pftest::run_cli("fit Qwen/Qwen3-8B --device A100 --engine vllm@0.9.1 --max-model-len 8192 --kv-cache-dtype fp8");
  lines = engine_lines(a100_fp8.out);
  ASSERT_FALSE(lines.empty()) << a100_fp8.out;
  EXPECT_EQ(lines.front(), kv_warning) << a100_fp8.out;
  // 8-bit cache: one 16-token block of Qwen3-8B is 1,179,648 B, so 4 GiB of swap is 3640 CPU blocks.
  ASSERT_TRUE(blocks_line(lines).has_value()) << a100_fp8.out;
  EXPECT_EQ(blocks_line(lines)->cpu_blocks, 3640);
  for (const std::string args : {std::string("--device H100 --engine vllm@0.9.1 --kv-cache-dtype fp8"), std::string("--device A100 --engine vllm@0.9.1"),
                                 std::string("--device V100 --engine vllm@0.12.0")}) {
    const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --max-model-len 8192 " + args);
    EXPECT_EQ(r.out.find("Falling back to V0"), std::string::npos) << args << "\n" << r.out;
    EXPECT_FALSE(blocks_line(engine_lines(r.out)).has_value()) << args << "\n" << r.out;
  }
  const auto forced = pftest::run_cli("fit Qwen/Qwen3-8B --device V100 --engine vllm@0.9.1 --max-model-len 8192", {.env = "VLLM_USE_V1=1"});
  EXPECT_EQ(forced.code, 2) << forced.out;
  EXPECT_NE(forced.out.find("NotImplementedError: VLLM_USE_V1=1 is not supported with Compute Capability < 8.0."), std::string::npos) << forced.out;
}

// Issue 15 (v0eng30): vLLM-Ascend's V0 path. 0.7.x runs V0 only and prints no 'Available memory' line (worker_v1.py's) but
// vLLM's executor lines with the NPU's word: "# npu blocks: N, # CPU blocks: M" and the concurrency line (vllm-ascend #397 on
// 0.7.3, #1425 on 0.9.1). Llama-3.1-8B (arch31: vLLM 0.7.3 has no Qwen3) in bf16 with 128-token blocks: 128 x 32 x 2 x 8
// x 128 x 2 B = 16,777,216 B a block, so 4 GiB of swap is 256 CPU blocks. 0.9.1 runs V1 unless VLLM_USE_V1=0.
TEST(EngineCore, Issue15_AscendV0Lines) {
  const auto v073 = pftest::run_cli("fit meta-llama/Meta-Llama-3.1-8B --device 910B3 --engine vllm-ascend@0.7.3 --max-model-len 8192");
  ASSERT_EQ(v073.code, 0) << v073.out;
  auto lines = engine_lines(v073.out);
  auto blocks = blocks_line(lines);
  ASSERT_TRUE(blocks.has_value()) << v073.out;
  EXPECT_EQ(blocks->word, "npu");
  EXPECT_EQ(blocks->cpu_blocks, 256);
  ASSERT_LT(blocks->index + 1, lines.size());
  EXPECT_EQ(lines[blocks->index + 1], "Maximum concurrency for 8192 tokens per request: " + two_places(blocks->gpu_blocks * 128.0 / 8192.0) + "x");
  EXPECT_FALSE(has(lines, "Available memory:")) << joined(lines);
  EXPECT_TRUE(has(lines, "Loading model weights took ")) << joined(lines);
  const auto v091 = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend@0.9.1 --max-model-len 8192");
  EXPECT_TRUE(has(engine_lines(v091.out), "Available memory: ")) << v091.out;
  const auto v091_v0 = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B3 --engine vllm-ascend@0.9.1 --max-model-len 8192", {.env = "VLLM_USE_V1=0"});
  lines = engine_lines(v091_v0.out);
  blocks = blocks_line(lines);
  ASSERT_TRUE(blocks.has_value()) << v091_v0.out;
  EXPECT_EQ(blocks->word, "npu");
  EXPECT_FALSE(has(lines, "Available memory:")) << joined(lines);
  EXPECT_NE(v091_v0.out.find("V0 engine (environment VLLM_USE_V1=0): vllm-ascend-v0@0.8-0.10's defaults replace"), std::string::npos) << v091_v0.out;
}

// Issue 15 (v0eng30): the new parts of engine_cores.json are checked like the rest: a printed_lines entry outside its record's
// range or without device words, a fall-back with an unknown condition or with no V0 record whose default is V1 under it.
TEST(EngineCore, Issue15_V0LinesAndFallbacksAreChecked) {
  auto cores = engine::load_engine_cores();
  ASSERT_TRUE(cores.has_value()) << cores.error().describe();
  EXPECT_NE(cores->v1_fallback("vllm", {0, 9, 1}, "cuda", "volta", ""), nullptr);
  EXPECT_EQ(cores->v1_fallback("vllm", {0, 9, 1}, "cuda", "ampere", "auto"), nullptr);
  EXPECT_NE(cores->v1_fallback("vllm", {0, 9, 1}, "cuda", "ampere", "fp8"), nullptr);
  EXPECT_EQ(cores->v1_fallback("vllm", {0, 9, 1}, "cuda", "hopper", "fp8"), nullptr);
  EXPECT_EQ(cores->v1_fallback("vllm", {0, 11, 0}, "cuda", "volta", ""), nullptr);
  EXPECT_NE(cores->v1_fallback("vllm-ascend", {0, 9, 1}, "npu", "ascend-310p", "fp8"), nullptr);
  // Issue 15 (eng31): VLLM_ATTENTION_BACKEND outside the oracle's V1_BACKENDS (vllm/engine/arg_utils.py of 0.8 - 0.10)
  // sends the engine to V0 with "VLLM_ATTENTION_BACKEND=XFORMERS is not supported by the V1 Engine. Falling back to V0.";
  // FLASHINFER is in the 0.9-era list, and the comparison is the variable's text as given.
  const engine::V1Fallback* xformers = cores->v1_fallback("vllm", {0, 9, 1}, "cuda", "hopper", "", "XFORMERS");
  ASSERT_NE(xformers, nullptr);
  EXPECT_EQ(xformers->warning_for("XFORMERS").rfind("VLLM_ATTENTION_BACKEND=XFORMERS is not supported by the V1 Engine. Falling back to V0.", 0), 0u);
  EXPECT_EQ(cores->v1_fallback("vllm", {0, 9, 1}, "cuda", "hopper", "", "FLASHINFER"), nullptr);
  EXPECT_NE(cores->v1_fallback("vllm", {0, 9, 1}, "cuda", "hopper", "", "flashinfer"), nullptr);
  EXPECT_EQ(cores->v1_fallback("vllm", {0, 11, 0}, "cuda", "hopper", "", "XFORMERS"), nullptr);

  const std::string record = R"({"id": "a", "engine": "vllm", "version_min": "0.8.0", "version_max": "0.10.99", "default_core": "v1",
      "max_num_batched_tokens_large_device": 2048, "max_num_seqs_large_device": 256, "unchunked_prefill_up_to": 32768, "source": "s", "printed_lines": LINES})";
  const std::string lines_ok = R"([{"version_min": "0.8.0", "version_max": "0.10.99", "device_names": {"cuda": "cuda"}, "source": "s"}])";
  const std::string fallback = R"({"id": "f", "engine": "vllm", "version_min": "0.8.0", "version_max": "0.9.99", "platforms": ["cuda"], "families": ["volta"],
      "condition": "device", "feature_name": "x", "warning": "x is not supported by the V1 Engine. Falling back to V0.", "source": "s"})";
  auto with = [](std::string text, const std::string& key, const std::string& value) { return text.replace(text.find(key), key.size(), value); };
  auto file = [&](const std::string& lines, const std::string& fallbacks) {
    return R"({"schema_version": 1, "records": [)" + with(record, "LINES", lines) + R"(], "v1_fallbacks": [)" + fallbacks + "]}";
  };
  {
    auto json = parse_json(file(lines_ok, fallback), "cores.json");
    ASSERT_TRUE(json.has_value());
    auto parsed = engine::parse_engine_cores(*json, "cores.json");
    ASSERT_TRUE(parsed.has_value()) << parsed.error().describe();
    EXPECT_EQ(parsed->fallbacks.size(), 1u);
  }
  const std::pair<std::string, std::string> corrupt[] = {
      {file(with(lines_ok, "0.10.99", "0.11.0"), fallback), "records[a].printed_lines[0]: bad version range"},
      {file(with(lines_ok, R"({"cuda": "cuda"})", "{}"), fallback), "records[a].printed_lines[0].device_names: expected an object of platform names"},
      {file(lines_ok, with(fallback, "\"device\"", "\"always\"")), "v1_fallbacks[f]: condition: expected device, kv_cache_dtype or attention_backend, found 'always'"},
      // Issue 15 (eng31): the attention-backend condition needs the oracle's V1 list, and only it takes one.
      {file(lines_ok, with(fallback, "\"device\"", "\"attention_backend\"")), "v1_fallbacks[f]: v1_names: expected the oracle's V1 list with condition attention_backend"},
      {file(lines_ok, with(fallback, "\"source\"", "\"v1_names\": [\"FLASH_ATTN\"], \"source\"")), "v1_fallbacks[f]: v1_names: expected the oracle's V1 list"},
      {file(lines_ok, with(fallback, "0.9.99", "0.11.5")), "v1_fallbacks[f]: no V0 record of vllm whose default is V1 covers 0.8.0 - 0.11.5"},
      {file(lines_ok, with(fallback, "\"warning\"", "\"warn\"")), "unknown key v1_fallbacks[f].warn"},
  };
  for (const auto& [text, fragment] : corrupt) {
    auto json = parse_json(text, "cores.json");
    ASSERT_TRUE(json.has_value()) << text;
    auto parsed = engine::parse_engine_cores(*json, "cores.json");
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_NE(parsed.error().describe().find(fragment), std::string::npos) << parsed.error().describe();
  }
}

// Issue 15 (v0eng30): a version dated only by the evidence's date names its profile's first release (vllm-ascend@0.7-0.12
// at 0.7.0 for a log of 2025-11-29, which ran 0.11): that is no statement of a V0-only version, so the profile keeps its
// V1 lines. A stated 0.7.3 runs V0.
TEST(EngineCore, Issue15_DatedVersionIsNotTakenForV0) {
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  std::vector<std::string> notes;
  deploy::VersionBasis basis{};
  deploy::EngineInput dated{.engine = "vllm-ascend", .origin = "engine_version", .unknown = deploy::UnknownVersion::newest, .evidence_date = "vllm-ascend main (git fb5538625, 2025-11-29)",
                            .evidence_date_origin = "case engine_version"};
  auto by_date = deploy::resolve_engine(dated, *engines, "npu", notes, basis);
  ASSERT_TRUE(by_date.has_value()) << by_date.error().describe();
  EXPECT_EQ(by_date->id, "vllm-ascend@0.7-0.12");
  EXPECT_EQ(basis, deploy::VersionBasis::dated);
  EXPECT_FALSE(by_date->v0_lines.has_value()) << joined(notes);
  EXPECT_FALSE(by_date->kv_line.empty());
  notes.clear();
  auto stated = deploy::resolve_engine({.engine = "vllm-ascend", .version = "0.7.3", .origin = "engine_version"}, *engines, "npu", notes, basis);
  ASSERT_TRUE(stated.has_value());
  ASSERT_TRUE(stated->v0_lines.has_value()) << joined(notes);
  EXPECT_EQ(stated->v0_lines->device_name, "npu");
}

// Issue 15 (eng31): data/engines/attention_backends.json held one union record for vLLM 0.6 - 0.99, so a name a version
// lacks was taken and a refusal listed the newest enum. Each version now answers as its own source does. Expected words
// from vLLM: before PR #22217 (0.10.1) backend_name_to_enum returns None for an unknown name and the platform chooses
// (no error); from it "Invalid attention backend: '<name>'. Valid backends are: [<Python list>]" (the 28 names a 0.10.1-era
// vLLM printed, from 'FLASH_ATTN', 'FLASH_ATTN_VLLM_V1' to 'TREE_ATTN', 'XFORMERS_VLLM_V1'); 0.11.0's backend_name_to_enum
// removes "_VLLM_V1" first; AttentionBackendEnum's metaclass (0.11.1 on) "Unknown attention backend: '<name>'. Valid
// options are: <names joined by ', '>"; XFORMERS is a member in the 0.11.x registry and not in v0.12.0's (arch32: vLLM
// PR #29262 removed it on 2025-11-24, before the v0.12.0 tag of 2025-12-03; eng31 had kept it to 0.12.99).
TEST(EngineCore, Issue15_AttentionBackendNamesOfEachVllmVersion) {
  auto names = engine::load_attention_backends();
  ASSERT_TRUE(names.has_value()) << names.error().describe();
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  enum class Outcome { taken, noted, refused };
  struct Case {
    const char* engine;
    const char* version;  // "" = not given: the profile's newest
    const char* value;
    Outcome outcome;
    const char* fragment;  // the start of the refusal, or a fragment of the note
  };
  const Case cases[] = {
      {"vllm", "0.9.1", "XFORMERS", Outcome::taken, ""},
      {"vllm", "0.9.1", "FLASHMLA_SPARSE", Outcome::noted, "VLLM_ATTENTION_BACKEND=FLASHMLA_SPARSE is no member of vLLM's _Backend enum"},
      {"vllm", "0.7.3", "nope", Outcome::noted, "VLLM_ATTENTION_BACKEND=NOPE is no member"},
      {"vllm", "0.10.1", "TRITON_ATTN_VLLM_V1", Outcome::taken, ""},
      {"vllm", "0.10.1", "FLASHMLA_SPARSE", Outcome::refused,
       "--attention-backend: ValueError: Invalid attention backend: 'FLASHMLA_SPARSE'. Valid backends are: ['FLASH_ATTN', 'FLASH_ATTN_VLLM_V1', "},
      {"vllm", "0.11.0", "flash_attn_vllm_v1", Outcome::noted, "vllm 0.11.0 removes the suffix '_VLLM_V1' and runs FLASH_ATTN"},
      {"vllm", "0.11.0", "ROCM_AITER_UNIFIED_ATTN", Outcome::refused,
       "--attention-backend: ValueError: Invalid attention backend: 'ROCM_AITER_UNIFIED_ATTN'. Valid backends are: ['FLASH_ATTN', 'TRITON_ATTN', 'XFORMERS', "},
      {"vllm", "0.11.1", "XFORMERS", Outcome::taken, ""},
      {"vllm", "0.12.0", "XFORMERS", Outcome::refused, "--attention-backend: ValueError: Unknown attention backend: 'XFORMERS'. Valid options are: FLASH_ATTN, "},
      {"vllm", "0.13.0", "XFORMERS", Outcome::refused, "--attention-backend: ValueError: Unknown attention backend: 'XFORMERS'. Valid options are: FLASH_ATTN, "},
      {"vllm", "0.23.0", "TRITON_ATTN_VLLM_V1", Outcome::refused, "--attention-backend: ValueError: Unknown attention backend: 'TRITON_ATTN_VLLM_V1'."},
      {"vllm-ascend", "0.9.1", "XFORMERS", Outcome::taken, ""},
      {"vllm-ascend", "0.13.0", "XFORMERS", Outcome::refused, "--attention-backend: ValueError: Unknown attention backend: 'XFORMERS'."},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.engine) + " " + c.version + " " + c.value);
    auto profile = engine::select_engine(*engines, c.engine, c.version);
    ASSERT_TRUE(profile.has_value()) << profile.error().describe();
    const auto got = engine::check_attention_backend(*names, *profile, c.value, "--attention-backend");
    if (c.outcome == Outcome::refused) {
      ASSERT_FALSE(got.has_value()) << *got;
      EXPECT_EQ(got.error().kind, ErrorKind::invalid_argument);
      EXPECT_EQ(got.error().message.rfind(c.fragment, 0), 0u) << got.error().message;
      continue;
    }
    ASSERT_TRUE(got.has_value()) << got.error().describe();
    if (c.outcome == Outcome::taken) EXPECT_EQ(*got, "");
    else EXPECT_NE(got->find(c.fragment), std::string::npos) << *got;
  }
  // The 0.10.1 list ends as vLLM printed it.
  auto v0101 = engine::select_engine(*engines, "vllm", "0.10.1");
  ASSERT_TRUE(v0101.has_value());
  const auto refused = engine::check_attention_backend(*names, *v0101, "nope", "--attention-backend");
  ASSERT_FALSE(refused.has_value());
  EXPECT_TRUE(ends_with(refused.error().message, "'FLEX_ATTENTION', 'TREE_ATTN', 'XFORMERS_VLLM_V1']")) << refused.error().message;
  // No version given: the newest profile's list, and the message says which it used.
  auto newest = engine::select_engine(*engines, "vllm", "");
  ASSERT_TRUE(newest.has_value());
  const auto assumed = engine::check_attention_backend(*names, *newest, "XFORMERS", "--attention-backend");
  ASSERT_FALSE(assumed.has_value());
  EXPECT_NE(assumed.error().message.find("assumed, the version not given: the names of vllm-attention-backend@0.13-0.99]"), std::string::npos)
      << assumed.error().message;
  // plan's form, without a profile: the version given, else the newest record.
  EXPECT_TRUE(engine::check_attention_backend_of(*names, "vllm", engine::parse_version("0.11.1"), "XFORMERS", "--attention-backend").has_value());
  const auto plan_newest = engine::check_attention_backend_of(*names, "vllm", std::nullopt, "XFORMERS", "--attention-backend");
  ASSERT_FALSE(plan_newest.has_value());
  EXPECT_NE(plan_newest.error().message.find("the names of vllm-attention-backend@0.13-0.99"), std::string::npos) << plan_newest.error().message;
}

// arch32: eng31 placed the enum boundaries by PR merge dates; checked against vLLM main's enum on each release's day
// (data/engines/attention_backends.json sources): v0.10.1 printed 25 names (FLASHINFER_MLA and TORCH_SDPA_VLLM_V1 joined
// on 2025-09-10, for 0.10.2), the v0.11.x enum had 22 (ROCM_AITER_TRITON_MLA arrived for 0.12.0), and XFORMERS left
// before 0.12.0.
TEST(EngineCore, Issue15_AttentionBackendBoundariesFollowTheReleaseNotTheMergeDate) {
  auto names = engine::load_attention_backends();
  ASSERT_TRUE(names.has_value()) << names.error().describe();
  struct Case {
    const char* version;
    const char* value;
    bool taken;  // else refused
  };
  for (const Case& c : {Case{"0.10.1", "FLASHINFER_MLA", false}, Case{"0.10.2", "FLASHINFER_MLA", true}, Case{"0.10.1", "TORCH_SDPA_VLLM_V1", false},
                        Case{"0.10.2", "TORCH_SDPA_VLLM_V1", true}, Case{"0.11.1", "ROCM_AITER_TRITON_MLA", false}, Case{"0.12.0", "ROCM_AITER_TRITON_MLA", true},
                        Case{"0.11.2", "XFORMERS", true}, Case{"0.12.0", "XFORMERS", false}}) {
    const auto got = engine::check_attention_backend_of(*names, "vllm", engine::parse_version(c.version), c.value, "--attention-backend");
    EXPECT_EQ(got.has_value(), c.taken) << c.version << " " << c.value << ": " << (got ? *got : got.error().message);
  }
  const auto v0101 = engine::check_attention_backend_of(*names, "vllm", engine::parse_version("0.10.1"), "nope", "--attention-backend");
  ASSERT_FALSE(v0101.has_value());
  EXPECT_NE(v0101.error().message.find("'FLASHINFER_VLLM_V1', 'TRITON_MLA', 'TRITON_MLA_VLLM_V1', 'FLASHMLA_VLLM_V1', 'FLASHMLA', 'CUTLASS_MLA', 'PALLAS'"), std::string::npos)
      << v0101.error().message;
}

// Issue 19 (hard32): VLLM_USE_V1 read with a check of its own (a sign and at most 18 digits), where vLLM's
// bool(int(value)) takes underscores between digits and any number of them: "1_0" is V1 and twenty zeros V0; what
// int() refuses stays refused.
TEST(EngineCore, Issue19_UseV1ReadAsPythonIntReadsIt) {
  using preflight::engine::EngineCore;
  const auto under = preflight::deploy::engine_core_from_env("1_0");
  ASSERT_TRUE(under.has_value()) << under.error().message;
  ASSERT_TRUE(under->has_value());
  EXPECT_EQ(**under, EngineCore::v1);
  const auto zeros = preflight::deploy::engine_core_from_env("00000000000000000000");
  ASSERT_TRUE(zeros.has_value()) << zeros.error().message;
  ASSERT_TRUE(zeros->has_value());
  EXPECT_EQ(**zeros, EngineCore::v0);
  for (const char* bad : {"1__0", "_1", "0x1", "1.0", "yes"}) {
    const auto refused = preflight::deploy::engine_core_from_env(bad);
    ASSERT_FALSE(refused.has_value()) << bad;
    EXPECT_NE(refused.error().message.find("VLLM_USE_V1: expected an integer, 0 (the V0 engine) or 1 (V1)"), std::string::npos) << refused.error().message;
  }
}
