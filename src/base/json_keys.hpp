// base/json_keys: a key that one object of a JSON text names twice. nlohmann's DOM parser (and base/json_fast, which
// reads as it does) keeps the last value silently, which is right for files other programs read the same way
// (config.json: Python's json module also keeps the last) and wrong for the files preflight owns and a user writes or
// edits (the devices and speed overlays, validate's cases, bench datasets, fit --json given to report --fit-json),
// where a copy-edited second "hbm_bandwidth_bytes_per_s" silently replaced the first (issue 19, hard30 / hard31).
// Each reader's choice, with what the producing tool does, is in docs/json-inputs.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight {

// The first key one object repeats: the keys from the top object down to it, "[]" for each array on the way
// (["devices", "[]", "source"]); depth() 1 for a key of the top-level object.
struct RepeatedKey {
  std::vector<std::string> path;
  std::string text() const;  // "devices[].source"
  size_t depth() const;      // objects from the top down to the repeated key's own
};

// The first repeated key of `text`, or nullopt when none repeats or when the text is not one nlohmann's SAX reader
// takes (parse_json's own errors, and its reading of Infinity / NaN, stay the caller's). Linear in the text: one hash
// set per open object (a 100,000-tensor safetensors header, tests/model Issue19_LinearTimeDuplicateCheck).
std::optional<RepeatedKey> find_repeated_key(const std::string& text);

// corrupt error "<origin>: <path>: key appears twice in one object" for the first repeated key; Ok when none repeats.
Status check_unique_keys(const std::string& text, const std::string& origin);

// parse_json, then check_unique_keys: the reading of a JSON text preflight owns.
Expected<Json> parse_owned_json(const std::string& text, const std::string& origin);

// The most a whole JSON document preflight owns may hold: 4 MiB, twenty times the whole shipped device catalogue
// (data/devices/devices.json, 192 KB) and a hundred times a fit --json output (25-37 KB for DeepSeek-V3 on 16 cards or
// Qwen2.5-VL at PP 8). A tree parsed from JSON takes about 18 times its text (a 60 MB array took 1.09 GB, issue 19).
// The user's overlays (devices.json, speed.json; also as bw --save and calibrate --save merge into them), report
// --fit-json and bench --prediction are read within it (hard31: the last four read up to 64 MiB).
inline constexpr uint64_t k_max_owned_json_bytes = 4ull << 20;

// The document at `path` read within k_max_owned_json_bytes and parsed by parse_owned_json.
Expected<Json> load_owned_json_file(const std::string& path);

}  // namespace preflight
