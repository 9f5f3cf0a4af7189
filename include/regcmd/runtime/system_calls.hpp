#pragma once
// The C library calls the runtime makes on a node and on the files it hands out (dma-bufs,
// sync_files, fences): open, close, ioctl, mmap and munmap, as one table a device is opened
// with. The C library's own by default; the emulated device in the same process supplies
// its table (emulator/in_process.hpp), so a program — or the Python package — runs on it
// without LD_PRELOAD. poll and fstat stay the C library's: the files behind an emulated
// node, fence or sync_file are real ones.

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>

namespace regcmd::runtime {

struct system_calls {
  int (*open)(const char* path, int flags);
  int (*close)(int fd);
  int (*ioctl)(int fd, unsigned long request, void* arg);
  void* (*mmap)(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset);
  int (*munmap)(void* addr, std::size_t length);
};

// The C library's.
inline const system_calls& os_calls() {
  static constexpr system_calls calls{
      [](const char* path, int flags) { return ::open(path, flags); },
      [](int fd) { return ::close(fd); },
      [](int fd, unsigned long request, void* arg) { return ::ioctl(fd, request, arg); },
      [](void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
        return ::mmap(addr, length, prot, flags, fd, offset);
      },
      [](void* addr, std::size_t length) { return ::munmap(addr, length); },
  };
  return calls;
}

namespace detail {
inline const system_calls*& default_calls_slot() {
  static const system_calls* calls = &os_calls();
  return calls;
}
}  // namespace detail

// The table a device is opened with when none is given: the C library's, unless the process
// chose another once at its start (a test binary or a tool that links the emulated device
// and runs everything on it). Set it before any device is opened and from one thread.
inline const system_calls& default_calls() { return *detail::default_calls_slot(); }
inline void use_by_default(const system_calls& calls) { detail::default_calls_slot() = &calls; }

}  // namespace regcmd::runtime
