// safetensors layout (github.com/huggingface/safetensors, "Format"): u64 little-endian header size N,
// N bytes of UTF-8 JSON, then the tensor data. Offsets in the JSON are relative to the data start.
#include "model/safetensors_header.hpp"

#include <algorithm>

#include "base/checked.hpp"
#include "base/file.hpp"
#include "base/json_keys.hpp"
#include "base/json_util.hpp"
#include "base/units.hpp"

namespace preflight::model {

uint64_t TensorInfo::elements() const {
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

uint64_t SafetensorsHeader::data_bytes() const {
  uint64_t total = 0;
  for (const auto& t : tensors) total += t.bytes();
  return total;
}

namespace {
constexpr size_t k_max_tensors = 2'000'000;
constexpr size_t k_max_dims = 8;

}  // namespace

Expected<SafetensorsHeader> parse_safetensors_header(const std::string& header_json, uint64_t data_size, const std::string& origin) {
  SafetensorsHeader header;
  header.header_length = header_json.size();
  // nlohmann keeps the last of duplicate keys silently, so base/json_keys finds a key one object repeats first, in one
  // linear pass (issue 19: the check once ran in a parser callback, which nlohmann's callback parser made quadratic).
  // The safetensors crate refuses one too: a tensor's fields are a serde struct (a repeated "dtype" is "duplicate
  // field"), and of two tensors of one name the first drops out of the map, leaving its bytes a hole the offset check
  // refuses.
  if (auto repeated = find_repeated_key(header_json); repeated && repeated->path.front() != "[]") {
    const std::string first = repeated->path.front();
    if (repeated->path.size() == 1)
      return make_error(ErrorKind::corrupt, format("%s: tensor %s appears twice in the header", origin.c_str(), first.c_str()), origin);
    repeated->path.erase(repeated->path.begin());
    return make_error(ErrorKind::corrupt, format("%s: %s %s: %s appears twice", origin.c_str(), first == "__metadata__" ? "header" : "tensor", first.c_str(), repeated->text().c_str()),
                      origin);
  }
  Json root;
  try {
    root = Json::parse(header_json);
  } catch (const Json::exception& e) {
    return make_error(ErrorKind::corrupt, format("%s: header is not valid JSON (%s)", origin.c_str(), e.what()), origin);
  }
  if (!root.is_object()) return make_error(ErrorKind::corrupt, format("%s: header is not a JSON object", origin.c_str()), origin);
  if (root.size() > k_max_tensors) return make_error(ErrorKind::corrupt, format("%s: header lists %zu tensors", origin.c_str(), root.size()), origin);
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string& name = it.key();
    if (!it->is_object()) return make_error(ErrorKind::corrupt, format("%s: tensor %s: expected an object", origin.c_str(), name.c_str()), origin);
    JsonObject t(*it, origin, name);
    PF_TRY(dtype_name_str, t.string("dtype"));
    const auto dtype = dtype_from_safetensors(dtype_name_str);
    if (!dtype) return make_error(ErrorKind::corrupt, format("%s: tensor %s: unknown dtype %s", origin.c_str(), name.c_str(), dtype_name_str.c_str()), origin);
    TensorInfo info;
    info.name = name;
    info.dtype = *dtype;
    const Json* shape = t.find("shape");
    if (!shape) {
      if (it->contains("shape") && (*it)["shape"].is_null()) return t.wrong_type("shape", "an array of integers");
      return make_error(ErrorKind::corrupt, format("%s: tensor %s: missing shape", origin.c_str(), name.c_str()), origin);
    }
    if (!shape->is_array() || shape->size() > k_max_dims) return t.wrong_type("shape", "an array of at most 8 integers");
    uint64_t elements = 1;
    for (const auto& dim : *shape) {
      if (!dim.is_number_unsigned() && !(dim.is_number_integer() && dim.get<int64_t>() >= 0)) return t.wrong_type("shape", "non-negative integers");
      const uint64_t v = dim.get<uint64_t>();
      info.shape.push_back(v);
      const auto product = checked_mul(elements, v);
      if (!product) return make_error(ErrorKind::corrupt, format("%s: tensor %s: shape overflows", origin.c_str(), name.c_str()), origin);
      elements = *product;
    }
    const Json* offsets = t.find("data_offsets");
    if (!offsets || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
      return t.wrong_type("data_offsets", "two non-negative integers");
    }
    info.data_begin = (*offsets)[0].get<uint64_t>();
    info.data_end = (*offsets)[1].get<uint64_t>();
    if (info.data_begin > info.data_end || info.data_end > data_size) {
      return make_error(ErrorKind::corrupt, format("%s: tensor %s: data_offsets [%llu, %llu] outside the data section of %llu bytes", origin.c_str(), name.c_str(),
                                                   static_cast<unsigned long long>(info.data_begin), static_cast<unsigned long long>(info.data_end),
                                                   static_cast<unsigned long long>(data_size)),
                        origin);
    }
    const auto expected_bits = checked_mul(elements, static_cast<uint64_t>(dtype_bits(*dtype)));
    if (!expected_bits || (*expected_bits + 7) / 8 != info.bytes()) {
      return make_error(ErrorKind::corrupt, format("%s: tensor %s: %llu bytes for %llu elements of %s", origin.c_str(), name.c_str(),
                                                   static_cast<unsigned long long>(info.bytes()), static_cast<unsigned long long>(elements),
                                                   dtype_name_str.c_str()),
                        origin);
    }
    header.tensors.push_back(std::move(info));
  }
  std::vector<const TensorInfo*> order;
  for (const auto& t : header.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorInfo* a, const TensorInfo* b) { return a->data_begin < b->data_begin; });
  for (size_t i = 1; i < order.size(); ++i) {
    if (order[i]->data_begin < order[i - 1]->data_end && order[i]->bytes() > 0) {
      return make_error(ErrorKind::corrupt, format("%s: tensors %s and %s overlap", origin.c_str(), order[i - 1]->name.c_str(), order[i]->name.c_str()), origin);
    }
  }
  return header;
}

