// base/text: small string helpers (case folding, splitting, edit distance for "did you mean").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace preflight {

std::string to_lower(std::string text);
std::string to_upper(std::string text);
std::string trim(const std::string& text);
std::vector<std::string> split(const std::string& text, char sep);
bool starts_with(const std::string& text, const std::string& prefix);
bool ends_with(const std::string& text, const std::string& suffix);
bool contains_ci(const std::string& haystack, const std::string& needle);
size_t edit_distance(const std::string& a, const std::string& b);
// Up to `limit` candidates closest to `query` (case-insensitive edit distance, then substring).
std::vector<std::string> nearest_names(const std::string& query, const std::vector<std::string>& candidates,
                                       size_t limit = 3);
// Foreign text (config values, log lines, server errors) made safe for a terminal: ANSI/VT escape
// sequences (CSI, OSC, other ESC forms) and C0/C1 control characters other than newline and tab are
// removed, so a hostile file cannot move the cursor, retitle the window or hide output.
std::string strip_terminal_controls(const std::string& text);
// `text` with the credentials of every URL in it replaced: "http://user:pw@host/x?token=t&n=1" becomes
// "http://***@host/x?token=***&n=1". The authority is "scheme://" up to the first '/', '?', '#', whitespace,
// quote or end, its userinfo what precedes its last '@'; the query runs from '?' to '#', whitespace, a quote,
// '<', '>' or the end, and a parameter whose name holds token, key, secret, passw, pwd, sig, auth, credential
// or session (any case) has its value replaced. Used on every URL that is printed or stored.
std::string redact_url_credentials(std::string text);
// The credentials redact_url_credentials replaces in `text` ("user:pw", each secret query value), for a caller that
// must also remove them where they appear without their URL (a server's error quoting its request line).
std::vector<std::string> url_credentials(const std::string& text);
// A calendar date written "YYYY-MM-DD" (the whole text) as yyyymmdd; nullopt for any other form or a day the
// month does not have (leap years counted).
std::optional<int32_t> parse_iso_date(const std::string& text);
// The first "YYYY-MM-DD" in free text that is a valid date and not part of a longer run of digits
// ("... issues/5993 (2026-01-19)"), with its text; nullopt when there is none.
struct DateInText {
  int32_t date = 0;
  std::string text;
};
std::optional<DateInText> find_iso_date(const std::string& text);
// `text` when it has at most `max_bytes` bytes; otherwise its first bytes up to `max_bytes`, cut back to the start of a
// UTF-8 character so the cut leaves valid UTF-8 where the text was (a JSON writer rejects a split character), then
// "... (N bytes in all)". For foreign text quoted in messages (issue 19: a 100,000-byte field echoed whole).
std::string clip_text(const std::string& text, size_t max_bytes);

}  // namespace preflight
