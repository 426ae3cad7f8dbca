// engine/vllm_gguf_architectures: which model types vLLM's in-tree GGUF loader maps to a GGUF architecture, by version
// (data/engines/vllm_gguf_architectures.json, issue 16 gguf36). GGUFModelLoader._get_gguf_weights_map renames a few Hugging
// Face model types (cohere -> command-r, deepseek_v2/v3 -> deepseek2, ...) and looks the name up among gguf-py's
// MODEL_ARCH_NAMES; none found: "RuntimeError: Unknown gguf model_type: gpt_oss", raised before any tensor is read.
// A GGUF file's own config passes transformers' GGUF reader first, which refuses an architecture it lacks ("ValueError:
// GGUF model with architecture gpt-oss is not supported yet.") while vLLM builds its engine config.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct VllmGgufArchList {
  std::string id;
  Version version_min, version_max;
  std::map<std::string, std::string> renames;  // Hugging Face model_type -> the GGUF architecture name vLLM looks up
  std::string source;
};

// A GGUF file's general.architecture whose Hugging Face model_type differs from it, and transformers' refusal of the
// architecture where one is known ("" otherwise).
struct VllmGgufFileArch {
  std::string architecture, model_type, transformers_refusal, source;
};

struct VllmGgufArchCatalog {
  std::vector<std::string> arch_names;  // gguf-py MODEL_ARCH_NAMES values
  std::string arch_names_source;
  std::vector<VllmGgufArchList> lists;
  std::vector<VllmGgufFileArch> file_architectures;
  std::string origin;
};

// corrupt naming `origin` and the record: an unknown key, an empty name list or source, a bad or overlapping range.
Expected<VllmGgufArchCatalog> parse_vllm_gguf_architectures(const Json& root, const std::string& origin);
// The embedded data/engines/vllm_gguf_architectures.json, parsed once per process.
const Expected<VllmGgufArchCatalog>& shipped_vllm_gguf_architectures();

// What vLLM (`engine_name` "vllm") at `version` raises before it loads the weights of a GGUF checkpoint whose model type
// is `model_type`: transformers' refusal or the loader's "Unknown gguf model_type", each followed by its source; "" when
// the loader maps it or no list covers the version. `from_file`: the config is read from the GGUF file (model_type is
// then its general.architecture); otherwise from a Hugging Face config (--hf-config-path, the base model's config).
std::string vllm_gguf_architecture_refusal(const VllmGgufArchCatalog& catalog, const std::string& engine_name, const Version& version,
                                           const std::string& model_type, bool from_file);

}  // namespace preflight::engine
