#include "base/json_keys.hpp"

#include <unordered_set>
#include <vector>

#include "base/file.hpp"
#include "base/units.hpp"

namespace preflight {

namespace {

// One frame per open object ({keys seen, the key being read}) or array (is_array): enough to name where a key repeats.
struct Frame {
  bool is_array = false;
  std::unordered_set<std::string> keys;
  const std::string* key = nullptr;  // the key being read: its copy in `keys` (a node's address does not move)
};

class RepeatFinder : public nlohmann::json_sax<Json> {
 public:
  std::optional<RepeatedKey> repeated;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    m_frames.push_back(Frame{});
    return true;
  }
  bool key(string_t& k) override {
    Frame& f = m_frames.back();
    const auto [at, added] = f.keys.insert(k);
    f.key = &*at;
    if (added) return true;
    repeated = RepeatedKey{path()};
    return false;  // stops the parse: one error is enough
  }
  bool end_object() override {
    m_frames.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    m_frames.push_back(Frame{true, {}, nullptr});
    return true;
  }
  bool end_array() override {
    m_frames.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  std::vector<Frame> m_frames;

  std::vector<std::string> path() const {
    std::vector<std::string> p;
    for (const auto& f : m_frames) p.push_back(f.is_array || !f.key ? "[]" : *f.key);
    return p;
  }
};

}  // namespace

std::string RepeatedKey::text() const {
  std::string out;
  for (const auto& k : path) {
    if (k == "[]") out += k;
    else out += (out.empty() ? "" : ".") + k;
  }
  return out;
}

size_t RepeatedKey::depth() const {
  size_t objects = 0;
  for (const auto& k : path) objects += k == "[]" ? 0 : 1;
  return objects;
}

std::optional<RepeatedKey> find_repeated_key(const std::string& text) {
  RepeatFinder finder;
  try {
    Json::sax_parse(text, &finder);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return finder.repeated;
}

Status check_unique_keys(const std::string& text, const std::string& origin) {
  const auto repeated = find_repeated_key(text);
  if (!repeated) return Ok{};
  return make_error(ErrorKind::corrupt, format("%s: %s: key appears twice in one object", origin.c_str(), repeated->text().c_str()), origin);
}

Expected<Json> parse_owned_json(const std::string& text, const std::string& origin) {
  PF_TRY(json, parse_json(text, origin));
  PF_TRY(unique, check_unique_keys(text, origin));
  (void)unique;
  return json;
}

Expected<Json> load_overlay_json(const std::string& path) {
  PF_TRY(text, read_text_file(path, k_max_overlay_bytes));
  return parse_owned_json(text, path);
}

}  // namespace preflight
