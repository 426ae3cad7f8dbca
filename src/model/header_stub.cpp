#include "model/header_stub.hpp"

#include <cstring>

#include "base/file.hpp"
#include "base/units.hpp"

namespace preflight::model {

namespace {
constexpr char k_magic[8] = {'P', 'F', 'S', 'T', 'U', 'B', '0', '1'};
constexpr size_t k_trailer_bytes = 16;
}  // namespace

std::vector<uint8_t> serialize_header_stub(const HeaderStub& stub) {
  std::vector<uint8_t> out(stub.prefix);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(stub.file_size_bytes >> (8 * i)));
  out.insert(out.end(), k_magic, k_magic + 8);
  return out;
}

Expected<HeaderStub> parse_header_stub(const std::vector<uint8_t>& bytes, const std::string& origin) {
  if (bytes.size() < k_trailer_bytes || std::memcmp(bytes.data() + bytes.size() - 8, k_magic, 8) != 0) {
    return make_error(ErrorKind::corrupt, format("%s: not a header stub (no PFSTUB01 trailer)", origin.c_str()), origin);
  }
  HeaderStub stub;
  const size_t prefix_bytes = bytes.size() - k_trailer_bytes;
  for (int i = 7; i >= 0; --i) stub.file_size_bytes = (stub.file_size_bytes << 8) | bytes[prefix_bytes + static_cast<size_t>(i)];
  if (prefix_bytes > stub.file_size_bytes) {
    return make_error(ErrorKind::corrupt, format("%s: stub holds %zu bytes of a file declared as %llu bytes", origin.c_str(), prefix_bytes,
                                                 static_cast<unsigned long long>(stub.file_size_bytes)),
                      origin);
  }
  stub.prefix.assign(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(prefix_bytes));
  return stub;
}

Expected<HeaderStub> load_header_stub(const std::string& path) {
  PF_TRY(reader, FileReader::open(path));
  if (reader.size_bytes() > k_max_header_stub_bytes + k_trailer_bytes) {
    return make_error(ErrorKind::corrupt, format("%s: header stub of %llu bytes is above the 256 MiB limit", base_name(path).c_str(),
                                                 static_cast<unsigned long long>(reader.size_bytes())),
                      path);
  }
  PF_TRY(bytes, reader.read_at(0, reader.size_bytes()));
  return parse_header_stub(bytes, base_name(path));
}

}  // namespace preflight::model
