#pragma once
// Rules, errors and results, shared by compile time and run time.
//
// A rule is a constexpr object with a stable id, a one-line message that names the fix and
// the reference section it comes from. A check that fails yields an `error` pointing at its
// rule plus what it was about (register, field, value). In a constant expression the same
// failure stops compilation (`result::value()` calls a non-constexpr function); at run time
// it is a value the caller inspects. Nothing here allocates.

#include <array>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <string_view>
#include <type_traits>
#include <utility>

#include <regcmd/core/preprocessor.hpp>

namespace regcmd {

// Rules compare by id, never by address: GCC does not fold a comparison of two globals'
// addresses in a constant expression under -fsanitize=undefined (its nonnull-attribute
// checks) or -fno-delete-null-pointer-checks, and programs must build with both.
struct rule {
  std::string_view id;
  std::string_view message;
  std::string_view reference;
  friend constexpr bool operator==(const rule& a, const rule& b) { return a.id == b.id; }
};

// Defines `inline constexpr rule NAME{ID, MESSAGE, REFERENCE}` from an X-list entry; the
// lists are macros so that rules/catalog.hpp can also turn each into a static_assert whose
// text is the same message.
#define REGCMD_DEFINE_RULE(NAME, ID, MESSAGE, REFERENCE) \
  inline constexpr ::regcmd::rule NAME{REGCMD_PP_VIEW(ID), REGCMD_PP_VIEW(MESSAGE), REGCMD_PP_VIEW(REFERENCE)};

// What checks return when every rule holds (an object, for the same reason).
inline constexpr rule no_violation{"none", "no rule is violated", "regcmd"};

struct error {
  const rule* violated = &no_violation;
  std::string_view subject;  // register, program or input the error is about
  std::string_view detail;   // field, or another name that locates it
  std::uint64_t value = 0;
  bool has_value = false;
  int os_errno = 0;                 // set by the runtime when a system call failed
  std::array<char, 96> note_text{};  // run-time context (a path, a driver name), copied in
  std::uint8_t note_size = 0;

  constexpr std::string_view id() const { return violated->id; }
  constexpr bool breaks(const rule& r) const { return *violated == r; }
  constexpr std::string_view message() const { return violated->message; }
  constexpr std::string_view note() const { return {note_text.data(), note_size}; }
  // Copies (at most 96 bytes of) run-time context into the error.
  constexpr error& with_note(std::string_view text) {
    note_size = static_cast<std::uint8_t>(text.size() < note_text.size() ? text.size() : note_text.size());
    for (std::size_t i = 0; i < note_size; ++i) note_text[i] = text[i];
    return *this;
  }
  constexpr error& with_errno(int e) {
    os_errno = e;
    return *this;
  }
  friend constexpr bool operator==(const error& a, const error& b) {
    return *a.violated == *b.violated && a.subject == b.subject && a.detail == b.detail &&
           a.value == b.value && a.has_value == b.has_value && a.os_errno == b.os_errno && a.note() == b.note();
  }
};

constexpr error make_error(const rule& r, std::string_view subject = {}, std::string_view detail = {}) {
  return error{&r, subject, detail, 0, false};
}

constexpr error make_error(const rule& r, std::string_view subject, std::string_view detail,
                           std::uint64_t value) {
  return error{&r, subject, detail, value, true};
}

// Thrown only by result::value() used at run time on an error; never crosses a C boundary.
// what() is "id: message" (without <string>, which every header would otherwise pay for).
class error_exception : public std::exception {
 public:
  explicit error_exception(const error& e) : error_{e} {
    std::size_t n = 0;
    for (std::string_view part : {e.id(), std::string_view{": "}, e.message()})
      for (char c : part)
        if (n + 1 < what_.size()) what_[n++] = c;
  }
  const char* what() const noexcept override { return what_.data(); }
  const error& get() const { return error_; }
  // Characters what() holds: every rule's id and message fit (tests/rules/catalog_test.cpp).
  static constexpr std::size_t capacity = 639;

 private:
  error error_;
  std::array<char, capacity + 1> what_{};
};

namespace detail {
// Deliberately not constexpr: reaching it in a constant expression is the compile error.
// The name is the diagnostic; the failing call site is in the compiler's note above it.
[[noreturn]] inline void regcmd_check_failed_see_the_error_value_of_this_result(const error& e) {
#if defined(__cpp_exceptions)
  throw error_exception(e);
#else
  (void)e;
  std::abort();
#endif
}
}  // namespace detail

template <class T>
class [[nodiscard]] result {
 public:
  // By reference: a large value (a graph's geometry) is not copied onto the stack on its way in.
  constexpr result(const T& value) : value_{value}, ok_{true} {}
  constexpr result(T&& value) : value_{std::move(value)}, ok_{true} {}
  constexpr result(error e) : error_{e}, ok_{false} {}

  constexpr bool ok() const { return ok_; }
  constexpr explicit operator bool() const { return ok_; }

  constexpr const T& value() const& {
    if (!ok_) detail::regcmd_check_failed_see_the_error_value_of_this_result(error_);
    return value_;
  }
  constexpr T& value() & {
    if (!ok_) detail::regcmd_check_failed_see_the_error_value_of_this_result(error_);
    return value_;
  }
  constexpr T&& value() && {
    if (!ok_) detail::regcmd_check_failed_see_the_error_value_of_this_result(error_);
    return std::move(value_);
  }
  constexpr const error& err() const { return error_; }

  friend constexpr bool operator==(const result& r, const T& v) { return r.ok_ && r.value_ == v; }

 private:
  T value_{};
  error error_{};
  bool ok_;
};

// Status of an operation that yields nothing but may fail. Both are [[nodiscard]]: a result
// or a status dropped unread is a warning (an error under -Werror), as a rule broken unseen.
class [[nodiscard]] status {
 public:
  constexpr status() = default;
  constexpr status(error e) : error_{e}, ok_{false} {}
  constexpr bool ok() const { return ok_; }
  constexpr explicit operator bool() const { return ok_; }
  constexpr const error& err() const { return error_; }

 private:
  error error_{};
  bool ok_ = true;
};

}  // namespace regcmd
