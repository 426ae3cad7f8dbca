// cli/model_arg: the MODEL argument of inspect and fit. A hub reference (hf:org/name[@rev],
// ms:org/name[@rev], with /file.gguf for one GGUF file) is read from the Hugging Face or ModelScope
// local cache when the model is there, else its metadata is fetched (hub module) into the metadata
// cache and read from there; anything else goes to model::resolve_model. Progress goes to stderr
// only when stderr is a terminal.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "cli/args.hpp"
#include "model/model_spec.hpp"

namespace preflight::cli {

enum class HubCacheMode { use, refresh, offline };

struct ModelArgOptions {
  std::vector<std::string> extra_model_dirs;  // --models
  HubCacheMode cache = HubCacheMode::use;     // --refresh / --offline
};

// The model-resolution flags as given (--models, --offline, --refresh).
struct ModelFlags {
  std::optional<std::string> models;
  bool offline = false;
  bool refresh = false;
};
std::vector<Option> model_options(ModelFlags& flags);
// invalid_argument when --offline and --refresh are both given.
Expected<ModelArgOptions> model_arg_options(const ModelFlags& flags);

Expected<model::ModelSpec> resolve_model_arg(const std::string& arg, const ModelArgOptions& options);

// ux33: a published quantized checkpoint named by its hub id (data/engines/quantized_checkpoints.json: the repo plan's
// own start commands serve, e.g. Eco-Tech/Qwen3.6-27B-w8a8, the seed's `modelscope download`) that is not on this
// machine: the base model it was quantized from and the variant it is published in, sized as `BASE --variant V`.
struct PublishedCheckpointArg {
  std::string repo;        // as the catalogue spells it
  std::string base_model;  // "Qwen/Qwen3.6-27B"
  std::string variant;     // "w8a8" (data/variants/quant_variants.json)
  std::string quantization_flag;  // what `vllm serve` passes for it; empty: read from its config
  std::string assumption;  // what fit says about it
};
// The checkpoint `arg` names (case as the hub ignores it), or nullopt: a hub reference (hf:, ms:), a path, or a repo
// the catalogue does not list. Call it only after resolve_model_arg found nothing: a local folder or a hub-cache copy
// of the checkpoint is read from its own files.
std::optional<PublishedCheckpointArg> published_checkpoint_arg(const std::string& arg);
// quant34 (issue 16): MODEL as inspect, fit and plan take it, resolved once for the three. The argument itself first (a
// local folder, a config.json, the catalogue, a hub reference); where that finds nothing and the argument is the hub id
// of a published quantized checkpoint the catalogue lists, its base model, with `published` saying which checkpoint and
// variant (the base's assumptions name it). Errors: resolve_model_arg's for the argument, or for the base model.
struct ModelArgResolution {
  model::ModelSpec spec;
  std::optional<PublishedCheckpointArg> published;  // set: `spec` is the base model, to be sized as published->variant
};
Expected<ModelArgResolution> resolve_model_or_checkpoint(const std::string& arg, const ModelArgOptions& options);
// The variant a published checkpoint named as MODEL is sized in: its own. A --variant that is another
// (`variant`, as given) or a --quantization other than the one it is served with (`quantization`, the value given; the
// checkpoint's own is "": read from its config) is invalid_argument naming the base model to give instead.
Expected<std::string> published_checkpoint_variant(const PublishedCheckpointArg& published, const std::string& arg, const std::optional<std::string>& variant,
                                                   const std::optional<std::string>& quantization);
// The same for a model named in an engine log: the hub id, or a path that is not here whose last folder is named as one
// published checkpoint (seeds/000 downloads Eco-Tech/Qwen3.6-27B-w8a8 to /data/models/Qwen3.6-27B-w8a8 and serves that).
std::optional<PublishedCheckpointArg> published_checkpoint_of_folder(const std::string& path);

}  // namespace preflight::cli
