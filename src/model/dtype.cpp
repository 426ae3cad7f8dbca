#include "model/dtype.hpp"

#include <array>

#include "base/text.hpp"

namespace preflight::model {

namespace {
struct DtypeInfo {
  Dtype dtype;
  int bits;
  const char* name;
  const char* safetensors;
};
constexpr std::array<DtypeInfo, static_cast<size_t>(Dtype::count_)> k_dtypes{{
    {Dtype::f64, 64, "f64", "F64"},
    {Dtype::f32, 32, "f32", "F32"},
    {Dtype::f16, 16, "f16", "F16"},
    {Dtype::bf16, 16, "bf16", "BF16"},
    {Dtype::f8_e4m3, 8, "f8_e4m3", "F8_E4M3"},
    {Dtype::f8_e5m2, 8, "f8_e5m2", "F8_E5M2"},
    {Dtype::f8_e8m0, 8, "f8_e8m0", "F8_E8M0"},
    {Dtype::i64, 64, "i64", "I64"},
    {Dtype::i32, 32, "i32", "I32"},
    {Dtype::i16, 16, "i16", "I16"},
    {Dtype::i8, 8, "i8", "I8"},
    {Dtype::u8, 8, "u8", "U8"},
    {Dtype::boolean, 8, "bool", "BOOL"},
    {Dtype::i4, 4, "i4", "I4"},
    {Dtype::f4, 4, "f4", "F4"},
}};
static_assert(k_dtypes.size() == static_cast<size_t>(Dtype::count_), "one row per Dtype");

const DtypeInfo& info(Dtype dtype) { return k_dtypes[static_cast<size_t>(dtype)]; }
}  // namespace

int dtype_bits(Dtype dtype) { return info(dtype).bits; }
const char* dtype_name(Dtype dtype) { return info(dtype).name; }

std::optional<Dtype> dtype_from_safetensors(const std::string& name) {
  for (const auto& row : k_dtypes) {
    if (name == row.safetensors) return row.dtype;
  }
  if (name == "U16") return Dtype::i16;
  if (name == "U32") return Dtype::i32;
  if (name == "U64") return Dtype::i64;
  if (name == "F8_E4M3FN" || name == "F8_E4M3FNUZ") return Dtype::f8_e4m3;
  if (name == "F8_E5M2FNUZ") return Dtype::f8_e5m2;
  return std::nullopt;
}

std::optional<Dtype> dtype_from_torch_name(const std::string& raw) {
  const std::string name = to_lower(raw);
  if (name == "bfloat16" || name == "bf16") return Dtype::bf16;
  if (name == "float16" || name == "half" || name == "fp16" || name == "f16") return Dtype::f16;
  if (name == "float32" || name == "float" || name == "fp32" || name == "f32") return Dtype::f32;
  return std::nullopt;
}

}  // namespace preflight::model
