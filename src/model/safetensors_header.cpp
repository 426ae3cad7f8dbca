// safetensors layout (github.com/huggingface/safetensors, "Format"): u64 little-endian header size N,
// N bytes of UTF-8 JSON, then the tensor data. Offsets in the JSON are relative to the data start.
#include "model/safetensors_header.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include "base/checked.hpp"
#include "base/file.hpp"
#include "base/json_keys.hpp"
#include "base/json_util.hpp"
#include "base/units.hpp"

namespace preflight::model {

uint64_t SafetensorsHeader::data_bytes() const {
  uint64_t total = 0;
  for (const auto& t : tensors) total += t.bytes();
  return total;
}

namespace {
constexpr size_t k_max_tensors = 2'000'000;
constexpr size_t k_max_dims = 8;

// One tensor's small tree, checked and kept as the four fields preflight needs.
Expected<TensorInfo> read_tensor(const std::string& name, const Json& value, uint64_t data_size, const std::string& origin) {
  if (!value.is_object()) return make_error(ErrorKind::corrupt, format("%s: tensor %s: expected an object", origin.c_str(), name.c_str()), origin);
  JsonObject t(value, origin, name);
  PF_TRY(dtype_name_str, t.string("dtype"));
  const auto dtype = dtype_from_safetensors(dtype_name_str);
  if (!dtype) return make_error(ErrorKind::corrupt, format("%s: tensor %s: unknown dtype %s", origin.c_str(), name.c_str(), dtype_name_str.c_str()), origin);
  TensorInfo info;
  info.name = name;
  info.dtype = *dtype;
  const Json* shape = t.find("shape");
  if (!shape) {
    if (value.contains("shape") && value["shape"].is_null()) return t.wrong_type("shape", "an array of integers");
    return make_error(ErrorKind::corrupt, format("%s: tensor %s: missing shape", origin.c_str(), name.c_str()), origin);
  }
  if (!shape->is_array() || shape->size() > k_max_dims) return t.wrong_type("shape", "an array of at most 8 integers");
  uint64_t elements = 1;
  for (const auto& dim : *shape) {
    if (!dim.is_number_unsigned() && !(dim.is_number_integer() && dim.get<int64_t>() >= 0)) return t.wrong_type("shape", "non-negative integers");
    const auto product = checked_mul(elements, dim.get<uint64_t>());
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
                                                 static_cast<unsigned long long>(info.bytes()), static_cast<unsigned long long>(elements), dtype_name_str.c_str()),
                      origin);
  }
  return info;
}

// nlohmann's SAX interface over the header: each top-level value (a tensor, or __metadata__) is built alone as a small
// tree, checked and reduced to a TensorInfo, then dropped. Issue 19 (hard32): the whole header parsed as one tree took
// about ten times its text (a 100 MB header, the largest read: 1.1 GB and 10.6 s). A key one object of a value repeats is
// refused as the tree is built; a tensor name the top level repeats, after the walk (repeated_tensor).
class HeaderReader {
 public:
  HeaderReader(SafetensorsHeader& out, uint64_t data_size, const std::string& origin) : m_out(out), m_data_size(data_size), m_origin(origin) {}

