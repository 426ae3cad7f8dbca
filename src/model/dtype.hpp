// model/dtype: element types of weights and caches, their sizes, and the names each format uses
// for them (safetensors "BF16", GGUF type ids, config "bfloat16"). The one lookup table in code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace preflight::model {

enum class Dtype { f64, f32, f16, bf16, f8_e4m3, f8_e5m2, f8_e8m0, i64, i32, i16, i8, u8, boolean, i4, f4, count_ };

// Bits per element (i4/f4 are 4: two per byte when packed).
int dtype_bits(Dtype dtype);
const char* dtype_name(Dtype dtype);  // "bf16", "f8_e4m3", ...
// safetensors header dtype strings: "BF16", "F8_E4M3", "I8", ...
std::optional<Dtype> dtype_from_safetensors(const std::string& name);
// config.json torch_dtype / dtype strings: "bfloat16", "float16", "float32", "half", "auto"->nullopt.
std::optional<Dtype> dtype_from_torch_name(const std::string& name);

}  // namespace preflight::model
