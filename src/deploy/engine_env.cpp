// deploy/engine_env: the engine environment variables the estimate follows (issue 15, acc30). The 0/1 switches are read
// as the engines read them: vllm/envs.py `bool(int(os.getenv("VLLM_ROCM_MOE_PADDING", "1")))` and
// `bool(int(os.environ["VLLM_USE_FLASHINFER_SAMPLER"]))`, vllm_ascend/envs.py `bool(int(os.getenv(
// "VLLM_ASCEND_ENABLE_FLASHCOMM1", "0")))` and `bool(int(os.getenv("VLLM_ASCEND_ENABLE_MLAPO", "1")))` (read at
// vllm-ascend v0.18.0).
#include "deploy/engine_env.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::deploy {

namespace {

// Python's int(text) for base 10: surrounding whitespace, one sign, digits with single '_' between them. Whether the
// value is 0, or nullopt where int() raises.
std::optional<bool> python_int_is_zero(const std::string& text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  if (b < e && (text[b] == '+' || text[b] == '-')) ++b;
  if (b == e) return std::nullopt;
  bool zero = true, digit_before = false;
  for (size_t i = b; i < e; ++i) {
    const char c = text[i];
    if (c == '_') {
      if (!digit_before || i + 1 == e) return std::nullopt;
      digit_before = false;
      continue;
    }
    if (c < '0' || c > '9') return std::nullopt;
    digit_before = true;
    zero = zero && c == '0';
  }
  return zero;
}

}  // namespace

const std::vector<std::string>& engine_env_names() {
  static const std::vector<std::string> k_names = {"VLLM_ROCM_MOE_PADDING", "VLLM_USE_FLASHINFER_SAMPLER", "VLLM_ASCEND_ENABLE_FLASHCOMM1",
                                                   "VLLM_ASCEND_ENABLE_MLAPO", "HCCL_BUFFSIZE"};
  return k_names;
}

Expected<bool> parse_env_switch(const std::string& text, const std::string& origin) {
  const auto zero = python_int_is_zero(text);
  if (!zero)
    return make_error(ErrorKind::invalid_argument,
                      format("%s: the engine reads it as bool(int(value)) and fails: ValueError: invalid literal for int() with base 10: '%s'", origin.c_str(),
                             one_line(text, 60).c_str()),
                      origin);
  return !*zero;
}

Expected<int64_t> parse_hccl_buffsize_mb(const std::string& text, const std::string& origin) {
  // Issue 19 (hard32): strtod took "0x10" as 16, "1e3" as 1000, " 64" as 64 and "inf"; CANN documents an integer of MB.
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  const size_t lead = digits ? std::min(text.find_first_not_of('0'), text.size()) : 0;
  const int64_t mb = digits && text.size() - lead <= 13 ? std::strtoll(text.c_str() + lead, nullptr, 10) : INT64_MAX;
  if (!digits || mb > k_max_hccl_buffsize_mb)
    return make_error(ErrorKind::invalid_argument,
                      format("%s: HCCL_BUFFSIZE must be an integer greater than or equal to 1 (MB, in decimal digits as CANN reads it; at most %lld), found '%s'",
                             origin.c_str(), static_cast<long long>(k_max_hccl_buffsize_mb), one_line(text, 60).c_str()),
                      origin);
  return mb;
}

Status apply_engine_env(Flags& flags, const std::string& name, const std::string& value, const std::string& origin) {
  const std::pair<const char*, std::optional<Given<bool>>*> switches[] = {
      {"VLLM_ROCM_MOE_PADDING", &flags.rocm_moe_padding},
      {"VLLM_USE_FLASHINFER_SAMPLER", &flags.flashinfer_sampler},
      {"VLLM_ASCEND_ENABLE_FLASHCOMM1", &flags.flashcomm1},
      {"VLLM_ASCEND_ENABLE_MLAPO", &flags.mlapo},
  };
  for (const auto& [env, into] : switches) {
    if (name != env) continue;
    PF_TRY(on, parse_env_switch(value, origin));
    *into = Given<bool>{on, origin};
    return Ok{};
  }
  if (name == "HCCL_BUFFSIZE") {
    PF_TRY(mb, parse_hccl_buffsize_mb(value, origin));
    flags.hccl_buffsize_mb = Given<double>{static_cast<double>(mb), origin};
    return Ok{};
  }
  std::string known;
  for (const auto& n : engine_env_names()) known += (known.empty() ? "" : ", ") + n;
  return make_error(ErrorKind::invalid_argument,
                    format("%s: '%s' is not an environment variable the estimate follows (it reads %s)", origin.c_str(), one_line(name, 60).c_str(), known.c_str()),
                    origin);
}

}  // namespace preflight::deploy
