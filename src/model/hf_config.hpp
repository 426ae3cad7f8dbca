// model/hf_config: builds a ModelSpec from a Hugging Face config.json. Text-stack fields are read from
// `text_config` when present (vision-language models), otherwise from the top level. Layer kinds come
// from config fields (layer_types, full_attention_interval, hybrid_override_pattern, kv_lora_rank,
// sliding_window), never from the model name; the few facts only the model code states come from
// the architecture traits catalogue.
#pragma once

#include <string>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "model/model_spec.hpp"

namespace preflight::model {

// Errors: corrupt when a required field (hidden_size, num_hidden_layers, num_attention_heads,
// vocab_size) is missing, has the wrong type or an impossible value; the message names `origin`
// and the field.
Expected<ModelSpec> parse_hf_config(const Json& root, const std::string& origin);
Expected<ModelSpec> load_hf_config(const std::string& path);

}  // namespace preflight::model
