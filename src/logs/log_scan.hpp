// Private to src/logs: the scanners engine_log.cpp reads a log's lines with. Issue 19: the few patterns read out of
// a log line are scanned by hand (std::regex's executor recursed once per repeated character: a 63 KB config line
// overflowed the stack); each scanner's comment in log_scan.cpp says the pattern it replaces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "logs/engine_log.hpp"

namespace preflight::logs::detail {

inline constexpr size_t k_max_line_chars = 64 * 1024;
inline constexpr size_t k_max_evidence_chars = 400;
inline constexpr size_t k_max_evidence_per_rule = 5;
inline constexpr int64_t k_traceback_window_lines = 200;

// What size_at reads and gives: gib, "GiB" only, in GiB (the engine's memory summaries); bytes, GiB, MiB, KiB, GB or MB,
// in bytes (torch's out-of-memory message).
enum class SizeUnit { gib, bytes };

// ASCII case folding, what std::tolower does in the "C" locale preflight runs in (it never calls setlocale), without
// the library call per byte: hard29 measured 62% of a 60 MB log's 33 s in tolower under find_ci.
constexpr unsigned char lower_ascii(unsigned char c) { return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c + ('a' - 'A')) : c; }

bool word_byte(char c);
size_t skip_spaces(std::string_view s, size_t i);
size_t word_end(std::string_view s, size_t i);
size_t digits_end(std::string_view s, size_t i);
bool quote(char c);
// `['"]KEY['"]\s*:\s*` at its first occurrence: the offset after it, or npos.
size_t after_quoted_key(std::string_view s, std::string_view key);
// Issue 19 (hard33): the byte that ends a log's lines: '\n' (a "\r\n" end loses its '\r'), or '\r' in a log with no '\n'
// at all (CR-only line ends, which read as one line with the lines run together: "vllm 0.11.0INFO ...").
char line_end_byte(const std::string& text);
// The log's lines, each cut at k_max_line_chars.
std::vector<std::string> split_lines(const std::string& text);
// Case-insensitive (ASCII) find.
size_t find_ci(std::string_view hay, std::string_view needle, size_t from = 0);
// A number starting at `pos` (optional sign, digits with thousands commas, decimals).
std::optional<double> number_at(const std::string& s, size_t pos, size_t* end_out = nullptr);
std::optional<double> number_after(const std::string& s, const std::string& key, size_t* end_out = nullptr);
// A count as a log prints it: only a finite whole number in [0, 2^53].
std::optional<int64_t> count_after(const std::string& s, const std::string& key, size_t* end_out = nullptr);
// A size at `pos` as the engines print one ("1.14 GiB", "172.00 MiB"), read as `unit` says.
std::optional<double> size_at(const std::string& s, size_t pos, SizeUnit unit);
// The number that ends just before `suffix` ("28.79 GiB already allocated" -> bytes).
std::optional<double> size_before(const std::string& s, const std::string& suffix);
// A version token after `key` (case-insensitive).
std::optional<std::string> version_after(const std::string& line, std::string_view key);
std::string unquote(std::string v);
// Top-level "key=value" (sep '=') or "'key': value" (sep ':') pairs of a config dump.
std::map<std::string, std::string> scan_pairs(const std::string& text, char sep);
std::optional<int64_t> to_int(const std::string& v);
std::optional<double> to_double(const std::string& v);

template <typename T>
void set_once(std::optional<Logged<T>>& slot, T value, int64_t line) {
  if (!slot) slot = Logged<T>{std::move(value), line};
}

}  // namespace preflight::logs::detail
