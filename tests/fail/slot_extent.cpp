// An address slot's extent must cover what its task's registers make the DMA touch: an
// output slot claiming 0 bytes would let a 4 KiB buffer be bound where the DPU writes
// M = 4 rows of N = 64 fp32 outputs (4 surfaces of 4 x 16 bytes: 1024 bytes).
// EXPECT: regcmd rule slot-extent:
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr GLOBAL_OPERATION_ENABLE blocks{.CORE_OP_EN = 1, .DPU_OP_EN = 1};

#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint32_t claimed = 0;
#else
inline constexpr std::uint32_t claimed = 1024;
#endif

inline constexpr auto program = checked_program<32, 1, [](program_writer& w) {
  w.begin_task();
  w.put(DPU_DATA_FORMAT{.PROC_PRECISION = precision::fp16, .IN_PRECISION = precision::fp16,
                        .OUT_PRECISION = precision::fp32});
  w.put_slot<DPU_DST_BASE_ADDR>(operand_role::output, 4096, claimed);
  w.put(DPU_DST_SURF_STRIDE{.DST_SURF_STRIDE = 4});
  w.put(DPU_DATA_CUBE_HEIGHT{.HEIGHT = 3});
  w.put(DPU_DATA_CUBE_CHANNEL{.CHANNEL = 63});
  w.end_task(blocks, dpu_done_interrupts);
}>();
