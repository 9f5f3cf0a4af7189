// A hand-written chain: a fp32-output matmul, then a 2-input fp16 SDP on its result.
// EXPECT: regcmd rule sdp-precision-path:
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr precision written = precision::fp32;
#else
inline constexpr precision written = precision::fp16;
#endif
inline constexpr matmul_geometry mm =
    resolve(matmul_spec{.dtype = precision::fp16, .out_dtype = written, .M = 4, .K = 64, .N = 32}).value();
inline constexpr ew_geometry add = resolve_ew({.op = ew_op::add, .M = 16, .N = 8, .layout = operand_layout::row_major}).value();
inline constexpr auto program = checked_program<256, 2, [](program_writer& w) {
  w.bind(operand_binding{}(operand_role::output, operand_role::intermediate));
  emit_task(w, matmul::make_task(mm));
  w.bind(operand_binding{}(operand_role::feature, operand_role::intermediate));
  sdp::emit(w, add);
}, false>();
