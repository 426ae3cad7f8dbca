// libFuzzer target (issue 19, attack37): an msModelSlim quant_model_description.json (a hub repository's, fetched with its
// config) through the JSON reader and parse_modelslim_description, then the scheme it gives sizing a small Llama-shaped
// model's weights, as model_source puts it on the model read beside it.
#include <string>

#include "base/json_util.hpp"
#include "model/hf_config.hpp"
#include "model/model_spec.hpp"
#include "model/quant_scheme.hpp"

namespace {
const preflight::model::ModelSpec* small_llama() {
  static const auto spec = [] {
    const auto json = preflight::parse_json(R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256,
      "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
      "max_position_embeddings": 4096, "torch_dtype": "bfloat16"})",
                                            "fuzz-config.json");
    return json ? preflight::model::parse_hf_config(*json, "fuzz-config.json") : preflight::Expected<preflight::model::ModelSpec>(json.error());
  }();
  return spec ? &*spec : nullptr;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto json = preflight::parse_json(text, "quant_model_description.json");
  if (!json) return 0;
  auto scheme = preflight::model::parse_modelslim_description(*json, "quant_model_description.json");
  if (!scheme) return 0;
  const preflight::model::ModelSpec* base = small_llama();
  if (!base) return 0;
  preflight::model::ModelSpec spec = *base;
  spec.quant = *scheme;
  (void)preflight::model::count_params(spec);
  (void)preflight::model::compute_weight_bytes(spec);
  return 0;
}
