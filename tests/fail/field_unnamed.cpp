// A precision field must be named: its 0 is int8, so leaving it out of a register write
// does not compile (DPU_DATA_FORMAT without IN_PRECISION would read int8 features).
// EXPECT: regcmd_field_whose_zero_is_a_value_was_left_out_name_it
#include <regcmd/registers/dpu.hpp>

using namespace regcmd;
using namespace regcmd::reg;

#ifdef REGCMD_COMPILE_FAIL
inline constexpr DPU_DATA_FORMAT format{.PROC_PRECISION = precision::fp16, .OUT_PRECISION = precision::fp32};
#else
inline constexpr DPU_DATA_FORMAT format{.PROC_PRECISION = precision::fp16, .IN_PRECISION = precision::fp16,
                                        .OUT_PRECISION = precision::fp32};
#endif
inline constexpr DPU_DATA_FORMAT none = DPU_DATA_FORMAT::zeroed();  // all zero on purpose
static_assert(encode(format).value().value() == 0xa8000002 && encode(none).value().value() == 0);
