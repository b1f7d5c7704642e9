// Errors as values: core functions return Expected<T>, never throw across the wasm boundary.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace megamem {

// What went wrong, naming the offending input field (a Megatron flag name where one exists,
// e.g. "tensor_model_parallel_size") and the rule it breaks.
struct Error {
  std::string field;
  std::string message;
};

// A value or an Error (std::expected is C++23; Emscripten's libc++ lacks it).
template <class T>
class Expected {
 public:
  Expected(T value) : storage_(std::move(value)) {}      // NOLINT: implicit by design
  Expected(Error error) : storage_(std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const { return std::holds_alternative<T>(storage_); }
  explicit operator bool() const { return has_value(); }
  const T& value() const& { return std::get<T>(storage_); }
  T& value() & { return std::get<T>(storage_); }
  T&& value() && { return std::get<T>(std::move(storage_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<Error>(storage_); }

 private:
  std::variant<T, Error> storage_;
};

}  // namespace megamem
