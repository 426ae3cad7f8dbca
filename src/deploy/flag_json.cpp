// deploy/flag_json: checks on the values inside vLLM's JSON flags (--speculative-config, --compilation-config and their
// dotted keys), as the engine's parsers read them, with the bounds preflight's own arithmetic and recursion need.
#include "deploy/flag_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/json_util.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::deploy {

// Issue 19 (hard33): num_speculative_tokens as pydantic reads SpeculativeConfig's int field (lax mode: 2.0 and "2" are 2,
// 2.5 is refused), where a float or 2^64 - 1 was refused as "not greater than 0" and 2^63 - 1 was taken, so that 1 + n (the
// decode query length) overflowed (k_max_speculative_tokens says the bound).
Expected<int64_t> speculative_token_count(const Json& n, const std::string& origin) {
  const std::string found = clip_text(n.dump(), 40);
  if (n.is_number_float() && std::isfinite(n.get<double>()) && n.get<double>() != std::floor(n.get<double>()))
    return make_error(ErrorKind::invalid_argument, format("%s: num_speculative_tokens: Input should be a valid integer, got a number with a fractional part "
                                                          "[type=int_from_float, input_value=%s] (vLLM SpeculativeConfig)", origin.c_str(), found.c_str()));
  // Lax mode reads a string of decimal digits as its integer ("3" is 3).
  const bool digits = n.is_string() && !n.get_ref<const std::string&>().empty() && n.get_ref<const std::string&>().size() <= 30 &&
                      std::all_of(n.get_ref<const std::string&>().begin(), n.get_ref<const std::string&>().end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!n.is_number() && !digits)
    return make_error(ErrorKind::invalid_argument, format("%s: num_speculative_tokens: Input should be a valid integer, found %s (vLLM SpeculativeConfig)",
                                                          origin.c_str(), found.c_str()));
  const double value = digits ? std::strtod(n.get_ref<const std::string&>().c_str(), nullptr) : n.get<double>();  // exact for every integer up to the bound
  if (value < 1)
    return make_error(ErrorKind::invalid_argument, format("%s: num_speculative_tokens: Input should be greater than 0 (vLLM SpeculativeConfig)", origin.c_str()));
  if (!(value <= static_cast<double>(k_max_speculative_tokens)))
    return make_error(ErrorKind::invalid_argument,
                      format("%s: num_speculative_tokens: %s is above %lld, the most for which a decode step's query length (1 + num_speculative_tokens) "
                             "fits the int32 query_start_loc of vLLM's attention metadata", origin.c_str(), found.c_str(), static_cast<long long>(k_max_speculative_tokens)));
  return static_cast<int64_t>(value);
}

// Issue 19 (hard33): a value quoted in a message: a scalar as written (cut to 80 bytes), a list or object by its type,
// since nlohmann's dump recurses once per level and a flag of 128 KB nests 60,000 deep.
std::string found_value(const Json& v) { return v.is_structured() ? std::string("an ") + json_type_name(v) : clip_text(v.dump(), 80); }

// Issue 19 (hard33): the deepest nesting of a JSON text's lists and objects (strings skipped). merge_dotted_json
// (deployment.cpp) copies a dotted value and writes it out, both of which recurse once per level:
// -cc.cudagraph_capture_sizes=[[[...]]] 60,000 deep overflowed the stack (ASan); past 64 levels it is refused.
size_t json_text_depth(const std::string& text) {
  size_t depth = 0, most = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      most = std::max(most, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return most;
}

// Issue 19 (hard34): --additional-config and --default-chat-template-kwargs were parsed whole whatever their size and
// depth (cli/serve_line_flags); they are read here, the size checked before the text is scanned. (--speculative-config
// and --compilation-config keep hard33's reading: any depth parsed, a nested value named by its type, a dotted key's
// value bounded at 64 levels where it is copied and written out.)
Expected<Json> read_flag_json(const std::string& text, const std::string& origin) {
  if (text.size() > k_max_flag_json_bytes)
    return make_error(ErrorKind::invalid_argument,
                      format("%s: JSON of %zu bytes, more than the %zu read (the longest argument a start command can carry: Linux MAX_ARG_STRLEN, "
                             "131072 bytes with its NUL)", origin.c_str(), text.size(), k_max_flag_json_bytes));
  if (const size_t depth = json_text_depth(text); depth > k_max_flag_json_depth)
    return make_error(ErrorKind::invalid_argument, format("%s: JSON nested %zu levels deep, more than the %zu read", origin.c_str(), depth, k_max_flag_json_depth));
  return Json::parse(text, nullptr, false);
}

}  // namespace preflight::deploy
