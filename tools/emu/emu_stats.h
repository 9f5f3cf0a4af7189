/* Counters of the emulated rknpu device, read by tests through dlsym:
 *   auto* stats = reinterpret_cast<int (*)(regcmd_emu_stats*)>(dlsym(RTLD_DEFAULT, "regcmd_emu_get_stats"));
 */
#ifndef REGCMD_EMU_STATS_H
#define REGCMD_EMU_STATS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct regcmd_emu_stats {
  uint64_t submits;          /* RKNPU_SUBMIT calls that reached the device */
  uint64_t jobs_done;        /* submits that completed */
  uint64_t timeouts;         /* submits that returned ETIMEDOUT */
  uint64_t resets;           /* RKNPU_ACT_RESET actions */
  uint64_t syncs;            /* RKNPU_MEM_SYNC calls */
  uint64_t buffers_created;  /* RKNPU_MEM_CREATE calls */
  uint64_t faults;           /* faults the model reported */
  char last_fault[256];
} regcmd_emu_stats;

int regcmd_emu_get_stats(regcmd_emu_stats* out);
void regcmd_emu_reset_stats(void);

#ifdef __cplusplus
}
#endif

#endif
