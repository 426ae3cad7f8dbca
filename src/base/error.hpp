// base/error: the one error type of preflight, and Expected<T>, the value-or-error every fallible
// function returns. An error is a kind, a message and a context (file path, key, byte offset, URL).
// Only the cli module turns an error into text and an exit code.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace preflight {

// environment: the machine lacks what the command needs (a runtime library, a device, a writable
// directory), as opposed to a bad input; the cli exits 3 for it, as for network and timeout.
enum class ErrorKind { invalid_argument, not_found, corrupt, unsupported, io, network, timeout, environment };

const char* error_kind_name(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::invalid_argument;
  std::string message;  // lowercase, no trailing period: "where: what, expected vs found"
  std::string context;  // file path, key or URL the message is about (may be empty)

  // "context: message" when a context is set and the message does not already start with it.
  std::string describe() const;
};

inline Error make_error(ErrorKind kind, std::string message, std::string context = {}) {
  return Error{kind, std::move(message), std::move(context)};
}

template <typename T>
class Expected {
 public:
  // The value is copied or moved once, straight into place (issue 19: a by-value parameter moved it twice, once into
  // the parameter and once into the state, on every `return value;`).
  Expected(const T& value) : m_state(std::in_place_index<0>, value) {}        // NOLINT(google-explicit-constructor)
  Expected(T&& value) : m_state(std::in_place_index<0>, std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Expected(Error error) : m_state(std::in_place_index<1>, std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { assert(has_value()); return std::get<0>(m_state); }
  const T& value() const& { assert(has_value()); return std::get<0>(m_state); }
  T&& value() && { assert(has_value()); return std::get<0>(std::move(m_state)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!has_value()); return std::get<1>(m_state); }

 private:
  std::variant<T, Error> m_state;
};

// Expected<void> stand-in.
struct Ok {};
using Status = Expected<Ok>;

}  // namespace preflight

// Propagates an error from an Expected expression, else binds its value.
#define PF_TRY(var, expr)                               \
  auto var##_result_ = (expr);                          \
  if (!var##_result_) return var##_result_.error();     \
  auto var = std::move(var##_result_).value()
