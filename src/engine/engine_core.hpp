// engine/engine_core: which engine core a vLLM version runs, V0 (vllm/engine/llm_engine.py LLMEngine) or V1
// (vllm/v1/engine/core.py EngineCore), and what the V0 engine changes against the V1 defaults the memory profiles of
// engines.json hold (data/engines/engine_cores.json, issue 15 v0eng29): its scheduler defaults, the lines it prints
// (v0eng30: the executor's "# {device} blocks: N, # CPU blocks: M", the concurrency line, the worker's memory summary),
// and what vLLM's V1 oracle sends back to V0 on a version whose default is V1. vLLM 0.8 - 0.10 run V1 by default and
// V0 with VLLM_USE_V1=0 or for a feature V1 lacks; before 0.8 V0 is the default; from 0.11 there is no V0.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

enum class EngineCore { v0, v1 };
const char* engine_core_name(EngineCore core);  // "V0" | "V1"

// Issue 15 (v0eng30): the lines a range of V0 versions prints once the worker has sized the cache (a record's
// "printed_lines" entry).
struct V0PrintedLines {
  Version version_min, version_max;
  std::vector<std::pair<std::string, std::string>> device_names;  // platform ("cuda", "rocm", "npu") -> the word after "# "
  bool concurrency_line = false;           // "Maximum concurrency for L tokens per request: X.XXx" follows the blocks line
  std::vector<std::string> memory_lines;   // the worker's memory summary, templates as engines.json kv_line
  std::string source;
};

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
  double swap_space_bytes = 0;                      // the CPU swap space that sets "# CPU blocks" (0: not recorded)
  std::string swap_space_source;
  std::vector<V0PrintedLines> printed_lines;        // by version; none covering a version: its lines are not recorded
  std::string source;
  // The printed_lines entry covering `v`, or nullptr.
  const V0PrintedLines* lines_at(const Version& v) const;
};

// Issue 15 (v0eng30): what vLLM's V1 oracle (vllm/engine/arg_utils.py _is_v1_supported_oracle) sends back to V0 on a
// version whose default is V1: the card alone (device: a family without what V1 needs), a --kv-cache-dtype other than
// auto on that card (kv_cache_dtype), or an attention backend named outside the oracle's V1 list (attention_backend,
// issue 15 eng31: VLLM_ATTENTION_BACKEND; feature_name and warning then hold {name}, the value).
enum class FallbackCondition { device, kv_cache_dtype, attention_backend };
struct V1Fallback {
  std::string id;
  std::string engine;
  Version version_min, version_max;
  std::vector<std::string> platforms, families;  // empty families: every card of the platforms
  FallbackCondition condition = FallbackCondition::device;
  std::string feature_name;  // as vLLM names it ("Compute Capability < 8.0", "--kv-cache-dtype")
  std::string warning;       // vLLM's warning, verbatim
  std::vector<std::string> v1_names;  // attention_backend: the names the oracle keeps on V1 (compared as given, case included)
  std::string source;
  // feature_name / warning with {name} replaced by the attention backend given ("" for the other conditions).
  std::string feature_for(const std::string& attention_backend) const;
  std::string warning_for(const std::string& attention_backend) const;
};

struct EngineCoreCatalog {
  std::vector<V0EngineRecord> records;
  std::vector<V1Fallback> fallbacks;
  std::string origin;
  // The record of `engine` whose range covers `v`, or nullptr: that version has no V0 engine.
  const V0EngineRecord* v0_engine(const std::string& engine, const Version& v) const;
  // The newest record of `engine`, or nullptr.
  const V0EngineRecord* newest_v0_engine(const std::string& engine) const;
  // The first fall-back of `engine` at `v` that a card of `platform` / `family` with `kv_cache_dtype` ("" or "auto":
  // none stated) and `attention_backend` (as given; "": none) meets, or nullptr.
  const V1Fallback* v1_fallback(const std::string& engine, const Version& v, const std::string& platform, const std::string& family,
                                const std::string& kv_cache_dtype, const std::string& attention_backend = {}) const;
};

// corrupt naming `origin` and the record: an unknown key, a duplicate id, a bad version range, a default_core other than
// v0 / v1, a non-positive default, an empty source, a printed_lines entry outside its record's range, a negative swap
// space, a fall-back whose condition is not device, kv_cache_dtype or attention_backend (that one with its v1_names) or
// whose engine has no V0 record at its versions.
Expected<EngineCoreCatalog> parse_engine_cores(const Json& root, const std::string& origin);
// The embedded data/engines/engine_cores.json.
Expected<EngineCoreCatalog> load_engine_cores();
// The embedded catalogue, parsed once per process (every engine resolution reads it: a plan resolves tens of thousands).
const Expected<EngineCoreCatalog>& shipped_engine_cores();

// The profile as the V0 engine of `record` runs it on a card of `platform`: its batch defaults on every card, chunked
// prefill off up to its limit, no "Available KV cache memory" line where the V0 worker prints none, and the V0 lines of
// the profile's version (EngineProfile::v0_lines; none recorded for the version or the platform: no blocks line).
void apply_v0_engine(EngineProfile& profile, const V0EngineRecord& record, const std::string& platform);

}  // namespace preflight::engine
