// libregcmd-capture.so: records what any program submits to the NPU (LD_PRELOAD), on the
// vendor rknpu driver (/dev/dri/...) or the mainline rocket driver (/dev/accel/...).
//
//   REGCMD_CAPTURE_DIR=/tmp/cap LD_PRELOAD=libregcmd-capture.so ./any_program
//
// It watches the NPU nodes the program opens: the buffer ioctls (rknpu MEM_CREATE + MEM_MAP,
// rocket CREATE_BO) and mmap tell it where each buffer object lives in the process; on each
// submit it finds every task's regcmd through its IOVA (rknpu: the descriptors through
// task_obj_addr, then regcmd_addr; rocket: each job's drm_rocket_task array, then regcmd)
// and writes, numbered per submit (after the highest NNNN already in the directory):
//   NNNN-regcmd.bin  the regcmd each task makes the PC fetch (rknpu: regcfg_amount + the
//                    tail; rocket: regcmd_count), rounded to whole 128-bit words, tasks in
//                    order, raw little-endian u64
//   NNNN-tasks.bin   the task descriptors of the submit (rknpu_task / drm_rocket_task), raw
//   NNNN-submit.bin  the submit argument (rknpu_submit / drm_rocket_submit), raw
//   NNNN.txt         a summary: flags or jobs, each task's address and what was found, and
//                    what could not be read (a bad pointer) or was left out (a limit below)
// then lets the call through unchanged, so the kernel answers a bad submit with its own
// error. Without REGCMD_CAPTURE_DIR it only passes through; when the directory cannot be
// created or written, it says so once on stderr and only passes through.

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/runtime/rknpu_uapi.hpp>
#include <regcmd/runtime/rocket_uapi.hpp>

#include "next_call.hpp"
#include "user_memory.hpp"

namespace {

namespace rk = regcmd::rknpu;
namespace rt = regcmd::rocket;

using regcmd::shim::next_definition;

// What one submit may make the shim read and hold; NNNN.txt says what was left out.
// A task's fetch is at most 2^16 128-bit words: PC_DATA_AMOUNT is bits 15:0 of
// PC_REGISTER_AMOUNTS (fact sheet §4, Domain PC), so the PC never fetches more.
constexpr std::uint64_t max_task_qwords = std::uint64_t{2} << 16;
constexpr std::uint64_t max_regcmd_bytes = std::uint64_t{64} << 20;  // all tasks of a submit
constexpr std::uint64_t max_records = 1u << 16;                     // jobs, and tasks, per submit
constexpr std::uint32_t max_handles_listed = 16;                     // per BO list of a job

// Reads user memory as the kernel's copy_from_user does: an unmapped or unreadable address
// is an error (EFAULT), never a crash. Returns 0 or the errno. Called under the shim's lock.
int read_user(std::uint64_t address, void* out, std::size_t size) {
  if (size == 0) return 0;
  if (address > UINTPTR_MAX) return EFAULT;
  iovec local{out, size};
  iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(address)), size};
  const ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (n == static_cast<ssize_t>(size)) return 0;
  if (n < 0 && errno == ENOSYS) {
    // qemu-user (the aarch64 tests on a PC) has no process_vm_readv: through a pipe, as the
    // emulated device reads. Never destroyed: its close() would come back through this shim.
    static const auto* pipe = new regcmd::emu::user_memory;
    return pipe->read(out, address, size) ? 0 : EFAULT;
  }
  return n < 0 ? errno : EFAULT;  // a short read stopped at an unreadable page
}

std::uint64_t address_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

struct tracked_buffer {
  std::uint64_t size = 0, dma_addr = 0, obj_addr = 0, map_offset = ~std::uint64_t{0};
  std::uint64_t mapped = 0;  // where the process mapped it (0: not mapped), and how much
  std::uint64_t mapped_size = 0;
};

