// GGUF layout (ggml docs/gguf.md, version 2 and 3): magic "GGUF", u32 version, u64 tensor_count,
// u64 metadata_kv_count, then key-values (gguf string key, u32 value type, value), then tensor infos
// (string name, u32 n_dims, u64 dims[n_dims], u32 ggml type, u64 offset). Strings are u64 length +
// bytes. Alignment is 32 unless general.alignment says otherwise. Little-endian throughout.
#include "model/gguf_reader.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "base/checked.hpp"
#include "base/file.hpp"
#include "base/quote.hpp"
#include "base/units.hpp"

namespace preflight::model {

namespace {
constexpr uint64_t k_max_string = 1ull << 20;
constexpr uint64_t k_max_array = 1ull << 24;
constexpr uint64_t k_max_kv = 1ull << 16;
constexpr uint64_t k_max_tensors = 1ull << 20;
constexpr uint32_t k_max_dims = 8;
constexpr uint64_t k_ggml_max_name = 64;  // ggml.h GGML_MAX_NAME

struct GgmlType {
  const char* name;
  uint32_t block_elements;
  uint32_t block_bytes;
};
// ggml.h / ggml.c type_traits (blck_size, type_size). Ids 4, 5 (Q4_2, Q4_3) and 31-33 are retired.
constexpr std::array<GgmlType, 40> k_ggml_types{{
    {"F32", 1, 4},       {"F16", 1, 2},      {"Q4_0", 32, 18},    {"Q4_1", 32, 20},    {nullptr, 0, 0},     {nullptr, 0, 0},
    {"Q5_0", 32, 22},    {"Q5_1", 32, 24},   {"Q8_0", 32, 34},    {"Q8_1", 32, 36},    {"Q2_K", 256, 84},   {"Q3_K", 256, 110},
    {"Q4_K", 256, 144},  {"Q5_K", 256, 176}, {"Q6_K", 256, 210},  {"Q8_K", 256, 292},  {"IQ2_XXS", 256, 66}, {"IQ2_XS", 256, 74},
    {"IQ3_XXS", 256, 98}, {"IQ1_S", 256, 50}, {"IQ4_NL", 32, 18},  {"IQ3_S", 256, 110}, {"IQ2_S", 256, 82},  {"IQ4_XS", 256, 136},
    {"I8", 1, 1},        {"I16", 1, 2},      {"I32", 1, 4},       {"I64", 1, 8},       {"F64", 1, 8},       {"IQ1_M", 256, 56},
    {"BF16", 1, 2},      {nullptr, 0, 0},    {nullptr, 0, 0},     {nullptr, 0, 0},     {"TQ1_0", 256, 54},  {"TQ2_0", 256, 66},
    {nullptr, 0, 0},     {nullptr, 0, 0},    {nullptr, 0, 0},     {"MXFP4", 32, 17},
}};

class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, std::string origin) : m_data(data), m_size(size), m_origin(std::move(origin)) {}
  size_t offset() const { return m_offset; }
  Error truncated(const char* what) const {
    return make_error(ErrorKind::corrupt, format("%s: truncated at byte %zu while reading %s", m_origin.c_str(), m_offset, what), m_origin);
  }
  template <typename T>
  Expected<T> read(const char* what) {
    if (m_size - m_offset < sizeof(T)) return truncated(what);
    T v;
    std::memcpy(&v, m_data + m_offset, sizeof(T));
    m_offset += sizeof(T);
    return v;
  }
  Expected<std::string> string(const char* what) {
    PF_TRY(len, read<uint64_t>(what));
    if (len > k_max_string) return make_error(ErrorKind::corrupt, format("%s: %s: string length %llu above the 1 MiB limit", m_origin.c_str(), what, static_cast<unsigned long long>(len)), m_origin);
    if (m_size - m_offset < len) return truncated(what);
    std::string s(reinterpret_cast<const char*>(m_data + m_offset), len);
    m_offset += len;
    return s;
  }
  Status skip(uint64_t bytes, const char* what) {
    if (m_size - m_offset < bytes) return truncated(what);
    m_offset += bytes;
    return Ok{};
  }

