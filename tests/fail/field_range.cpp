// A constant that does not fit its field does not compile: DATA_BANK is CNA_CBUF_CON0[3:0].
// EXPECT: regcmd_field_value_does_not_fit_its_bit_range
#include <regcmd/registers/cna.hpp>

using namespace regcmd::reg;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto bank = regcmd::encode(CNA_CBUF_CON0{.DATA_BANK = 16, .WEIGHT_BANK = 11});
#else
inline constexpr auto bank = regcmd::encode(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
#endif
