// model/model_source: resolves the MODEL argument to a ModelSpec. In order:
//  1. a path: a .gguf file, a config.json file, or a directory (config.json, *.safetensors headers,
//     model.safetensors.index.json, quant_model_description.json, hf_quant_config.json);
//  2. a hub id already in the Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub:
//     models--org--name/snapshots/<rev>/) or the ModelScope cache (MODELSCOPE_CACHE,
//     ~/.cache/modelscope/hub[/models]/org/name);
//  3. the embedded catalogue (id or alias).
// `hf:` / `ms:` prefixes force the hub caches.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "model/model_spec.hpp"

namespace preflight::model {

struct ResolveOptions {
  std::vector<std::string> extra_model_dirs;  // searched for <org>__<name>/ (validate --models)
};

Expected<ModelSpec> resolve_model(const std::string& name, const ResolveOptions& options = {});

// A local directory (or config.json path) with its safetensors headers and quantization files.
Expected<ModelSpec> load_model_directory(const std::string& path);

// Cache directories that would hold `hub_id`, in search order, whether or not they exist.
std::vector<std::string> hub_cache_candidates(const std::string& hub_id);

}  // namespace preflight::model
