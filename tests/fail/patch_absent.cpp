// Patching a register the program never writes changes nothing: refused.
// EXPECT: regcmd rule patch-absent:
#include <regcmd/programs/captured/program.hpp>

using namespace regcmd;
using namespace regcmd::reg;

inline constexpr auto capture = captured_program<8, 1, 1>({.pingpong = true}, [](program_writer& w) {
  w.begin_task();
  w.put(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  w.end_task(GLOBAL_OPERATION_ENABLE{.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}, dpu_done_interrupts);
});

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto patched_capture = patched<capture, [](patcher& p) { p.patch(CNA_CONV_CON2{.FEATURE_GRAINS = 5}); }>();
#else
inline constexpr auto patched_capture =
    patched<capture, [](patcher& p) { p.patch(CNA_CBUF_CON0{.DATA_BANK = 2, .WEIGHT_BANK = 10}); }>();
#endif
