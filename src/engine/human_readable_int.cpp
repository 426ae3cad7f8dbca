#include "engine/human_readable_int.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "base/quote.hpp"
#include "base/text.hpp"

namespace preflight::engine {

Expected<std::optional<int64_t>> parse_human_readable_int(const std::string& flag, const std::string& raw) {
  // Python's str.strip(), then re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgG])").
  size_t b = 0, e = raw.size();
  while (b < e && std::isspace(static_cast<unsigned char>(raw[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(raw[e - 1]))) --e;
  const std::string text = raw.substr(b, e - b);
  if (text.size() < 2) return std::optional<int64_t>{};
  const char suffix = text.back();
  const std::string number = text.substr(0, text.size() - 1);
  size_t i = 0, int_digits = 0, frac_digits = 0;
  while (i < number.size() && number[i] >= '0' && number[i] <= '9') ++i, ++int_digits;
  bool point = false;
  if (i < number.size() && number[i] == '.') {
    point = true;
    ++i;
    while (i < number.size() && number[i] >= '0' && number[i] <= '9') ++i, ++frac_digits;
  }
  const bool matches = int_digits > 0 && i == number.size() && (!point || frac_digits > 0);
  double decimal = 0;
  int64_t binary = 0;
  switch (suffix) {
    case 'k': decimal = 1e3; break;
    case 'm': decimal = 1e6; break;
    case 'g': decimal = 1e9; break;
    case 'K': binary = int64_t{1} << 10; break;
    case 'M': binary = int64_t{1} << 20; break;
    case 'G': binary = int64_t{1} << 30; break;
    default: return std::optional<int64_t>{};
  }
  if (!matches) return std::optional<int64_t>{};
  // Issue 19 (hard32): the text cut where it is quoted (100 KB of digits were echoed to the message limit).
  const auto too_large = [&] { return make_error(ErrorKind::invalid_argument, flag + ": '" + one_line(text, 60) + "' is past the largest integer preflight takes", flag); };
  if (decimal > 0) {  // int(float(number) * mult)
    const double v = std::strtod(number.c_str(), nullptr) * decimal;
    if (!(v < 9.2e18)) return too_large();
    return std::optional<int64_t>{static_cast<int64_t>(std::trunc(v))};
  }
  if (point)
    return make_error(ErrorKind::invalid_argument,
                      "vllm serve: error: argument " + flag + ": Decimals are not allowed with binary suffixes like " + std::string(1, suffix) +
                          ". Did you mean to use " + one_line(number, 60) + std::string(1, static_cast<char>(suffix - 'A' + 'a')) + " instead?");
  // Leading zeros carry no size (Python's int("0000000000001") is 1): count the digits after them.
  const size_t significant_from = std::min(number.find_first_not_of('0'), number.size());
  if (number.size() - significant_from > 12) return too_large();
  const int64_t n = significant_from == number.size() ? 0 : std::stoll(number.substr(significant_from));
  if (n > std::numeric_limits<int64_t>::max() / binary) return too_large();
  return std::optional<int64_t>{n * binary};
}

std::optional<Version> human_readable_from(const std::string& flag) {
  if (flag == "--max-model-len") return parse_version("0.8.4");           // vllm-project/vllm#16181 (2025-04-07), first in v0.8.4
  if (flag == "--max-num-batched-tokens") return parse_version("0.9.1");  // vllm-project/vllm#18968 (2025-05-30), first in v0.9.1
  return std::nullopt;
}

std::string human_readable_refusal(const std::string& engine_name, const Version& version, const std::string& flag, const std::string& text) {
  if (engine_name != "vllm" && engine_name != "vllm-ascend") return "";
  const auto from = human_readable_from(flag);
  if (!from || *from <= version) return "";
  return "vllm serve: error: argument " + flag + ": invalid int value: '" + text + "' (" + engine_name + " " + version.text() + " parses " + flag +
         " as a plain integer; k/m/g/K/M/G suffixes from " + from->text() + ")";
}

}  // namespace preflight::engine
