// Address registers are 32 bits wide: an IOVA above 4 GiB cannot be bound.
// EXPECT: regcmd rule iova-32bit:
#include <regcmd/programs/matmul/emit.hpp>

using namespace regcmd;

inline constexpr auto mm = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64}>();
#ifdef REGCMD_COMPILE_FAIL
inline constexpr std::uint64_t output_iova = 0x1'0000'0000;
#else
inline constexpr std::uint64_t output_iova = 0xf000'0000;
#endif
inline constexpr status bound = [] {
  auto entries = mm.code.entries;
  operand_addresses base{};
  base[static_cast<std::size_t>(operand_role::output)] = output_iova;
  return patch_slots(entries, mm.code.view().slots, base);
}();
static_assert(report<violated_rule(bound)>());
