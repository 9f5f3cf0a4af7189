// The model's pooling (include/regcmd/model/npu.hpp): a PPU + PPU_RDMA op (enable mask
// 0x60, no CNA, CORE or DPU), the PPU reading its input through its own DMA ("flying mode").
//
// The register contract it executes (ops-reference §5; the values programs write:
// docs/pooling-values.md):
//   precision   PPU_DATA_FORMAT.PROC_PRECISION fp16 or int8; PPU_RDMA_RDMA_DATA_FORMAT
//               IN_PRECISION the storage width agreeing with it (2 16-bit, 1 8-bit, §5.1).
//   input       W × H × C (RDMA_CUBE_IN_*, minus 1; the PPU's DATA_CUBE_IN_* the same), C whole
//               16-byte atoms; NC1HWC2 from RDMA_SRC_BASE_ADDR: (y, x, c) at (c / C2)·
//               SRC_SURF_STRIDE·16 + y·SRC_LINE_STRIDE·16 + x·16 + (c % C2)·bytes, C2 = 16 / bytes.
//   window      kw × kh, strides sx, sy (POOLING_KERNEL_CFG, minus 1), PAD_LEFT / TOP / RIGHT /
//               BOTTOM (POOLING_PADDING_CFG); out_w = (W + left + right − kw) / sx + 1, out_h
//               likewise, in DATA_CUBE_OUT_WIDTH / HEIGHT (minus 1), OUT_CHANNEL = C − 1. Tap
//               (ky, kx) of output (oy, ox) reads input row oy·sy + ky − top, column ox·sx + kx −
//               left; outside the input it reads the padding value: PADDING_VALUE_2.PAD_VALUE_1
//               (bits 34:32) : PADDING_VALUE_1.PAD_VALUE_0 as a 35-bit two's complement (int8),
//               PAD_VALUE_0's low 16 bits as binary16 (fp16).
//   method      OPERATION_MODE_CFG.POOLING_METHOD 0 average, 1 max, 2 min (TRM; §5.1). Max and
//               min: the extreme of the taps, exact. Average (fp16): the taps summed in fp32 in
//               row-major order, times RECIP_KERNEL_WIDTH and RECIP_KERNEL_HEIGHT each read as
//               binary16 bits scaled by 2^-16 (sum · (rw / 2^16) · (rh / 2^16), fp32), rounded
//               to fp16 (nearest even); the RECIP registers are ignored by max and min.
//   output      NC1HWC2 at DST_BASE_ADDR, lines packed: (oy, ox, c) at (c / C2)·DST_SURF_STRIDE·16
//               + (oy·out_w + ox)·16 + (c % C2)·bytes.
//   the rest    FLYING_MODE 1, USE_CNT = NOTCH_ADDR = INDEX_EN = 0, DPU_FLYIN 0 (INDEX_ADD then
//               ignored), MISC_CTRL BURST_LEN 3, 7 or 15 with NONALIGN = MC_SURF_OUT = SURF_LEN 0.
// Faults: register values outside the contract (precisions, int8 average, modes, sizes that
// disagree, padding values an output cannot hold) are reported unmodelled and nothing is
// written; then the input cube's read or the output's write outside every buffer (wild
// access); then the cold start (stale output), as the SDP's.

#include <cstdint>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/registers/ppu.hpp>
#include <regcmd/registers/ppu_rdma.hpp>

#include "op_support.hpp"

namespace regcmd::model {

namespace {
using namespace regcmd::reg;

enum class pool_method : std::uint8_t { average = 0, max = 1, min = 2 };

// One pooling's geometry, as the registers say (the header comment's contract). Pitches in
// bytes.
struct pool_walk {
  precision in{};
  std::uint32_t bytes = 0;  // of an element
  std::uint32_t W = 0, H = 0, C = 0;
  std::uint32_t out_w = 0, out_h = 0;
  std::uint32_t kw = 0, kh = 0, sx = 0, sy = 0;
  std::uint32_t left = 0, top = 0, right = 0, bottom = 0;
  std::uint64_t line = 0, surface = 0, out_surface = 0;

