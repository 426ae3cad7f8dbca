#include "base/json_keys.hpp"

#include <unordered_set>
#include <vector>

#include "base/json_util.hpp"
#include "base/units.hpp"

namespace preflight {

namespace {

// One frame per open object ({keys seen, the key being read}) or array (is_array): enough to name where a key repeats.
struct Frame {
  bool is_array = false;
  std::unordered_set<std::string> keys;
  std::string key;
};

class RepeatFinder : public nlohmann::json_sax<Json> {
 public:
  std::string repeated;  // the path of the first repeated key

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
    f.key = k;
    if (f.keys.insert(k).second) return true;
    repeated = path();
    return false;  // stops the parse: one error is enough
  }
  bool end_object() override {
    m_frames.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    m_frames.push_back(Frame{true, {}, {}});
    return true;
  }
  bool end_array() override {
    m_frames.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  std::vector<Frame> m_frames;

  std::string path() const {
    std::string p;
    for (const auto& f : m_frames) {
      if (f.is_array) p += "[]";
      else p += (p.empty() ? "" : ".") + f.key;
    }
    return p;
  }
};

}  // namespace

Status check_unique_keys(const std::string& text, const std::string& origin) {
  RepeatFinder finder;
  try {
    Json::sax_parse(text, &finder);
  } catch (const std::exception&) {
    return Ok{};
  }
  if (finder.repeated.empty()) return Ok{};
  return make_error(ErrorKind::corrupt, format("%s: %s: key appears twice in one object", origin.c_str(), finder.repeated.c_str()), origin);
}

}  // namespace preflight
