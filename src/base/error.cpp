#include "base/error.hpp"

namespace preflight {

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_argument: return "invalid argument";
    case ErrorKind::not_found: return "not found";
    case ErrorKind::corrupt: return "corrupt";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::io: return "io";
    case ErrorKind::network: return "network";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::environment: return "environment";
  }
  return "unknown";
}

std::string Error::describe() const {
  if (context.empty() || message.rfind(context, 0) == 0) return message;
  return context + ": " + message;
}

}  // namespace preflight
