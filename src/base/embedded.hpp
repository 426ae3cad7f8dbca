// base/embedded: the data/ files compiled into the binary (catalogues), by path relative to data/,
// and a build-time index of the records of the model and device catalogues, so that one model or one
// device is resolved by parsing its record alone instead of the whole file at every start.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace preflight {

// Contents of data/<relative_path>, or an empty view when no such file was embedded.
std::string_view embedded_data(const std::string& relative_path);
std::vector<std::string> embedded_names();

// One object of a catalogue's record array, located by cmake/catalog_index.cpp at build time: its
// "id", its "aliases", and its bytes embedded_data(file).substr(offset, length) (a JSON object).
struct EmbeddedRecord {
  std::string_view id;
  std::span<const std::string_view> aliases;
  size_t offset = 0;
  size_t length = 0;
  // The values of the fields the index copies for this array (embedded_record_fields names them, in that
  // order): a string's contents, a number as JSON writes it, "" for null or absent.
  std::span<const std::string_view> fields;
};

// The indexed records of data/<relative_path> in file order (the CMakeLists indexes
// "architectures/models.json" "models", "devices/devices.json" "devices" and "ambiguous_names"; the
// one-argument form answers the file's first indexed array); empty for a file or array without an index.
// An "ambiguous_names" record's id is its "name".
std::span<const EmbeddedRecord> embedded_records(std::string_view relative_path);
std::span<const EmbeddedRecord> embedded_records(std::string_view relative_path, std::string_view array_key);
// The names of the fields copied into each record of that array (the CMakeLists copies devices.json "devices"'
// vendor, memory_kind, memory_bytes, runtime_total_bytes, confidence.runtime_total and family); empty when none.
std::span<const std::string_view> embedded_record_fields(std::string_view relative_path, std::string_view array_key);
// The value of field `name` in `record` of that array, or nullopt when the index does not copy that field.
std::optional<std::string_view> embedded_record_field(std::string_view relative_path, std::string_view array_key, const EmbeddedRecord& record,
                                                      std::string_view name);

// The bytes of one indexed record; empty when the offsets do not land on an object in the embedded
// file (then callers fall back to parsing the whole file).
std::string_view embedded_record_text(std::string_view relative_path, const EmbeddedRecord& record);

}  // namespace preflight
