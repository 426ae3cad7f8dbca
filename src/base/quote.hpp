// base/quote: a foreign value (a flag's text, a config string, a log's field) rendered for a one-line message, so that
// a newline inside it cannot split the message or forge a line of its own (issue 19, hard34). base/text's clip_text
// stays the cut for multi-line evidence (doctor), which keeps a value's own lines.
#pragma once

#include <cstddef>
#include <string>

namespace preflight {

// `text` as a one-line message quotes it: a line feed as the two characters \n, a carriage return as \r, every other
// C0 control character (tab and ESC among them) and DEL as \xNN (two lowercase hex digits), a UTF-8 C1 control
// (U+0080 - U+009F, NEL among them) as \u00NN; every other byte as it is (a backslash too, so a path or a regular
// expression reads as written; bytes that are not UTF-8 are left to the writer that prints them). When the rendering
// is longer than `max_bytes`, its first bytes up to `max_bytes`, never cut inside an escape or a UTF-8 character, then
// "... (N bytes in all)" with N the value's own length, as clip_text marks a cut.
std::string one_line(const std::string& text, size_t max_bytes = 80);

}  // namespace preflight