  bool null() { return value(Json(nullptr)); }
  bool boolean(bool v) { return value(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return value(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return value(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return value(Json(v)); }
  bool string(Json::string_t& v) { return value(Json(std::move(v))); }
  bool binary(Json::binary_t&) { return value(Json()); }  // JSON text holds none

  bool start_object(size_t) {
    if (m_top_open) return open(Json::object());
    if (m_done) return fail("header is not a JSON object");
    m_top_open = true;
    return true;
  }
  bool key(Json::string_t& k) {
    if (m_stack.empty()) {
      m_name = std::move(k);
      return true;
    }
    Json& object = *m_stack.back().value;
    if (object.contains(k)) {
      RepeatedKey repeated;
      for (size_t i = 1; i < m_stack.size(); ++i) repeated.path.push_back(m_stack[i].key);
      repeated.path.push_back(k);
      return fail(format("%s %s: %s appears twice", m_name == "__metadata__" ? "header" : "tensor", m_name.c_str(), repeated.text().c_str()));
    }
    m_key = k;
    object[k] = nullptr;  // keeps the key's place; value() and open() fill it
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(size_t) {
    if (!m_top_open) return fail("header is not a JSON object");
    return open(Json::array());
  }
  bool end_array() { return close(); }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception& e) { return fail(format("header is not valid JSON (%s)", e.what())); }

  // The error that stopped the walk, or nullopt.
  const std::optional<Error>& error() const { return m_error; }

 private:
  struct Open {
    Json* value;
    std::string key;  // the key (or "[]") under which it sits in its parent; "" for the tensor's own value
  };

  bool fail(const std::string& message) {
    if (!m_error) m_error = make_error(ErrorKind::corrupt, m_origin + ": " + message, m_origin);
    return false;
  }
  // Where the next value of the open tree goes.
  Json* slot(std::string& under) {
    Json& parent = *m_stack.back().value;
    if (parent.is_array()) {
      under = "[]";
      parent.push_back(nullptr);
      return &parent.back();
    }
    under = m_key;
    return &parent[m_key];
  }
  bool value(Json v) {
    if (!m_top_open) return fail("header is not a JSON object");
    if (m_stack.empty()) return finish(v);
    std::string under;
    *slot(under) = std::move(v);
    return true;
  }
  bool open(Json container) {
    if (m_stack.empty()) {
      m_tree = std::move(container);
      m_stack.push_back({&m_tree, ""});
      return true;
    }
    std::string under;
    Json* at = slot(under);
    *at = std::move(container);
    m_stack.push_back({at, under});
    return true;
  }
  bool close() {
    if (m_stack.empty()) {  // the top-level object ends
      m_top_open = false;
      m_done = true;
      return true;
    }
    m_stack.pop_back();
    if (!m_stack.empty()) return true;
    const bool ok = finish(m_tree);
    m_tree = Json();
    return ok;
  }
  bool finish(const Json& v) {
    if (m_name == "__metadata__") {
      ++m_metadata;
      return m_metadata == 1 || fail("tensor __metadata__ appears twice in the header");
    }
    if (m_out.tensors.size() >= k_max_tensors) return fail(format("header lists more than %zu tensors", k_max_tensors));
    auto info = read_tensor(m_name, v, m_data_size, m_origin);
    if (!info) {
      m_error = info.error();
      return false;
    }
    m_out.tensors.push_back(std::move(*info));
    return true;
  }

  SafetensorsHeader& m_out;
  const uint64_t m_data_size;
  const std::string& m_origin;
  bool m_top_open = false, m_done = false;
  size_t m_metadata = 0;
  std::string m_name, m_key;  // the top-level key being read; the last key of the open tree
  Json m_tree;
  std::vector<Open> m_stack;
  std::optional<Error> m_error;
};

// The name of the tensor whose second appearance comes first in the file, or nullptr: names sorted by hash (16 bytes a
// tensor, where a set of the names would copy them), equal hashes compared as text.
const std::string* repeated_tensor(const std::vector<TensorInfo>& tensors) {
  std::vector<std::pair<size_t, uint32_t>> by_hash;
  by_hash.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) by_hash.emplace_back(std::hash<std::string>{}(tensors[i].name), static_cast<uint32_t>(i));
  std::sort(by_hash.begin(), by_hash.end());
  size_t second = tensors.size();
  for (size_t i = 0; i < by_hash.size(); ++i)
    for (size_t j = i + 1; j < by_hash.size() && by_hash[j].first == by_hash[i].first; ++j)
      if (tensors[by_hash[i].second].name == tensors[by_hash[j].second].name) second = std::min<size_t>(second, by_hash[j].second);
  return second < tensors.size() ? &tensors[second].name : nullptr;
}

}  // namespace

Expected<SafetensorsHeader> parse_safetensors_header(std::string_view header_json, uint64_t data_size, const std::string& origin) {
  SafetensorsHeader header;
  header.header_length = header_json.size();
  // Repeated keys: the safetensors crate refuses them. A tensor's fields are a serde struct (a repeated "dtype" is
  // "duplicate field"), and of two tensors of one name the first drops out of the map, leaving its bytes a hole the
  // offset check refuses; nlohmann would keep the last silently.
  HeaderReader reader(header, data_size, origin);
  const bool parsed = Json::sax_parse(header_json.begin(), header_json.end(), &reader);
  if (reader.error()) return *reader.error();
  if (!parsed) return make_error(ErrorKind::corrupt, format("%s: header is not valid JSON", origin.c_str()), origin);
  if (const std::string* name = repeated_tensor(header.tensors))
    return make_error(ErrorKind::corrupt, format("%s: tensor %s appears twice in the header", origin.c_str(), name->c_str()), origin);
  std::vector<const TensorInfo*> order;
  order.reserve(header.tensors.size());
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
  PF_TRY(header, parse_safetensors_header(std::string_view(reinterpret_cast<const char*>(data) + 8, n), file_size - 8 - n, origin));
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
  // The header parsed where it was read (hard32: it was copied twice more, to 3 x 100 MB for the largest).
  PF_TRY(header, parse_safetensors_header(std::string_view(reinterpret_cast<const char*>(body.data()), body.size()), reader.size_bytes() - 8 - *n, origin));
  header.file_size = reader.size_bytes();
  return header;
}

}  // namespace preflight::model
