// The model's SDP: a DPU + DPU_RDMA op (enable mask 0x18, no CNA/CORE/PPU) reading a tensor
// through the main read DMA (flying mode) and, for an element-wise op, a second operand
// through the ERDMA or a register. Geometry: H = 1, W pixels (DATA_CUBE_WIDTH + 1), C
// channels (DATA_CUBE_CHANNEL + 1) in NC1HWC2 surfaces of W pixels x 16 bytes; precisions
// DPU_DATA_FORMAT IN = PROC = OUT = the RDMA's, fp16, int8 or int16.
//
// The register contract it executes (ops-reference §6, the activation contract of issue 16),
// per element, in this order:
//   BS, BN  unless <S>_BYPASS: ALU (SUM add, MAX, MIN with the register operand <S>_ALU_OPERAND,
//           fp32 bits or int32), MUL (<S>_MUL_OPERAND, fp16 bits, or int16 with
//           v = round_shift(v·m, <S>_MUL_SHIFT_VALUE); <S>_MUL_PRELU: negative v only), ReLU,
//           ReLUX (min with <S>_RELUX_CMP_DAT), each unless bypassed.
//   EW      bypassed; or an element-wise op (add/max/min/mul with a per-element or
//           per-channel tensor, or fp16's EW_OP_VALUE immediate); or the lookup table alone
//           (EW_CFG 0x302, fp16 only): LUT_CFG 0x68, LE over [LE_START, LE_END), LO over
//           [LO_START, LO_END] with LE_END = LO_START, (END - START) / 2^INDEX_SELECT ≤ 512
//           intervals interpolated linearly, LO at the shared point, below LE_START LE[0] plus
//           LE's underflow slope, above LO_END LO's last entry plus LO's overflow slope
//           (slopes (int16)SCALE · 2^-SHIFT output units per input unit). The tables are the
//           npu's LUT memory (npu.hpp).
//   OUT_CVT fp16: scale 1, offset 0, and with CVT_TYPE 1 a factor 2^-MINUS_EXP; integers:
//           saturate(round_shift(v·OUT_CVT_SCALE, OUT_CVT_SHIFT) + OUT_CVT_OFFSET).
// fp16 ops compute in fp32 and round the write to nearest even; integer ops compute exactly
// (int64) and saturate on the write; the shifts round as npu::requantization_rounding says.
// Faults: the reference's stalls (an int32/fp32 main read, a chained 2-input op reading bytes
// of another precision: timeout), a DMA outside every buffer (wild access), the cold start
// (stale output). Register values outside the contract (memory operands of BS/BN, other ALU
// functions, a LUT on integers or with other settings, requantization of a fp16 op, a height
// above 1, ping-pong on, ...) are reported unmodelled and nothing is written.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <regcmd/core/half.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/registers/dpu.hpp>
#include <regcmd/registers/dpu_rdma.hpp>

#include "op_support.hpp"

namespace regcmd::model {

namespace {
using namespace regcmd::reg;

// One element of a 1- or 2-byte tensor, as a number.
double load(const std::uint8_t* p, precision t) {
  if (t == precision::int8) return static_cast<std::int8_t>(p[0]);
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return t == precision::fp16 ? half_to_float(v) : static_cast<std::int16_t>(v);
}

// Stores a fp16 result, rounded once from fp32.
void store_half(std::uint8_t* p, float v) {
  const std::uint16_t h = float_to_half(v);
  std::memcpy(p, &h, 2);
}

// Stores an integer result, saturated to int8 or int16.
void store_int(std::uint8_t* p, precision t, std::int64_t v) {
  if (t == precision::int8) {
    p[0] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp<std::int64_t>(v, -128, 127)));
  } else {
    const auto i = static_cast<std::int16_t>(std::clamp<std::int64_t>(v, -32768, 32767));
    std::memcpy(p, &i, 2);
  }
}