 private:
  const uint8_t* m_data;
  size_t m_size;
  size_t m_offset = 0;
  std::string m_origin;
};

// A metadata number as written: integers in full ("8000000000000000"), anything else short ("1e+30", "2.5", "nan").
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e18) return format("%.0f", v);
  return format("%g", v);
}

int scalar_size(uint32_t type) {
  switch (type) {
    case 0: case 1: case 7: return 1;
    case 2: case 3: return 2;
    case 4: case 5: case 6: return 4;
    case 10: case 11: case 12: return 8;
    default: return 0;
  }
}

Expected<double> read_scalar(Cursor& c, uint32_t type, const char* what) {
  switch (type) {
    case 0: { PF_TRY(v, c.read<uint8_t>(what)); return static_cast<double>(v); }
    case 1: { PF_TRY(v, c.read<int8_t>(what)); return static_cast<double>(v); }
    case 2: { PF_TRY(v, c.read<uint16_t>(what)); return static_cast<double>(v); }
    case 3: { PF_TRY(v, c.read<int16_t>(what)); return static_cast<double>(v); }
    case 4: { PF_TRY(v, c.read<uint32_t>(what)); return static_cast<double>(v); }
    case 5: { PF_TRY(v, c.read<int32_t>(what)); return static_cast<double>(v); }
    case 6: { PF_TRY(v, c.read<float>(what)); return static_cast<double>(v); }
    case 7: { PF_TRY(v, c.read<uint8_t>(what)); return v ? 1.0 : 0.0; }
    case 10: { PF_TRY(v, c.read<uint64_t>(what)); return static_cast<double>(v); }
    case 11: { PF_TRY(v, c.read<int64_t>(what)); return static_cast<double>(v); }
    case 12: { PF_TRY(v, c.read<double>(what)); return v; }
    default: break;
  }
  return make_error(ErrorKind::corrupt, format("value type %u is not a scalar", type));
}

// Issue 19 (attack37): llama.cpp's gguf_init_from_file_impl (ggml/src/gguf.cpp) computes where each tensor's data must
// start: the first at offset 0 of the data section, each next one where the one listed before it ends, padded to the
// file's alignment; a tensor whose offset is any other ("tensor '%s' has offset %llu, expected %zu") fails the file. An
// offset listed twice (two tensors over one block of bytes: each counted, the file holding one), a gap, or a misaligned
// offset all fail it. gguf-py's GGUFReader (vLLM's loader) checks nothing here, but no GGUF writer (gguf-py's
// GGUFWriter, llama-quantize) lays tensors out otherwise, so a file that does is refused for both engines.
Status gguf_offsets_contiguous(const GgufFile& file, const std::string& origin) {
  uint64_t expected = 0;
  for (const auto& t : file.tensors) {
    if (t.offset != expected)
      return make_error(ErrorKind::corrupt,
                        format("%s: tensor '%s' has offset %llu, expected %llu (where the tensor listed before it ends, padded to the %llu-byte alignment): "
                               "llama.cpp refuses the file (gguf_init_from_file: tensor '%s' has offset %llu, expected %llu; failed to read tensor data)",
                               origin.c_str(), one_line(t.name, 80).c_str(), static_cast<unsigned long long>(t.offset), static_cast<unsigned long long>(expected),
                               static_cast<unsigned long long>(file.alignment), one_line(t.name, 80).c_str(), static_cast<unsigned long long>(t.offset),
                               static_cast<unsigned long long>(expected)),
                        origin);
    const auto padded = checked_mul(t.bytes / file.alignment + (t.bytes % file.alignment != 0), file.alignment);  // no t.bytes + alignment - 1 to overflow
    const auto next = padded ? checked_add(expected, *padded) : std::nullopt;
    if (!next) return make_error(ErrorKind::corrupt, format("%s: tensor '%s': tensor sizes summed over the file overflow", origin.c_str(), one_line(t.name, 80).c_str()), origin);
    expected = *next;
  }
  return Ok{};
}
}  // namespace

