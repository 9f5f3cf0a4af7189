#pragma once
// What the model's op implementations share (model/*.cpp).

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include <regcmd/core/half.hpp>
#include <regcmd/core/layout.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/registers/dpu.hpp>

namespace regcmd::model {

// A register of the group an op runs with, as its type.
template <class R, class Group>
R read(const Group& r) {
  return unpack<R>(r.get(R::offset));
}

// Adds a fault of the running task to the result.
struct op_report {
  run_result& out;
  std::uint32_t task;
  void operator()(fault_kind k, std::string what) const { out.faults.push_back({k, task, std::move(what)}); }
  // A wild access of the `bytes` from `address`.
  void wild(std::uint64_t address, std::uint64_t bytes, std::string what) const {
    out.faults.push_back({fault_kind::wild_access, task, std::move(what), address, bytes});
  }
};

// CNA_CBUF_CON0 outside the SoC's bank split (12 banks on RK3588) hangs the submit (reference "The M-tiling
// scheduler": below 0x1b). True, and reported, when it does.
inline bool cbuf_split_hangs(const reg::CNA_CBUF_CON0& cbuf, const soc_numbers& soc, const op_report& report) {
  const std::uint64_t data_banks = cbuf.DATA_BANK.value(), weight_banks = cbuf.WEIGHT_BANK.value();
  if (data_banks + weight_banks == soc.cbuf_banks && data_banks <= soc.cbuf_banks - 1 && weight_banks >= 1)
    return false;
  const std::string banks = std::to_string(soc.cbuf_banks), most = std::to_string(soc.cbuf_banks - 1);
  report(fault_kind::hang, "CNA_CBUF_CON0 is not a " + banks + "-bank split (DATA_BANK + WEIGHT_BANK = " + banks +
                               ", DATA_BANK <= " + most + ")");
  return true;
}

// The int8 entry wedge (npu.hpp; regcmd-isa-reference "State gotchas"): entering int8 mode
// without a reset wedges the first int8 job. Otherwise records the op's precision in the
// NPU's state. True, and reported, when the op wedges.
inline bool int8_entry_wedges(const quirks& behaviour, int& last_precision, bool& int8_primed, precision in,
                              const op_report& report) {
  if (in == precision::int8 && behaviour.int8_entry_wedge && last_precision != static_cast<int>(precision::int8) &&
      !int8_primed) {
    report(fault_kind::wedge, "first int8 job after entering int8 mode without RKNPU_ACT_RESET");
    return true;
  }
  last_precision = static_cast<int>(in);
  int8_primed = in == precision::int8 && int8_primed;
  return false;
}

// Cold start (npu.hpp): the first job writing a freshly allocated buffer leaves it stale.
// Marks the output as written by this job in precision `out`; true, and reported, when
// the write does not land.
inline bool cold_start_stale(const quirks& behaviour, iova_space::region& output, precision out,
                             const op_report& report) {
  output.touched = true;
  output.touched_as = static_cast<int>(out);
  if (!behaviour.cold_start_stale || output.warm) return false;
  report(fault_kind::stale_output, "first job writing a freshly allocated output buffer");
  return true;
}

// Little-endian element bits of 1 to 4 bytes.
inline std::uint32_t load_bits(const std::uint8_t* p, std::uint32_t bytes) {
  std::uint32_t v = 0;
  for (std::uint32_t i = 0; i < bytes; ++i) v |= std::uint32_t{p[i]} << (8 * i);
  return v;
}
inline void store_bits(std::uint8_t* p, std::uint32_t v, std::uint32_t bytes) {
  for (std::uint32_t i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// One input element as the MAC array reads it: fp16 as float, int8 and int4 sign-extended.
template <class T>
T load_input(const std::uint8_t* base, std::uint64_t at, precision in, bool high_nibble) {
  if (in == precision::fp16) return static_cast<T>(half_to_float(static_cast<std::uint16_t>(load_bits(base + at, 2))));
  if (in == precision::int4) {
    const auto nibble = static_cast<std::uint8_t>(high_nibble ? base[at] >> 4 : base[at] & 0xf);
    return static_cast<T>(static_cast<std::int8_t>(static_cast<std::uint8_t>(nibble << 4)) >> 4);
  }
  return static_cast<T>(static_cast<std::int8_t>(base[at]));
}

// A BS or BN stage of the DPU as its four registers set it up (registers/dpu.hpp), in the
// order it applies them: ALU, MUL, ReLU, ReLUX (NVDLA's X-stage order).
struct alu_stage {
  bool active = false;                // *_BYPASS clear
  bool add = false;                   // *_ALU_BYPASS clear: the ALU combines v with an operand
  bool from_memory = false;           // ALU operand per output channel from the BS DMA, else `operand`
  bool mul = false;                   // *_MUL_BYPASS clear
  bool mul_from_memory = false;       // *_MUL_SRC: memory, else `mul_operand`
  bool prelu = false;                 // *_MUL_PRELU: only negative values are multiplied
  bool relu = false;                  // *_RELU_BYPASS clear
  bool relux = false;                 // *_RELUX_EN
  bool truncate_from_memory = false;  // *_TRUNCATE_SRC
  reg::alu_algo algo{};
  std::uint32_t operand = 0, relux_cmp = 0;  // raw bits: int32 (integer ops) or fp32 (fp16 ops)
  std::uint32_t mul_operand = 0;             // 16 bits: int16 (integer ops) or fp16 (fp16 ops)
  std::uint32_t mul_shift = 0;               // *_MUL_SHIFT_VALUE
};

template <class Group>
alu_stage read_bs(const Group& r) {
  using namespace reg;
  const auto c = read<DPU_BS_CFG>(r);
  const auto m = read<DPU_BS_MUL_CFG>(r);
  return {.active = !c.BS_BYPASS.value(),
          .add = !c.BS_ALU_BYPASS.value(),
          .from_memory = c.BS_ALU_SRC.value() == operand_source::memory,
          .mul = !c.BS_MUL_BYPASS.value(),
          .mul_from_memory = m.BS_MUL_SRC.value() == operand_source::memory,
          .prelu = c.BS_MUL_PRELU.value() == 1,
          .relu = !c.BS_RELU_BYPASS.value(),
          .relux = c.BS_RELUX_EN.value() == 1,
          .truncate_from_memory = m.BS_TRUNCATE_SRC.value() == 1,
          .algo = c.BS_ALU_ALGO.value(),
          .operand = static_cast<std::uint32_t>(read<DPU_BS_ALU_CFG>(r).BS_ALU_OPERAND.value()),
          .relux_cmp = static_cast<std::uint32_t>(read<DPU_BS_RELUX_CMP_VALUE>(r).BS_RELUX_CMP_DAT.value()),
          .mul_operand = static_cast<std::uint32_t>(m.BS_MUL_OPERAND.value()),
          .mul_shift = static_cast<std::uint32_t>(m.BS_MUL_SHIFT_VALUE.value())};
}

template <class Group>
alu_stage read_bn(const Group& r) {
  using namespace reg;
  const auto c = read<DPU_BN_CFG>(r);
  const auto m = read<DPU_BN_MUL_CFG>(r);
  return {.active = !c.BN_BYPASS.value(),
          .add = !c.BN_ALU_BYPASS.value(),
          .from_memory = c.BN_ALU_SRC.value() == operand_source::memory,
          .mul = !c.BN_MUL_BYPASS.value(),
          .mul_from_memory = m.BN_MUL_SRC.value() == operand_source::memory,
          .prelu = c.BN_MUL_PRELU.value() == 1,
          .relu = !c.BN_RELU_BYPASS.value(),
          .relux = c.BN_RELUX_EN.value() == 1,
          .truncate_from_memory = m.BN_TRUNCATE_SRC.value() == 1,
          .algo = c.BN_ALU_ALGO.value(),
          .operand = static_cast<std::uint32_t>(read<DPU_BN_ALU_CFG>(r).BN_ALU_OPERAND.value()),
          .relux_cmp = static_cast<std::uint32_t>(read<DPU_BN_RELUX_CMP_VALUE>(r).BN_RELUX_CMP_DAT.value()),
          .mul_operand = static_cast<std::uint32_t>(m.BN_MUL_OPERAND.value()),
          .mul_shift = static_cast<std::uint32_t>(m.BN_MUL_SHIFT_VALUE.value())};
}

// a / 2^s rounded as the model's parameter says (npu.hpp `rounding`). half_up's
// (a + 2^(s-1)) >> s is floor(a / 2^s) plus bit s - 1 of a, which cannot overflow; shifts
// beyond 63 bits leave only the sign.
inline std::int64_t round_shift(std::int64_t a, std::uint32_t s, rounding mode) {
  if (s == 0) return a;
  const auto shifted = [a](std::uint32_t n) { return a >> std::min(n, 63u); };
  const std::int64_t floor = shifted(s);
  return mode == rounding::truncate ? floor : floor + (shifted(s - 1) & 1);
}

// a·b, saturated to int64 instead of overflowing (far beyond any int8 output anyway).
inline std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  std::int64_t p = 0;
  if (!__builtin_mul_overflow(a, b, &p)) return p;
  return (a < 0) != (b < 0) ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
}

// A BS or BN stage's multiplier (a register operand): every value, or with MUL_PRELU the
// negative ones only; fp16 ops in fp32, integer ops exactly, shifted back with `mode`.
inline float multiply(const alu_stage& s, float v) {
  if (s.mul && (!s.prelu || v < 0)) v *= half_to_float(static_cast<std::uint16_t>(s.mul_operand));
  return v;
}
inline std::int64_t multiply(const alu_stage& s, std::int64_t v, rounding mode) {
  if (s.mul && (!s.prelu || v < 0))
    v = round_shift(saturating_mul(v, static_cast<std::int16_t>(s.mul_operand)), s.mul_shift, mode);
  return v;
}

// ReLU, then ReLUX's clamp from above by the compare value (int32 or fp32 bits).
template <class V>
V activate(bool relu, bool relux, std::uint32_t cmp_bits, V v) {
  if (relu) v = std::max(v, V{0});
  if constexpr (std::is_floating_point_v<V>) {
    if (relux) v = std::min(v, std::bit_cast<float>(cmp_bits));
  } else {
    if (relux) v = std::min(v, V{static_cast<std::int32_t>(cmp_bits)});
  }
  return v;
}

}  // namespace regcmd::model
