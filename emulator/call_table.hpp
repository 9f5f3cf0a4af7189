#pragma once
// The emulated device's calls as a table for a process that links it (in_process.hpp),
// where the preloaded library defines the C library's names (interposers.hpp). Include
// this in emu.cpp after its hooks, as interposers.hpp is; `next` is the C library's call.

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>

#include "in_process.hpp"
#include "next_call.hpp"

namespace regcmd::emulator {

const runtime::system_calls& calls() {
  static constexpr runtime::system_calls table{
      [](const char* path, int flags) {
        auto next = [&] { return ::open(path, flags); };
        return shim::open_file(path, flags, next);
      },
      [](int fd) {
        auto next = [&] { return ::close(fd); };
        return shim::close_file(fd, next);
      },
      [](int fd, unsigned long request, void* arg) {
        auto next = [&] { return ::ioctl(fd, request, arg); };
        return shim::control(fd, request, arg, next);
      },
      [](void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
        auto next = [&] { return ::mmap(addr, length, prot, flags, fd, offset); };
        return shim::map(addr, length, prot, flags, fd, offset, next);
      },
      [](void* addr, std::size_t length) {
        auto next = [&] { return ::munmap(addr, length); };
        return shim::unmap(addr, length, next);
      },
  };
  return table;
}

}  // namespace regcmd::emulator
