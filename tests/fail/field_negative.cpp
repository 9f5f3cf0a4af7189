// A negative constant never fits an unsigned field: K - 1 with K = 0 is the classic slip.
// EXPECT: regcmd_field_value_does_not_fit_its_bit_range
#include <regcmd/registers/cna.hpp>

using namespace regcmd::reg;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr int K = 0;
#else
inline constexpr int K = 64;
#endif
inline constexpr auto size1 = regcmd::encode(CNA_DATA_SIZE1{.DATAIN_CHANNEL = K, .DATAIN_CHANNEL_REAL = K - 1});
