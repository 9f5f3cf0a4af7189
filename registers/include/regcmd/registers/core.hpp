#pragma once
// CORE (the MAC array), target 0x0801, window 0x3000-0x3fff. The reference calls this
// block "DPU".
// Every register and field of the mainline map (fact sheet §4, from Mesa registers.xml =
// rocket_registers.h); fields are listed lowest bit first, reserved bits are not fields.


#include <regcmd/core/layout.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/registers/control.hpp>

namespace regcmd::reg {

REGCMD_REGISTER(core, CORE_MAC_GATING, 0x300c, (SLCG_OP_EN, uint_field<26, 0>));

// PROC_PRECISION[10:8]: the precision enum (TRM). fp16 matmul 0x201 (both recipes).
REGCMD_REGISTER(core, CORE_MISC_CFG, 0x3010, (QD_EN, bool_field<0>), (DW_EN, bool_field<1>),
                (PROC_PRECISION, enum_field<precision, 10, 8>), (SOFT_GATING, uint_field<19, 14>));

// Matmul: DATAOUT_HEIGHT = M - 1 (reference "Key registers": 0x3014).
REGCMD_REGISTER(core, CORE_DATAOUT_SIZE_0, 0x3014, (DATAOUT_WIDTH, uint_field<15, 0>),
                (DATAOUT_HEIGHT, uint_field<31, 16>));

// Matmul: DATAOUT_CHANNEL = N - 1 (reference "Key registers": 0x3018).
REGCMD_REGISTER(core, CORE_DATAOUT_SIZE_1, 0x3018, (DATAOUT_CHANNEL, uint_field<15, 0>));

REGCMD_REGISTER(core, CORE_CLIP_TRUNCATE, 0x301c, (CLIP_TRUNCATE, uint_field<4, 0>), (ROUND_TYPE, bool_field<6>));

// Written as 0 by both hardware-run recipes (A: "doesn't seem to be documented"; B: "must be
// zeroed") and by Mesa; absent from mainline and the TRM (fact sheet §4, matmul-recipe §0.2).
REGCMD_REGISTER_BEYOND_MAINLINE(core, CORE_UNNAMED_3030, 0x3030, (VALUE, uint_field<31, 0>));

using core_registers = register_list<
    CORE_S_STATUS, CORE_S_POINTER, CORE_OPERATION_ENABLE,
    CORE_MAC_GATING, CORE_MISC_CFG, CORE_DATAOUT_SIZE_0,
    CORE_DATAOUT_SIZE_1, CORE_CLIP_TRUNCATE, CORE_UNNAMED_3030>;

}  // namespace regcmd::reg
