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

}  // namespace preflight::cli
