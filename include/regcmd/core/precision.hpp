#pragma once
// The precision enum shared by every precision field (CNA_CONV_CON1, CORE_MISC_CFG,
// DPU_DATA_FORMAT, DPU_RDMA_RDMA_FEATURE_MODE_CFG, PPU_DATA_FORMAT) and its traits.
//
// Values: regcmd-isa-reference "The precision enum" (derived from three captures: int8 MM,
// fp16 MM, int4 MM) and fact sheet §4.1 (TRM): 0 int8, 1 int16, 2 fp16, 4 int32 (output
// only), 5 fp32 (what DPU_DATA_FORMAT 0xa8000002 decodes to for fp16->fp32), 6 int4. The
// TRM also lists 3 bf16 and 7 tf32; no RK3588 datapath uses them (the reference's platform
// matrix lists symmetric fp16, int8 and int4 modes only), so they exist for decoding.

#include <cstdint>

#include <regcmd/core/enumeration.hpp>

namespace regcmd {

REGCMD_ENUM(precision, (int8, 0), (int16, 1), (fp16, 2), (bf16, 3), (int32, 4), (fp32, 5),
            (int4, 6), (tf32, 7))
// 0 is int8: a precision field left out of a register write would silently mean int8.
REGCMD_ENUM_ZERO_IS_A_VALUE(precision)

// K x N extent of one weight tile (the unit the weight packers lay out).
struct tile_shape {
  unsigned n = 0;
  unsigned k = 0;
  friend constexpr bool operator==(tile_shape, tile_shape) = default;
};

struct precision_traits {
  unsigned bits_per_element;
  // Elements in one 128-bit CBUF entry as the CNA reads features (reference "0x107c"):
  // 8 fp16, 16 int8, and 16 int4 too (int4 reuses the int8 entry, half of it used).
  // 0 for precisions that are never a matmul input.
  unsigned elements_per_cbuf_entry;
  // Weight tile (reference "Operand tile layouts"): fp16 N16 x K32, int8 N32 x K32.
  // Zero where the reference gives none.
  tile_shape weight_tile;
  // A MAC input precision on RK3588 (symmetric modes only; which output each input pairs
  // with is a property of the matmul programs).
  bool matmul_input;
};

constexpr precision_traits traits(precision p) {
  switch (p) {
    case precision::int8: return {8, 16, {32, 32}, true};
    case precision::int16: return {16, 0, {}, false};
    case precision::fp16: return {16, 8, {16, 32}, true};
    case precision::int32: return {32, 0, {}, false};
    case precision::fp32: return {32, 0, {}, false};
    case precision::int4: return {4, 16, {}, true};
    case precision::bf16:
    case precision::tf32: break;
  }
  return {p == precision::bf16 ? 16u : 32u, 0, {}, false};
}

// Bytes that `count` elements of precision p occupy (int4 packs two per byte).
constexpr std::uint64_t bytes_of(precision p, std::uint64_t count) {
  return (count * traits(p).bits_per_element + 7) / 8;
}

}  // namespace regcmd
