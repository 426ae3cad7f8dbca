// Issue 15 (v0eng29): the lines that show which engine core a vLLM log ran (logs/engine_log.hpp EngineCoreLine). Each
// is a fixed string of vLLM's: vllm/engine/llm_engine.py ("Initializing a V0 LLM engine (%s) with config", "Initializing
// an LLM engine (v%s) with config" before 0.8), vllm/v1/engine/core.py ("Initializing a V1 LLM engine (%s) with config"),
// vllm/engine/arg_utils.py _raise_or_fallback ("%s is not supported by the V1 Engine. Falling back to V0."),
// vllm/envs.py VLLM_USE_V1, and the V0 executor's initialize_cache ("# %s blocks: %d, # CPU blocks: %d": "# GPU blocks",
// "# cuda blocks", "# rocm blocks", "# npu blocks" as the platform names its device).
#include <algorithm>
#include <cctype>

#include "logs/engine_log.hpp"

namespace preflight::logs {

namespace {

constexpr size_t k_max_clue_chars = 120;

// The evidence from `at`: the engine line up to its config dump, any other line capped.
EngineCoreClue clue(EngineCoreShown core, const std::string& line, size_t at, int64_t n, int strength) {
  const size_t config = line.find(" with config", at);
  const size_t length = std::min(k_max_clue_chars, config == std::string::npos ? k_max_clue_chars : config - at);
  return {EngineCoreLine{core, n, line.substr(at, length)}, strength};
}

// VLLM_USE_V1 set to a digit: "VLLM_USE_V1=0", "export VLLM_USE_V1=1", "'VLLM_USE_V1': '0'"; npos when not set here.
size_t use_v1_value(const std::string& line, size_t& at) {
  const std::string key = "VLLM_USE_V1";
  for (size_t p = line.find(key); p != std::string::npos; p = line.find(key, p + 1)) {
    const size_t end = p + key.size();
    if (p > 0 && (std::isalnum(static_cast<unsigned char>(line[p - 1])) != 0 || line[p - 1] == '_')) continue;
    size_t i = end;
    if (i < line.size() && (line[i] == '\'' || line[i] == '"')) ++i;
    if (i < line.size() && line[i] == ':') ++i;
    else if (i < line.size() && line[i] == '=') ++i;
    else continue;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\'' || line[i] == '"')) ++i;
    if (i < line.size() && (line[i] == '0' || line[i] == '1') && (i + 1 == line.size() || std::isdigit(static_cast<unsigned char>(line[i + 1])) == 0)) {
      at = p;
      return i;
    }
  }
  return std::string::npos;
}

}  // namespace

std::optional<EngineCoreClue> engine_core_clue(const std::string& line, int64_t n) {
  if (const size_t at = line.find("Initializing a V0 LLM engine"); at != std::string::npos) return clue(EngineCoreShown::v0, line, at, n, 3);
  if (const size_t at = line.find("Initializing an LLM engine (v"); at != std::string::npos) return clue(EngineCoreShown::v0, line, at, n, 3);
  if (const size_t at = line.find("Initializing a V1 LLM engine"); at != std::string::npos) return clue(EngineCoreShown::v1, line, at, n, 3);
  if (const size_t at = line.find("is not supported by the V1 Engine. Falling back to V0"); at != std::string::npos) {
    const size_t from = at >= 2 ? line.rfind(' ', at - 2) : std::string::npos;  // the feature's name before it
    return clue(EngineCoreShown::v0, line, from == std::string::npos ? at : from + 1, n, 2);
  }
  size_t key_at = 0;
  if (const size_t v = use_v1_value(line, key_at); v != std::string::npos)
    return clue(line[v] == '0' ? EngineCoreShown::v0 : EngineCoreShown::v1, line, key_at, n, 1);
  if (const size_t cpu = line.find(", # CPU blocks:"); cpu != std::string::npos) {
    const size_t at = line.rfind("# ", cpu);
    if (at != std::string::npos && line.compare(at, 2, "# ") == 0 && line.find(" blocks:", at) < cpu) return clue(EngineCoreShown::v0, line, at, n, 0);
  }
  return std::nullopt;
}

}  // namespace preflight::logs
