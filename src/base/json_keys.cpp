#include "base/json_keys.hpp"

#include <deque>
#include <unordered_set>
#include <vector>

#include "base/file.hpp"
#include "base/units.hpp"

namespace preflight {

namespace {

// One frame per open object ({keys seen, the key being read}) or array (is_array): enough to name where a key repeats.
// An object's first k_few keys are compared in a short list (a safetensors tensor has three; a hash set for each of a
// 100,000-tensor header's objects cost 15% of its parse), the rest in a hash set. Frames are kept and reused by depth,
// in a deque, so that no push moves a frame and `key` (a pointer into `few` or `many`) stays valid.
constexpr size_t k_few = 8;
struct Frame {
  bool is_array = false;
  std::vector<std::string> few;
  std::unordered_set<std::string> many;
  const std::string* key = nullptr;  // the key being read: its copy in `few` or `many` (a set node does not move)

  void reset(bool array) {
    is_array = array;
    few.clear();
    many.clear();
    key = nullptr;
  }
  // Whether `k` is new to this object; records it and points `key` at the copy either way.
  bool add(const std::string& k) {
    if (many.empty()) {
      for (const auto& seen : few)
        if (seen == k) {
          key = &seen;
          return false;
        }
      if (few.size() < k_few) {
        few.push_back(k);
        key = &few.back();
        return true;
      }
      for (auto& seen : few) many.insert(std::move(seen));
      few.clear();
    }
    const auto [at, added] = many.insert(k);
    key = &*at;
    return added;
  }
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
  bool start_object(std::size_t) override { return open(false); }
  bool key(string_t& k) override {
    if (m_frames[m_depth - 1].add(k)) return true;
    repeated = RepeatedKey{path()};
    return false;  // stops the parse: one error is enough
  }
  bool end_object() override {
    --m_depth;
    return true;
  }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override {
    --m_depth;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  std::deque<Frame> m_frames;
  size_t m_depth = 0;  // frames open now; m_frames[m_depth..] are kept for reuse

  bool open(bool array) {
    if (m_depth == m_frames.size()) m_frames.emplace_back();
    m_frames[m_depth++].reset(array);
    return true;
  }
  std::vector<std::string> path() const {
    std::vector<std::string> p;
    for (size_t i = 0; i < m_depth; ++i) p.push_back(m_frames[i].is_array || !m_frames[i].key ? "[]" : *m_frames[i].key);
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

Expected<Json> load_owned_json_file(const std::string& path) {
  PF_TRY(text, read_text_file(path, k_max_owned_json_bytes));
  return parse_owned_json(text, path);
}

}  // namespace preflight
