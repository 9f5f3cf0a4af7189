#pragma once
// The C library calls a preloaded shim stands in for, defined once for the emulated device
// (emu.cpp) and the capture shim (capture/capture.cpp). Each of open, open64, openat, close,
// dup, dup2, dup3, ioctl, mmap, mmap64 and munmap unpacks its arguments (open's variadic
// mode, ioctl's argument) and hands them to the shim's hook with `next`, the C library's
// own call, for the hook to make when the call is not the shim's. Include this in one file
// of a shim, after defining the hooks in namespace regcmd::shim's unnamed namespace:
//
//   int open_file(const char* path, int flags, next_call<int> next);
//   int close_file(int fd, next_call<int> next);
//   void duplicated(int old, int fd);  // after a dup, dup2 or dup3 that made fd name old's file
//   int control(int fd, unsigned long request, void* arg, next_call<int> next);
//   void* map(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, next_call<void*> next);
//   int unmap(void* addr, std::size_t length, next_call<int> next);

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/types.h>

#include <cstdarg>
#include <cstddef>

#include "next_call.hpp"

// The hooks have internal linkage (next_call.hpp says why): a shim defines them in the same
// unnamed namespace.
namespace regcmd::shim {
namespace {

int open_file(const char* path, int flags, next_call<int> next);
int close_file(int fd, next_call<int> next);
void duplicated(int old, int fd);
int control(int fd, unsigned long request, void* arg, next_call<int> next);
void* map(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, next_call<void*> next);
int unmap(void* addr, std::size_t length, next_call<int> next);

}  // namespace
}  // namespace regcmd::shim

// open's mode is there only with O_CREAT: reading it otherwise reads past the arguments given.
#define REGCMD_SHIM_MODE(flags, last)                                                          \
  mode_t mode = 0;                                                                             \
  if ((flags) & O_CREAT) {                                                                     \
    va_list ap;                                                                                \
    va_start(ap, last);                                                                        \
    mode = static_cast<mode_t>(va_arg(ap, int));                                               \
    va_end(ap);                                                                                \
  }

// The shims are built with hidden visibility: these are what they export.
#define REGCMD_SHIM_EXPORT __attribute__((visibility("default")))

extern "C" {

REGCMD_SHIM_EXPORT int open(const char* path, int flags, ...) {
  REGCMD_SHIM_MODE(flags, flags)
  auto next = [&] { return regcmd::shim::next_definition<int (*)(const char*, int, ...)>("open")(path, flags, mode); };
  return regcmd::shim::open_file(path, flags, next);
}

REGCMD_SHIM_EXPORT int open64(const char* path, int flags, ...) {
  REGCMD_SHIM_MODE(flags, flags)
  auto next = [&] { return regcmd::shim::next_definition<int (*)(const char*, int, ...)>("open64")(path, flags, mode); };
  return regcmd::shim::open_file(path, flags, next);
}

REGCMD_SHIM_EXPORT int openat(int dir, const char* path, int flags, ...) {
  REGCMD_SHIM_MODE(flags, flags)
  auto next = [&] {
    return regcmd::shim::next_definition<int (*)(int, const char*, int, ...)>("openat")(dir, path, flags, mode);
  };
  return regcmd::shim::open_file(path, flags, next);
}

REGCMD_SHIM_EXPORT int close(int fd) {
  auto next = [&] { return regcmd::shim::next_definition<int (*)(int)>("close")(fd); };
  return regcmd::shim::close_file(fd, next);
}

REGCMD_SHIM_EXPORT int dup(int old) {
  const int fd = regcmd::shim::next_definition<int (*)(int)>("dup")(old);
  if (fd >= 0) regcmd::shim::duplicated(old, fd);
  return fd;
}

// dup2 and dup3 close `fd` first when it is open, then make it name `old`'s file.
REGCMD_SHIM_EXPORT int dup2(int old, int fd) {
  const int rc = regcmd::shim::next_definition<int (*)(int, int)>("dup2")(old, fd);
  if (rc >= 0 && old != fd) regcmd::shim::duplicated(old, fd);
  return rc;
}

REGCMD_SHIM_EXPORT int dup3(int old, int fd, int flags) {
  const int rc = regcmd::shim::next_definition<int (*)(int, int, int)>("dup3")(old, fd, flags);
  if (rc >= 0) regcmd::shim::duplicated(old, fd);
  return rc;
}

REGCMD_SHIM_EXPORT int ioctl(int fd, unsigned long request, ...) {
  va_list ap;
  va_start(ap, request);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  auto next = [&] { return regcmd::shim::next_definition<int (*)(int, unsigned long, void*)>("ioctl")(fd, request, arg); };
  return regcmd::shim::control(fd, request, arg, next);
}

REGCMD_SHIM_EXPORT void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  auto next = [&] {
    return regcmd::shim::next_definition<void* (*)(void*, std::size_t, int, int, int, off_t)>("mmap")(addr, length, prot,
                                                                                                    flags, fd, offset);
  };
  return regcmd::shim::map(addr, length, prot, flags, fd, offset, next);
}

REGCMD_SHIM_EXPORT void* mmap64(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  return mmap(addr, length, prot, flags, fd, offset);
}

REGCMD_SHIM_EXPORT int munmap(void* addr, std::size_t length) {
  auto next = [&] { return regcmd::shim::next_definition<int (*)(void*, std::size_t)>("munmap")(addr, length); };
  return regcmd::shim::unmap(addr, length, next);
}

}  // extern "C"

#undef REGCMD_SHIM_MODE
#undef REGCMD_SHIM_EXPORT