const char* ggml_type_name(uint32_t type) {
  if (type < k_ggml_types.size() && k_ggml_types[type].name) return k_ggml_types[type].name;
  return "unknown";
}

std::optional<GgmlTypeSize> ggml_type_size_by_name(const std::string& name) {
  for (const auto& t : k_ggml_types) {
    if (!t.name) continue;
    std::string lower = t.name;
    for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == name || name == t.name) return GgmlTypeSize{t.block_elements, t.block_bytes};
  }
  return std::nullopt;
}

Expected<GgufFile> parse_gguf(const uint8_t* data, size_t size, const std::string& origin) {
  GgufFile file;
  file.file_size = size;
  Cursor c(data, size, origin);
  PF_TRY(magic, c.read<uint32_t>("magic"));
  if (magic != 0x46554747u) return make_error(ErrorKind::corrupt, format("%s: bad magic, not a GGUF file", origin.c_str()), origin);
  PF_TRY(version, c.read<uint32_t>("version"));
  if (version < 2 || version > 3) return make_error(ErrorKind::unsupported, format("%s: GGUF version %u, expected 2 or 3", origin.c_str(), version), origin);
  file.version = version;
  PF_TRY(tensor_count, c.read<uint64_t>("tensor_count"));
  PF_TRY(kv_count, c.read<uint64_t>("metadata_kv_count"));
  if (tensor_count > k_max_tensors) return make_error(ErrorKind::corrupt, format("%s: tensor_count %llu above the limit", origin.c_str(), static_cast<unsigned long long>(tensor_count)), origin);
  if (kv_count > k_max_kv) return make_error(ErrorKind::corrupt, format("%s: metadata_kv_count %llu above the limit", origin.c_str(), static_cast<unsigned long long>(kv_count)), origin);
  // Issue 19 (attack36): a key or tensor name listed twice was read twice (the later block_count won; a tensor's bytes
  // counted again), exit 0. llama.cpp's gguf_init_from_file_impl refuses both ("duplicate key '%s'", "duplicate tensor
  // name '%s'", ggml/src/gguf.cpp), and gguf-py's GGUFReader, which vLLM's GGUF loader uses, refuses a tensor named
  // twice ("Found duplicated tensor with name", gguf-py/gguf/gguf_reader.py _build_tensors).
  std::unordered_map<std::string, uint64_t> seen;
  const auto listed_twice = [&](const std::string& name, uint64_t index, const char* what, const char* words) -> std::optional<Error> {
    const auto [it, fresh] = seen.emplace(name, index);
    if (fresh) return std::nullopt;
    return make_error(ErrorKind::corrupt, format("%s: %s '%s' is listed twice (%ss %llu and %llu): llama.cpp refuses the file (%s)", origin.c_str(), what,
                                                 one_line(name, 200).c_str(), what, static_cast<unsigned long long>(it->second),
                                                 static_cast<unsigned long long>(index), words),
                      origin);
  };
  for (uint64_t i = 0; i < kv_count; ++i) {
    PF_TRY(key, c.string("metadata key"));
    // attack37: llama.cpp's "key %lld is empty".
    if (key.empty())
      return make_error(ErrorKind::corrupt, format("%s: metadata key %llu is empty: llama.cpp refuses the file (gguf_init_from_file: key %llu is empty)", origin.c_str(),
                                                   static_cast<unsigned long long>(i), static_cast<unsigned long long>(i)),
                        origin);
    if (auto twice = listed_twice(key, i, "metadata key", "gguf_init_from_file: duplicate key")) return *twice;
    PF_TRY(type, c.read<uint32_t>("metadata value type"));
    if (type == 8) {
      PF_TRY(value, c.string(key.c_str()));
      file.strings[key] = value;
    } else if (type == 9) {
      PF_TRY(item_type, c.read<uint32_t>(key.c_str()));
      PF_TRY(count, c.read<uint64_t>(key.c_str()));
      if (count > k_max_array) return make_error(ErrorKind::corrupt, format("%s: %s: array of %llu items above the limit", origin.c_str(), key.c_str(), static_cast<unsigned long long>(count)), origin);
      if (item_type == 8) {
        for (uint64_t j = 0; j < count; ++j) {
          PF_TRY(item, c.string(key.c_str()));
          (void)item;
        }
      } else if (const int sz = scalar_size(item_type); sz > 0) {
        PF_TRY(ok, c.skip(count * static_cast<uint64_t>(sz), key.c_str()));
        (void)ok;
      } else {
        return make_error(ErrorKind::corrupt, format("%s: %s: array item type %u is not supported", origin.c_str(), key.c_str(), item_type), origin);
      }
      file.array_lengths[key] = count;
    } else if (scalar_size(type) > 0) {
      PF_TRY(value, read_scalar(c, type, key.c_str()));
      file.numbers[key] = value;
    } else {
      return make_error(ErrorKind::corrupt, format("%s: %s: unknown value type %u", origin.c_str(), key.c_str(), type), origin);
    }
  }
  if (auto it = file.numbers.find("general.alignment"); it != file.numbers.end()) {
    // Compared as a double first: converting 1e30 (or NaN) to an integer is undefined.
    const double value = it->second;
    const bool in_range = value >= 1 && value <= 65536 && value == static_cast<double>(static_cast<uint64_t>(value));
    const auto a = in_range ? static_cast<uint64_t>(value) : 0;
    if (!in_range || (a & (a - 1)) != 0) {
      return make_error(ErrorKind::corrupt, format("%s: general.alignment %s is not a power of two from 1 to 65536", origin.c_str(), number_text(value).c_str()), origin);
    }
    file.alignment = a;
  }
  seen.clear();
  for (uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensor t;
    PF_TRY(name, c.string("tensor name"));
    // attack37: ggml keeps a tensor's name in char[GGML_MAX_NAME] (64, ggml.h), and gguf_init_from_file_impl refuses a
    // name of 64 bytes or more before it looks for a duplicate ("tensor name %lld is too long: %zu >= %d").
    if (name.size() >= k_ggml_max_name)
      return make_error(ErrorKind::corrupt,
                        format("%s: tensor %llu's name '%s' is %zu bytes, more than the %llu a ggml tensor holds (GGML_MAX_NAME %llu with its NUL): llama.cpp refuses "
                               "the file (gguf_init_from_file: tensor name %llu is too long: %zu >= %llu)",
                               origin.c_str(), static_cast<unsigned long long>(i), one_line(name, 80).c_str(), name.size(), static_cast<unsigned long long>(k_ggml_max_name - 1),
                               static_cast<unsigned long long>(k_ggml_max_name), static_cast<unsigned long long>(i), name.size(), static_cast<unsigned long long>(k_ggml_max_name)),
                        origin);
    if (auto twice = listed_twice(name, i, "tensor", "gguf_init_from_file: duplicate tensor name; gguf-py: Found duplicated tensor with name")) return *twice;
    t.name = name;
    PF_TRY(n_dims, c.read<uint32_t>("tensor n_dims"));
    if (n_dims == 0 || n_dims > k_max_dims) return make_error(ErrorKind::corrupt, format("%s: tensor %s: %u dimensions", origin.c_str(), name.c_str(), n_dims), origin);
    uint64_t elements = 1;
    for (uint32_t j = 0; j < n_dims; ++j) {
      PF_TRY(dim, c.read<uint64_t>("tensor dims"));
      const auto product = checked_mul(elements, dim);
      if (!product) return make_error(ErrorKind::corrupt, format("%s: tensor %s: shape overflows", origin.c_str(), name.c_str()), origin);
      elements = *product;
      t.shape.push_back(dim);
    }
    PF_TRY(type, c.read<uint32_t>("tensor type"));
    PF_TRY(offset, c.read<uint64_t>("tensor offset"));
    if (type >= k_ggml_types.size() || !k_ggml_types[type].name) {
      return make_error(ErrorKind::corrupt, format("%s: tensor %s: unknown ggml type %u", origin.c_str(), name.c_str(), type), origin);
    }
    const auto& info = k_ggml_types[type];
    if (elements % info.block_elements != 0) {
      return make_error(ErrorKind::corrupt, format("%s: tensor %s: %llu elements is not a multiple of the %s block (%u)", origin.c_str(), name.c_str(),
                                                   static_cast<unsigned long long>(elements), info.name, info.block_elements),
                        origin);
    }
    const auto bytes = checked_mul(elements / info.block_elements, info.block_bytes);
    if (!bytes) return make_error(ErrorKind::corrupt, format("%s: tensor %s: size overflows", origin.c_str(), name.c_str()), origin);
    t.ggml_type = type;
    t.offset = offset;
    t.bytes = *bytes;
    t.elements = elements;
    file.tensors.push_back(std::move(t));
  }
  file.bytes_read = c.offset();
  PF_TRY(contiguous, gguf_offsets_contiguous(file, origin));
  (void)contiguous;
  return file;
}

