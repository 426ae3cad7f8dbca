// model/model_source: resolves the MODEL argument to a ModelSpec. In order:
//  1. a path: a .gguf file, a config.json file, or a directory (config.json, *.safetensors headers,
//     model.safetensors.index.json, quant_model_description.json, hf_quant_config.json);
//  2. a hub id already in the Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub:
//     models--org--name/snapshots/<rev>/) or the ModelScope cache (MODELSCOPE_CACHE,
//     ~/.cache/modelscope/hub[/models]/org/name);
//  3. the embedded catalogue (id or alias).
// `hf:` / `ms:` prefixes force the hub caches. Fetching from a hub over HTTP is the hub module's job;
// the CLI calls it and then load_model_directory / load_model_file on what it fetched.
// Header stubs (model/header_stub: "<shard>.safetensors.header", "<file>.gguf.header") are read
// like the files they stand for.
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

// A .gguf file or a .gguf.header stub.
Expected<ModelSpec> load_gguf_model(const std::string& path);

// The snapshot directory of `hub_id` at `revision` in the local Hugging Face or ModelScope cache
// (it must hold config.json), or empty when none. HF: refs/<revision> names the snapshot, or
// snapshots/<revision> when the revision is a commit; ModelScope keeps one copy per repo, used
// for any revision.
std::string find_hub_cache_snapshot(const std::string& hub_id, const std::string& revision);

// Cache directories that would hold `hub_id`, in search order, whether or not they exist.
std::vector<std::string> hub_cache_candidates(const std::string& hub_id);

}  // namespace preflight::model
