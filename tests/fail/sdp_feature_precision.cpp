// A hand-written SDP naming int32 features: the main read DMA stalls on them.
// EXPECT: regcmd rule sdp-feature-precision:
#include <regcmd/programs/sdp/elementwise.hpp>

using namespace regcmd;
using namespace regcmd::reg;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr precision features = precision::int32;
#else
inline constexpr precision features = precision::int16;
#endif
inline constexpr auto program = checked_program<16, 1, [](program_writer& w) {
  w.begin_task();
  w.put(DPU_RDMA_RDMA_FEATURE_MODE_CFG{.FLYING_MODE = 1, .PROC_PRECISION = features, .BURST_LEN = 15,
                                       .IN_PRECISION = features});
  w.put(DPU_RDMA_RDMA_ERDMA_CFG{.ERDMA_DISABLE = 1});
  w.end_task({.DPU_OP_EN = 1, .DPU_RDMA_OP_EN = 1}, dpu_done_interrupts);
}, false>();