bool gguf_prefix_too_short(const Error& error) {
  return error.kind == ErrorKind::corrupt && error.message.find("truncated") != std::string::npos;
}

Expected<GgufFile> parse_gguf_prefix(const uint8_t* data, size_t size, uint64_t file_size, const std::string& origin) {
  PF_TRY(parsed, parse_gguf(data, size, origin));
  parsed.file_size = file_size;
  const uint64_t data_start = ceil_div(parsed.bytes_read, parsed.alignment) * parsed.alignment;
  for (const auto& t : parsed.tensors) {
    const auto begin = checked_add(data_start, t.offset);
    const auto end = begin ? checked_add(*begin, t.bytes) : std::nullopt;
    if (!end || *end > file_size) {
      return make_error(ErrorKind::corrupt, format("%s: tensor %s: data runs past the end of the file", origin.c_str(), t.name.c_str()), origin);
    }
  }
  return parsed;
}

Expected<GgufFile> load_gguf(const std::string& path) {
  PF_TRY(reader, FileReader::open(path));
  // Metadata (tokenizer vocabularies) can run to tens of MB; read in growing chunks until parsed.
  uint64_t want = std::min<uint64_t>(reader.size_bytes(), k_gguf_first_read_bytes);
  while (true) {
    PF_TRY(bytes, reader.read_at(0, want));
    auto parsed = parse_gguf_prefix(bytes.data(), bytes.size(), reader.size_bytes(), base_name(path));
    if (parsed || want >= reader.size_bytes() || want >= k_gguf_max_header_bytes || !gguf_prefix_too_short(parsed.error())) {
      if (!parsed) {
        // The parser names the file by its base name; name it by the path given, once (issue 19 item 12, hard33:
        // "x.gguf: x.gguf: ..." where the message began with the base name and the error's context was the path).
        std::string message = parsed.error().message;
        if (const std::string name = base_name(path) + ": "; message.rfind(name, 0) == 0) message = path + ": " + message.substr(name.size());
        return make_error(parsed.error().kind, message, path);
      }
      return parsed;
    }
    want = std::min<uint64_t>(reader.size_bytes(), want * 4);
  }
}

}  // namespace preflight::model

