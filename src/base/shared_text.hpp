#pragma once
// Issue 19 (round 10): a read-only text held once and shared by every copy, for texts that many records repeat (a
// plan's speed texts: the device's bandwidth basis, the profile's efficiency, the link, on tens of thousands of rows).
// Copying one adds a reference; the characters are not copied. A change is a new text assigned whole. An unset one
// reads as "". It reads as a `const std::string&` (str(), or the conversion), and compares, prints and converts to
// JSON as its text does.
#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

namespace preflight {

class SharedText {
 public:
  SharedText() = default;
  // Implicit, so that a record's text is assigned or pushed as a std::string is (`s.link = format(...)`). An empty text
  // holds no block (it reads as "" as an unset one does).
  SharedText(std::string text) {
    if (!text.empty()) m_text = std::make_shared<const std::string>(std::move(text));
  }
  SharedText(const char* text) : SharedText(std::string(text)) {}

  const std::string& str() const {
    static const std::string none;
    return m_text ? *m_text : none;
  }
  operator const std::string&() const { return str(); }
  bool empty() const { return str().empty(); }
  size_t size() const { return str().size(); }
  const char* c_str() const { return str().c_str(); }
  size_t find(const std::string& what, size_t from = 0) const { return str().find(what, from); }
  size_t rfind(const std::string& what, size_t from = std::string::npos) const { return str().rfind(what, from); }

  // Equal when the texts are (one overload per kind of right-hand side, so that none converts and none is ambiguous).
  friend bool operator==(const SharedText& a, const SharedText& b) { return a.m_text == b.m_text || a.str() == b.str(); }
  friend bool operator==(const SharedText& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const SharedText& a, const char* b) { return a.str() == b; }
  friend std::ostream& operator<<(std::ostream& o, const SharedText& t) { return o << t.str(); }
  // nlohmann::json's conversion, found by argument-dependent lookup: the text as a JSON string.
  template <class BasicJson>
  friend void to_json(BasicJson& j, const SharedText& t) {
    j = t.str();
  }

 private:
  std::shared_ptr<const std::string> m_text;
};

}  // namespace preflight
