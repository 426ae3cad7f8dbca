// model/context_length: the longest context a model takes without --max-model-len, as vLLM derives it (kept out of
// model_spec.hpp, which most of the tree includes).
#pragma once

#include <cstdint>

#include "model/model_spec.hpp"

namespace preflight::model {

// vLLM's max_model_len when none is given: the derived length (ModelSpec::derived_max_model_len: the config's smallest
// length key, scaled by rope_scaling where its type scales the context; vllm/config/model.py _get_and_verify_max_len),
// else max_position_embeddings (a spec built without a config), else `otherwise` (the model states no length).
inline int64_t max_model_len_of(const ModelSpec& m, int64_t otherwise) {
  if (m.derived_max_model_len > 0) return m.derived_max_model_len;
  return m.max_position_embeddings > 0 ? m.max_position_embeddings : otherwise;
}

}  // namespace preflight::model