namespace preflight::model {

Expected<ModelSpec> model_spec_from_gguf(const GgufFile& file, const std::string& origin) {
  ModelSpec spec;
  spec.source = origin;
  auto arch_it = file.strings.find("general.architecture");
  if (arch_it == file.strings.end()) return make_error(ErrorKind::corrupt, format("%s: missing general.architecture", origin.c_str()), origin);
  const std::string arch = arch_it->second;
  // Issue 19 (attack36): the architecture is printed (inspect, fit's header) and was printed raw, escape sequences and
  // all. No architecture llama.cpp or vLLM knows holds a control character (llama.cpp: "unknown model architecture").
  if (std::any_of(arch.begin(), arch.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }))
    return make_error(ErrorKind::corrupt, format("%s: general.architecture '%s' holds a control character: no architecture llama.cpp or vLLM knows is named so",
                                                 origin.c_str(), one_line(arch, 200).c_str()),
                      origin);
  spec.architecture = arch;
  spec.model_type = arch;
  // Every count and dimension is an integer in a plausible range; a present but impossible value is
  // an error naming the key, never replaced by a default.
  auto number = [&](const std::string& key, int64_t lowest, int64_t highest) -> Expected<std::optional<int64_t>> {
    auto it = file.numbers.find(arch + "." + key);
    if (it == file.numbers.end()) return std::optional<int64_t>{};
    const double v = it->second;
    if (!(v >= static_cast<double>(lowest) && v <= static_cast<double>(highest)) || v != static_cast<double>(static_cast<int64_t>(v))) {
      return make_error(ErrorKind::corrupt, format("%s: %s.%s is %s, expected an integer from %lld to %lld", origin.c_str(), arch.c_str(), key.c_str(), number_text(v).c_str(),
                                                   static_cast<long long>(lowest), static_cast<long long>(highest)),
                        origin);
    }
    return std::optional<int64_t>{static_cast<int64_t>(v)};
  };
  auto required = [&](const std::string& key, int64_t highest) -> Expected<int64_t> {
    PF_TRY(v, number(key, 1, highest));
    if (!v) return make_error(ErrorKind::corrupt, format("%s: missing %s.%s", origin.c_str(), arch.c_str(), key.c_str()), origin);
    return *v;
  };
  PF_TRY(layers, required("block_count", k_max_layers));
  PF_TRY(hidden, required("embedding_length", k_max_dim));
  PF_TRY(heads, required("attention.head_count", k_max_dim));
  spec.num_hidden_layers = layers;
  spec.hidden_size = hidden;
  spec.num_attention_heads = heads;
  PF_TRY(kv_heads, number("attention.head_count_kv", 1, heads));
  spec.num_key_value_heads = kv_heads.value_or(heads);
  if (heads % spec.num_key_value_heads != 0) {
    return make_error(ErrorKind::corrupt, format("%s: %s.attention.head_count (%lld) is not a multiple of %s.attention.head_count_kv (%lld)", origin.c_str(),
                                                 arch.c_str(), static_cast<long long>(heads), arch.c_str(), static_cast<long long>(spec.num_key_value_heads)),
                      origin);
  }
  PF_TRY(key_length, number("attention.key_length", 1, k_max_dim));
  if (!key_length && hidden % heads != 0) {
    return make_error(ErrorKind::corrupt, format("%s: %s.embedding_length (%lld) is not a multiple of %s.attention.head_count (%lld) and attention.key_length is not given",
                                                 origin.c_str(), arch.c_str(), static_cast<long long>(hidden), arch.c_str(), static_cast<long long>(heads)),
                      origin);
  }
  spec.head_dim = key_length.value_or(hidden / heads);
  PF_TRY(value_length, number("attention.value_length", 1, k_max_dim));
  PF_TRY(ffn, number("feed_forward_length", 0, k_max_dim * 4));
  spec.intermediate_size = ffn.value_or(0);
  // llama.cpp keeps the context length in a uint32 (n_ctx_train).
  PF_TRY(context, number("context_length", 0, UINT32_MAX));
  spec.max_position_embeddings = context.value_or(0);
  spec.derived_max_model_len = spec.max_position_embeddings;  // vLLM's GGUF loader maps context_length to max_position_embeddings
  if (context) spec.derived_max_model_len_text = format("max_position_embeddings=%lld or model_max_length=None", static_cast<long long>(*context));
  PF_TRY(experts, number("expert_count", 0, k_max_experts));
  spec.num_experts = experts.value_or(0);
  PF_TRY(experts_used, number("expert_used_count", 0, spec.num_experts));
  spec.num_experts_per_tok = experts_used.value_or(0);
  PF_TRY(sliding_opt, number("attention.sliding_window", 0, UINT32_MAX));
  const int64_t sliding = sliding_opt.value_or(0);
  if (auto v = file.array_lengths.find("tokenizer.ggml.tokens"); v != file.array_lengths.end()) spec.vocab_size = static_cast<int64_t>(v->second);
  for (int64_t i = 0; i < layers; ++i) {
    LayerSpec l;
    l.kind = LayerKind::full_attention;
    l.num_key_value_heads = spec.num_key_value_heads;
    l.head_dim_k = spec.head_dim;
    l.head_dim_v = value_length.value_or(spec.head_dim);
    l.moe = spec.num_experts > 0;
    spec.layers.push_back(l);
  }
  if (sliding > 0) spec.assumptions.push_back(format("%s.attention.sliding_window is %lld; layer pattern not in GGUF metadata, all layers counted as full attention", arch.c_str(), static_cast<long long>(sliding)));
  uint64_t total = 0, elements_total = 0;
  for (const auto& t : file.tensors) {
    // Tensor infos may overlap, so their sums are checked even though each lies inside the file.
    const auto bytes_sum = checked_add(total, t.bytes);
    const auto elements_sum = checked_add(elements_total, t.elements);
    if (!bytes_sum || !elements_sum || *bytes_sum > static_cast<uint64_t>(INT64_MAX) || *elements_sum > static_cast<uint64_t>(INT64_MAX)) {
      return make_error(ErrorKind::corrupt, format("%s: tensor %s: tensor sizes summed over the file overflow", origin.c_str(), t.name.c_str()), origin);
    }
    elements_total = *elements_sum;
    WeightGroup g;
    g.module = normalize_module(t.name);
    g.rows = static_cast<int64_t>(t.elements);
    g.cols = 1;
    g.count = 1;
    g.expert = t.name.find("_exps") != std::string::npos;
    g.active_fraction = g.expert && spec.num_experts > 0 ? static_cast<double>(spec.num_experts_per_tok) / static_cast<double>(spec.num_experts) : 1.0;
    if (g.module == "token_embd.weight" || g.module == "output.weight") g.shard = Shard::vocab;
    g.stored_bytes = static_cast<double>(t.bytes);  // exact: quantized GGUF bytes are not params x dtype
    g.stored_format = ggml_type_name(t.ggml_type);
    spec.weights.push_back(g);
    total = *bytes_sum;
    spec.exact_bytes_by_dtype[ggml_type_name(t.ggml_type)] += t.bytes;
    if (spec.vocab_size == 0 && t.name == "token_embd.weight" && t.shape.size() == 2) spec.vocab_size = static_cast<int64_t>(t.shape[1]);
  }
  spec.exact_weight_bytes = total;
  spec.exact_tensor_count = file.tensors.size();
  spec.header_bytes_read = file.bytes_read;
  spec.quant.method = "gguf";
  if (auto ft = file.numbers.find("general.file_type"); ft != file.numbers.end()) spec.quant.detail = format("GGUF file_type %d", static_cast<int>(ft->second));
  spec.provenance.push_back({"weight bytes", origin, "sum of GGUF tensor infos (elements / block size x block bytes per ggml type)"});
  spec.provenance.push_back({"architecture", origin, "GGUF metadata " + arch + ".*"});
  return spec;
}

}  // namespace preflight::model
