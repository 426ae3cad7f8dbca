// Private to src/validate: how a case's recorded fields become the deployment's flags (validation.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "deploy/deployment.hpp"

namespace preflight::validate {

// A case's own text as an error quotes it: at most 120 bytes, then how long it was (issue 19: a 100,000-byte
// quantization field was echoed whole into the report).
inline std::string quoted_case_text(const std::string& text) { return one_line(text, 120); }

// The case's recorded inputs, checked whether or not the model resolves: a bad value is an error
// naming the file, line and field (exit 2), never silently replaced.
Expected<deploy::Flags> read_case_flags(const JsonObject& c, const std::string& where, std::optional<int64_t> concurrency_len);

}  // namespace preflight::validate
