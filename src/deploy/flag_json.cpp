// deploy/flag_json: checks on the values inside vLLM's JSON flags (--speculative-config, --compilation-config and their
// dotted keys), as the engine's parsers read them, with the bounds preflight's own arithmetic and recursion need.
#include "deploy/flag_json.hpp"
#include "base/json_depth.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/json_util.hpp"
#include "base/json_writer.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/deployment.hpp"
#include "engine/compilation_config_keys.hpp"
#include "engine/flag_versions.hpp"
#include "estimate/fit_terms.hpp"

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
size_t json_text_depth(const std::string& text) { return json_depth_scan(text).deepest; }

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

// The JSON flags as the estimate reads them (moved from deployment.cpp, hard36: that file under 800 lines).

Expected<estimate::SpeculativeConfig> parse_speculative_config(const Given<std::string>& given) {
  const Json j = Json::parse(given.value, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorKind::invalid_argument, format("%s: expected a JSON object such as '{\"method\": \"mtp\", \"num_speculative_tokens\": 2}', found '%s'",
                                                          given.origin.c_str(), one_line(given.value, 200).c_str()));
  estimate::SpeculativeConfig spec;
  if (j.contains("model") && j["model"].is_string()) spec.model = j["model"].get<std::string>();
  if (j.contains("method") && j["method"].is_string()) {
    spec.method = j["method"].get<std::string>();
  } else if (!spec.model.empty()) {
    spec.method = engine::speculative_method_from_model(spec.model);  // vLLM SpeculativeConfig.__post_init__ infers it from the name
  }
  const auto& methods = estimate::speculative_methods();
  if (std::find(methods.begin(), methods.end(), spec.method) == methods.end()) {
    std::string list;
    for (size_t i = 0; i < methods.size(); ++i) list += (i == 0 ? "" : i + 1 == methods.size() ? " or " : ", ") + ("'" + methods[i] + "'");
    return make_error(ErrorKind::invalid_argument,
                      format("%s: pydantic_core._pydantic_core.ValidationError: 1 validation error for SpeculativeConfig\nmethod\n  Input should be %s "
                             "[type=literal_error, input_value='%s', input_type=str]",
                             given.origin.c_str(), list.c_str(), one_line(spec.method, 80).c_str()));
  }
  spec.num_speculative_tokens = 1;
  if (j.contains("num_speculative_tokens")) {
    PF_TRY(n, speculative_token_count(j["num_speculative_tokens"], given.origin));
    spec.num_speculative_tokens = n;
  }
  return spec;
}

namespace {
// An estimate check's error as the flag's: "--compilation-config: message".
Error with_origin(const Error& e, const char* origin) { return make_error(e.kind, format("%s: %s", origin, e.message.c_str())); }

// Issue 19 (attack36): a JSON integer above 2^63 - 1 (nlohmann keeps it unsigned) read with get<int64_t>() wrapped:
// cudagraph_capture_sizes [18446744073709551615] was refused as "-1 is not a positive token count".
bool past_int64(const Json& v) { return v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX); }
Error past_int64_error(const char* origin, const char* key, const Json& v) {
  return make_error(ErrorKind::invalid_argument,
                    format("%s: %s: %s is above 2^63 - 1, more tokens than any step can hold (no graph of that size can be captured)", origin, key, v.dump().c_str()));
}
}  // namespace

