#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tessera {

/// An error for a caller to show a person: what went wrong and where (file:line, JSON path).
struct Error {
  std::string message;
};

/// "<where>: <what>", where is a file:line or a JSON path.
inline Error ErrorAt(std::string_view where, std::string_view what) {
  return Error{std::string(where) + ": " + std::string(what)};
}

/// A value or an Error. Used across module boundaries instead of exceptions
/// (C++20 has no std::expected). Cheap to move; not thread-safe to share mutably.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<Error>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// Result<void>: success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error)
      : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace tessera

/// Evaluates a Status expression and returns its error from the enclosing function.
#define TESSERA_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::tessera::Status status_ = (expr);        \
    if (!status_.ok()) return status_.error(); \
  } while (0)

/// Evaluates a Result expression and moves its value into `lhs`, or returns its error from the
/// enclosing function.
#define TESSERA_ASSIGN_OR_RETURN(lhs, expr)    \
  do {                                         \
    auto result_ = (expr);                     \
    if (!result_.ok()) return result_.error(); \
    (lhs) = std::move(*result_);               \
  } while (0)
