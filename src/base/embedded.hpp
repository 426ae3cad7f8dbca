// base/embedded: the data/ files compiled into the binary (catalogues), by path relative to data/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace preflight {

// Contents of data/<relative_path>, or an empty view when no such file was embedded.
std::string_view embedded_data(const std::string& relative_path);
std::vector<std::string> embedded_names();

}  // namespace preflight