Expected<uint64_t> parse_safetensors_header_length(const uint8_t* first8, uint64_t file_size, const std::string& origin) {
  if (file_size < 8) {
    return make_error(ErrorKind::corrupt, format("%s: %llu bytes, too short for a safetensors header", origin.c_str(), static_cast<unsigned long long>(file_size)),
                      origin);
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | first8[i];
  if (n > k_max_safetensors_header_bytes) {
    return make_error(ErrorKind::corrupt, format("%s: header length %s is above the 100 MiB limit", origin.c_str(), format_bytes(n).c_str()), origin);
  }
  if (n > file_size - 8) {
    return make_error(ErrorKind::corrupt, format("%s: header length %s exceeds file size %s", origin.c_str(), format_bytes(n).c_str(),
                                                 format_bytes(file_size).c_str()),
                      origin);
  }
  return n;
}

Expected<SafetensorsHeader> parse_safetensors_prefix(const uint8_t* data, size_t size, uint64_t file_size, const std::string& origin) {
  if (size < 8) return make_error(ErrorKind::corrupt, format("%s: %zu bytes, too short for a safetensors header", origin.c_str(), size), origin);
  PF_TRY(n, parse_safetensors_header_length(data, file_size, origin));
  if (size - 8 < n) {
    return make_error(ErrorKind::corrupt, format("%s: header of %llu bytes but only %zu bytes given", origin.c_str(), static_cast<unsigned long long>(n), size - 8),
                      origin);
  }
  PF_TRY(header, parse_safetensors_header(std::string(reinterpret_cast<const char*>(data) + 8, n), file_size - 8 - n, origin));
  header.file_size = file_size;
  return header;
}

Expected<SafetensorsHeader> load_safetensors_header(const std::string& path, uint64_t* bytes_read) {
  PF_TRY(reader, FileReader::open(path));
  const std::string origin = base_name(path);
  if (reader.size_bytes() < 8) {
    return make_error(ErrorKind::corrupt, format("%s: %llu bytes, too short for a safetensors header", origin.c_str(),
                                                 static_cast<unsigned long long>(reader.size_bytes())),
                      path);
  }
  PF_TRY(prefix, reader.read_at(0, 8));
  auto n = parse_safetensors_header_length(prefix.data(), reader.size_bytes(), origin);
  if (!n) return make_error(n.error().kind, n.error().message, path);
  PF_TRY(body, reader.read_at(8, *n));
  if (bytes_read) *bytes_read = reader.bytes_read();
  prefix.insert(prefix.end(), body.begin(), body.end());
  return parse_safetensors_prefix(prefix.data(), prefix.size(), reader.size_bytes(), origin);
}

}  // namespace preflight::model
