// report/yaml: JSON records written as block-style YAML (Kubernetes manifests). Keys and strings
// that could read as anything else are double-quoted with JSON escapes (valid YAML); a string of
// several lines is a literal block (| or |-, exact to the last newline) so scripts stay readable. Keys come in the record's order (sorted, as Json keeps them).
#pragma once

#include <string>
#include <vector>

#include "base/json_util.hpp"

namespace preflight::report {

// One YAML document per record, each opened by "---", after the header lines written as comments.
std::string render_yaml_documents(const std::vector<Json>& documents, const std::vector<std::string>& header = {});

}  // namespace preflight::report
