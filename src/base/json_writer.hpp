#pragma once
// Issue 19 (round 11): JSON text written straight into a string, byte for byte as nlohmann::json's dump(indent) writes
// the same value, so that a large record (a plan's tens of thousands of rows) is written without first being built as
// a tree of nlohmann values. The caller writes the members of each object in the order dump writes them: the byte
// order of the keys (nlohmann::json keeps its objects in a std::map). What dump does, and this writer with it:
// - objects and arrays: "{" or "[", then each member or element on its own line, indented by `indent` spaces per
//   level, separated by ",", the closing bracket on its own line at the enclosing level; an empty one is "{}" or "[]";
//   a key is followed by ": ";
// - strings: '"' and '\' escaped as \" and \\, the control characters 0x08, 0x09, 0x0A, 0x0C, 0x0D as \b \t \n \f \r,
//   the other bytes below 0x20 as \u00xx (lowercase hex), everything else (0x7F and UTF-8 sequences) as it is;
//   bytes that are not well-formed UTF-8 (a GBK log line, a GGUF string, a path) as U+FFFD, as dump writes them with
//   error_handler_t::replace (dump_json below), where plain dump() throws type_error 316 and the process aborts
//   (issue 19: `logs --json` on such a log, `doctor --script`, a clipped case text);
// - integers in decimal; a double that is not finite as null, any other with nlohmann's own shortest round-trip
//   digits (nlohmann::detail::to_chars, the routine dump calls), so "1.0", "-0.0", "1e+300", "0.0001", "1e-05".
// After an error the text written is incomplete and is not to be used.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_util.hpp"
#include "base/shared_text.hpp"

namespace preflight {

// `value` as JSON text (`indent` spaces per level, -1 for one line), bytes that are not well-formed UTF-8 in its strings
// written as U+FFFD. Every JSON that preflight prints or stores is written by this or by JsonWriter: text read from
// logs, scripts, GGUF files, servers and the command line need not be UTF-8.
std::string dump_json(const Json& value, int indent = -1);

class JsonWriter {
 public:
  // Appends to `out`; `indent` spaces per level (dump(2): 2).
  explicit JsonWriter(std::string& out, int indent = 2) : m_out(out), m_indent(indent) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // The next member's key, inside an object; its value follows.
  JsonWriter& key(std::string_view name);

  JsonWriter& string(std::string_view text);
  JsonWriter& integer(int64_t value);
  JsonWriter& number(double value);
  JsonWriter& boolean(bool value);
  JsonWriter& null();
  // An array of strings.
  JsonWriter& strings(const std::vector<std::string>& texts);
  JsonWriter& strings(std::span<const SharedText> texts);  // a std::vector or an InlineVector (a speed estimate's)
  // Any nlohmann value, as dump writes it at this place (binary values are not supported: an error).
  JsonWriter& json(const Json& value);

  bool ok() const { return m_error.empty(); }
  const std::string& error() const { return m_error; }

 private:
  void before_value();
  void newline_indent(size_t depth);
  void escaped(std::string_view text);
  void fail(std::string message);

  std::string& m_out;
  int m_indent;
  std::vector<size_t> m_counts;  // members or elements written so far, per open object or array
  bool m_after_key = false;
  std::string m_error;
};

}  // namespace preflight
