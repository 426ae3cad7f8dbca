// engine/engine_core: which engine core a vLLM version runs, V0 (vllm/engine/llm_engine.py LLMEngine) or V1
// (vllm/v1/engine/core.py EngineCore), and what the V0 engine changes against the V1 defaults the memory profiles of
// engines.json hold (data/engines/engine_cores.json, issue 15 v0eng29). vLLM 0.8 - 0.10 run V1 by default and V0 with
// VLLM_USE_V1=0 or for a feature V1 lacks; before 0.8 V0 is the default; from 0.11 there is no V0.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

enum class EngineCore { v0, v1 };
const char* engine_core_name(EngineCore core);  // "V0" | "V1"

// One record of engine_cores.json: the V0 engine of one engine's versions.
struct V0EngineRecord {
  std::string id;
  std::string engine;
  Version version_min, version_max;
  EngineCore default_core = EngineCore::v1;        // what the versions run when nothing selects an engine core
  int64_t max_num_batched_tokens_large_device = 0;  // V0's scheduler default on every card (no large-device default)
  int64_t max_num_seqs_large_device = 0;
  int64_t unchunked_prefill_up_to = 0;              // chunked prefill off up to this max_model_len (CUDA)
  bool prints_kv_memory_line = false;               // the worker prints "Available KV cache memory: X GiB"
  std::string source;
};

struct EngineCoreCatalog {
  std::vector<V0EngineRecord> records;
  std::string origin;
  // The record of `engine` whose range covers `v`, or nullptr: that version has no V0 engine.
  const V0EngineRecord* v0_engine(const std::string& engine, const Version& v) const;
  // The newest record of `engine`, or nullptr.
  const V0EngineRecord* newest_v0_engine(const std::string& engine) const;
};

// corrupt naming `origin` and the record: an unknown key, a duplicate id, a bad version range, a default_core other than
// v0 / v1, a non-positive default, an empty source.
Expected<EngineCoreCatalog> parse_engine_cores(const Json& root, const std::string& origin);
// The embedded data/engines/engine_cores.json.
Expected<EngineCoreCatalog> load_engine_cores();

// The profile as the V0 engine of `record` runs it: its batch defaults on every card, chunked prefill off up to
// its limit, no "Available KV cache memory" line where the V0 worker prints none.
void apply_v0_engine(EngineProfile& profile, const V0EngineRecord& record);

}  // namespace preflight::engine
