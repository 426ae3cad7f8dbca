// base/json_util: parsing JSON text into nlohmann::json without exceptions escaping, and typed
// access that names the file and key in every error ("config.json: num_hidden_layers: expected an
// integer, found string").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/error.hpp"

namespace preflight {

using Json = nlohmann::json;

// Parses text; a corrupt error naming `origin` (a file path or label) with the byte offset.
Expected<Json> parse_json(const std::string& text, const std::string& origin);
Expected<Json> load_json_file(const std::string& path);
// An optional list of strings in the project's data files: missing (null `j`) -> empty; anything but
// an array of strings -> corrupt "<where>: expected an array of strings" naming `origin`.
Expected<std::vector<std::string>> string_list(const Json* j, const std::string& where, const std::string& origin);

// Typed access to an object member. `origin` names the file. Missing -> nullopt for the optional
// forms; wrong type -> corrupt error naming the key.
class JsonObject {
 public:
  JsonObject(const Json& object, std::string origin, std::string prefix = {});

  bool has(const std::string& key) const;
  const Json* find(const std::string& key) const;

  Expected<std::optional<int64_t>> opt_int(const std::string& key) const;
  Expected<std::optional<double>> opt_number(const std::string& key) const;
  Expected<std::optional<std::string>> opt_string(const std::string& key) const;
  Expected<std::optional<bool>> opt_bool(const std::string& key) const;

  Expected<int64_t> int_(const std::string& key) const;
  Expected<double> number(const std::string& key) const;
  Expected<std::string> string(const std::string& key) const;

  // Rejects keys not in `allowed` (catalogue schemas).
  Status only_keys(const std::vector<std::string>& allowed) const;
  // The project's data files: "schema_version" must be 1 (unsupported error naming the file otherwise).
  Status schema_v1() const;
  // A member that must be an array (corrupt error "file: key: expected an array" when missing or not one).
  Expected<const Json*> array(const std::string& key) const;

  std::string key_path(const std::string& key) const;
  Error wrong_type(const std::string& key, const char* expected) const;
  // "file: key is NaN, not a finite number" for a member that is_non_finite().
  Error not_finite(const std::string& key) const;
  const std::string& origin() const { return m_origin; }
  const Json& json() const { return m_object; }

 private:
  const Json& m_object;
  std::string m_origin;
  std::string m_prefix;
};

const char* json_type_name(const Json& value);

// Python's json module writes Infinity, -Infinity and NaN, which JSON does not have. parse_json reads
// each such token outside strings as a string value "\x01non-finite NaN" (the token after the
// marker), so that typed access can say "is NaN, not a finite number" instead of "missing".
bool is_non_finite(const Json& value);
// The token a non-finite member was written as ("NaN", "Infinity", "-Infinity"), or nullopt.
std::optional<std::string> non_finite_token(const Json& value);

namespace detail {
// Issue 19: the reader parse_json tries first (base/json_fast.cpp). True, with `out` set, for text that nlohmann's
// parser reads (after parse_json's NaN / Infinity rewrite) into exactly the same value; false for anything else
// (malformed text among it), which parse_json then hands to nlohmann's parser.
bool parse_json_fast(std::string_view text, Json& out);
}  // namespace detail

}  // namespace preflight
