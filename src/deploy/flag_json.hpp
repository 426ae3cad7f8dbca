// deploy/flag_json: checks on the values inside vLLM's JSON flags (flag_json.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.hpp"
#include "base/json_util.hpp"

namespace preflight::deploy {

// Issue 19 (hard33): the most num_speculative_tokens may be: vLLM's attention metadata holds each request's query length
// in an int32 tensor (query_start_loc), and a decode step's query length is 1 + num_speculative_tokens.
inline constexpr int64_t k_max_speculative_tokens = 2147483646;
// SpeculativeConfig.num_speculative_tokens as pydantic's lax mode reads an int field (2.0 and "2" are 2; 2.5, a list,
// 0 or less refused), at most k_max_speculative_tokens. invalid_argument naming `origin`.
Expected<int64_t> speculative_token_count(const Json& n, const std::string& origin);
// A JSON value as an error message quotes it: a scalar as written, cut to 80 bytes; a list or object by its type.
std::string found_value(const Json& v);
// The deepest nesting of a JSON text's lists and objects, strings skipped (0 for a scalar).
size_t json_text_depth(const std::string& text);
// The deepest a dotted JSON flag's value may nest (parse_json's limit for files).
inline constexpr size_t k_max_flag_json_depth = 64;
// Issue 19 (hard34): the longest JSON flag text read. One argument of a `vllm serve` command is at most MAX_ARG_STRLEN
// bytes with its terminating NUL (Linux: 32 pages, 131,072 bytes; execve fails with E2BIG past it), so a longer value
// is no start line the engine can be given, and plan would copy it into every row's start command.
inline constexpr size_t k_max_flag_json_bytes = 131071;
// A JSON object flag's text (--additional-config, --default-chat-template-kwargs, --limit-mm-per-prompt) parsed as vLLM's
// json.loads parses it, within the bounds above: longer than k_max_flag_json_bytes or nested deeper than
// k_max_flag_json_depth is invalid_argument naming `origin`. Text that is not JSON comes back as a discarded Json, for
// the caller's own message on what the flag expects.
Expected<Json> read_flag_json(const std::string& text, const std::string& origin);

}  // namespace preflight::deploy
