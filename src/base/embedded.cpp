#include "base/embedded.hpp"

namespace preflight {

std::string_view embedded_record_text(std::string_view relative_path, const EmbeddedRecord& record) {
  const std::string_view file = embedded_data(std::string(relative_path));
  if (record.length < 2 || record.offset > file.size() || record.length > file.size() - record.offset) return {};
  const std::string_view text = file.substr(record.offset, record.length);
  if (text.front() != '{' || text.back() != '}') return {};
  return text;
}

std::optional<std::string_view> embedded_record_field(std::string_view relative_path, std::string_view array_key, const EmbeddedRecord& record,
                                                      std::string_view name) {
  const auto names = embedded_record_fields(relative_path, array_key);
  for (size_t i = 0; i < names.size() && i < record.fields.size(); ++i)
    if (names[i] == name) return record.fields[i];
  return std::nullopt;
}

}  // namespace preflight
