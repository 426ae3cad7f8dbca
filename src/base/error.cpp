#include "base/error.hpp"

#include "base/quote.hpp"

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
  // Issue 19 (hard34): the context is often a value as given (a model or engine name, a path): kept on one line.
  return one_line(context, 1024) + ": " + message;
}

}  // namespace preflight
