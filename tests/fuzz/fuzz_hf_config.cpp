// libFuzzer target: config.json text through the JSON reader and the ModelSpec builder.
#include <string>

#include "base/json_util.hpp"
#include "model/hf_config.hpp"
#include "model/model_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto json = preflight::parse_json(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  if (!json) return 0;
  auto spec = preflight::model::parse_hf_config(*json, "fuzz.json");
  if (spec) {
    (void)preflight::model::count_params(*spec);
    (void)preflight::model::compute_weight_bytes(*spec);
    (void)preflight::model::kv_bytes_per_token(*spec, 2);
    (void)preflight::model::kv_bytes_per_token(*spec, 8);
    (void)preflight::model::state_bytes_per_sequence(*spec, 8);
  }
  return 0;
}
