#pragma once
// What the NPU remembers between jobs (regcmd-isa-reference "State gotchas"): whether it
// is in int8 mode, and whether a job timed out since the last reset. That is the node's
// state, not a session's: every device opened on one node in this process shares one
// npu_state, so a session sees what another left (an int8 mode to leave, a reset owed).
//
// Thread safety: runs that leave the state as they find it share `lock` (session::run holds
// it from its first submit to the output's sync), so three threads keep three cores busy at
// once; a run that changes the state (enters or leaves int8 mode, pays a reset owed) holds it
// alone for the whole run, so a reset never reaches a core while another thread's job runs
// on it, and the job that primes a core (rocket's int8 entry) is the one that expects it.

#include <sys/stat.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace regcmd::runtime {

struct npu_state {
  std::shared_mutex lock;
  bool in_int8 = false;                  // the last job ran in int8 mode (written with the lock held alone)
  std::atomic<bool> owes_reset = false;  // a job timed out; rknpu: RKNPU_ACT_RESET before the next job
};

// The state of the node behind `fd` (opened from `path`): the same object for every open
// of that node while one is alive. Nodes are told apart by device number; a file that is
// not a character device (the emulated one) by its path.
inline std::shared_ptr<npu_state> npu_state_of(int fd, const std::string& path) {
  struct stat st{};
  const std::string key = ::fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) ? "dev:" + std::to_string(st.st_rdev) : "path:" + path;
  static std::mutex registry_lock;
  static std::map<std::string, std::weak_ptr<npu_state>> registry;
  const std::lock_guard guard{registry_lock};
  std::erase_if(registry, [](const auto& kv) { return kv.second.expired(); });
  std::weak_ptr<npu_state>& slot = registry[key];
  std::shared_ptr<npu_state> state = slot.lock();
  if (!state) slot = state = std::make_shared<npu_state>();
  return state;
}

}  // namespace regcmd::runtime
