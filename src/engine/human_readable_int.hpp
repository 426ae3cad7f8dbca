// engine/human_readable_int: vLLM's human_readable_int (vllm/engine/arg_utils.py, later vllm/utils/argparse_utils.py),
// the argparse type of --max-model-len from vLLM 0.8.4 (PR #16181, merged 2025-04-07, after v0.8.3 of 2025-04-06) and of
// --max-num-batched-tokens from 0.9.1 (PR #18968, 2025-05-30, after v0.9.0). A lower-case suffix is decimal (k = 1,000,
// m = 1,000,000, g = 1,000,000,000; decimals allowed: 25.6k = 25,600), an upper-case one binary (K = 1,024, M = 1,048,576,
// G = 1,073,741,824; integers only). An older named version parses the flag with type=int: argparse refuses "32k" with
// "vllm serve: error: argument --max-model-len: invalid int value: '32k'" (the text PR #18968 quotes for its flag), exit 2.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

// The value vLLM gives `text` when it carries a k/m/g/K/M/G suffix; nullopt when it has none (a plain integer is the
// caller's). invalid_argument with vLLM's words for a decimal with a binary suffix ("Decimals are not allowed with binary
// suffixes like K. Did you mean to use 1.5k instead?") and for a value past int64.
Expected<std::optional<int64_t>> parse_human_readable_int(const std::string& flag, const std::string& text);

// The first vLLM (and vLLM-Ascend, which runs the vLLM of its version) release whose parser takes suffixes for `flag`
// ("--max-model-len", "--max-num-batched-tokens"); nullopt for another flag.
std::optional<Version> human_readable_from(const std::string& flag);

// argparse's refusal of `text` for `flag` on engine `engine_name` at `version`, or "" when that version takes it (or the
// engine is not vLLM's).
std::string human_readable_refusal(const std::string& engine_name, const Version& version, const std::string& flag, const std::string& text);

}  // namespace preflight::engine
