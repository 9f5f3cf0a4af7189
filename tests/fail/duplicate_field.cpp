// A field named twice in one write does not compile: values are never OR-ed or overridden.
// EXPECT: (designator used multiple times|initializer overrides prior initialization)
#include <regcmd/registers/cna.hpp>

using namespace regcmd::reg;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr auto twice = regcmd::encode(CNA_CBUF_CON0{.DATA_BANK = 1, .DATA_BANK = 2});
#else
inline constexpr auto once = regcmd::encode(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
#endif
