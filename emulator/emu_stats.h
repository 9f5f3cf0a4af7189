/* Counters of the emulated NPU device (both drivers), read by tests through dlsym:
 *   auto* stats = reinterpret_cast<int (*)(regcmd_emu_stats*)>(dlsym(RTLD_DEFAULT, "regcmd_emu_get_stats"));
 */
#ifndef REGCMD_EMU_STATS_H
#define REGCMD_EMU_STATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define REGCMD_EMU_MAX_HANDLES 16

typedef struct regcmd_emu_stats {
  uint64_t submits;          /* RKNPU_SUBMIT / DRM_IOCTL_ROCKET_SUBMIT calls that reached the device */
  uint64_t jobs_done;        /* rknpu: submits that completed; rocket: jobs that completed */
  uint64_t timeouts;         /* rknpu: submits that returned ETIMEDOUT; rocket: jobs the kernel stopped */
  uint64_t resets;           /* RKNPU_ACT_RESET actions */
  uint64_t kernel_resets;    /* rocket: cores the kernel reset after a timed-out job */
  uint64_t syncs;            /* RKNPU_MEM_SYNC, ROCKET_PREP_BO and ROCKET_FINI_BO calls */
  uint64_t prep_bo;          /* ROCKET_PREP_BO calls */
  uint64_t fini_bo;          /* ROCKET_FINI_BO calls */
  uint64_t buffers_created;  /* RKNPU_MEM_CREATE / ROCKET_CREATE_BO calls */
  uint64_t jobs_dropped;     /* rocket: jobs SUBMIT could not queue (the kernel drops them silently) */
  uint64_t faults;           /* faults the model reported */
  uint64_t max_submits_in_flight; /* rknpu with REGCMD_EMU_SUBMIT_MS: most submits under way at once */
  uint64_t submit_ns;        /* time spent in submit ioctls (the model's work): a run's host time is the rest */
  /* cacheable buffers (cpu_cache.hpp): cache lines a TO_DEVICE sync wrote back, and lines
   * the CPU wrote that a FROM_DEVICE sync dropped (writes lost: no TO_DEVICE came first) */
  uint64_t lines_written_back;
  uint64_t dirty_lines_dropped;
  /* DMA_BUF_IOCTL_SYNC on dma-heap buffers and exported dma-bufs: START and END calls */
  uint64_t dma_buf_sync_starts, dma_buf_sync_ends;
  /* rocket: the last job queued: its task count and the handles it listed */
  uint32_t last_job_tasks;
  uint32_t last_job_in_count, last_job_out_count;
  uint32_t last_job_in[REGCMD_EMU_MAX_HANDLES], last_job_out[REGCMD_EMU_MAX_HANDLES];
  char last_fault[256];
} regcmd_emu_stats;

__attribute__((visibility("default"))) int regcmd_emu_get_stats(regcmd_emu_stats* out);
__attribute__((visibility("default"))) void regcmd_emu_reset_stats(void);

#ifdef __cplusplus
}
#endif

#endif
