// validate/validation_line: one case line run as run_validation runs each line of a file, against catalogues loaded
// once (issue 19, attack37: the fuzz target tests/fuzz/fuzz_validate_case, which run_validation's per-call loading of
// every catalogue held to a few inputs a second). Kept out of validation.hpp, which the report and cli include.
#pragma once

#include <memory>
#include <string>

#include "base/error.hpp"
#include "validate/validation.hpp"

namespace preflight::validate {

struct ValidationCatalogs;  // the device, engine and speed catalogues (validation.cpp)
Expected<std::shared_ptr<const ValidationCatalogs>> load_validation_catalogs();

// `line` (line `line_no` of `file`) as run_validation reads it: the case-size bound, then the case, its row added to
// `report` (report.cases counted); an error is the case's bad input, as run_validation returns it.
Status run_validation_line(const std::string& line, const std::string& file, int line_no, const ValidationCatalogs& catalogs, const ValidateOptions& options,
                           ValidationReport& report);

}  // namespace preflight::validate
