#pragma once
// What a shim's code calls instead of itself: the C library's definition of a call the shim
// stands in for, by name, or bound to its caller's arguments (a next_call, which refers to
// the caller's lambda and allocates nothing: a sanitizer's runtime calls the shims before the
// C library is ready).

#include <dlfcn.h>

// Internal linkage, in each shim of its own: with two shims preloaded (the capture shim on
// the emulated device), a call that bound to the other shim's copy would run there, and
// RTLD_NEXT, which looks after the caller's own library, would find this shim again.
namespace regcmd::shim {
namespace {

// The definition after the shim's (the C library's).
template <class F>
F next_definition(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

template <class R>
class next_call {
 public:
  template <class F>
  next_call(F& f) : target_(&f), call_([](void* t) -> R { return (*static_cast<F*>(t))(); }) {}
  R operator()() const { return call_(target_); }

 private:
  void* target_;
  R (*call_)(void*);
};

}  // namespace
}  // namespace regcmd::shim
