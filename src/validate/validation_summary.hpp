// Private to src/validate: the report part of a validate run, apart from running the cases (validation.cpp): the
// per-field error statistics and verdict score over all rows, and the report's JSON (validation_to_json, declared in
// validate/validation.hpp).
#pragma once

#include "validate/validation.hpp"

namespace preflight::validate {

// Per-field error statistics (median, p90, max, band coverage) and the verdict score over all rows of `report`, into
// its fields and verdict counts.
void summarise_validation(ValidationReport& report);

}  // namespace preflight::validate
