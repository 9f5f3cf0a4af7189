#pragma once
// The emulated device inside this process, without LD_PRELOAD: link the static library
// regcmd::emulated_device and open a node with its calls,
//
//   auto dev = regcmd::runtime::device::open("/dev/dri/card1", 0, regcmd::emulator::calls());
//
// (/dev/accel/accel0 for the rocket node; REGCMD_EMU_DEVICE and REGCMD_EMU_ACCEL_DEVICE move
// them, the other REGCMD_EMU_* settings apply as to the preloaded library, emu.cpp). The
// table answers the emulated nodes' files and passes every other to the C library; the
// rest of the process keeps the C library's calls, so a real node stays reachable beside it.

#include <regcmd/runtime/system_calls.hpp>

namespace regcmd::emulator {

const runtime::system_calls& calls();

}  // namespace regcmd::emulator
