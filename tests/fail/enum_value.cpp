// An enum field takes only declared enumerators: CONV_MODE 1 is reserved (TRM).
// EXPECT: regcmd_field_value_is_not_a_declared_enumerator
#include <regcmd/registers/cna.hpp>

using namespace regcmd::reg;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto mode = static_cast<conv_mode>(1);
#else
inline constexpr auto mode = conv_mode::depthwise;
#endif
inline constexpr auto con1 = regcmd::encode(
    CNA_CONV_CON1{.CONV_MODE = mode, .IN_PRECISION = regcmd::precision::fp16, .PROC_PRECISION = regcmd::precision::fp16});
