#pragma once
// The mainline accel/rocket driver's uapi (include/uapi/drm/rocket_accel.h, fact sheet §3.1)
// and the generic DRM, dma-buf and sync_file requests its backend needs, written out with
// every size and offset checked and the request codes checked against the fact sheet.
//
// What the kernel does with them (fact sheet §3.2-3.3, rocket_job.c / rocket_gem.c):
//   CREATE_BO   a shmem BO mapped into this open file's own IOMMU domain (IOVAs from 0,
//               page aligned, private to the fd); the BO starts zeroed.
//   SUBMIT      queues each job (its tasks run in order on one core the scheduler picks)
//               and returns at once; an invalid job is dropped without an error.
//   PREP_BO     waits (absolute CLOCK_MONOTONIC deadline) for the BO's writers, then syncs
//               the CPU caches for reading; FINI_BO syncs them for the device.
//   GEM_CLOSE   frees a BO (there is no rocket-specific destroy).
// Completion is not reported by any rocket ioctl: a job's fence lands on its out BOs. A
// sync_file exported from such a BO (dma-buf EXPORT_SYNC_FILE) is polled for the end and
// read (SYNC_IOC_FILE_INFO) for the status: negative when the kernel's 500 ms job timeout
// fired and the core was reset.

#include <cstddef>
#include <cstdint>

#include <regcmd/runtime/ioctl_codes.hpp>