// a + b, saturated to int64 instead of overflowing.
std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t s = 0;
  if (!__builtin_add_overflow(a, b, &s)) return s;
  return a < 0 ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
}

// Why an active BS or BN stage (`name`) of an SDP is outside the contract, or empty.
std::string stage_problem(const alu_stage& s, const char* name, bool fp16) {
  if (!s.active) return {};
  const std::string stage = std::string("the SDP's ") + name + " stage: ";
  if (s.add) {
    if (s.from_memory) return stage + "an ALU operand from memory (only the register operand, ALU_SRC 0, is modelled)";
    if (s.algo != alu_algo::SUM && s.algo != alu_algo::MAX && s.algo != alu_algo::MIN)
      return stage + "an ALU function other than SUM, MAX and MIN";
  }
  if (s.mul) {
    if (s.mul_from_memory) return stage + "a multiplier operand from memory (only the register operand, MUL_SRC 0, is modelled)";
    if (s.truncate_from_memory) return stage + "TRUNCATE_SRC set (a truncation from memory)";
    if (fp16 && s.mul_shift != 0) return stage + "a fp16 multiplier with MUL_SHIFT_VALUE (only integer ops shift)";
  }
  return {};
}

// One BS or BN stage applied to a fp16 op's value, in fp32.
float apply_stage(const alu_stage& s, float v) {
  if (!s.active) return v;
  if (s.add) {
    const float operand = std::bit_cast<float>(s.operand);
    v = s.algo == alu_algo::SUM ? v + operand : s.algo == alu_algo::MAX ? std::max(v, operand) : std::min(v, operand);
  }
  return activate(s.relu, s.relux, s.relux_cmp, multiply(s, v));
}

// One BS or BN stage applied to an integer op's value, exactly.
std::int64_t apply_stage(const alu_stage& s, std::int64_t v, rounding mode) {
  if (!s.active) return v;
  if (s.add) {
    const std::int64_t operand = static_cast<std::int32_t>(s.operand);
    v = s.algo == alu_algo::SUM ? saturating_add(v, operand)
        : s.algo == alu_algo::MAX ? std::max(v, operand)
                                  : std::min(v, operand);
  }
  return activate(s.relu, s.relux, s.relux_cmp, multiply(s, v, mode));
}

// The lookup table as the LUT registers configure it over the npu's two tables.
struct lut_lookup {
  const npu::lut_table* le = nullptr;
  const npu::lut_table* lo = nullptr;
  std::int64_t le_start = 0, le_end = 0, lo_start = 0, lo_end = 0;
  int le_select = 0, lo_select = 0;
  std::int64_t le_last = 0, lo_last = 0;  // the last interval index of each table
  double underflow_slope = 0, overflow_slope = 0;

  // T[i] + f·(T[i + 1] − T[i]) at position p of table T of `last` intervals.
  static double interpolate(const npu::lut_table& t, double p, std::int64_t last) {
    const std::int64_t i = std::clamp<std::int64_t>(static_cast<std::int64_t>(std::floor(p)), 0, last);
    const std::int64_t j = std::min(i + 1, last);
    const double f = p - static_cast<double>(i);
    const auto at = [&](std::int64_t k) { return static_cast<double>(t[static_cast<std::size_t>(k)]); };
    return at(i) + f * (at(j) - at(i));
  }

  double operator()(double v) const {
    if (std::isnan(v)) return v;
    const double le_from = static_cast<double>(le_start), lo_from = static_cast<double>(lo_start);
    const double le_to = static_cast<double>(le_end), lo_to = static_cast<double>(lo_end);
    if (v >= lo_from && v <= lo_to) return interpolate(*lo, std::ldexp(v - lo_from, -lo_select), lo_last);  // hybrid: LO
    if (v >= le_from && v < le_to) return interpolate(*le, std::ldexp(v - le_from, -le_select), le_last);
    if (v < le_from) return (*le)[0] + (v - le_from) * underflow_slope;  // UFLOW_PRIORITY 0: LE's slope
    return (*lo)[static_cast<std::size_t>(lo_last)] + (v - lo_to) * overflow_slope;  // OFLOW_PRIORITY 1: LO's
  }
};