Expected<estimate::GraphCaptureConfig> parse_compilation_config(const Given<std::string>& given) {
  const char* origin = given.origin.c_str();
  // Issue 19 (attack37): the whole flag is read as deep as vLLM reads it (201 levels: pydantic's JSON parser), past that
  // with vLLM's own refusal, where hard33 parsed any depth and named the deepest value's type ("Input should be a valid
  // integer ... found an array" for 60,000 levels, which vLLM never reaches). The dotted forms keep the 64 levels
  // merge_dotted_json reads.
  if (const std::string why = engine::compilation_config_depth_refusal(given.value); !why.empty())
    return make_error(ErrorKind::invalid_argument,
                      format("%s: JSON nested past the %zu levels vLLM reads (from 0.9.1 the flag is read with pydantic's TypeAdapter(CompilationConfig).validate_json; argparse "
                             "prints: argument --compilation-config: %s)",
                             origin, engine::k_compilation_config_json_depth, why.c_str()));
  const Json j = Json::parse(given.value, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorKind::invalid_argument,
                      format("%s: expected a JSON object such as '{\"cudagraph_capture_sizes\": [1, 2, 4, 8], \"cudagraph_mode\": \"PIECEWISE\"}', found '%s' "
                             "(vLLM parses the flag with json.loads)", origin, one_line(given.value, 200).c_str()));
  estimate::GraphCaptureConfig g;
  // pydantic's messages for CompilationConfig's typed fields (list[int] | None, int | None).
  if (const auto it = j.find("cudagraph_capture_sizes"); it != j.end() && !it->is_null()) {
    if (!it->is_array())
      return make_error(ErrorKind::invalid_argument, format("%s: cudagraph_capture_sizes: Input should be a valid list (vLLM CompilationConfig), found %s", origin, found_value(*it).c_str()));
    if (it->empty())
      return make_error(ErrorKind::invalid_argument,
                        format("%s: AssertionError: cudagraph_capture_sizes should contain at least one element when using cuda graph. (vLLM _set_cudagraph_sizes)", origin));
    for (const auto& v : *it) {
      if (!v.is_number_integer())
        return make_error(ErrorKind::invalid_argument,
                          format("%s: cudagraph_capture_sizes: Input should be a valid integer (vLLM CompilationConfig), found %s", origin, found_value(v).c_str()));
      if (past_int64(v)) return past_int64_error(origin, "cudagraph_capture_sizes", v);
      if (auto ok = estimate::terms::check_capture_size_values({v.get<int64_t>()}); !ok) return with_origin(ok.error(), origin);
      g.capture_sizes.push_back(v.get<int64_t>());
    }
  }
  if (const auto it = j.find("max_cudagraph_capture_size"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer())
      return make_error(ErrorKind::invalid_argument,
                        format("%s: max_cudagraph_capture_size: Input should be a valid integer (vLLM CompilationConfig), found %s", origin, found_value(*it).c_str()));
    if (past_int64(*it)) return past_int64_error(origin, "max_cudagraph_capture_size", *it);
    if (auto ok = estimate::terms::check_max_capture_size(it->get<int64_t>(), std::nullopt); !ok) return with_origin(ok.error(), origin);
    g.max_capture_size = it->get<int64_t>();
  }
  if (const auto it = j.find("cudagraph_mode"); it != j.end() && !it->is_null()) {
    const std::string name = it->is_string() ? it->get<std::string>() : it->dump();
    const auto mode = it->is_string() ? estimate::parse_cudagraph_mode(name) : std::nullopt;
    if (!mode) {
      // vllm/config/compilation.py validate_cudagraph_mode_before: CUDAGraphMode[value.upper()].
      const std::string upper = to_upper(name);
      return make_error(ErrorKind::invalid_argument,
                        format("%s: cudagraph_mode: KeyError: '%s' (vLLM CompilationConfig.validate_cudagraph_mode_before reads CUDAGraphMode[value.upper()]; "
                               "expected NONE, PIECEWISE, FULL, FULL_DECODE_ONLY or FULL_AND_PIECEWISE)", origin, one_line(upper, 60).c_str()));
    }
    g.mode = mode;
  }
  // vllm/config/vllm.py _set_cudagraph_sizes: both given, the largest size must be the maximum (checked again against
  // the sizes max_num_batched_tokens keeps, in the estimate).
  if (g.max_capture_size && !g.capture_sizes.empty()) {
    const int64_t largest = *std::max_element(g.capture_sizes.begin(), g.capture_sizes.end());
    if (auto ok = estimate::terms::check_max_capture_size(*g.max_capture_size, largest); !ok) return with_origin(ok.error(), origin);
  }
  return g;
}

Status merge_dotted_json(std::optional<Given<std::string>>& into, const std::string& key, const std::string& value, const std::string& origin) {
  if (const size_t depth = std::max(json_text_depth(value), into ? json_text_depth(into->value) : 0); depth > k_max_flag_json_depth)
    return make_error(ErrorKind::invalid_argument, format("%s.%s: JSON nested %zu levels deep, more than the %zu read", origin.c_str(), one_line(key, 60).c_str(), depth,
                                                          k_max_flag_json_depth));
  Json root = Json::object();
  if (into) {
    root = Json::parse(into->value, nullptr, false);
    if (root.is_discarded() || !root.is_object())
      return make_error(ErrorKind::invalid_argument, format("%s: %s.%s: the flag's JSON so far is not an object ('%s')", origin.c_str(), origin.c_str(), one_line(key, 60).c_str(),
                                                            one_line(into->value, 200).c_str()));
  }
  // FlexibleArgumentParser.parse_args: json.loads(value), else the text itself; nested keys become nested objects.
  Json parsed = Json::parse(value, nullptr, false);
  if (parsed.is_discarded()) parsed = value;
  Json* node = &root;
  const auto keys = split(key, '.');
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    if (!(*node)[keys[i]].is_object()) (*node)[keys[i]] = Json::object();
    node = &(*node)[keys[i]];
  }
  (*node)[keys.back()] = parsed;
  // A value that is not JSON is kept as text, which need not be UTF-8 (issue 19: root.dump() threw type_error 316 on
  // -cc.cudagraph_mode=<GBK bytes> and the process aborted); its bad bytes become U+FFFD, which no field accepts.
  into = Given<std::string>{dump_json(root), into ? into->origin : origin};
  return Ok{};
}

}  // namespace preflight::deploy
