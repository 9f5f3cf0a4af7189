#pragma once
// Reading and writing the caller's memory as a kernel does (copy_from_user /
// copy_to_user): an address the process cannot read or write is an EFAULT, never a crash
// of the emulated device. The bytes go through a pipe, whose read() and write() check
// the user address for us, in chunks the pipe always holds.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace regcmd::emu {

class user_memory {
 public:
  user_memory() {
    if (::pipe2(fds_, O_CLOEXEC) != 0) fds_[0] = fds_[1] = -1;
  }
  user_memory(const user_memory&) = delete;
  user_memory& operator=(const user_memory&) = delete;
  ~user_memory() {
    if (fds_[0] >= 0) ::close(fds_[0]);
    if (fds_[1] >= 0) ::close(fds_[1]);
  }

  // False when any byte of [from, from + size) is not readable.
  bool read(void* to, std::uint64_t from, std::size_t size) const {
    return copy(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(from)), to, size);
  }
  // False when any byte of [to, to + size) is not writable.
  bool write(std::uint64_t to, const void* from, std::size_t size) const {
    return copy(from, reinterpret_cast<void*>(static_cast<std::uintptr_t>(to)), size);
  }

 private:
  // from -> pipe -> to: write() faults on a bad source, read() on a bad destination.
  bool copy(const void* from, void* to, std::size_t size) const {
    if (fds_[0] < 0) return false;
    constexpr std::size_t chunk = 4096;  // a pipe holds at least a page
    for (std::size_t done = 0; done < size; done += chunk) {
      const std::size_t n = std::min(chunk, size - done);
      const ssize_t in = ::write(fds_[1], static_cast<const std::uint8_t*>(from) + done, n);
      if (in != static_cast<ssize_t>(n)) {
        drain(in > 0 ? static_cast<std::size_t>(in) : 0);
        return false;
      }
      const ssize_t out = ::read(fds_[0], static_cast<std::uint8_t*>(to) + done, n);
      if (out != static_cast<ssize_t>(n)) {
        drain(n - static_cast<std::size_t>(out > 0 ? out : 0));
        return false;
      }
    }
    return true;
  }
  // Empties what a failed copy left in the pipe.
  void drain(std::size_t left) const {
    std::uint8_t sink[4096];
    while (left > 0) {
      const ssize_t r = ::read(fds_[0], sink, std::min(left, sizeof sink));
      if (r <= 0) return;
      left -= static_cast<std::size_t>(r);
    }
  }
  int fds_[2] = {-1, -1};
};

}  // namespace regcmd::emu