// The intervals a table of [start, end] with index select `select` has, or -1 when they are
// not a whole number from 0 to 512.
std::int64_t lut_intervals(std::int64_t start, std::int64_t end, std::uint64_t select) {
  const std::int64_t span = end - start;  // both int32: no overflow
  if (span < 0) return -1;
  if (select >= 63) return span == 0 ? 0 : -1;
  if (span % (std::int64_t{1} << select) != 0) return -1;
  const std::int64_t n = span >> select;
  return n <= 512 ? n : -1;
}

// Reads the LUT registers into `lut`; why they are outside the contract, or nullptr.
template <class Group>
const char* read_lut(const Group& r, lut_lookup& lut) {
  if (r.get(DPU_LUT_CFG::offset) != 0x68)
    return "DPU_LUT_CFG other than 0x68 (LO_LE_MUX 2, OFLOW_PRIORITY 1, HYBRID_PRIORITY 1, all else 0)";
  const auto info = read<DPU_LUT_INFO>(r);
  const auto as_int32 = [](std::uint64_t bits) { return std::int64_t{static_cast<std::int32_t>(static_cast<std::uint32_t>(bits))}; };
  lut.le_start = as_int32(read<DPU_LUT_LE_START>(r).LUT_LE_START.value());
  lut.le_end = as_int32(read<DPU_LUT_LE_END>(r).LUT_LE_END.value());
  lut.lo_start = as_int32(read<DPU_LUT_LO_START>(r).LUT_LO_START.value());
  lut.lo_end = as_int32(read<DPU_LUT_LO_END>(r).LUT_LO_END.value());
  const std::uint64_t le_select = info.LUT_LE_INDEX_SELECT.value(), lo_select = info.LUT_LO_INDEX_SELECT.value();
  lut.le_last = lut_intervals(lut.le_start, lut.le_end, le_select);
  lut.lo_last = lut_intervals(lut.lo_start, lut.lo_end, lo_select);
  if (lut.le_last < 0)
    return "a LUT LE table whose (LE_END - LE_START) / 2^LE_INDEX_SELECT is not a whole number of intervals from 0 to 512";
  if (lut.lo_last < 0)
    return "a LUT LO table whose (LO_END - LO_START) / 2^LO_INDEX_SELECT is not a whole number of intervals from 0 to 512";
  if (lut.le_end != lut.lo_start) return "LUT tables that are not contiguous (LE_END != LO_START)";
  lut.le_select = static_cast<int>(le_select);
  lut.lo_select = static_cast<int>(lo_select);
  const auto slope = [](std::uint64_t scale, std::uint64_t shift) {
    return std::ldexp(static_cast<double>(static_cast<std::int16_t>(static_cast<std::uint16_t>(scale))), -static_cast<int>(shift));
  };
  lut.underflow_slope = slope(read<DPU_LUT_LE_SLOPE_SCALE>(r).LUT_LE_SLOPE_UFLOW_SCALE.value(),
                              read<DPU_LUT_LE_SLOPE_SHIFT>(r).LUT_LE_SLOPE_UFLOW_SHIFT.value());
  lut.overflow_slope = slope(read<DPU_LUT_LO_SLOPE_SCALE>(r).LUT_LO_SLOPE_OFLOW_SCALE.value(),
                             read<DPU_LUT_LO_SLOPE_SHIFT>(r).LUT_LO_SLOPE_OFLOW_SHIFT.value());
  return nullptr;
}
}  // namespace

