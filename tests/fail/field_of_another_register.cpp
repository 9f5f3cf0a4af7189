// A field of another register is not a member: IN_PRECISION belongs to CNA_CONV_CON1.
// EXPECT: IN_PRECISION
// EXPECT: (has no non-static data member named|does not refer to any field)
#include <regcmd/registers/cna.hpp>

using namespace regcmd;
using namespace regcmd::reg;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto wrong = encode(CNA_CBUF_CON0{.IN_PRECISION = precision::fp16});
#else
inline constexpr auto right = encode(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16});
#endif
