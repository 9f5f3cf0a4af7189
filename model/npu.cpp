// The functional model of the NPU (include/regcmd/model/npu.hpp).

#include <regcmd/model/npu.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <regcmd/core/entry.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/registers/all.hpp>

#include "op_support.hpp"

namespace regcmd::model {

void iova_space::add(std::uint64_t iova, std::span<std::uint8_t> bytes) {
  remove(iova);
  regions_.push_back({iova, bytes, false});
}

void iova_space::remove(std::uint64_t iova) {
  std::erase_if(regions_, [&](const region& r) { return r.iova == iova; });
}

void iova_space::mark_warm(std::uint64_t iova) {
  for (region& r : regions_)
    if (r.iova == iova) {
      r.warm = true;
      r.touched = false;
      r.touched_as = -1;
    }
}

iova_space::region* iova_space::find(std::uint64_t iova, std::uint64_t size) {
  for (region& r : regions_)
    if (iova >= r.iova && iova - r.iova <= r.bytes.size() && size <= r.bytes.size() - (iova - r.iova)) return &r;
  return nullptr;
}

const char* name_of(fault_kind k) {
  switch (k) {
    case fault_kind::hang:
      return "hang";
    case fault_kind::wedge:
      return "wedge";
    case fault_kind::timeout:
      return "timeout";
    case fault_kind::wild_access:
      return "wild-access";
    case fault_kind::zeros:
      return "zeros";
    case fault_kind::wrong_result:
      return "wrong-result";
    case fault_kind::stale_output:
      return "stale-output";
    case fault_kind::unmodelled:
      return "unmodelled";
  }
  return "?";
}

bool run_result::completed() const {
  return std::none_of(faults.begin(), faults.end(), [](const fault& f) { return stops(f.kind); });
}

namespace {

// C[M][N] += A[M][K] . B[K][N], row-major, accumulating each element in k order. Tiles of
// C stay in cache while B streams once per row block. Each thread takes a contiguous run
// of tiles (row block by row block): threads interleaving neighbouring tiles wrote the
// same cache lines of C at every k, and two threads ran at 0.65x the speed of one.
template <class In, class Acc>
void gemm(const In* a, const In* b, Acc* c, std::uint32_t M, std::uint32_t K, std::uint32_t N, unsigned threads) {
  constexpr std::uint32_t rows = 32, cols = 512;
  const std::uint32_t row_blocks = (M + rows - 1) / rows, col_blocks = (N + cols - 1) / cols;
  const std::uint32_t tiles = row_blocks * col_blocks;
  auto work = [=](std::uint32_t first, std::uint32_t last) {
    for (std::uint32_t t = first; t < last; ++t) {
      const std::uint32_t m0 = (t / col_blocks) * rows, n0 = (t % col_blocks) * cols;
      const std::uint32_t m1 = std::min(M, m0 + rows), n1 = std::min(N, n0 + cols);
      for (std::uint32_t k = 0; k < K; ++k) {
        const In* bk = b + std::size_t{k} * N;
        for (std::uint32_t m = m0; m < m1; ++m) {
          const Acc am = static_cast<Acc>(a[std::size_t{m} * K + k]);
          Acc* cm = c + std::size_t{m} * N;
          for (std::uint32_t n = n0; n < n1; ++n) cm[n] += am * static_cast<Acc>(bk[n]);
        }
      }
    }
  };
  const unsigned n = std::max(1u, std::min<unsigned>(threads, tiles));
  if (n == 1) return work(0, tiles);
  auto share = [&](unsigned i) { return static_cast<std::uint32_t>(std::uint64_t{tiles} * i / n); };
  std::vector<std::thread> pool;
  for (unsigned i = 1; i < n; ++i) pool.emplace_back(work, share(i), share(i + 1));
  work(0, share(1));
  for (std::thread& t : pool) t.join();
}

using namespace regcmd::reg;

// The precision pairs RK3588 multiplies (regcmd-isa-reference "Platform support matrix").
bool multiplies(precision in, precision out) {
  return (in == precision::fp16 && (out == precision::fp32 || out == precision::fp16)) ||
         (in == precision::int8 && out == precision::int32) || (in == precision::int4 && out == precision::int16);
}

// The N extent of the SoC's weight tile for an input precision.
std::uint32_t tile_n(const soc_numbers& soc, precision in) {
  return in == precision::fp16 ? soc.tile_n_fp16 : in == precision::int4 ? soc.tile_n_int4 : soc.tile_n_int8;
}

// Where one op's operands lie, as the registers say.
//   features  row-major (CNA_CONV_CON1.GROUP_LINE_OFF, one line per row): row m at
//             m·LINE_STRIDE·16 bytes (reference "0x107c"); int4 rows hold K/2 bytes of
//             nibbles, even element in the low nibble, then a zero half-line (K bytes read).
//             Surface (NC1HWC2 with W = 1, H = M, 16-byte atoms of channels): rows
//             LINE_STRIDE·4 bytes apart and surfaces (SURF_STRIDE + LINE_STRIDE)·16 bytes
//             apart, modulo the field's 28 bits (Mesa: LINE_STRIDE = W·4, SURF_STRIDE =
//             LINE_STRIDE·(H/4 − 1) for a [C1][H][W][16 B] cube; implementation A's M = 1
//             value 0x0ffffffd wraps to one 16-byte row).
//   weights   1 KB tiles of N16 × K32 (fp16), N32 × K32 (int8) or N64 × K32 (int4, two
//             per byte, even element in the low nibble), tile-rows of N, each K/32 tiles long
//             (reference "Operand tile layouts", "The precision enum": "the 1 KB int4 atom
//             (64N × 32K)").
//   output    16-byte surfaces of channels DST_SURF_STRIDE·16 bytes apart; rows
//             (NOTCH_ADDR_1 + 1)·4 outputs apart in the row-major mode, one 16-byte atom
//             apart in the surface mode (reference "Key registers", 0x4038).
struct matmul_walk {
  precision in{}, out{};
  std::uint32_t M = 0, K = 0, N = 0;
  std::uint32_t in_bytes = 0, out_bytes = 0;
  std::uint64_t feature_row = 0, feature_surface = 0, output_row = 0, output_surface = 0;
  bool row_major = false;
  std::uint32_t tile_n = 0, tile_k = 0;  // the weight tile (soc_numbers)

