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
#include <regcmd/programs/matmul.hpp>
#include <regcmd/programs/packing.hpp>
#include <regcmd/programs/schedule.hpp>
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
    case fault_kind::hang: return "hang";
    case fault_kind::wedge: return "wedge";
    case fault_kind::timeout: return "timeout";
    case fault_kind::wild_access: return "wild-access";
    case fault_kind::zeros: return "zeros";
    case fault_kind::wrong_result: return "wrong-result";
    case fault_kind::stale_output: return "stale-output";
    case fault_kind::unmodelled: return "unmodelled";
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


}  // namespace

void npu::reset() {
  wedged_ = false;
  int8_primed_ = true;
  last_precision_ = -1;
}

run_result npu::run(iova_space& memory, std::uint64_t regcmd_iova, std::uint32_t amount, std::uint32_t task_number,
                    bool pingpong) {
  run_result out;
  if (wedged_) {
    out.faults.push_back({fault_kind::hang, 0, "the NPU is still wedged by an earlier job: reset it (RKNPU_ACT_RESET)"});
    return out;
  }
  struct warm_up_touched {  // buffers this job wrote are no longer fresh once it ends
    iova_space& memory;
    ~warm_up_touched() {
      for (const iova_space::region& r : memory.regions())
        if (r.touched) memory.mark_warm(r.iova);
    }
  } warm_up{memory};
  std::uint64_t address = regcmd_iova;
  for (std::uint32_t t = 0; t < task_number; ++t) {
    const std::uint64_t count = (std::uint64_t{amount} + 1) * 2;
    iova_space::region* code = memory.find(address, count * 8);
    if (!code) {
      out.faults.push_back({fault_kind::wild_access, t, "the PC fetches outside every buffer"});
      wedged_ = true;
      return out;
    }
    registers& r = groups_[pingpong ? t % 2 : 0];
    std::uint64_t next_address = 0;
    std::uint32_t next_amount = 0;
    bool ran = false;
    const std::uint8_t* bytes = code->bytes.data() + (address - code->iova);
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
            if (e.offset() == PC_BASE_ADDRESS::offset) next_address = e.value() & ~0xfu;
            if (e.offset() == PC_REGISTER_AMOUNTS::offset) next_amount = e.value() & 0xffffu;
          } else {
            r.values[e.offset() / 4] = e.value();
          }
          break;
        }
        case entry_kind::op_enable:
          run_op(memory, r, e.value(), t, pingpong, out);
          ran = true;
          break;
        default: break;  // the 0x0041 preamble, zero padding, unknown targets
      }
    }
    if (!ran) out.faults.push_back({fault_kind::hang, t, "the task has no op-enable in what the PC fetched"});
    if (!out.completed()) {
      wedged_ = true;
      return out;
    }
    ++out.tasks_completed;
    if (t + 1 < task_number) {
      if (next_address == 0) {
        out.faults.push_back({fault_kind::hang, t, "the chain ends here but task_number asks for more tasks"});
        wedged_ = true;
        return out;
      }
      address = next_address;
      amount = next_amount;
    }
  }
  return out;
}

void npu::run_op(iova_space& memory, const registers& r, std::uint32_t enable_mask, std::uint32_t task, bool pingpong,
                 run_result& out) {
  const auto blocks = unpack<GLOBAL_OPERATION_ENABLE>(enable_mask);
  const bool cna = blocks.CNA_OP_EN.value(), core = blocks.CORE_OP_EN.value(), dpu = blocks.DPU_OP_EN.value();
  const bool rdma = blocks.DPU_RDMA_OP_EN.value(), ppu = blocks.PPU_OP_EN.value() || blocks.PPU_RDMA_OP_EN.value();
  if (cna && core && dpu && !rdma && !ppu) return run_matmul(memory, r, task, out);
  if (!cna && !core && dpu && rdma && !ppu) return run_sdp(memory, r, task, pingpong, out);
  out.faults.push_back({fault_kind::unmodelled, task,
                        "only matmul (CNA + CORE + DPU) and SDP (DPU + DPU_RDMA) ops are modelled"});
}

