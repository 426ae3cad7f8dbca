// libFuzzer target: config.json text through the JSON reader, the key-order scan and the ModelSpec builder. Issue 19: the fast reader
// (base/json_fast.cpp) is checked against nlohmann's parser on every input: where it accepts, nlohmann must read the
// same value, type for type; otherwise the target aborts.
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/json_util.hpp"
#include "model/hf_config.hpp"
#include "model/json_key_order.hpp"
#include "model/model_spec.hpp"

namespace {
bool same(const preflight::Json& a, const preflight::Json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
      if (i.key() != j.key() || !same(i.value(), j.value())) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!same(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_number_float()) {
    const double x = a.get<double>(), y = b.get<double>();
    return std::memcmp(&x, &y, sizeof x) == 0;
  }
  return a == b;
}

void check_fast_reader(const std::string& text) {
  // NaN / Infinity are parse_json's own rewrite, which nlohmann alone does not read; tests/base/test_json_fast.cpp
  // covers them.
  if (text.find("NaN") != std::string::npos || text.find("Infinity") != std::string::npos) return;
  preflight::Json fast;
  if (!preflight::detail::parse_json_fast(text, fast)) return;
  const preflight::Json ref = preflight::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (ref.is_discarded() || !same(fast, ref)) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  check_fast_reader(text);
  // Issue 16 (h-quant25): the key-order scan load_hf_config runs for GPTQ dynamic rules, on any text.
  (void)preflight::model::object_keys_in_order(text, {"quantization_config", "dynamic"}, "fuzz.json");
  (void)preflight::model::object_keys_in_order(text, {}, "fuzz.json");
  auto json = preflight::parse_json(text, "fuzz.json");
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