  std::uint32_t atom() const { return 16 / bytes; }  // C2
  std::uint32_t surfaces() const { return C / atom(); }
  // The input cube the RDMA reads: from the first atom to the end of the last line of the
  // last surface.
  std::uint64_t input_extent() const {
    return (surfaces() - 1) * surface + (H - 1) * line + std::uint64_t{W} * 16;
  }
  std::uint64_t input_at(std::uint32_t y, std::uint32_t x, std::uint32_t c) const {
    return c / atom() * surface + y * line + std::uint64_t{x} * 16 + c % atom() * bytes;
  }
  std::uint64_t output_extent() const {
    return (surfaces() - 1) * out_surface + std::uint64_t{out_w} * out_h * 16;
  }
  std::uint64_t output_at(std::uint32_t oy, std::uint32_t ox, std::uint32_t c) const {
    return c / atom() * out_surface + (std::uint64_t{oy} * out_w + ox) * 16 + c % atom() * bytes;
  }
  // Whether some tap reads the padding: a left or top side, or a last window reaching past
  // the input (a right or bottom side the strides leave unread is never read).
  bool reads_padding() const {
    return left > 0 || top > 0 || std::uint64_t{out_w - 1} * sx + kw > std::uint64_t{W} + left ||
           std::uint64_t{out_h - 1} * sy + kh > std::uint64_t{H} + top;
  }
};

template <class Group>
pool_walk read_walk(const Group& r) {
  pool_walk g;
  const auto narrow = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  const auto kernel = read<PPU_POOLING_KERNEL_CFG>(r);
  const auto pad = read<PPU_POOLING_PADDING_CFG>(r);
  g.in = read<PPU_DATA_FORMAT>(r).PROC_PRECISION.value();
  g.bytes = g.in == precision::fp16 ? 2 : 1;
  g.W = narrow(read<PPU_RDMA_RDMA_CUBE_IN_WIDTH>(r).CUBE_IN_WIDTH.value() + 1);
  g.H = narrow(read<PPU_RDMA_RDMA_CUBE_IN_HEIGHT>(r).CUBE_IN_HEIGHT.value() + 1);
  g.C = narrow(read<PPU_RDMA_RDMA_CUBE_IN_CHANNEL>(r).CUBE_IN_CHANNEL.value() + 1);
  g.out_w = narrow(read<PPU_DATA_CUBE_OUT_WIDTH>(r).CUBE_OUT_WIDTH.value() + 1);
  g.out_h = narrow(read<PPU_DATA_CUBE_OUT_HEIGHT>(r).CUBE_OUT_HEIGHT.value() + 1);
  g.kw = narrow(kernel.KERNEL_WIDTH.value() + 1);
  g.kh = narrow(kernel.KERNEL_HEIGHT.value() + 1);
  g.sx = narrow(kernel.KERNEL_STRIDE_WIDTH.value() + 1);
  g.sy = narrow(kernel.KERNEL_STRIDE_HEIGHT.value() + 1);
  g.left = narrow(pad.PAD_LEFT.value());
  g.top = narrow(pad.PAD_TOP.value());
  g.right = narrow(pad.PAD_RIGHT.value());
  g.bottom = narrow(pad.PAD_BOTTOM.value());
  g.line = read<PPU_RDMA_RDMA_SRC_LINE_STRIDE>(r).SRC_LINE_STRIDE.value() * 16;
  g.surface = read<PPU_RDMA_RDMA_SRC_SURF_STRIDE>(r).SRC_SURF_STRIDE.value() * 16;
  g.out_surface = read<PPU_DST_SURF_STRIDE>(r).DST_SURF_STRIDE.value() * 16;
  return g;
}

// Why the precision fields name no pooling the model knows, or nullptr.
template <class Group>
const char* precision_problem(const Group& r, const pool_walk& g) {
  if (g.in != precision::fp16 && g.in != precision::int8)
    return "a pooling whose PPU_DATA_FORMAT.PROC_PRECISION is neither fp16 nor int8";
  const std::uint64_t storage = read<PPU_RDMA_RDMA_DATA_FORMAT>(r).IN_PRECISION.value();
  if (storage != 1 && storage != 2)
    return "a PPU_RDMA_RDMA_DATA_FORMAT.IN_PRECISION (storage width) other than 1 (8-bit) or 2 (16-bit)";
  if (storage != (g.in == precision::fp16 ? 2u : 1u))
    return "PPU_DATA_FORMAT.PROC_PRECISION and the PPU_RDMA storage width (IN_PRECISION) disagree";
  return nullptr;
}

// Why the PPU's modes are outside the contract, or nullptr.
template <class Group>
const char* mode_problem(const Group& r, const pool_walk& g) {
  const auto mode = read<PPU_OPERATION_MODE_CFG>(r);
  const auto format = read<PPU_DATA_FORMAT>(r);
  const auto misc = read<PPU_MISC_CTRL>(r);
  if (mode.FLYING_MODE.value() != 1)
    return "PPU_OPERATION_MODE_CFG.FLYING_MODE 0 (the cube fed by the DPU): only flying mode is modelled";
  if (format.DPU_FLYIN.value() != 0) return "PPU_DATA_FORMAT.DPU_FLYIN set (input from the DPU)";
  if (mode.USE_CNT.value() != 0 || mode.NOTCH_ADDR.value() != 0 || mode.INDEX_EN.value() != 0)
    return "PPU_OPERATION_MODE_CFG USE_CNT, NOTCH_ADDR or INDEX_EN set";
  if (mode.POOLING_METHOD.value() > 2) return "a POOLING_METHOD other than 0 (average), 1 (max) and 2 (min)";
  if (mode.POOLING_METHOD.value() == 0 && g.in == precision::int8)
    return "an int8 average pooling (the reciprocal's integer format is not established)";
  const std::uint64_t burst = misc.BURST_LEN.value();
  if (burst != 3 && burst != 7 && burst != 15) return "a PPU_MISC_CTRL.BURST_LEN other than 3, 7 or 15";
  if (misc.NONALIGN.value() != 0 || misc.MC_SURF_OUT.value() != 0 || misc.SURF_LEN.value() != 0)
    return "PPU_MISC_CTRL NONALIGN, MC_SURF_OUT or SURF_LEN set";
  return nullptr;
}

// Why the cubes, the window and the output disagree, or nullptr.
template <class Group>
const char* geometry_problem(const Group& r, const pool_walk& g) {
  if (read<PPU_DATA_CUBE_IN_WIDTH>(r).CUBE_IN_WIDTH.value() + 1 != g.W ||
      read<PPU_DATA_CUBE_IN_HEIGHT>(r).CUBE_IN_HEIGHT.value() + 1 != g.H ||
      read<PPU_DATA_CUBE_IN_CHANNEL>(r).CUBE_IN_CHANNEL.value() + 1 != g.C)
    return "the PPU's DATA_CUBE_IN and the PPU_RDMA's RDMA_CUBE_IN sizes disagree";
  if (g.C % g.atom() != 0) return "input channels that do not fill whole 16-byte atoms";
  if (read<PPU_DATA_CUBE_OUT_CHANNEL>(r).CUBE_OUT_CHANNEL.value() + 1 != g.C)
    return "DATA_CUBE_OUT_CHANNEL differs from the input's channels";
  const std::uint64_t span_w = std::uint64_t{g.W} + g.left + g.right, span_h = std::uint64_t{g.H} + g.top + g.bottom;
  if (span_w < g.kw || span_h < g.kh) return "a kernel wider or taller than the padded input";
  if (g.out_w != (span_w - g.kw) / g.sx + 1 || g.out_h != (span_h - g.kh) / g.sy + 1)
    return "the output cube disagrees with the kernel, stride and padding";
  if (g.surfaces() > 1 && g.out_surface < std::uint64_t{g.out_w} * g.out_h * 16)
    return "output surfaces (PPU_DST_SURF_STRIDE) that overlap each other";
  return nullptr;
}

// The 35-bit padding value, sign-extended from bit 34.
template <class Group>
std::int64_t padding_value(const Group& r) {
  const std::uint64_t bits = read<PPU_PADDING_VALUE_1_CFG>(r).PAD_VALUE_0.value() |
                             read<PPU_PADDING_VALUE_2_CFG>(r).PAD_VALUE_1.value() << 32;
  constexpr std::uint64_t sign = std::uint64_t{1} << 34;
  return static_cast<std::int64_t>(bits ^ sign) - static_cast<std::int64_t>(sign);
}

// Why the padding value or the reciprocals are outside the contract, or nullptr.
template <class Group>
const char* value_problem(const Group& r, const pool_walk& g, pool_method method) {
  if (g.reads_padding()) {
    const std::int64_t pad = padding_value(r);
    if (g.in == precision::int8 && (pad < -128 || pad > 127))
      return "an int8 padding value (PADDING_VALUE_1/2, 35-bit two's complement) outside -128..127";
    if (g.in == precision::fp16 && (pad & ~std::int64_t{0xffff}) != 0)
      return "a fp16 padding value with bits above 15 set (PAD_VALUE_0 31:16 or PAD_VALUE_1): only binary16 bits "
             "are modelled";
  }
  const std::uint64_t recips =
      read<PPU_RECIP_KERNEL_WIDTH>(r).RECIP_KERNEL_WIDTH.value() | read<PPU_RECIP_KERNEL_HEIGHT>(r).RECIP_KERNEL_HEIGHT.value();
  if (method == pool_method::average && (recips & 0x1'0000) != 0)
    return "RECIP_KERNEL_WIDTH/HEIGHT with bit 16 set (the TRM's integer 2^16/k): only binary16 reciprocals are "
           "modelled";
  return nullptr;
}

}  // namespace

void npu::run_pool(iova_space& memory, const registers& r, std::uint32_t task, run_result& out) {
  const op_report report{out, task};
  const pool_walk g = read_walk(r);
  if (const char* why = precision_problem(r, g)) return report(fault_kind::unmodelled, why);
  if (const char* why = mode_problem(r, g)) return report(fault_kind::unmodelled, why);
  if (const char* why = geometry_problem(r, g)) return report(fault_kind::unmodelled, why);
  const auto method = static_cast<pool_method>(read<PPU_OPERATION_MODE_CFG>(r).POOLING_METHOD.value());
  if (const char* why = value_problem(r, g, method)) return report(fault_kind::unmodelled, why);

  // DMA: the input cube's read and the output's write, each inside one buffer.
  const auto src_address = static_cast<std::uint32_t>(read<PPU_RDMA_RDMA_SRC_BASE_ADDR>(r).SRC_BASE_ADDR.value());
  const auto dst_address = static_cast<std::uint32_t>(read<PPU_DST_BASE_ADDR>(r).DST_BASE_ADDR.value());
  const iova_space::region* source = memory.find(src_address, g.input_extent());
  if (!source) return report.wild(src_address, g.input_extent(), "the PPU_RDMA's input read lies outside every buffer");
  iova_space::region* output = memory.find(dst_address, g.output_extent());
  if (!output) return report.wild(dst_address, g.output_extent(), "the PPU's output write lands outside every buffer");

  // Cold start: the first job writing a freshly allocated buffer leaves it stale.
  if (cold_start_stale(behaviour, *output, g.in, report)) return;

  const std::uint8_t* a = source->bytes.data() + (src_address - source->iova);
  std::uint8_t* c = output->bytes.data() + (dst_address - output->iova);
  const bool fp16 = g.in == precision::fp16;
  const std::int64_t pad = padding_value(r);
  const float pad_float = half_to_float(static_cast<std::uint16_t>(pad & 0xffff));
  // The reciprocals' binary16 bits (15:0 of the 17-bit fields) scaled by 2^-16, exactly.
  const auto scale = [](std::uint64_t field) { return half_to_float(static_cast<std::uint16_t>(field)) / 65536.0f; };
  const float recip_w = scale(read<PPU_RECIP_KERNEL_WIDTH>(r).RECIP_KERNEL_WIDTH.value());
  const float recip_h = scale(read<PPU_RECIP_KERNEL_HEIGHT>(r).RECIP_KERNEL_HEIGHT.value());

  // Every output first, then the write: an output overlapping the input reads the input as it was.
  const std::uint32_t atom = g.atom();
  std::vector<std::uint16_t> results(std::size_t{g.surfaces()} * g.out_h * g.out_w * atom);
  std::size_t i = 0;
  for (std::uint32_t s = 0; s < g.surfaces(); ++s)
    for (std::uint32_t oy = 0; oy < g.out_h; ++oy)
      for (std::uint32_t ox = 0; ox < g.out_w; ++ox)
        for (std::uint32_t lane = 0; lane < atom; ++lane, ++i) {
          const std::uint32_t ch = s * atom + lane;
          // Tap (ky, kx) in row-major order: the input element, or the padding value.
          float best = 0, sum = 0;
          std::int32_t best_int = 0;
          bool first = true;
          for (std::uint32_t ky = 0; ky < g.kh; ++ky)
            for (std::uint32_t kx = 0; kx < g.kw; ++kx) {
              const std::int64_t y = std::int64_t{oy} * g.sy + ky - g.top, x = std::int64_t{ox} * g.sx + kx - g.left;
              const bool inside = y >= 0 && y < g.H && x >= 0 && x < g.W;
              const std::uint64_t at =
                  inside ? g.input_at(static_cast<std::uint32_t>(y), static_cast<std::uint32_t>(x), ch) : 0;
              if (fp16) {
                const float v = inside ? half_to_float(static_cast<std::uint16_t>(load_bits(a + at, 2))) : pad_float;
                if (method == pool_method::average) sum = first ? v : sum + v;
                else if (first || (method == pool_method::max ? v > best : v < best)) best = v;
              } else {
                const std::int32_t v = inside ? static_cast<std::int8_t>(a[at]) : static_cast<std::int32_t>(pad);
                if (first || (method == pool_method::max ? v > best_int : v < best_int)) best_int = v;
              }
              first = false;
            }
          if (!fp16) results[i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(best_int));
          else results[i] = float_to_half(method == pool_method::average ? sum * recip_w * recip_h : best);
        }
  i = 0;
  for (std::uint32_t s = 0; s < g.surfaces(); ++s)
    for (std::uint32_t oy = 0; oy < g.out_h; ++oy)
      for (std::uint32_t ox = 0; ox < g.out_w; ++ox)
        for (std::uint32_t lane = 0; lane < atom; ++lane, ++i)
          store_bits(c + g.output_at(oy, ox, s * atom + lane), results[i], g.bytes);
  if (corrupt_next_output) {
    c[g.bytes - 1] ^= 0x40;
    corrupt_next_output = false;
  }
}

}  // namespace regcmd::model
