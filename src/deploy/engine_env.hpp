// deploy/engine_env: the engine's environment variables the estimate follows, read as the engine reads them (issue 15,
// acc30). fit and plan take them as --env NAME=VALUE; a validate case's "env" object gives VLLM_ROCM_MOE_PADDING the
// same way. Each sets the field of Flags its typed flag sets, with the origin it came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "deploy/deployment.hpp"

namespace preflight::deploy {

// The names apply_engine_env reads, in the order --help lists them.
const std::vector<std::string>& engine_env_names();

// A Python `bool(int(text))` as vllm/envs.py and vllm_ascend/envs.py read their 0/1 switches: int() takes surrounding
// whitespace, one sign and decimal digits with single underscores between them. invalid_argument for anything else, with
// the ValueError the engine raises on it ("invalid literal for int() with base 10: 'x'") after `origin`.
Expected<bool> parse_env_switch(const std::string& text, const std::string& origin);

// HCCL_BUFFSIZE as CANN reads it: "an integer greater than or equal to 1", in MB (CANN environment variable reference,
// HCCL_BUFFSIZE, https://www.hiascend.com/document/detail/en/canncommercial/800/apiref/envvar/envref_07_0080.html): decimal
// digits only, no sign, point, exponent, hex prefix or space, and at most k_max_hccl_buffsize_mb (2^43 - 1 MB: its bytes
// stay below 2^63). invalid_argument naming `origin`, the text cut to 60 bytes. 0 is returned as read: check_flags refuses
// it with the same words.
inline constexpr int64_t k_max_hccl_buffsize_mb = (int64_t{1} << 43) - 1;
Expected<int64_t> parse_hccl_buffsize_mb(const std::string& text, const std::string& origin);

// Sets the field of `flags` that `name` drives, from `value`, with origin `origin`:
//   VLLM_ROCM_MOE_PADDING (vllm/envs.py, default "1")      -> rocm_moe_padding
//   VLLM_USE_FLASHINFER_SAMPLER (vllm/envs.py)             -> flashinfer_sampler
//   VLLM_ASCEND_ENABLE_FLASHCOMM1, VLLM_ASCEND_ENABLE_MLAPO -> flashcomm1, mlapo
//   HCCL_BUFFSIZE (CANN, MB; parse_hccl_buffsize_mb)       -> hccl_buffsize_mb (check_flags checks it)
// invalid_argument naming `origin` for another name (listing these) or a value the engine cannot read.
Status apply_engine_env(Flags& flags, const std::string& name, const std::string& value, const std::string& origin);

}  // namespace preflight::deploy
