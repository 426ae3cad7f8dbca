#include "base/embedded.hpp"

namespace preflight {

std::string_view embedded_record_text(std::string_view relative_path, const EmbeddedRecord& record) {
  const std::string_view file = embedded_data(std::string(relative_path));
  if (record.length < 2 || record.offset > file.size() || record.length > file.size() - record.offset) return {};
  const std::string_view text = file.substr(record.offset, record.length);
  if (text.front() != '{' || text.back() != '}') return {};
  return text;
}

}  // namespace preflight