void npu::run_sdp(iova_space& memory, const registers& r, std::uint32_t task, bool pingpong, run_result& out) {
  const op_report report{out, task};
  const auto mode = read<DPU_RDMA_RDMA_FEATURE_MODE_CFG>(r);
  const precision in = mode.IN_PRECISION.value();
  // The reference's stalls first.
  if (in != precision::fp16 && in != precision::int8 && in != precision::int16)
    return report(fault_kind::timeout, "the SDP's main read DMA does not read int32/fp32 features: it stalls");
  const auto erdma = read<DPU_RDMA_RDMA_ERDMA_CFG>(r);
  const bool two_inputs = erdma.ERDMA_DISABLE.value() == 0;
  const std::uint32_t src_address = static_cast<std::uint32_t>(read<DPU_RDMA_RDMA_SRC_BASE_ADDR>(r).SRC_BASE_ADDR.value());
  iova_space::region* source = memory.find(src_address, 1);
  if (two_inputs && task > 0 && source && source->touched && source->touched_as != static_cast<int>(in))
    return report(fault_kind::timeout, "a chained 2-input SDP reads bytes of another precision: the DMA stalls");
  if (pingpong) return report(fault_kind::unmodelled, "an SDP task with ping-pong on (the reference runs SDP with it off)");

  // The configuration of the contract (the header comment); anything else is not modelled.
  const auto format = read<DPU_DATA_FORMAT>(r);
  const auto feature = read<DPU_FEATURE_MODE_CFG>(r);
  const auto ew = read<DPU_EW_CFG>(r);
  const auto out_scale = read<DPU_OUT_CVT_SCALE>(r);
  const auto out_shift = read<DPU_OUT_CVT_SHIFT>(r);
  const bool fp16 = in == precision::fp16;
  if (format.IN_PRECISION.value() != in || format.PROC_PRECISION.value() != in || format.OUT_PRECISION.value() != in ||
      mode.PROC_PRECISION.value() != in)
    return report(fault_kind::unmodelled, "an SDP whose DPU_DATA_FORMAT and RDMA precisions differ");
  if (format.BS_MUL_SHIFT_VALUE_NEG.value() != 0 || format.BN_MUL_SHIFT_VALUE_NEG.value() != 0 ||
      format.EW_TRUNCATE_NEG.value() != 0)
    return report(fault_kind::unmodelled, "DPU_DATA_FORMAT with BS/BN_MUL_SHIFT_VALUE_NEG or EW_TRUNCATE_NEG set");
  if (feature.FLYING_MODE.value() != 1 || feature.OUTPUT_MODE.value() != 2 || mode.FLYING_MODE.value() != 1)
    return report(fault_kind::unmodelled, "an SDP not in flying mode or not writing to memory");
  const alu_stage bs = read_bs(r), bn = read_bn(r);
  if (const std::string why = stage_problem(bs, "BS", fp16); !why.empty()) return report(fault_kind::unmodelled, why);
  if (const std::string why = stage_problem(bn, "BN", fp16); !why.empty()) return report(fault_kind::unmodelled, why);
  if (read<DPU_EW_CVT_SCALE_VALUE>(r).EW_OP_CVT_SCALE.value() != 1 || read<DPU_EW_CVT_SCALE_VALUE>(r).EW_OP_CVT_SHIFT.value() != 0 ||
      r.get(DPU_EW_CVT_OFFSET_VALUE::offset) != 0)
    return report(fault_kind::unmodelled, "an EW operand conversion other than the identity (EW_CVT scale 1, shift 0, offset 0)");
  if (fp16) {
    if (out_scale.FP32TOFP16_EN.value() != 1 || mode.MRDMA_FP16TOFP32_EN.value() != 1)
      return report(fault_kind::unmodelled, "a fp16 SDP without the fp16 <-> fp32 conversions of its reads and write");
    if (out_scale.OUT_CVT_SCALE.value() != 1 || r.get(DPU_OUT_CVT_OFFSET::offset) != 0)
      return report(fault_kind::unmodelled, "a fp16 SDP with an OUT_CVT scale other than 1 or an OUT_CVT offset");
    if (out_shift.OUT_CVT_SHIFT.value() != 0 || out_shift.CVT_ROUND.value() ||
        (!out_shift.CVT_TYPE.value() && out_shift.MINUS_EXP.value() != 0))
      return report(fault_kind::unmodelled,
                    "a fp16 SDP with OUT_CVT_SHIFT or CVT_ROUND set, or MINUS_EXP without CVT_TYPE 1");
  } else if (out_shift.CVT_TYPE.value() || out_shift.CVT_ROUND.value() || out_shift.MINUS_EXP.value() != 0) {
    return report(fault_kind::unmodelled, "an integer SDP with CVT_TYPE, CVT_ROUND or MINUS_EXP set in DPU_OUT_CVT_SHIFT");
  }

  // Geometry: H = 1, W pixels, C channels in atoms of 16 bytes.
  const std::uint32_t bytes = static_cast<std::uint32_t>(bytes_of(in, 1)), atom = 16 / bytes;
  const auto W = static_cast<std::uint32_t>(read<DPU_DATA_CUBE_WIDTH>(r).WIDTH.value() + 1);
  const auto C = static_cast<std::uint32_t>(read<DPU_DATA_CUBE_CHANNEL>(r).CHANNEL.value() + 1);
  const auto dst_stride = static_cast<std::uint32_t>(read<DPU_DST_SURF_STRIDE>(r).DST_SURF_STRIDE.value());
  if (read<DPU_DATA_CUBE_HEIGHT>(r).HEIGHT.value() != 0 || read<DPU_RDMA_RDMA_DATA_CUBE_HEIGHT>(r).HEIGHT.value() != 0)
    return report(fault_kind::unmodelled, "an SDP cube of more than one line");
  if (read<DPU_RDMA_RDMA_DATA_CUBE_WIDTH>(r).WIDTH.value() + 1 != W ||
      read<DPU_RDMA_RDMA_DATA_CUBE_CHANNEL>(r).CHANNEL.value() + 1 != C ||
      read<DPU_DATA_CUBE_CHANNEL>(r).ORIG_CHANNEL.value() + 1 != C ||
      read<DPU_WDMA_SIZE_0>(r).CHANNEL_WDMA.value() + 1 != C || read<DPU_WDMA_SIZE_1>(r).WIDTH_WDMA.value() + 1 != W)
    return report(fault_kind::unmodelled, "the DPU, RDMA and WDMA cube sizes disagree");
  if (C % atom != 0) return report(fault_kind::unmodelled, "channels that do not fill whole 16-byte atoms");
  const std::uint32_t surfaces = C / atom;
  if (dst_stride < W || read<DPU_SURFACE_ADD>(r).SURF_ADD.value() != dst_stride)
    return report(fault_kind::unmodelled, "an output surface stride shorter than its surface, or SURFACE_ADD disagreeing");

  // The EW stage: bypassed, an element-wise op, or the lookup table alone.
  enum class kind { pass, add, max, min, mul, prelu, lut } op = kind::pass;
  lut_lookup lut{&lut_[0], &lut_[1]};
  if (ew.EW_BYPASS.value() == 0) {
    if (ew.EW_LUT_BYPASS.value() == 0) {
      if (!fp16) return report(fault_kind::unmodelled, "a LUT on an int8/int16 SDP (the LUT is modelled for fp16 only)");
      if (r.get(DPU_EW_CFG::offset) != 0x302)
        return report(fault_kind::unmodelled, "the EW stage's LUT with other EW settings (only the LUT alone, EW_CFG 0x302)");
      if (const char* why = read_lut(r, lut)) return report(fault_kind::unmodelled, why);
      op = kind::lut;
    } else if (ew.EW_OP_BYPASS.value() == 1) {
      return report(fault_kind::unmodelled, "the EW stage active with its op and its LUT bypassed");
    } else if (ew.EW_RELU_BYPASS.value() != 1 || ew.EW_RELUX_EN.value() || ew.EW_BINARY_EN.value()) {
      return report(fault_kind::unmodelled, "the EW stage's ReLU, ReLUX or BINARY_EN set");
    } else if (ew.EW_OP_TYPE.value() == ew_op_type::mul) {
      op = ew.EW_MUL_PRELU.value() ? kind::prelu : kind::mul;  // MUL_PRELU: the negatives only
    } else if (ew.EW_MUL_PRELU.value()) {
      return report(fault_kind::unmodelled, "EW_MUL_PRELU on an ALU op (it qualifies the multiplier)");
    } else {
      switch (ew.EW_ALU_ALGO.value()) {
        case alu_algo::SUM: op = kind::add; break;
        case alu_algo::MAX: op = kind::max; break;
        case alu_algo::MIN: op = kind::min; break;
        default: return report(fault_kind::unmodelled, "an EW ALU function other than SUM, MAX and MIN");
      }
    }
  }
  const bool ew_op = op != kind::pass && op != kind::lut;
  if (two_inputs && !ew_op)
    return report(fault_kind::unmodelled, "the ERDMA enabled (ERDMA_DISABLE 0) with no EW op to read its operand");
  const data_size size = bytes == 1 ? data_size::one_byte : data_size::two_byte;
  bool per_channel = false;
  double immediate = 0;
  std::uint64_t ew_stride = 0;
  iova_space::region* operand = nullptr;
  std::uint32_t operand_address = 0;
  std::uint64_t operand_bytes = 0;  // 64 bits: a surface stride near the field's top must not wrap
  if (ew_op) {
    if (two_inputs) {
      if (ew.EW_DATA_MODE.value() != erdma.ERDMA_DATA_MODE.value() || ew.EDATA_SIZE.value() != size ||
          erdma.ERDMA_DATA_SIZE.value() != size)
        return report(fault_kind::unmodelled, "EW_CFG and ERDMA_CFG disagree on the operand's mode or size");
      per_channel = ew.EW_DATA_MODE.value() == ew_data_mode::per_channel;
      ew_stride = read<DPU_RDMA_RDMA_EW_SURF_STRIDE>(r).EW_SURF_STRIDE.value();
      if (per_channel ? ew_stride != 1 : ew_stride < W)
        return report(fault_kind::unmodelled, "an operand surface stride that is neither contiguous nor a whole surface");
      operand_address = static_cast<std::uint32_t>(read<DPU_RDMA_RDMA_EW_BASE_ADDR>(r).EW_BASE_ADDR.value());
      operand_bytes = per_channel ? std::uint64_t{C} * bytes : (surfaces - 1) * ew_stride * 16 + std::uint64_t{W} * 16;
      operand = memory.find(operand_address, operand_bytes);
      if (!operand)
        return report.wild(operand_address, operand_bytes, "the element-wise operand read lies outside every buffer");
    } else {
      if (ew.EW_OP_SRC.value() != operand_source::immediate || !fp16)
        return report(fault_kind::unmodelled, "a register operand other than a fp16 SDP's EW_OP_VALUE");
      const auto bits = static_cast<std::uint32_t>(unpack<DPU_EW_OP_VALUE>(r.get(DPU_EW_OP_VALUE::first_offset)).EW_OPERAND.value());
      immediate = std::bit_cast<float>(bits);
    }
  }

  // Operand DMA: every range inside one buffer.
  const std::uint64_t tensor_bytes = std::uint64_t{surfaces} * W * 16;
  const std::uint64_t out_bytes = (surfaces - 1) * std::uint64_t{dst_stride} * 16 + std::uint64_t{W} * 16;
  const std::uint32_t dst_address = static_cast<std::uint32_t>(read<DPU_DST_BASE_ADDR>(r).DST_BASE_ADDR.value());
  source = memory.find(src_address, tensor_bytes);
  iova_space::region* output = memory.find(dst_address, out_bytes);
  if (!source) return report.wild(src_address, tensor_bytes, "the SDP's main read lies outside every buffer");
  if (!output) return report.wild(dst_address, out_bytes, "the SDP's write lands outside every buffer");

  if (cold_start_stale(behaviour, *output, in, report)) return;

  // The write-out conversion.
  const int minus_exp = fp16 && out_shift.CVT_TYPE.value() ? static_cast<int>(out_shift.MINUS_EXP.value()) : 0;
  const auto cvt_scale = static_cast<std::int64_t>(out_scale.OUT_CVT_SCALE.value());
  const auto cvt_shift = static_cast<std::uint32_t>(out_shift.OUT_CVT_SHIFT.value());
  const std::int64_t cvt_offset = static_cast<std::int32_t>(read<DPU_OUT_CVT_OFFSET>(r).OUT_CVT_OFFSET.value());
  const rounding rounds = requantization_rounding;

  const std::uint8_t* a = source->bytes.data() + (src_address - source->iova);
  const std::uint8_t* b = operand ? operand->bytes.data() + (operand_address - operand->iova) : nullptr;
  std::uint8_t* c = output->bytes.data() + (dst_address - output->iova);
  for (std::uint32_t s = 0; s < surfaces; ++s)
    for (std::uint32_t w = 0; w < W; ++w)
      for (std::uint32_t lane = 0; lane < atom; ++lane) {
        const std::uint64_t at = (std::uint64_t{s} * W + w) * 16 + lane * bytes;
        const double x = load(a + at, in);
        double y = immediate;
        if (b) y = load(b + (per_channel ? (s * atom + lane) * bytes : (s * ew_stride + w) * 16 + lane * bytes), in);
        std::uint8_t* to = c + (std::uint64_t{s} * dst_stride + w) * 16 + lane * bytes;
        if (fp16) {
          // fp32 arithmetic (the reads convert to fp32), one rounding to fp16 on the write.
          float v = apply_stage(bn, apply_stage(bs, static_cast<float>(x)));
          const float q = static_cast<float>(y);
          switch (op) {
            case kind::pass: break;
            case kind::add: v = v + q; break;
            case kind::max: v = std::max(v, q); break;
            case kind::min: v = std::min(v, q); break;
            case kind::mul: v = v * q; break;
            case kind::prelu: v = v < 0 ? v * q : v; break;
            case kind::lut: v = static_cast<float>(lut(static_cast<double>(v))); break;
          }
          store_half(to, static_cast<float>(std::ldexp(static_cast<double>(v), -minus_exp)));
        } else {
          // Integers exactly; the write-out conversion's product bounded before the int32 offset.
          std::int64_t v = apply_stage(bn, apply_stage(bs, static_cast<std::int64_t>(x), rounds), rounds);
          const auto q = static_cast<std::int64_t>(y);
          switch (op) {
            case kind::pass: break;
            case kind::add: v = saturating_add(v, q); break;
            case kind::max: v = std::max(v, q); break;
            case kind::min: v = std::min(v, q); break;
            case kind::mul: v = saturating_mul(v, q); break;
            case kind::prelu: v = v < 0 ? saturating_mul(v, q) : v; break;
            case kind::lut: break;  // refused above: fp16 only
          }
          constexpr std::int64_t bound = std::int64_t{1} << 40;
          const std::int64_t scaled = std::clamp(round_shift(saturating_mul(v, cvt_scale), cvt_shift, rounds), -bound, bound);
          store_int(to, in, scaled + cvt_offset);
        }
      }
  if (corrupt_next_output) {
    c[bytes - 1] ^= 0x40;
    corrupt_next_output = false;
  }
}

}  // namespace regcmd::model