void npu::run_matmul(iova_space& memory, const registers& r, std::uint32_t task, run_result& out) {
  const op_report report{out, task};

  const auto con1 = read<CNA_CONV_CON1>(r);
  const auto format = read<DPU_DATA_FORMAT>(r);
  const auto cbuf = read<CNA_CBUF_CON0>(r);
  const precision in = con1.IN_PRECISION.value();
  const precision out_precision = format.OUT_PRECISION.value();
  const auto M = static_cast<std::uint32_t>(read<CNA_DATA_SIZE0>(r).DATAIN_HEIGHT.value());
  const auto K = static_cast<std::uint32_t>(read<CNA_DATA_SIZE1>(r).DATAIN_CHANNEL.value());
  const auto N = static_cast<std::uint32_t>(read<CNA_WEIGHT_SIZE2>(r).WEIGHT_KERNELS.value());

  // The state quirk first: entering int8 mode without a reset wedges the first int8 job.
  if (in == precision::int8 && behaviour.int8_entry_wedge && last_precision_ != static_cast<int>(precision::int8) &&
      !int8_primed_)
    return report(fault_kind::wedge, "first int8 job after entering int8 mode without RKNPU_ACT_RESET");
  last_precision_ = static_cast<int>(in);
  int8_primed_ = in == precision::int8 && int8_primed_;

  // The reference's failures, in the order the hardware meets them.
  const std::uint64_t data_banks = cbuf.DATA_BANK.value(), weight_banks = cbuf.WEIGHT_BANK.value();
  if (data_banks + weight_banks != 12 || data_banks > 11 || weight_banks < 1)
    return report(fault_kind::hang, "CNA_CBUF_CON0 is not a 12-bank split (DATA_BANK + WEIGHT_BANK = 12, DATA_BANK <= 11)");
  if (K > 10752) return report(fault_kind::wedge, "K beyond the raw single-op cap 10752");
  if (N > 8192) return report(fault_kind::wrong_result, "N beyond 8192 is silently wrong (nothing useful written)");
  if (in == precision::int8 && out_precision != precision::int32)
    return report(fault_kind::timeout, "an int8 matmul with a narrow output never raises its interrupt");
  if (con1.PROC_PRECISION.value() != in || read<CORE_MISC_CFG>(r).PROC_PRECISION.value() != in ||
      format.IN_PRECISION.value() != in || format.PROC_PRECISION.value() != in || !traits(in).matmul_input ||
      !supported_pair(in, out_precision))
    return report(fault_kind::unmodelled, "precision fields of CNA, CORE and DPU disagree or name no RK3588 matmul");
  const auto bs_ow = read<DPU_BS_OW_CFG>(r);
  const std::uint64_t size_e = bs_ow.SIZE_E_0.value();
  if (out_precision == precision::fp16) {
    if (r.get(DPU_BS_CFG::offset) != 0x53) return report(fault_kind::hang, "a fp16-output matmul with the BS stage active");
    if (size_e != 1) return report(fault_kind::hang, "the atom-8 fp16 write-out hangs the CNA->DPU path");
  }

  // Geometry from the registers, in one of the two layouts the model knows.
  matmul_geometry g;
  g.in = in;
  g.out = out_precision;
  g.M = M;
  g.K = g.logical_K = K;
  g.N = g.logical_N = N;
  const std::uint64_t line_stride = read<CNA_DMA_CON1>(r).LINE_STRIDE.value();
  const std::uint64_t surf_stride = read<CNA_DMA_CON2>(r).SURF_STRIDE.value();
  const std::uint64_t dst_surf_stride = read<DPU_DST_SURF_STRIDE>(r).DST_SURF_STRIDE.value();
  const auto notch = read<DPU_DATA_CUBE_NOTCH_ADDR>(r);
  const auto out_bytes = static_cast<std::uint32_t>(bytes_of(out_precision, 1));
  const std::uint64_t expected_size_e = out_precision == precision::fp32 ? 3 : out_precision == precision::fp16 ? 1 : 7;
  if (M == 0 || K == 0 || N == 0 || K % 32 != 0 || N % weight_tile_n(in) != 0)
    return report(fault_kind::unmodelled, "M, K or N is 0 or K, N are not whole weight tiles");
  if (size_e != expected_size_e || bs_ow.SIZE_E_1.value() != size_e || bs_ow.SIZE_E_2.value() != size_e)
    return report(fault_kind::unmodelled, "DPU_BS_OW_CFG SIZE_E does not match the output precision");
  const bool row_major = con1.GROUP_LINE_OFF.value() == 1 && surf_stride == 0 && dst_surf_stride == 1;
  const bool surface = con1.GROUP_LINE_OFF.value() == 0 && line_stride == 4 &&
                       surf_stride == (M == 1 ? 0x0fff'fffdu : M - 4) && (M == 1 || M % 4 == 0) &&
                       dst_surf_stride == M && notch.NOTCH_ADDR_0.value() == 0 && notch.NOTCH_ADDR_1.value() == 0;
  if (row_major) {
    g.layout = operand_layout::row_major;
    g.feature_pitch = static_cast<std::uint32_t>(line_stride * 16);
    if (notch.NOTCH_ADDR_0.value() != N / 4 - 1)
      return report(fault_kind::unmodelled, "DPU_DATA_CUBE_NOTCH_ADDR does not cover the N outputs of a row");
    g.output_pitch = static_cast<std::uint32_t>((notch.NOTCH_ADDR_1.value() + 1) * 4 * out_bytes);
    if (g.feature_pitch < matmul_geometry::feature_row_bytes(in, K) || g.output_pitch < N * out_bytes)
      return report(fault_kind::unmodelled, "a row pitch shorter than its row");
  } else if (surface) {
    g.layout = operand_layout::surface;
  } else {
    return report(fault_kind::unmodelled, "feature/output strides match neither the row-major nor the surface layout");
  }
  if (read<DPU_SURFACE_ADD>(r).SURF_ADD.value() != (row_major ? 1 : M) * (size_e + 1))
    return report(fault_kind::hang, "DPU_SURFACE_ADD disagrees with the output surface (the DPU writes wild)");

  // Register copies of the same dimensions must agree.
  const bool consistent =
      read<CNA_DATA_SIZE1>(r).DATAIN_CHANNEL_REAL.value() == K - 1 && read<CNA_FC_DATA_SIZE1>(r).DMA_CHANNEL.value() == K &&
      read<CNA_FC_DATA_SIZE0>(r).DMA_HEIGHT.value() == M && read<CNA_DATA_SIZE3>(r).DATAOUT_ATOMICS.value() == M &&
      read<CNA_WEIGHT_SIZE0>(r).WEIGHT_BYTES.value() == g.weight_bytes() &&
      read<CNA_WEIGHT_SIZE1>(r).WEIGHT_BYTES_PER_KERNEL.value() == bytes_of(in, K) &&
      read<CORE_DATAOUT_SIZE_0>(r).DATAOUT_HEIGHT.value() == M - 1 &&
      read<CORE_DATAOUT_SIZE_1>(r).DATAOUT_CHANNEL.value() == N - 1 &&
      read<DPU_DATA_CUBE_HEIGHT>(r).HEIGHT.value() == M - 1 && read<DPU_DATA_CUBE_CHANNEL>(r).CHANNEL.value() == N - 1 &&
      read<DPU_WDMA_SIZE_0>(r).CHANNEL_WDMA.value() == N - 1 && read<DPU_WDMA_SIZE_1>(r).HEIGHT_WDMA.value() == M - 1;
  if (!consistent) return report(fault_kind::unmodelled, "the CNA, CORE and DPU dimension registers disagree");

  // Operand DMA: every range must lie inside one buffer.
  const std::uint32_t feature_address = static_cast<std::uint32_t>(read<CNA_FEATURE_DATA_ADDR>(r).FEATURE_BASE_ADDR.value());
  const std::uint32_t weight_address = static_cast<std::uint32_t>(read<CNA_DCOMP_ADDR0>(r).DECOMPRESS_ADDR0.value());
  const std::uint32_t output_address = static_cast<std::uint32_t>(read<DPU_DST_BASE_ADDR>(r).DST_BASE_ADDR.value());
  iova_space::region* features = memory.find(feature_address, g.feature_bytes());
  iova_space::region* weights = memory.find(weight_address, g.weight_bytes());
  iova_space::region* output = memory.find(output_address, g.output_bytes());
  if (!features || !weights) return report(fault_kind::wild_access, "a feature or weight read outside every buffer");
  if (!output) return report(fault_kind::wild_access, "the output write lands outside every buffer");
  auto view = [](iova_space::region* reg, std::uint32_t address, std::uint32_t size) {
    return reg->bytes.subspan(address - reg->iova, size);
  };

  // What the CBUF schedule makes of the result (reference "The M-tiling scheduler").
  fault_kind result_fault = fault_kind::unmodelled;
  std::string result_why;
  if (data_banks > 1 && K < bank_split_min_k(in)) {
    result_fault = fault_kind::zeros;
    result_why = "a bank split below its K: the MAC array emits zeros";
  } else if (in == precision::fp16 && ((K == 128 && M > 256) || M > data_banks * 32768 / (2 * K))) {
    result_fault = fault_kind::wrong_result;
    result_why = "more rows than the data banks hold";
  } else if (in == precision::int8 && data_banks > 1 && M > m_ceiling(in, K, schedule::bank_split)) {
    return report(fault_kind::hang, "int8 rows beyond the bank split's ceiling (the weight no longer fits)");
  } else if (in != precision::fp16 && data_banks == 1 && M * K > (in == precision::int4 ? 16384u : 32768u)) {
    result_fault = fault_kind::wrong_result;
    result_why = "more rows than the data bank holds";
  }

  // Cold start: the first job writing a freshly allocated buffer leaves it stale.
  output->touched = true;
  output->touched_as = static_cast<int>(out_precision);
  if (behaviour.cold_start_stale && !output->warm)
    return report(fault_kind::stale_output, "first job writing a freshly allocated output buffer");

  std::vector<float> c_float;
  std::vector<std::int32_t> c_int;
  if (result_fault == fault_kind::unmodelled) {
    if (in == precision::fp16) {
      std::vector<float> a(std::size_t{M} * K), b(std::size_t{K} * N);
      c_float.assign(std::size_t{M} * N, 0.0f);
      (void)unpack_features<float>(g, view(features, feature_address, g.feature_bytes()), a);
      (void)unpack_weights<float>(g, view(weights, weight_address, g.weight_bytes()), b);
      gemm(a.data(), b.data(), c_float.data(), M, K, N, threads ? threads : std::thread::hardware_concurrency());
    } else {
      std::vector<std::int8_t> a(std::size_t{M} * K), b(std::size_t{K} * N);
      c_int.assign(std::size_t{M} * N, 0);
      (void)unpack_features<std::int8_t>(g, view(features, feature_address, g.feature_bytes()), a);
      (void)unpack_weights<std::int8_t>(g, view(weights, weight_address, g.weight_bytes()), b);
      gemm(a.data(), b.data(), c_int.data(), M, K, N, threads ? threads : std::thread::hardware_concurrency());
      if (out_precision == precision::int16)  // the int16 accumulator saturates
        for (std::int32_t& v : c_int) v = std::clamp(v, -32768, 32767);
    }
  } else {
    report(result_fault, result_why);
    if (in == precision::fp16) c_float.assign(std::size_t{M} * N, result_fault == fault_kind::zeros ? 0.0f : 1e30f);
    else c_int.assign(std::size_t{M} * N, result_fault == fault_kind::zeros ? 0 : 0x5a5a);
  }
  if (out_precision == precision::fp16 && read<DPU_OUT_CVT_SCALE>(r).FP32TOFP16_EN.value() == 0) {
    report(fault_kind::zeros, "a fp16 output without FP32TOFP16_EN is all zeros");
    std::fill(c_float.begin(), c_float.end(), 0.0f);
  }
  const auto dst = view(output, output_address, g.output_bytes());
  if (in == precision::fp16) (void)pack_output<float>(g, c_float, dst);
  else (void)pack_output<std::int32_t>(g, c_int, dst);
  if (corrupt_next_output) {
    dst[0] ^= 0x01;
    corrupt_next_output = false;
  }
}

}  // namespace regcmd::model
