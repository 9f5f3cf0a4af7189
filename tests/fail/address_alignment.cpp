// PC_SOURCE_ADDR is PC_BASE_ADDRESS[31:4]: the next task's address must be 16-byte aligned.
// EXPECT: regcmd_field_address_is_not_aligned_to_its_lowest_bit
#include <regcmd/registers/pc.hpp>

using namespace regcmd::reg;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto next = regcmd::encode(PC_BASE_ADDRESS{.PC_SOURCE_ADDR = 0x4000'0198});
#else
inline constexpr auto next = regcmd::encode(PC_BASE_ADDRESS{.PC_SOURCE_ADDR = 0x4000'0190});
#endif
