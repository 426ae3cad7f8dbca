// engine/model_support: the first vLLM release whose model registry names a config.json architecture
// (data/engines/model_support.json, issues 15/16 arch31). An older vLLM stops `vllm serve` before anything loads with
// "Model architectures ['Qwen3ForCausalLM'] are not supported for now. Supported architectures: [...]"; fit refuses
// such a deployment with that line and plan makes no row for it. vLLM-Ascend X.Y runs vLLM X.Y, so one bound serves
// both; on top of it, vLLM-Ascend's own Supported Models page per version (a record's vllm_ascend spans, arch32) can mark
// an architecture ❌ (refused with the page's words) or experimental / untested / absent (said in the assumptions).
// MindIE and llama.cpp are not covered.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// What vLLM-Ascend's Supported Models page says of an architecture for the versions in [version_min, version_max].
enum class NpuSupportStatus { unsupported, experimental, untested, not_listed };

struct NpuSupportSpan {
  Version version_min, version_max;
  NpuSupportStatus status = NpuSupportStatus::not_listed;
  std::string page_words;  // the page's row (or its absence), quoted
  std::string fix;         // unsupported only: the versions whose page marks it supported
  std::string source;
};

struct ArchitectureSupport {
  std::string architecture;  // config.json architectures[0]
  Version version_min;       // the first vLLM release whose registry has it
  std::string source;
  std::vector<NpuSupportSpan> vllm_ascend;  // non-overlapping; a version none covers: the page marks it supported
};

struct ModelSupportCatalog {
  std::vector<ArchitectureSupport> records;
  std::string origin;
  const ArchitectureSupport* find(const std::string& architecture) const;
};

// corrupt naming `origin` and the record: an unknown key, a missing or empty source, a duplicate id, a bad version.
Expected<ModelSupportCatalog> parse_model_support(const Json& root, const std::string& origin);
// The embedded data/engines/model_support.json, parsed once per process.
const Expected<ModelSupportCatalog>& shipped_model_support();

enum class ArchitectureVerdict { supported, supported_with_note, unsupported, not_listed, not_covered };

struct ArchitectureCheck {
  ArchitectureVerdict verdict = ArchitectureVerdict::not_covered;
  std::string message;  // unsupported: vLLM's line (or vLLM-Ascend's page) and the fix; not_listed, supported_with_note: the note
};

// Whether engine `engine_name` (vllm, vllm-ascend) at `version` loads `architecture`. Other engines and an empty
// architecture: not_covered. An architecture the catalogue lacks: not_listed, with a note saying so (never a refusal).
// vllm-ascend past the registry bound: a span marking it ❌ gives unsupported with the page's words; an experimental,
// untested or not-listed span gives supported_with_note.
ArchitectureCheck check_architecture(const ModelSupportCatalog& catalog, const std::string& engine_name, const Version& version, const std::string& architecture);

// check_architecture against the shipped catalogue for `engine` at its rule version (not_covered when it does not load;
// the catalogue test reports that).
ArchitectureCheck shipped_architecture_check(const EngineProfile& engine, const std::string& architecture);

// The first version of `engine_name` whose registry has `architecture`, or nullopt (not listed, not covered).
std::optional<Version> first_version_with(const std::string& engine_name, const std::string& architecture);

}  // namespace preflight::engine
