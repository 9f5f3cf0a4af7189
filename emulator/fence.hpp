#pragma once
// A rocket job's fence as dma-bufs and sync_files show it: its status (1 signalled, a
// negative errno when the kernel stopped the job) from the moment the job ends. The jobs
// of one file share a scheduler entity and run one after another, so a job the kernel
// stops ends its timeout after it started and holds back the jobs queued behind it.

#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace regcmd::emu {

inline std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

struct fence {
  std::int32_t status = 1;
  std::int64_t end_ns = 0;  // CLOCK_MONOTONIC
  bool signalled() const { return now_ns() >= end_ns; }
  // What SYNC_IOC_FILE_INFO reports: 0 while the job runs.
  std::int32_t info_status() const { return signalled() ? status : 0; }
};

// A pollable fd that becomes readable when the fence signals: a timerfd at its end.
inline int fence_fd(const fence& f) {
  const int fd = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  if (fd < 0) return fd;
  itimerspec at{};
  const std::int64_t end = f.end_ns > 0 ? f.end_ns : 1;  // 0 would disarm it
  at.it_value = {static_cast<time_t>(end / 1'000'000'000), static_cast<long>(end % 1'000'000'000)};
  ::timerfd_settime(fd, TFD_TIMER_ABSTIME, &at, nullptr);
  return fd;
}

// Sleeps until `until_ns` (CLOCK_MONOTONIC).
inline void sleep_until(std::int64_t until_ns) {
  const timespec t{static_cast<time_t>(until_ns / 1'000'000'000), static_cast<long>(until_ns % 1'000'000'000)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, nullptr) == EINTR) {
  }
}

}  // namespace regcmd::emu