// An open NPU file. Its buffers belong to it, not to an fd number: GEM handles and (rocket)
// IOVAs are per open file (fact sheet §3.2), shared by its dup()s and gone with its last fd.
struct npu_file {
  bool rocket = false;
  std::map<std::uint32_t, tracked_buffer> buffers;  // by handle
};

// What one submit makes the shim write.
struct record {
  std::vector<std::uint8_t> submit, tasks, regcmd;
  std::string summary;
  [[gnu::format(printf, 2, 3)]] void note(const char* format, ...) {
    char line[256];
    va_list ap;
    va_start(ap, format);
    std::vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    summary += line;
  }
  template <class T>
  void add_task(const T& t) {
    const auto* raw = reinterpret_cast<const std::uint8_t*>(&t);
    tasks.insert(tasks.end(), raw, raw + sizeof t);
  }
};

// mkdir -p; returns 0 or the errno of the step that failed.
int make_directories(const std::string& path) {
  for (std::size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    if (::mkdir(path.substr(0, at).c_str(), 0755) != 0 && errno != EEXIST) return errno;
    if (at == std::string::npos) break;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno;
  return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

// The highest NNNN of the files (NNNN.txt, NNNN-*.bin) in `dir`, 0 if none; -errno when
// the directory cannot be read.
long highest_number(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return -errno;
  long highest = 0;
  while (const dirent* e = ::readdir(d)) {
    const char* name = e->d_name;
    std::size_t digits = 0;
    while (name[digits] >= '0' && name[digits] <= '9') ++digits;
    if (digits == 0 || digits > 9 || (name[digits] != '.' && name[digits] != '-')) continue;
    highest = std::max(highest, std::strtol(name, nullptr, 10));
  }
  ::closedir(d);
  return highest;
}

struct capture_state {
  std::recursive_mutex lock;
  std::map<int, std::shared_ptr<npu_file>> fds;  // watched fd -> its open file
  std::string dir;                               // empty: not capturing
  unsigned long next = 1;                        // the next submit number to try
  bool configured = false;

  // One line on stderr naming the directory and the reason, then no more captures: the
  // program's own calls still pass through. Said before `dir` is cleared: `path` is often it.
  void give_up(const char* what, const std::string& path, int error) {
    std::fprintf(stderr, "regcmd-capture: %s '%s': %s\n", what, path.c_str(), std::strerror(error));
    dir.clear();
  }
  // Reads the environment when a DRM node is first opened, not at construction: a
  // sanitizer runtime calls open/close/mmap before the C library has set it up.
  void configure() {
    if (configured) return;
    configured = true;
    const char* d = std::getenv("REGCMD_CAPTURE_DIR");
    if (!d || !*d) return;
    dir = d;
    if (const int error = make_directories(dir)) return give_up("cannot create the capture directory", dir, error);
    const long highest = highest_number(dir);
    if (highest < 0) return give_up("cannot read the capture directory", dir, static_cast<int>(-highest));
    // continue after an earlier run's captures instead of overwriting them
    next = static_cast<unsigned long>(highest) + 1;
  }
};

capture_state& state() {
  static capture_state s;
  return s;
}

// A descriptor just opened: a new NPU file, or no longer one (a close we did not see).
void track(int fd, const char* path) {
  if (fd < 0) return;
  capture_state& s = state();
  std::lock_guard g(s.lock);
  const std::string_view p = path ? path : "";
  if (!p.starts_with("/dev/dri/") && !p.starts_with("/dev/accel/")) {
    s.fds.erase(fd);
    return;
  }
  s.configure();
  auto file = std::make_shared<npu_file>();
  file->rocket = p.starts_with("/dev/accel/");
  s.fds[fd] = std::move(file);
}

// `fd` now names the open file of `old` (dup), or nothing watched.
void share(int old, int fd) {
  capture_state& s = state();
  std::lock_guard g(s.lock);
  if (auto it = s.fds.find(old); it != s.fds.end())
    s.fds[fd] = it->second;
  else
    s.fds.erase(fd);
}

bool tracked(int fd) {
  capture_state& s = state();
  std::lock_guard g(s.lock);
  return s.fds.count(fd) != 0;
}

// Claims the next free submit number by creating NNNN.txt with O_EXCL ("x"): two processes
// capturing into one directory never share a number (EEXIST: another took it; try the next).
FILE* claim(capture_state& s, std::string& base) {
  for (;; ++s.next) {
    char name[32];
    std::snprintf(name, sizeof name, "/%04lu", s.next);
    base = s.dir + name;
    if (FILE* f = std::fopen((base + ".txt").c_str(), "wbx")) {
      ++s.next;
      return f;
    }
    if (errno != EEXIST) {
      s.give_up("cannot write in the capture directory", s.dir, errno);
      return nullptr;
    }
  }
}

// Writes `data` to `f` (opened on `path`, or null) and closes it; false after giving up.
bool write_file(capture_state& s, FILE* f, const std::string& path, const void* data, std::size_t size) {
  if (!f) return s.give_up("cannot write", path, errno), false;
  const bool written = size == 0 || std::fwrite(data, 1, size, f) == size;
  const int error = errno;
  if (std::fclose(f) != 0 || !written) return s.give_up("cannot write", path, written ? errno : error), false;
  return true;
}

void write_record(capture_state& s, const record& r) {
  std::string base;
  FILE* txt = claim(s, base);
  if (!txt) return;
  for (const auto& [suffix, bytes] : {std::pair{"-submit.bin", &r.submit}, {"-tasks.bin", &r.tasks}, {"-regcmd.bin", &r.regcmd}}) {
    const std::string path = base + suffix;
    if (!write_file(s, std::fopen(path.c_str(), "wb"), path, bytes->data(), bytes->size())) return (void)std::fclose(txt);
  }
  write_file(s, txt, base + ".txt", r.summary.data(), r.summary.size());
}

// Appends to r.regcmd what the PC fetches for a task of `entries` entries at `iova` of file
// `f` (whole 128-bit words, at most PC_DATA_AMOUNT's), read through the process's mapping
// of the buffer that holds it; notes what it found.
void capture_task(record& r, const npu_file& f, std::uint64_t iova, std::uint64_t entries) {
  const std::uint64_t wanted = (entries + 1) / 2 * 2;
  const std::uint64_t qwords = std::min(wanted, max_task_qwords);
  for (const auto& [handle, b] : f.buffers) {
    const std::uint64_t at = iova - b.dma_addr;  // wraps past the end when iova < dma_addr
    if (!b.mapped || at >= b.mapped_size) continue;
    const std::uint64_t bytes = std::min(qwords * 8, b.mapped_size - at);
    if (r.regcmd.size() + bytes > max_regcmd_bytes)
      return r.note(": NOT RECORDED, the submit's regcmd is over %llu MiB\n",
                    static_cast<unsigned long long>(max_regcmd_bytes >> 20));
    const std::size_t old_size = r.regcmd.size();
    r.regcmd.resize(old_size + bytes);
    if (const int error = read_user(b.mapped + at, r.regcmd.data() + old_size, bytes)) {
      r.regcmd.resize(old_size);
      return r.note(": NOT RECORDED, unreadable at 0x%llx: %s\n", static_cast<unsigned long long>(b.mapped + at),
                    std::strerror(error));
    }
    r.note(": captured %llu qwords%s\n", static_cast<unsigned long long>(bytes / 8),
           wanted > max_task_qwords ? " (more than PC_DATA_AMOUNT fetches: the first 2^16 words)" : "");
    return;
  }
  r.note(": NOT FOUND, 0 qwords\n");
}

// "N" or "N: h1 h2 ..." (the first few), or why the list could not be read.
std::string handle_list(std::uint64_t pointer, std::uint32_t count) {
  std::string out = std::to_string(count);
  const std::uint32_t n = std::min(count, max_handles_listed);
  std::uint32_t handles[max_handles_listed];
  if (n == 0) return out;
  if (const int error = read_user(pointer, handles, n * sizeof handles[0])) {
    char why[96];
    std::snprintf(why, sizeof why, " (unreadable at 0x%llx: %s)", static_cast<unsigned long long>(pointer), std::strerror(error));
    return out + why;
  }
  out += ":";
  for (std::uint32_t i = 0; i < n; ++i) {
    out += ' ';  // appended in two steps: g++ 12 at -O3 misreads " " + to_string as overlapping
    out += std::to_string(handles[i]);
  }
  if (count > n) out += " ...";
  return out;
}

void capture_rocket_submit(record& r, const npu_file& f, const void* arg, std::size_t size) {
  rt::submit args{};
  const std::size_t copied = std::min(size, sizeof args);
  if (const int error = read_user(address_of(arg), &args, copied))
    return r.note("submit argument unreadable at %p: %s\n", arg, std::strerror(error));
  r.submit.assign(reinterpret_cast<const std::uint8_t*>(&args), reinterpret_cast<const std::uint8_t*>(&args) + copied);
  r.note("jobs %u\n", args.job_count);
  if (args.job_count != 0 && args.job_struct_size < sizeof(rt::job))
    return r.note("job_struct_size %u is under sizeof(drm_rocket_job): no job read\n", args.job_struct_size);
  std::uint64_t tasks = 0;
  for (std::uint32_t j = 0; j < args.job_count; ++j) {
    if (j == max_records) return r.note("jobs %u and on: not recorded (%llu at most)\n", j, static_cast<unsigned long long>(max_records));
    // the kernel copies sizeof(drm_rocket_job) from each job_struct_size stride (§3.1)
    const std::uint64_t at = args.jobs + std::uint64_t{j} * args.job_struct_size;
    rt::job job{};
    if (const int error = read_user(at, &job, sizeof job))
      return r.note("job %u: unreadable at 0x%llx: %s\n", j, static_cast<unsigned long long>(at), std::strerror(error));
    r.note("job %u: %u tasks, in BOs %s, out BOs %s\n", j, job.task_count,
           handle_list(job.in_bo_handles, job.in_bo_handle_count).c_str(),
           handle_list(job.out_bo_handles, job.out_bo_handle_count).c_str());
    if (job.task_count != 0 && job.task_struct_size < sizeof(rt::task)) {
      r.note("  task_struct_size %u is under sizeof(drm_rocket_task): no task read\n", job.task_struct_size);
      continue;
    }
    for (std::uint32_t i = 0; i < job.task_count; ++i, ++tasks) {
      if (tasks == max_records)
        return r.note("  tasks from task %u on: not recorded (%llu at most)\n", i, static_cast<unsigned long long>(max_records));
      const std::uint64_t task_at = job.tasks + std::uint64_t{i} * job.task_struct_size;
      rt::task t{};
      if (const int error = read_user(task_at, &t, sizeof t)) {
        r.note("  task %u: unreadable at 0x%llx: %s\n", i, static_cast<unsigned long long>(task_at), std::strerror(error));
        break;
      }
      r.add_task(t);
      r.note("  task %u: regcmd 0x%x regcmd_count %u", i, t.regcmd, t.regcmd_count);
      capture_task(r, f, t.regcmd, t.regcmd_count);
    }
  }
}

void capture_rknpu_submit(record& r, const npu_file& f, const void* arg, std::size_t size) {
  rk::submit args{};
  const std::size_t copied = std::min(size, sizeof args);
  if (const int error = read_user(address_of(arg), &args, copied))
    return r.note("submit argument unreadable at %p: %s\n", arg, std::strerror(error));
  r.submit.assign(reinterpret_cast<const std::uint8_t*>(&args), reinterpret_cast<const std::uint8_t*>(&args) + copied);
  r.note("flags 0x%x task_number %u core_mask 0x%x timeout %u\n", args.flags, args.task_number, args.core_mask, args.timeout);
  // The tasks any core may run: every populated range (fact sheet §1.6).
  std::uint64_t lo = args.task_start, hi = std::uint64_t{args.task_start} + args.task_number;
  for (const auto& range : args.subcore_task)
    if (range.task_number) {
      lo = std::min<std::uint64_t>(lo, range.task_start);
      hi = std::max<std::uint64_t>(hi, std::uint64_t{range.task_start} + range.task_number);
    }
  const tracked_buffer* tasks = nullptr;
  for (const auto& [handle, b] : f.buffers)
    if (b.obj_addr == args.task_obj_addr && b.mapped) tasks = &b;
  if (!tasks || hi * sizeof(rk::task) > tasks->mapped_size) return r.note("task descriptors not found in a mapped buffer\n");
  if (hi - lo > max_records) {
    r.note("tasks from %llu on: not recorded (%llu at most)\n", static_cast<unsigned long long>(lo + max_records),
           static_cast<unsigned long long>(max_records));
    hi = lo + max_records;
  }
  std::vector<rk::task> descriptors(hi - lo);
  if (const int error = read_user(tasks->mapped + lo * sizeof(rk::task), descriptors.data(), descriptors.size() * sizeof(rk::task)))
    return r.note("task descriptors unreadable: %s\n", std::strerror(error));
  for (std::uint64_t i = lo; i < hi; ++i) {
    const rk::task& t = descriptors[i - lo];
    r.add_task(t);
    r.note("task %llu: regcmd_addr 0x%llx regcfg_amount %u enable_mask 0x%x int_mask 0x%x", static_cast<unsigned long long>(i),
           static_cast<unsigned long long>(t.regcmd_addr), t.regcfg_amount, t.enable_mask, t.int_mask);
    // What the PC fetches: regcfg_amount + the 4-entry tail.
    capture_task(r, f, t.regcmd_addr, std::uint64_t{t.regcfg_amount} + rk::pc_data_extra_amount);
  }
}

void capture_submit(capture_state& s, const npu_file& f, const void* arg, std::size_t size) {
  try {
    record r;
    if (f.rocket)
      capture_rocket_submit(r, f, arg, size);
    else
      capture_rknpu_submit(r, f, arg, size);
    write_record(s, r);
  } catch (const std::bad_alloc&) {
    s.give_up("out of memory recording a submit for", s.dir, ENOMEM);
  }
}

int forward_ioctl(int fd, unsigned long request, void* arg) {
  return next_definition<int (*)(int, unsigned long, void*)>("ioctl")(fd, request, arg);
}

// The request's argument as the kernel copies it in (zero-filled past `size`); false when
// it cannot be read.
template <class T>
bool argument(const void* arg, std::size_t size, T& out) {
  out = T{};
  return read_user(address_of(arg), &out, std::min(size, sizeof out)) == 0;
}

// The mmap offset of the buffer just created or mapped, found again in mmap().
void note_buffer(npu_file& f, std::uint32_t handle, std::uint64_t size, std::uint64_t dma_addr, std::uint64_t obj_addr,
                 std::uint64_t map_offset) {
  f.buffers[handle] = {size, dma_addr, obj_addr, map_offset, 0, 0};
}

// Records, forwards, then notes the buffers the call made or freed.
int watched_ioctl(int fd, unsigned long request, void* arg) {
  capture_state& s = state();
  std::lock_guard g(s.lock);
  const auto it = s.fds.find(fd);
  if (it == s.fds.end() || ((request >> 8) & 0xff) != 'd') return forward_ioctl(fd, request, arg);
  const std::shared_ptr<npu_file> file = it->second;  // alive until we are done, whatever the call does
  npu_file& f = *file;
  const std::size_t size = regcmd::ioctl_codes::size_of(request);
  const bool rocket = f.rocket;
  const bool submit = rocket ? request == rt::ioctl_submit : rk::number_of(request) == rk::nr_submit;
  if (submit && !s.dir.empty()) capture_submit(s, f, arg, size);
  // the handle a free names, read before the kernel frees it
  std::uint32_t freed = 0;
  bool frees = false;
  if (rocket && request == rt::ioctl_gem_close) {
    rt::gem_close c;
    frees = argument(arg, size, c);
    freed = c.handle;
  } else if (!rocket && rk::number_of(request) == rk::nr_mem_destroy) {
    rk::mem_destroy d;
    frees = argument(arg, size, d);
    freed = d.handle;
  }
  const int rc = forward_ioctl(fd, request, arg);
  if (rc != 0) return rc;
  const int saved = errno;
  if (frees) f.buffers.erase(freed);
  if (rocket && request == rt::ioctl_create_bo) {
    if (rt::create_bo c; argument(arg, size, c)) note_buffer(f, c.handle, c.size, c.dma_address, 0, c.offset);
  } else if (!rocket && rk::number_of(request) == rk::nr_mem_create &&
             size >= offsetof(rk::mem_create, dma_addr) + 8) {
    if (rk::mem_create c; argument(arg, size, c)) note_buffer(f, c.handle, c.size, c.dma_addr, c.obj_addr, ~std::uint64_t{0});
  } else if (!rocket && rk::number_of(request) == rk::nr_mem_map && size >= sizeof(rk::mem_map)) {
    rk::mem_map m;
    if (argument(arg, size, m))
      if (auto b = f.buffers.find(m.handle); b != f.buffers.end()) b->second.map_offset = m.offset;
  }
  errno = saved;
  return rc;
}

}  // namespace

// The calls the shim stands in for (emulator/interposers.hpp): each goes to the C library,
// and what it did to an NPU node's fd or buffers is noted.
namespace regcmd::shim {
namespace {

int open_file(const char* path, int, next_call<int> next) {
  const int fd = next();
  track(fd, path);
  return fd;
}

// Closing an fd drops its file's buffers with the file's last fd, so a reused fd number
// never finds the old program's buffers. (exec needs nothing: the new image starts with an
// empty state, and fds inherited from before are not watched there.)
int close_file(int fd, next_call<int> next) {
  {
    capture_state& s = state();
    std::lock_guard g(s.lock);
    s.fds.erase(fd);
  }
  return next();
}

void duplicated(int old, int fd) { share(old, fd); }

int control(int fd, unsigned long request, void* arg, next_call<int> next) {
  return tracked(fd) ? watched_ioctl(fd, request, arg) : next();
}

void* map(void*, std::size_t length, int, int, int fd, off_t offset, next_call<void*> next) {
  void* p = next();
  if (p != MAP_FAILED && fd >= 0) {
    capture_state& s = state();
    std::lock_guard g(s.lock);
    if (auto it = s.fds.find(fd); it != s.fds.end())
      for (auto& [handle, b] : it->second->buffers)
        if (b.map_offset == static_cast<std::uint64_t>(offset)) {
          b.mapped = address_of(p);
          b.mapped_size = std::min<std::uint64_t>(length, b.size);
        }
  }
  return p;
}

int unmap(void* addr, std::size_t length, next_call<int> next) {
  const int rc = next();
  if (rc == 0) {
    // any part unmapped: the buffer is no longer read through this mapping
    capture_state& s = state();
    std::lock_guard g(s.lock);
    const std::uint64_t lo = address_of(addr), hi = lo + length;
    for (auto& [fd, file] : s.fds)
      for (auto& [handle, b] : file->buffers)
        if (b.mapped && b.mapped < hi && lo < b.mapped + b.mapped_size) b.mapped = 0;
  }
  return rc;
}

}  // namespace
}  // namespace regcmd::shim

#include "interposers.hpp"
