#include "base/units.hpp"

#include <ctime>

#include <cstdarg>
#include <cstdio>
#include <vector>

namespace preflight {

std::string format(const char* fmt, ...) {
  // One pass into a stack buffer; a second, sized pass only for longer text (issue 19: plan formats
  // tens of thousands of reasons and start commands).
  char local[1024];
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  const int needed = std::vsnprintf(local, sizeof local, fmt, copy);
  va_end(copy);
  std::string out;
  if (needed > 0 && static_cast<size_t>(needed) < sizeof local) {
    out.assign(local, static_cast<size_t>(needed));
  } else if (needed > 0) {
    std::vector<char> buffer(static_cast<size_t>(needed) + 1);
    std::vsnprintf(buffer.data(), buffer.size(), fmt, args);
    out.assign(buffer.data(), static_cast<size_t>(needed));
  }
  va_end(args);
  return out;
}

std::string with_thousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count > 0 && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  if (value < 0) out.insert(out.begin(), '-');
  return out;
}

std::string format_bytes(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b < k_mib) return with_thousands(static_cast<int64_t>(bytes)) + " bytes";
  if (b < k_gib) return format("%.1f MiB", b / k_mib);
  return format("%.1f GiB", b / k_gib);
}

std::string fixed(double value, int precision) { return format("%.*f", precision, value); }

std::string utc_now_rfc3339() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace preflight
