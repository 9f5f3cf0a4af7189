#pragma once
// The vendor rknpu driver's uapi (0.9.6+ layouts, fact sheet §1), written out as C++ with
// every size and offset checked, and the request codes computed from the sizes and checked
// against the fact sheet's numbers. DRM dispatches by command number and copies in the size
// the caller gives, so a 0.9.5 kernel (40-byte MEM_CREATE) accepts these too.

#include <cstddef>
#include <cstdint>

#include <regcmd/runtime/ioctl_codes.hpp>

namespace regcmd::rknpu {

using ioctl_codes::drm_command_base;
constexpr unsigned long drm_iowr(std::uint32_t nr, std::size_t size) {
  return ioctl_codes::iowr(ioctl_codes::drm_type, nr, size);
}

// e_rknpu_mem_type (MEM_CREATE flags)
inline constexpr std::uint32_t mem_non_contiguous = 1u << 0;
inline constexpr std::uint32_t mem_cacheable = 1u << 1;       // MEM_SYNC requires it
inline constexpr std::uint32_t mem_write_combine = 1u << 2;
inline constexpr std::uint32_t mem_kernel_mapping = 1u << 3;  // the task buffer needs it
inline constexpr std::uint32_t mem_iommu = 1u << 4;
inline constexpr std::uint32_t mem_zeroing = 1u << 5;

// e_rknpu_mem_sync_mode
inline constexpr std::uint32_t sync_to_device = 0x1;
inline constexpr std::uint32_t sync_from_device = 0x2;

// e_rknpu_job_mode (SUBMIT flags)
inline constexpr std::uint32_t job_pc = 0x1;  // PC mode: required
inline constexpr std::uint32_t job_block = 0x0;
inline constexpr std::uint32_t job_nonblock = 0x2;
inline constexpr std::uint32_t job_pingpong = 0x4;
inline constexpr std::uint32_t job_fence_in = 0x8;
inline constexpr std::uint32_t job_fence_out = 0x10;

// e_rknpu_action
inline constexpr std::uint32_t action_get_hw_version = 0;
inline constexpr std::uint32_t action_get_drv_version = 1;
inline constexpr std::uint32_t action_reset = 6;

inline constexpr std::uint32_t int_clear_all = 0x1ffff;  // RKNPU_INT_CLEAR
// iommu_domain_id 0..15: the domains clients use (rknn-matmul-api §1.10); the kernel's own
// bound is not in the fact sheet, so the emulated device refuses beyond it.
inline constexpr std::int32_t max_iommu_domains = 16;
inline constexpr std::uint32_t max_core_mask = 0x7;

struct action {
  std::uint32_t flags;
  std::uint32_t value;
};

struct mem_create {
  std::uint32_t handle;
  std::uint32_t flags;
  std::uint64_t size;
  std::uint64_t obj_addr;  // kernel cookie, passed back in MEM_SYNC and SUBMIT
  std::uint64_t dma_addr;  // the IOVA the NPU sees
  std::uint64_t sram_size;
  std::int32_t iommu_domain_id;
  std::uint32_t core_mask;  // `reserved` before 0.9.8
};

struct mem_map {
  std::uint32_t handle;
  std::uint32_t reserved;
  std::uint64_t offset;  // mmap the DRM fd at this offset
};

struct mem_destroy {
  std::uint32_t handle;
  std::uint32_t reserved;
  std::uint64_t obj_addr;
};

struct mem_sync {
  std::uint32_t flags;
  std::uint32_t reserved;
  std::uint64_t obj_addr;
  std::uint64_t offset;
  std::uint64_t size;
};

#pragma pack(push, 1)
struct task {
  std::uint32_t flags;
  std::uint32_t op_idx;
  std::uint32_t enable_mask;
  std::uint32_t int_mask;
  std::uint32_t int_clear;
  std::uint32_t int_status;
  std::uint32_t regcfg_amount;  // entries before the 4-entry tail
  std::uint32_t regcfg_offset;
  std::uint64_t regcmd_addr;
};
#pragma pack(pop)

// rknpu_subcore_task: the range of tasks one core runs.
struct core_range {
  std::uint32_t task_start;
  std::uint32_t task_number;
};

struct submit {
  std::uint32_t flags;
  std::uint32_t timeout;  // ms
  std::uint32_t task_start;
  std::uint32_t task_number;
  std::uint32_t task_counter;  // out
  std::int32_t priority;
  std::uint64_t task_obj_addr;
  std::uint32_t iommu_domain_id;
  std::uint32_t reserved;
  std::uint64_t task_base_addr;
  std::int64_t hw_elapse_time;  // out, ns
  std::uint32_t core_mask;
  std::int32_t fence_fd;
  core_range subcore_task[5];
};

static_assert(sizeof(action) == 8);
static_assert(sizeof(mem_create) == 48);
static_assert(offsetof(mem_create, flags) == 4 && offsetof(mem_create, size) == 8 &&
              offsetof(mem_create, obj_addr) == 16 && offsetof(mem_create, dma_addr) == 24 &&
              offsetof(mem_create, sram_size) == 32 && offsetof(mem_create, iommu_domain_id) == 40 &&
              offsetof(mem_create, core_mask) == 44);
static_assert(sizeof(mem_map) == 16 && offsetof(mem_map, offset) == 8);
static_assert(sizeof(mem_destroy) == 16 && offsetof(mem_destroy, obj_addr) == 8);
static_assert(sizeof(mem_sync) == 32 && offsetof(mem_sync, obj_addr) == 8 && offsetof(mem_sync, offset) == 16 &&
              offsetof(mem_sync, size) == 24);
static_assert(sizeof(task) == 40 && alignof(task) == 1);
static_assert(offsetof(task, enable_mask) == 8 && offsetof(task, int_mask) == 12 && offsetof(task, int_clear) == 16 &&
              offsetof(task, int_status) == 20 && offsetof(task, regcfg_amount) == 24 &&
              offsetof(task, regcfg_offset) == 28 && offsetof(task, regcmd_addr) == 32);
static_assert(sizeof(core_range) == 8);
static_assert(sizeof(submit) == 104);
static_assert(offsetof(submit, timeout) == 4 && offsetof(submit, task_start) == 8 &&
              offsetof(submit, task_number) == 12 && offsetof(submit, task_counter) == 16 &&
              offsetof(submit, priority) == 20 && offsetof(submit, task_obj_addr) == 24 &&
              offsetof(submit, iommu_domain_id) == 32 && offsetof(submit, task_base_addr) == 40 &&
              offsetof(submit, hw_elapse_time) == 48 && offsetof(submit, core_mask) == 56 &&
              offsetof(submit, fence_fd) == 60 && offsetof(submit, subcore_task) == 64);

// The command numbers. The driver matches a request by its number alone (older callers pass
// smaller structs), so the emulator and the capture shim do too.
inline constexpr std::uint32_t nr_action = drm_command_base + 0x00, nr_submit = drm_command_base + 0x01,
                               nr_mem_create = drm_command_base + 0x02, nr_mem_map = drm_command_base + 0x03,
                               nr_mem_destroy = drm_command_base + 0x04, nr_mem_sync = drm_command_base + 0x05;
inline constexpr unsigned long ioctl_action = drm_iowr(nr_action, sizeof(action));
inline constexpr unsigned long ioctl_submit = drm_iowr(nr_submit, sizeof(submit));
inline constexpr unsigned long ioctl_mem_create = drm_iowr(nr_mem_create, sizeof(mem_create));
inline constexpr unsigned long ioctl_mem_map = drm_iowr(nr_mem_map, sizeof(mem_map));
inline constexpr unsigned long ioctl_mem_destroy = drm_iowr(nr_mem_destroy, sizeof(mem_destroy));
inline constexpr unsigned long ioctl_mem_sync = drm_iowr(nr_mem_sync, sizeof(mem_sync));

// The fact sheet's table (§1.2).
static_assert(ioctl_action == 0xC0086440);
static_assert(ioctl_submit == 0xC0686441);
static_assert(ioctl_mem_create == 0xC0306442);
static_assert(ioctl_mem_map == 0xC0106443);
static_assert(ioctl_mem_destroy == 0xC0106444);
static_assert(ioctl_mem_sync == 0xC0206445);

using ioctl_codes::number_of;

// PC_REGISTER_AMOUNTS as the vendor kernel writes it for the first task of a submit:
// regcfg_amount plus the 4 tail entries (RKNPU_PC_DATA_EXTRA_AMOUNT), in 128-bit words,
// minus one (fact sheet §2.3).
inline constexpr std::uint32_t pc_data_extra_amount = 4;
constexpr std::uint32_t pc_data_amount(const task& t) { return (t.regcfg_amount + pc_data_extra_amount + 1) / 2 - 1; }

}  // namespace regcmd::rknpu
