// The model's SDP: a DPU + DPU_RDMA op (enable mask 0x18) reading a tensor through the
// main read DMA (flying mode) and a second operand through the ERDMA or a register, and
// writing a op b through the WDMA. Layouts: NC1HWC2 surfaces of W pixels x 16 bytes
// (programs/elementwise.hpp). Register values outside what hardware-run programs use
// (requantization scales, LUT, BS/BN stages, a height above 1) are reported unmodelled.

#include <algorithm>
#include <cstdint>
#include <cstring>
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

// Stores a result: fp16 rounded once (the SDP computes in fp32), integers saturated.
void store(std::uint8_t* p, precision t, double v) {
  if (t == precision::fp16) {
    const std::uint16_t h = float_to_half(static_cast<float>(v));
    std::memcpy(p, &h, 2);
  } else if (t == precision::int8) {
    p[0] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::clamp(v, -128.0, 127.0)));
  } else {
    const auto i = static_cast<std::int16_t>(std::clamp(v, -32768.0, 32767.0));
    std::memcpy(p, &i, 2);
  }
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

  // The configuration hardware-run programs use; anything else is not modelled.
  const auto format = read<DPU_DATA_FORMAT>(r);
  const auto feature = read<DPU_FEATURE_MODE_CFG>(r);
  const auto ew = read<DPU_EW_CFG>(r);
  const auto out_scale = read<DPU_OUT_CVT_SCALE>(r);
  const bool fp16 = in == precision::fp16;
  if (format.IN_PRECISION.value() != in || format.PROC_PRECISION.value() != in || format.OUT_PRECISION.value() != in ||
      mode.PROC_PRECISION.value() != in)
    return report(fault_kind::unmodelled, "an SDP whose DPU_DATA_FORMAT and RDMA precisions differ");
  if (feature.FLYING_MODE.value() != 1 || feature.OUTPUT_MODE.value() != 2 || mode.FLYING_MODE.value() != 1)
    return report(fault_kind::unmodelled, "an SDP not in flying mode or not writing to memory");
  if (r.get(DPU_BS_CFG::offset) != pack(bypass::bs).value() || r.get(DPU_BN_CFG::offset) != pack(bypass::bn).value())
    return report(fault_kind::unmodelled, "an SDP with its BS or BN stage active");
  if (out_scale.OUT_CVT_SCALE.value() != 1 || r.get(DPU_OUT_CVT_OFFSET::offset) != 0 ||
      r.get(DPU_OUT_CVT_SHIFT::offset) != 0 || read<DPU_EW_CVT_SCALE_VALUE>(r).EW_OP_CVT_SCALE.value() != 1 ||
      r.get(DPU_EW_CVT_OFFSET_VALUE::offset) != 0)
    return report(fault_kind::unmodelled, "output or operand conversion other than the identity (requantization)");
  if (fp16 && (out_scale.FP32TOFP16_EN.value() != 1 || mode.MRDMA_FP16TOFP32_EN.value() != 1))
    return report(fault_kind::unmodelled, "a fp16 SDP without the fp16 <-> fp32 conversions of its reads and write");

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

  // The operation.
  enum class kind { pass, add, max, min, mul } op = kind::pass;
  if (ew.EW_BYPASS.value() == 0) {
    if (ew.EW_OP_BYPASS.value() == 1) return report(fault_kind::unmodelled, "the EW stage active with its op bypassed");
    if (ew.EW_LUT_BYPASS.value() != 1 || ew.EW_RELU_BYPASS.value() != 1)
      return report(fault_kind::unmodelled, "the EW LUT or ReLU active");
    if (ew.EW_OP_TYPE.value() == ew_op_type::mul) {
      op = kind::mul;
    } else {
      switch (ew.EW_ALU_ALGO.value()) {
        case alu_algo::SUM: op = kind::add; break;
        case alu_algo::MAX: op = kind::max; break;
        case alu_algo::MIN: op = kind::min; break;
        default: return report(fault_kind::unmodelled, "an EW ALU function other than SUM, MAX and MIN");
      }
    }
  }
  const data_size size = bytes == 1 ? data_size::one_byte : data_size::two_byte;
  bool per_channel = false;
  double immediate = 0;
  std::uint64_t ew_stride = 0;
  iova_space::region* operand = nullptr;
  std::uint32_t operand_address = 0;
  std::uint64_t operand_bytes = 0;  // 64 bits: a surface stride near the field's top must not wrap
  if (op != kind::pass) {
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
      float v;
      std::memcpy(&v, &bits, 4);
      immediate = v;
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

  output->touched = true;
  output->touched_as = static_cast<int>(in);
  if (behaviour.cold_start_stale && !output->warm)
    return report(fault_kind::stale_output, "first job writing a freshly allocated output buffer");

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
        // fp16 in fp32 arithmetic (the reads convert to fp32); integers exactly.
        auto apply = [&](auto p, auto q) {
          switch (op) {
            case kind::pass: return p;
            case kind::add: return p + q;
            case kind::max: return std::max(p, q);
            case kind::min: return std::min(p, q);
            case kind::mul: return p * q;
          }
          return p;
        };
        const double v = fp16 ? static_cast<double>(apply(static_cast<float>(x), static_cast<float>(y))) : apply(x, y);
        store(c + (std::uint64_t{s} * dst_stride + w) * 16 + lane * bytes, in, v);
      }
  if (corrupt_next_output) {
    c[bytes - 1] ^= 0x40;
    corrupt_next_output = false;
  }
}

}  // namespace regcmd::model
