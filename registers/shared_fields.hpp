#pragma once
// Field lists several registers share, declared once. Every block but PC begins its window
// with S_STATUS, S_POINTER and OPERATION_ENABLE, with the same fields in each (fact sheet §4).
//   S_STATUS          the status of the two ping-pong register groups
//   S_POINTER         which group the CPU writes and the block executes; POINTER_PP_EN |
//                     EXECUTER_PP_EN | POINTER_PP_MODE (0xe) is the ping-pong pointer mode
//                     every program writes
//   OPERATION_ENABLE  written through the task tail's op-enable entry, not directly

#include <regcmd/core/field.hpp>

#define REGCMD_S_STATUS_FIELDS (STATUS_0, uint_field<1, 0>), (STATUS_1, uint_field<17, 16>)

#define REGCMD_S_POINTER_FIELDS                                                                    \
  (POINTER, bool_field<0>), (POINTER_PP_EN, bool_field<1>), (EXECUTER_PP_EN, bool_field<2>),       \
      (POINTER_PP_MODE, bool_field<3>), (POINTER_PP_CLEAR, bool_field<4>),                         \
      (EXECUTER_PP_CLEAR, bool_field<5>), (EXECUTER, bool_field<16>)

#define REGCMD_OPERATION_ENABLE_FIELDS (OP_EN, bool_field<0>)

namespace regcmd::reg {

// The ping-pong pointer mode (0xe) of any block's S_POINTER (matmul-recipe §1.1, §2.2; Mesa;
// the vendor captures).
template <class S_POINTER>
constexpr S_POINTER pingpong_pointer() {
  return S_POINTER{.POINTER_PP_EN = 1, .EXECUTER_PP_EN = 1, .POINTER_PP_MODE = 1};
}

}  // namespace regcmd::reg