  std::uint64_t feature_extent() const {
    if (row_major) return (M - 1) * feature_row + (in == precision::int4 ? K : std::uint64_t{K} * in_bytes);
    return (std::uint64_t{K} * in_bytes / 16 - 1) * feature_surface + (M - 1) * feature_row + 16;
  }
  std::uint64_t weight_extent() const { return bytes_of(in, std::uint64_t{K} * N); }
  std::uint64_t output_extent() const {
    const std::uint64_t surfaces = (std::uint64_t{N} * out_bytes + 15) / 16;
    if (row_major) return (M - 1) * output_row + std::uint64_t{N} * out_bytes;
    return (surfaces - 1) * output_surface + (M - 1) * output_row + 16;
  }
  // Element (m, k) of the features: its byte, and for int4 which nibble.
  std::uint64_t feature_at(std::uint32_t m, std::uint32_t k) const {
    if (row_major) return m * feature_row + (in == precision::int4 ? k / 2 : std::uint64_t{k} * in_bytes);
    const std::uint32_t per_atom = 16 / in_bytes;
    return k / per_atom * feature_surface + m * feature_row + k % per_atom * in_bytes;
  }
  // Element index (in elements, nibbles for int4) of weight (k, n).
  std::uint64_t weight_element(std::uint32_t k, std::uint32_t n) const {
    return std::uint64_t{n / tile_n} * tile_n * K + std::uint64_t{k / tile_k} * tile_n * tile_k +
           (n % tile_n) * tile_k + k % tile_k;
  }
  std::uint64_t output_at(std::uint32_t m, std::uint32_t n) const {
    const std::uint32_t per_atom = 16 / out_bytes;
    return n / per_atom * output_surface + m * output_row + n % per_atom * out_bytes;
  }
};

// Whether a CNA + CORE + DPU op is a convolution rather than a matmul: anything a matmul
// never configures (a bias or residual read, a width, a kernel, depthwise), or a surface
// layout whose K or N is not whole weight tiles (a matmul's always are: reference "Operand
// tile layouts").
template <class Group>
bool configures_convolution(const Group& r, bool dpu_rdma, const soc_numbers& soc) {
  const auto con1 = read<CNA_CONV_CON1>(r);
  const auto kernel = read<CNA_WEIGHT_SIZE2>(r);
  const std::uint64_t channels = read<CNA_DATA_SIZE1>(r).DATAIN_CHANNEL.value(),
                      kernels = kernel.WEIGHT_KERNELS.value();
  return dpu_rdma || read<CNA_DATA_SIZE0>(r).DATAIN_WIDTH.value() > 1 || kernel.WEIGHT_WIDTH.value() > 1 ||
         kernel.WEIGHT_HEIGHT.value() > 1 || con1.CONV_MODE.value() == conv_mode::depthwise ||
         (!con1.GROUP_LINE_OFF.value() &&
          (channels % soc.tile_k != 0 || kernels % tile_n(soc, con1.IN_PRECISION.value()) != 0));
}

}  // namespace

void npu::reset() {
  wedged_ = false;
  int8_primed_ = true;
  last_precision_ = -1;
  lut_ = {};
  lut_access_ = {};
}

void npu::lut_access(std::uint16_t offset, std::uint32_t value, std::uint32_t task, run_result& out) {
  if (offset == DPU_LUT_ACCESS_CFG::offset) {
    const auto cfg = unpack<DPU_LUT_ACCESS_CFG>(value);
    lut_access_.write = cfg.LUT_ACCESS_TYPE.value();
    lut_access_.table = cfg.LUT_TABLE_ID.value() ? 1 : 0;
    lut_access_.addr = static_cast<std::uint32_t>(cfg.LUT_ADDR.value());
    return;
  }
  if (!lut_access_.write) return;  // access type 0 (read): the data write does nothing
  if (lut_access_.addr >= lut_entries) {
    out.faults.push_back({fault_kind::unmodelled, task, "a LUT write past the table's 513 entries is ignored"});
    return;
  }
  const auto bits = static_cast<std::uint16_t>(unpack<DPU_LUT_ACCESS_DATA>(value).LUT_ACCESS_DATA.value());
  lut_[lut_access_.table][lut_access_.addr++] = static_cast<std::int16_t>(bits);
}

void iova_space::end_job() {
  for (region& r : regions_)
    if (r.touched) mark_warm(r.iova);
}

chain npu::start(std::uint64_t regcmd_iova, std::uint32_t amount, std::uint32_t task_number, bool pingpong) const {
  // The kernel writes the first task's address into PC_BASE_ADDRESS, whose PC_SOURCE_ADDR
  // holds bits 31:4: the PC fetches from the 16-byte boundary at or below it.
  chain c{regcmd_iova & ~std::uint64_t{0xf}, amount, 0, task_number, pingpong, {}};
  if (wedged_)
    c.result.faults.push_back(
        {fault_kind::hang, 0, "the NPU is still wedged by an earlier job: reset it (RKNPU_ACT_RESET)"});
  return c;
}

bool npu::step(iova_space& memory, chain& c) {
  run_result& out = c.result;
  if (c.ended()) return false;
  const std::uint32_t t = c.task;
  const std::uint64_t count = (std::uint64_t{c.amount} + 1) * 2;
  iova_space::region* code = memory.find(c.address, count * 8);
  if (!code) {
    out.faults.push_back({fault_kind::wild_access, t, "the PC fetches outside every buffer", c.address, count * 8});
    wedged_ = true;
    return false;
  }
  registers& r = groups_[c.pingpong ? t % 2 : 0];
  std::uint64_t next_address = 0;
  std::uint32_t next_amount = 0;
  bool ran = false;
  const std::uint8_t* bytes = code->bytes.data() + (c.address - code->iova);
  for (std::uint64_t i = 0; i < count && !ran; ++i) {
    std::array<std::uint8_t, 8> raw{};
    std::memcpy(raw.data(), bytes + i * 8, 8);
    const entry e = entry::from_bytes(raw);
    switch (kind_of(e)) {
      case entry_kind::register_write: {
        const block_id b = *block_from_target(e.target());
        if (!offset_in_window(b, e.offset())) {
          out.faults.push_back({fault_kind::unmodelled, t, "a write outside its block's window is ignored"});
          break;
        }
        if (b == block_id::pc) {
          if (e.offset() == PC_BASE_ADDRESS::offset)
            next_address = unpack<PC_BASE_ADDRESS>(e.value()).PC_SOURCE_ADDR.value();
          if (e.offset() == PC_REGISTER_AMOUNTS::offset)
            next_amount = static_cast<std::uint32_t>(unpack<PC_REGISTER_AMOUNTS>(e.value()).PC_DATA_AMOUNT.value());
        } else {
          r.values[e.offset() / 4] = e.value();
          // The LUT access pair acts as it arrives: the tables are DPU memory, not registers.
          if (b == block_id::dpu &&
              (e.offset() == DPU_LUT_ACCESS_CFG::offset || e.offset() == DPU_LUT_ACCESS_DATA::offset))
            lut_access(e.offset(), e.value(), t, out);
        }
        break;
      }
      case entry_kind::op_enable:
        run_op(memory, r, e.value(), t, c.pingpong, out);
        ran = true;
        break;
      default:
        break;  // the 0x0041 preamble, zero padding, unknown targets
    }
  }
  if (!ran) out.faults.push_back({fault_kind::hang, t, "the task has no op-enable in what the PC fetched"});
  if (!out.completed()) {
    wedged_ = true;
    return false;
  }
  ++out.tasks_completed;
  ++c.task;
  if (c.task < c.task_number) {
    if (next_address == 0) {
      out.faults.push_back({fault_kind::hang, t, "the chain ends here but task_number asks for more tasks"});
      wedged_ = true;
      return false;
    }
    c.address = next_address;
    c.amount = next_amount;
  }
  return !c.ended();
}

run_result npu::run(iova_space& memory, std::uint64_t regcmd_iova, std::uint32_t amount, std::uint32_t task_number,
                    bool pingpong) {
  chain c = start(regcmd_iova, amount, task_number, pingpong);
  while (step(memory, c)) {
  }
  memory.end_job();  // buffers this job wrote are no longer fresh
  return std::move(c.result);
}

void npu::run_op(iova_space& memory, const registers& r, std::uint32_t enable_mask, std::uint32_t task, bool pingpong,
                 run_result& out) {
  const auto blocks = unpack<GLOBAL_OPERATION_ENABLE>(enable_mask);
  const bool cna = blocks.CNA_OP_EN.value(), core = blocks.CORE_OP_EN.value(), dpu = blocks.DPU_OP_EN.value();
  const bool rdma = blocks.DPU_RDMA_OP_EN.value(), ppu = blocks.PPU_OP_EN.value() || blocks.PPU_RDMA_OP_EN.value();
  if (cna && core && dpu && !ppu) {
    if (configures_convolution(r, rdma, soc)) return run_conv(memory, r, task, rdma, out);
    return run_matmul(memory, r, task, out);
  }
  if (!cna && !core && dpu && rdma && !ppu) return run_sdp(memory, r, task, pingpong, out);
  // Pooling in flying mode: the PPU and its own read DMA, nothing else (enable mask 0x60).
  if (!cna && !core && !dpu && !rdma && blocks.PPU_OP_EN.value() && blocks.PPU_RDMA_OP_EN.value())
    return run_pool(memory, r, task, out);
  out.faults.push_back({fault_kind::unmodelled, task,
                        "only matmul and convolution (CNA + CORE + DPU, with or without DPU_RDMA), SDP "
                        "(DPU + DPU_RDMA) and pooling (PPU + PPU_RDMA) ops are modelled"});
}

void npu::run_matmul(iova_space& memory, const registers& r, std::uint32_t task, run_result& out) {
  const op_report report{out, task};

  const auto con1 = read<CNA_CONV_CON1>(r);
  const auto format = read<DPU_DATA_FORMAT>(r);
  const auto cbuf = read<CNA_CBUF_CON0>(r);
  matmul_walk w;
  w.in = con1.IN_PRECISION.value();
  w.out = format.OUT_PRECISION.value();
  w.M = static_cast<std::uint32_t>(read<CNA_DATA_SIZE0>(r).DATAIN_HEIGHT.value());
  w.K = static_cast<std::uint32_t>(read<CNA_DATA_SIZE1>(r).DATAIN_CHANNEL.value());
  w.N = static_cast<std::uint32_t>(read<CNA_WEIGHT_SIZE2>(r).WEIGHT_KERNELS.value());
  const precision in = w.in;
  const std::uint32_t M = w.M, K = w.K, N = w.N;

  // The state quirk first: entering int8 mode without a reset wedges the first int8 job.
  if (int8_entry_wedges(behaviour, last_precision_, int8_primed_, in, report)) return;

  // The reference's failures, in the order the hardware meets them.
  if (cbuf_split_hangs(cbuf, soc, report)) return;
  const std::uint64_t data_banks = cbuf.DATA_BANK.value();
  if (K > soc.max_k) return report(fault_kind::wedge, "K beyond the raw single-op cap (RK3588: 10752)");
  if (N > soc.max_n)
    return report(fault_kind::wrong_result, "N beyond the widest output (RK3588: 8192) is silently wrong");
  if (in == precision::int8 && w.out != precision::int32)
    return report(fault_kind::timeout, "an int8 matmul with a narrow output never raises its interrupt");
  if (con1.PROC_PRECISION.value() != in || read<CORE_MISC_CFG>(r).PROC_PRECISION.value() != in ||
      format.IN_PRECISION.value() != in || format.PROC_PRECISION.value() != in || !multiplies(in, w.out))
    return report(fault_kind::unmodelled, "precision fields of CNA, CORE and DPU disagree or name no RK3588 matmul");
  const auto bs_ow = read<DPU_BS_OW_CFG>(r);
  const std::uint64_t size_e = bs_ow.SIZE_E_0.value();
  if (w.out == precision::fp16) {
    if (r.get(DPU_BS_CFG::offset) != pack(bypass::bs).value())
      return report(fault_kind::hang, "a fp16-output matmul with the BS stage active");
    if (size_e != 1) return report(fault_kind::hang, "the atom-8 fp16 write-out hangs the CNA->DPU path");
  }
  // The DPU stages after the accumulator: a fp16 output's BN stage with register values only
  // (a fused ReLU, ReLU6 or leaky ReLU), computed in fp32 as the conv's; BS and EW bypassed.
  const alu_stage bn = read_bn(r);
  if (r.get(DPU_BS_CFG::offset) != pack(bypass::bs).value() || r.get(DPU_EW_CFG::offset) != pack(bypass::ew).value() ||
      (bn.active && (w.out != precision::fp16 || bn.add || bn.mul_from_memory)))
    return report(
        fault_kind::unmodelled,
        "a matmul with its BS or EW stage active, or a BN stage other than a fp16 output's register ReLU family");

  // Geometry from the registers, in one of the two layouts the model knows.
  w.in_bytes = in == precision::fp16 ? 2 : 1;
  w.out_bytes = static_cast<std::uint32_t>(bytes_of(w.out, 1));
  const std::uint64_t line_stride = read<CNA_DMA_CON1>(r).LINE_STRIDE.value();
  const std::uint64_t surf_stride = read<CNA_DMA_CON2>(r).SURF_STRIDE.value();
  const std::uint64_t dst_surf_stride = read<DPU_DST_SURF_STRIDE>(r).DST_SURF_STRIDE.value();
  const auto notch = read<DPU_DATA_CUBE_NOTCH_ADDR>(r);
  const std::uint64_t expected_size_e = w.out == precision::fp32 ? 3 : w.out == precision::fp16 ? 1 : 7;
  w.tile_n = tile_n(soc, in);
  w.tile_k = soc.tile_k;
  if (M == 0 || K == 0 || N == 0 || K % w.tile_k != 0 || N % w.tile_n != 0)
    return report(fault_kind::unmodelled, "M, K or N is 0 or K, N are not whole weight tiles");
  if (size_e != expected_size_e || bs_ow.SIZE_E_1.value() != size_e || bs_ow.SIZE_E_2.value() != size_e)
    return report(fault_kind::unmodelled, "DPU_BS_OW_CFG SIZE_E does not match the output precision");
  w.row_major = con1.GROUP_LINE_OFF.value() == 1;
  w.output_surface = dst_surf_stride * 16;
  if (w.row_major) {
    w.feature_row = line_stride * 16;
    w.output_row = (notch.NOTCH_ADDR_1.value() + 1) * 4 * w.out_bytes;
    if (surf_stride != 0 || dst_surf_stride != 1)
      return report(fault_kind::unmodelled, "row-major features with a surface stride, or output surfaces apart");
    if (notch.NOTCH_ADDR_0.value() != N / 4 - 1)
      return report(fault_kind::unmodelled, "DPU_DATA_CUBE_NOTCH_ADDR does not cover the N outputs of a row");
    if (w.feature_row < (in == precision::int4 ? K : std::uint64_t{K} * w.in_bytes) ||
        w.output_row < std::uint64_t{N} * w.out_bytes)
      return report(fault_kind::unmodelled, "a row pitch shorter than its row");
  } else {
    w.feature_row = line_stride * 4;
    w.feature_surface = ((surf_stride + line_stride) & decltype(CNA_DMA_CON2::SURF_STRIDE)::shape.max_value()) * 16;
    w.output_row = 16;
    if (in == precision::int4 || w.feature_row != 16 || notch.NOTCH_ADDR_0.value() != 0 ||
        notch.NOTCH_ADDR_1.value() != 0)
      return report(fault_kind::unmodelled, "a surface layout other than one 16-byte pixel per row (W = 1)");
    if (w.feature_surface < std::uint64_t{M} * 16 || w.output_surface < std::uint64_t{M} * 16)
      return report(fault_kind::unmodelled, "feature or output surfaces that overlap their rows");
  }
  if (read<DPU_SURFACE_ADD>(r).SURF_ADD.value() != (w.row_major ? 1 : M) * (size_e + 1))
    return report(fault_kind::hang, "DPU_SURFACE_ADD disagrees with the output surface (the DPU writes wild)");

  // Register copies of the same dimensions must agree.
  const bool consistent =
      read<CNA_DATA_SIZE1>(r).DATAIN_CHANNEL_REAL.value() == K - 1 &&
      read<CNA_FC_DATA_SIZE1>(r).DMA_CHANNEL.value() == K && read<CNA_FC_DATA_SIZE0>(r).DMA_HEIGHT.value() == M &&
      read<CNA_DATA_SIZE3>(r).DATAOUT_ATOMICS.value() == M &&
      read<CNA_WEIGHT_SIZE0>(r).WEIGHT_BYTES.value() == w.weight_extent() &&
      read<CNA_WEIGHT_SIZE1>(r).WEIGHT_BYTES_PER_KERNEL.value() == bytes_of(in, K) &&
      read<CORE_DATAOUT_SIZE_0>(r).DATAOUT_HEIGHT.value() == M - 1 &&
      read<CORE_DATAOUT_SIZE_1>(r).DATAOUT_CHANNEL.value() == N - 1 &&
      read<DPU_DATA_CUBE_HEIGHT>(r).HEIGHT.value() == M - 1 &&
      read<DPU_DATA_CUBE_CHANNEL>(r).CHANNEL.value() == N - 1 &&
      read<DPU_WDMA_SIZE_0>(r).CHANNEL_WDMA.value() == N - 1 && read<DPU_WDMA_SIZE_1>(r).HEIGHT_WDMA.value() == M - 1;
  if (!consistent) return report(fault_kind::unmodelled, "the CNA, CORE and DPU dimension registers disagree");

  // Operand DMA: every range must lie inside one buffer.
  const auto feature_address = static_cast<std::uint32_t>(read<CNA_FEATURE_DATA_ADDR>(r).FEATURE_BASE_ADDR.value());
  const auto weight_address = static_cast<std::uint32_t>(read<CNA_DCOMP_ADDR0>(r).DECOMPRESS_ADDR0.value());
  const auto output_address = static_cast<std::uint32_t>(read<DPU_DST_BASE_ADDR>(r).DST_BASE_ADDR.value());
  iova_space::region* features = memory.find(feature_address, w.feature_extent());
  iova_space::region* weights = memory.find(weight_address, w.weight_extent());
  iova_space::region* output = memory.find(output_address, w.output_extent());
  if (!features)
    return report.wild(feature_address, w.feature_extent(), "a feature or weight read outside every buffer");
  if (!weights) return report.wild(weight_address, w.weight_extent(), "a feature or weight read outside every buffer");
  if (!output) return report.wild(output_address, w.output_extent(), "the output write lands outside every buffer");
  const std::uint8_t* a_bytes = features->bytes.data() + (feature_address - features->iova);
  const std::uint8_t* b_bytes = weights->bytes.data() + (weight_address - weights->iova);
  std::uint8_t* c_bytes = output->bytes.data() + (output_address - output->iova);

  // What the CBUF schedule makes of the result (reference "The M-tiling scheduler").
  fault_kind result_fault = fault_kind::unmodelled;
  std::string result_why;
  const std::uint32_t split_min_k = in == precision::int8 ? soc.int8_split_min_k : soc.fp16_split_min_k;
  if (data_banks > 1 && K < split_min_k) {
    result_fault = fault_kind::zeros;
    result_why = "a bank split below its K: the MAC array emits zeros";
  } else if (in == precision::fp16 &&
             ((K == 128 && M > soc.fp16_k128_rows) || std::uint64_t{M} * K * 2 > data_banks * soc.bank_bytes)) {
    result_fault = fault_kind::wrong_result;
    result_why = "more rows than the data banks hold";
  } else if (in == precision::int8 && data_banks > 1 &&
             M > soc.int8_group_rows * ((soc.cbuf_banks - 1) * soc.int8_k_per_bank / K)) {
    return report(fault_kind::hang, "int8 rows beyond the bank split's ceiling (the weight no longer fits)");
  } else if (in != precision::fp16 && data_banks == 1 &&
             std::uint64_t{M} * K > (in == precision::int4 ? soc.int4_rows_times_k : soc.bank_bytes)) {
    result_fault = fault_kind::wrong_result;
    result_why = "more rows than the data bank holds";
  }

  // Cold start: the first job writing a freshly allocated buffer leaves it stale.
  if (cold_start_stale(behaviour, *output, w.out, report)) return;

  // The operands as the MAC array reads them, row-major for the host arithmetic.
  const unsigned workers = threads ? threads : std::thread::hardware_concurrency();
  std::vector<float> c_float;
  std::vector<std::int32_t> c_int;
  auto gather = [&](auto* a, auto* b) {
    using T = std::remove_pointer_t<decltype(a)>;
    for (std::uint32_t m = 0; m < M; ++m)
      for (std::uint32_t k = 0; k < K; ++k)
        a[std::size_t{m} * K + k] = load_input<T>(a_bytes, w.feature_at(m, k), in, k % 2 == 1);
    for (std::uint32_t k = 0; k < K; ++k)
      for (std::uint32_t n = 0; n < N; ++n) {
        const std::uint64_t e = w.weight_element(k, n);
        b[std::size_t{k} * N + n] = in == precision::int4 ? load_input<T>(b_bytes, e / 2, in, e % 2 == 1)
                                                          : load_input<T>(b_bytes, e * w.in_bytes, in, false);
      }
  };
  if (result_fault == fault_kind::unmodelled) {
    if (in == precision::fp16) {
      std::vector<float> a(std::size_t{M} * K), b(std::size_t{K} * N);
      c_float.assign(std::size_t{M} * N, 0.0f);
      gather(a.data(), b.data());
      gemm(a.data(), b.data(), c_float.data(), M, K, N, workers);
    } else {
      std::vector<std::int8_t> a(std::size_t{M} * K), b(std::size_t{K} * N);
      c_int.assign(std::size_t{M} * N, 0);
      gather(a.data(), b.data());
      gemm(a.data(), b.data(), c_int.data(), M, K, N, workers);
      if (w.out == precision::int16)  // the int16 accumulator saturates
        for (std::int32_t& v : c_int) v = std::clamp(v, -32768, 32767);
    }
  } else {
    report(result_fault, result_why);
    if (in == precision::fp16)
      c_float.assign(std::size_t{M} * N, result_fault == fault_kind::zeros ? 0.0f : 1e30f);
    else
      c_int.assign(std::size_t{M} * N, result_fault == fault_kind::zeros ? 0 : 0x5a5a);
  }
  if (bn.active)
    for (float& v : c_float) v = activate(bn.relu, bn.relux, bn.relux_cmp, multiply(bn, v));
  if (w.out == precision::fp16 && read<DPU_OUT_CVT_SCALE>(r).FP32TOFP16_EN.value() == 0) {
    report(fault_kind::zeros, "a fp16 output without FP32TOFP16_EN is all zeros");
    std::fill(c_float.begin(), c_float.end(), 0.0f);
  }
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      const std::size_t i = std::size_t{m} * N + n;
      std::uint32_t bits = 0;
      if (w.out == precision::fp32)
        std::memcpy(&bits, &c_float[i], 4);
      else if (w.out == precision::fp16)
        bits = float_to_half(c_float[i]);
      else
        bits = static_cast<std::uint32_t>(c_int[i]);
      store_bits(c_bytes + w.output_at(m, n), bits, w.out_bytes);
    }
  if (corrupt_next_output) {
    c_bytes[w.output_at(0, 0) + w.out_bytes - 1] ^= 0x40;
    corrupt_next_output = false;
  }
}

}  // namespace regcmd::model