namespace regcmd::rocket {

struct create_bo {
  std::uint32_t size;  // in
  std::uint32_t handle;  // out: GEM handle
  std::uint64_t dma_address;  // out: the IOVA, in this fd's domain
  std::uint64_t offset;  // out: mmap the fd at this offset
};

struct prep_bo {
  std::uint32_t handle;
  std::uint32_t reserved;  // must be 0
  std::int64_t timeout_ns;  // absolute, CLOCK_MONOTONIC
};

struct fini_bo {
  std::uint32_t handle;
  std::uint32_t reserved;  // must be 0
};

// One kick of the PC: the kernel writes PC_BASE_ADDRESS = regcmd and PC_REGISTER_AMOUNTS =
// (regcmd_count + 1) / 2 - 1, so regcmd_count counts every entry of the task, tail included.
struct task {
  std::uint32_t regcmd;
  std::uint32_t regcmd_count;  // > 0
};

// PC_REGISTER_AMOUNTS as the rocket kernel writes it for every task (rocket_job_hw_submit).
constexpr std::uint32_t pc_data_amount(const task& t) { return (t.regcmd_count + 1) / 2 - 1; }

struct job {
  std::uint64_t tasks;  // user pointer to task[task_count]
  std::uint64_t in_bo_handles;  // user pointer to u32 handles the job reads
  std::uint64_t out_bo_handles;  // user pointer to u32 handles the job writes
  std::uint32_t task_count;  // > 0
  std::uint32_t task_struct_size;  // >= sizeof(task)
  std::uint32_t in_bo_handle_count;
  std::uint32_t out_bo_handle_count;
};

struct submit {
  std::uint64_t jobs;  // user pointer to job[job_count]
  std::uint32_t job_count;
  std::uint32_t job_struct_size;  // >= sizeof(job)
  std::uint64_t reserved;  // must be 0
};

static_assert(sizeof(create_bo) == 24 && offsetof(create_bo, handle) == 4 && offsetof(create_bo, dma_address) == 8 &&
              offsetof(create_bo, offset) == 16);
static_assert(sizeof(prep_bo) == 16 && offsetof(prep_bo, reserved) == 4 && offsetof(prep_bo, timeout_ns) == 8);
static_assert(sizeof(fini_bo) == 8 && offsetof(fini_bo, reserved) == 4);
static_assert(sizeof(task) == 8 && offsetof(task, regcmd_count) == 4);
static_assert(sizeof(job) == 40 && offsetof(job, in_bo_handles) == 8 && offsetof(job, out_bo_handles) == 16 &&
              offsetof(job, task_count) == 24 && offsetof(job, task_struct_size) == 28 &&
              offsetof(job, in_bo_handle_count) == 32 && offsetof(job, out_bo_handle_count) == 36);
static_assert(sizeof(submit) == 24 && offsetof(submit, job_count) == 8 && offsetof(submit, job_struct_size) == 12 &&
              offsetof(submit, reserved) == 16);

using ioctl_codes::drm_command_base;
using ioctl_codes::drm_type;
// The command numbers (the emulator matches a request by its number, as the kernel's table).
inline constexpr std::uint32_t nr_create_bo = drm_command_base + 0x00, nr_submit = drm_command_base + 0x01,
                               nr_prep_bo = drm_command_base + 0x02, nr_fini_bo = drm_command_base + 0x03;
inline constexpr unsigned long ioctl_create_bo = ioctl_codes::iowr(drm_type, nr_create_bo, sizeof(create_bo));
inline constexpr unsigned long ioctl_submit = ioctl_codes::iow(drm_type, nr_submit, sizeof(submit));
inline constexpr unsigned long ioctl_prep_bo = ioctl_codes::iow(drm_type, nr_prep_bo, sizeof(prep_bo));
inline constexpr unsigned long ioctl_fini_bo = ioctl_codes::iow(drm_type, nr_fini_bo, sizeof(fini_bo));

// The fact sheet's table (§3.1).
static_assert(ioctl_create_bo == 0xC0186440);
static_assert(ioctl_submit == 0x40186441);
static_assert(ioctl_prep_bo == 0x40106442);
static_assert(ioctl_fini_bo == 0x40086443);

// Generic DRM (drm.h): freeing a GEM object, exporting it as a dma-buf.
struct gem_close {
  std::uint32_t handle;
  std::uint32_t pad;
};
struct prime_handle {
  std::uint32_t handle;
  std::uint32_t flags;  // O_CLOEXEC / O_RDWR for the new fd
  std::int32_t fd;  // out
};
static_assert(sizeof(gem_close) == 8 && sizeof(prime_handle) == 12 && offsetof(prime_handle, fd) == 8);
inline constexpr unsigned long ioctl_gem_close = ioctl_codes::iow(drm_type, 0x09, sizeof(gem_close));
inline constexpr unsigned long ioctl_prime_handle_to_fd = ioctl_codes::iowr(drm_type, 0x2d, sizeof(prime_handle));
static_assert(ioctl_gem_close == 0x40086409);           // DRM_IOCTL_GEM_CLOSE
static_assert(ioctl_prime_handle_to_fd == 0xC00C642D);  // DRM_IOCTL_PRIME_HANDLE_TO_FD

// linux/dma-buf.h (6.0+): the fences of a dma-buf as a sync_file.
struct export_sync_file {
  std::uint32_t flags;  // dma_buf_sync_read: the fences a reader waits for (the writers')
  std::int32_t fd;  // out
};
inline constexpr std::uint32_t dma_buf_sync_read = 1u << 0;
static_assert(sizeof(export_sync_file) == 8);
inline constexpr unsigned long ioctl_export_sync_file = ioctl_codes::iowr('b', 2, sizeof(export_sync_file));
static_assert(ioctl_export_sync_file == 0xC0086202);  // DMA_BUF_IOCTL_EXPORT_SYNC_FILE

// linux/sync_file.h: status 1 signalled, 0 active, < 0 the fence's error.
struct sync_file_info {
  char name[32];
  std::int32_t status;
  std::uint32_t flags;
  std::uint32_t num_fences;  // in: entries at sync_fence_info (0: count only); out: count
  std::uint32_t pad;
  std::uint64_t sync_fence_info;
};
static_assert(sizeof(sync_file_info) == 56 && offsetof(sync_file_info, status) == 32 &&
              offsetof(sync_file_info, num_fences) == 40 && offsetof(sync_file_info, sync_fence_info) == 48);
inline constexpr unsigned long ioctl_sync_file_info = ioctl_codes::iowr('>', 4, sizeof(sync_file_info));
static_assert(ioctl_sync_file_info == 0xC0383E04);  // SYNC_IOC_FILE_INFO

// The kernel's JOB_TIMEOUT_MS: a job running longer is stopped and its core reset.
inline constexpr std::uint32_t job_timeout_ms = 500;

}  // namespace regcmd::rocket
