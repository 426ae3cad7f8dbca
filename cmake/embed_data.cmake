# Generates a C++ source holding every data/ file named in DATA_FILES as a string literal.
# Invoked at build time: cmake -DDATA_DIR=... -DOUTPUT=... -DDATA_FILES="a;b" -P embed_data.cmake
set(content "// Generated from data/ by cmake/embed_data.cmake. Do not edit.\n#include \"base/embedded.hpp\"\n#include <map>\n\nnamespace preflight {\nnamespace {\nconst std::map<std::string, std::string_view>& table() {\n  static const std::map<std::string, std::string_view> k_files = {\n")
foreach(rel IN LISTS DATA_FILES)
  file(READ "${DATA_DIR}/${rel}" body)
  string(FIND "${body}" ")PFDATA\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${rel} contains the raw-string delimiter")
  endif()
  string(APPEND content "    {\"${rel}\", R\"PFDATA(${body})PFDATA\"},\n")
endforeach()
string(APPEND content "  };\n  return k_files;\n}\n}  // namespace\n\nstd::string_view embedded_data(const std::string& relative_path) {\n  auto it = table().find(relative_path);\n  return it == table().end() ? std::string_view{} : it->second;\n}\n\nstd::vector<std::string> embedded_names() {\n  std::vector<std::string> out;\n  for (const auto& kv : table()) out.push_back(kv.first);\n  return out;\n}\n\n}  // namespace preflight\n")
file(WRITE "${OUTPUT}.tmp" "${content}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
