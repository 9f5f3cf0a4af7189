// Pooling on the functional model (model/ppu.cpp), built without programs/: PPU + PPU_RDMA
// tasks written with the task skeleton, run on the model and compared with a host pooling
// over NHWC data laid out here (max, min, fp16 average, global, strides 1 and 2, kernels 2
// and 3, padding, several channel surfaces, row tasks of a taller image), hand-computed
// cases, and the faults of the pooling contract (wild DMA, values outside it, cold start).
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/model/npu.hpp>
#include <regcmd/task/emit_task.hpp>
#include <regcmd/task/task.hpp>
#include <regcmd/task/writer.hpp>

#include "model_board.hpp"

using namespace regcmd;
using model::fault_kind;

namespace {

// One pooling over an H x W x C image (NHWC on the host, NC1HWC2 on the board).
struct pool_params {
  std::uint32_t method = 1;  // POOLING_METHOD: 0 average, 1 max, 2 min
  precision dtype = precision::fp16;
  std::uint32_t H = 0, W = 0, C = 0;
  std::uint32_t kh = 2, kw = 2, sy = 2, sx = 2;
  std::uint32_t top = 0, bottom = 0, left = 0, right = 0;
  std::uint64_t pad_value = 0;  // 35 bits: PAD_VALUE_1 : PAD_VALUE_0
  std::uint32_t recip_w = 0, recip_h = 0;

  std::uint32_t bytes() const { return dtype == precision::fp16 ? 2 : 1; }
  std::uint32_t atom() const { return 16 / bytes(); }
  std::uint32_t surfaces() const { return C / atom(); }
  std::uint32_t out_h() const { return (H + top + bottom - kh) / sy + 1; }
  std::uint32_t out_w() const { return (W + left + right - kw) / sx + 1; }
  std::uint32_t input_bytes() const { return surfaces() * H * W * 16; }
  std::uint32_t output_bytes() const { return surfaces() * out_h() * out_w() * 16; }
};

// The fp16 bits of a reciprocal as the contract reads it: binary16 of 2^16 / k.
std::uint32_t recip(std::uint32_t k) { return float_to_half(65536.0f / static_cast<float>(k)); }

constexpr std::uint64_t fp16_minus_inf = 0xfc00, fp16_plus_inf = 0x7c00;
constexpr std::uint64_t int8_minus_128 = 0x7'ffff'ff80;  // -128 in 35 bits: 0xffffff80, PAD_VALUE_1 7
constexpr std::uint64_t int8_plus_127 = 0x7f;

// The task writing output rows [first, first + rows): the input rows they read, the padding
// rows on their edges, the surface strides of the whole image (each surface's rows land in
// place). The whole image (first 0, all rows) keeps the parameters' padding as given.
task_desc pool_task(const pool_params& p, std::uint32_t first, std::uint32_t rows) {
  std::uint32_t in_first = 0, in_rows = p.H, pad_top = p.top, pad_bottom = p.bottom;
  if (first != 0 || rows != p.out_h()) {
    const std::int64_t top = std::int64_t{first} * p.sy - p.top;
    const std::int64_t bottom = (std::int64_t{first} + rows - 1) * p.sy + p.kh - 1 - p.top;
    pad_top = top < 0 ? static_cast<std::uint32_t>(-top) : 0;
    pad_bottom = bottom >= p.H ? static_cast<std::uint32_t>(bottom - (p.H - 1)) : 0;
    in_first = top < 0 ? 0 : static_cast<std::uint32_t>(top);
    in_rows = static_cast<std::uint32_t>((bottom >= p.H ? p.H - 1 : bottom) + 1 - in_first);
  }
  const std::uint32_t out_surface = p.out_h() * p.out_w(), in_surface = p.H * p.W;
  task_desc t;
  t.ppu = ppu_stage{.cube_in_width = {.CUBE_IN_WIDTH = p.W - 1},
                    .cube_in_height = {.CUBE_IN_HEIGHT = in_rows - 1},
                    .cube_in_channel = {.CUBE_IN_CHANNEL = p.C - 1},
                    .cube_out_width = {.CUBE_OUT_WIDTH = p.out_w() - 1},
                    .cube_out_height = {.CUBE_OUT_HEIGHT = rows - 1},
                    .cube_out_channel = {.CUBE_OUT_CHANNEL = p.C - 1},
                    .operation_mode = {.POOLING_METHOD = p.method, .FLYING_MODE = 1},
                    .kernel = {.KERNEL_WIDTH = p.kw - 1, .KERNEL_HEIGHT = p.kh - 1,
                               .KERNEL_STRIDE_WIDTH = p.sx - 1, .KERNEL_STRIDE_HEIGHT = p.sy - 1},
                    .recip_kernel_width = {.RECIP_KERNEL_WIDTH = p.recip_w},
                    .recip_kernel_height = {.RECIP_KERNEL_HEIGHT = p.recip_h},
                    .padding = {.PAD_LEFT = p.left, .PAD_TOP = pad_top, .PAD_RIGHT = p.right, .PAD_BOTTOM = pad_bottom},
                    .padding_value_1 = {.PAD_VALUE_0 = static_cast<std::uint32_t>(p.pad_value & 0xffff'ffffu)},
                    .padding_value_2 = {.PAD_VALUE_1 = static_cast<std::uint32_t>(p.pad_value >> 32)},
                    .output = {operand_role::output, first * p.out_w() * 16, p.output_bytes()},
                    .dst_surf_stride = {.DST_SURF_STRIDE = out_surface},
                    .data_format = {.PROC_PRECISION = p.dtype, .INDEX_ADD = out_surface}};
  t.ppu_rdma = ppu_rdma_stage{.cube_in_width = {.CUBE_IN_WIDTH = p.W - 1},
                              .cube_in_height = {.CUBE_IN_HEIGHT = in_rows - 1},
                              .cube_in_channel = {.CUBE_IN_CHANNEL = p.C - 1},
                              .source = {operand_role::feature, in_first * p.W * 16, p.input_bytes()},
                              .src_line_stride = {.SRC_LINE_STRIDE = p.W},
                              .src_surf_stride = {.SRC_SURF_STRIDE = in_surface},
                              .data_format = {.IN_PRECISION = p.bytes()}};
  return t;
}

// The tasks of `p` in chunks of at most `rows_per_task` output rows (0: one task).
std::vector<task_desc> pool_tasks(const pool_params& p, std::uint32_t rows_per_task = 0) {
  if (rows_per_task == 0) rows_per_task = p.out_h();
  std::vector<task_desc> tasks;
  for (std::uint32_t first = 0; first < p.out_h(); first += rows_per_task)
    tasks.push_back(pool_task(p, first, std::min(rows_per_task, p.out_h() - first)));
  return tasks;
}

// Emits the tasks as one chained program and runs it on the board.
model::run_result run_tasks(testing::model_board& board, const std::vector<task_desc>& tasks) {
  program<256, 8> p;
  REQUIRE(tasks.size() <= 8);
  const status built = fill(p, [&](program_writer& w) {
    for (const task_desc& t : tasks) emit_task(w, t);
  });
  REQUIRE(built.ok());
  return board.run(p.view());
}

// NHWC element bits (fp16 bits, int8 two's complement) to NC1HWC2 bytes and back: 16-byte
// atoms of C2 channels, lines W·16 bytes apart, surfaces H·W·16 bytes apart.
std::vector<std::uint8_t> to_nc1hwc2(const std::vector<std::uint16_t>& nhwc, std::uint32_t H, std::uint32_t W,
                                     std::uint32_t C, std::uint32_t bytes) {
  const std::uint32_t c2 = 16 / bytes;
  std::vector<std::uint8_t> out(std::size_t{C} * H * W * bytes);
  for (std::uint32_t y = 0; y < H; ++y)
    for (std::uint32_t x = 0; x < W; ++x)
      for (std::uint32_t c = 0; c < C; ++c) {
        const std::uint16_t v = nhwc[(std::size_t{y} * W + x) * C + c];
        const std::size_t at = ((std::size_t{c / c2} * H + y) * W + x) * 16 + c % c2 * bytes;
        out[at] = static_cast<std::uint8_t>(v);
        if (bytes == 2) out[at + 1] = static_cast<std::uint8_t>(v >> 8);
      }
  return out;
}

std::vector<std::uint16_t> from_nc1hwc2(const std::vector<std::uint8_t>& bytes_in, std::uint32_t H, std::uint32_t W,
                                        std::uint32_t C, std::uint32_t bytes) {
  const std::uint32_t c2 = 16 / bytes;
  std::vector<std::uint16_t> out(std::size_t{H} * W * C);
  for (std::uint32_t y = 0; y < H; ++y)
    for (std::uint32_t x = 0; x < W; ++x)
      for (std::uint32_t c = 0; c < C; ++c) {
        const std::size_t at = ((std::size_t{c / c2} * H + y) * W + x) * 16 + c % c2 * bytes;
        std::uint16_t v = bytes_in[at];
        if (bytes == 2) v = static_cast<std::uint16_t>(v | bytes_in[at + 1] << 8);
        out[(std::size_t{y} * W + x) * C + c] = v;
      }
  return out;
}

// The host pooling, a plain loop over NHWC: each output's taps in row-major order, a padded
// tap reading the padding value; max / min exact, the average summed in fp32 and scaled by
// the two reciprocals (binary16 bits / 2^16), rounded to fp16.
std::vector<std::uint16_t> host_pool(const pool_params& p, const std::vector<std::uint16_t>& in) {
  const bool fp16 = p.dtype == precision::fp16;
  const float rw = half_to_float(static_cast<std::uint16_t>(p.recip_w)) / 65536.0f;
  const float rh = half_to_float(static_cast<std::uint16_t>(p.recip_h)) / 65536.0f;
  const float pad_f = half_to_float(static_cast<std::uint16_t>(p.pad_value & 0xffff));
  const int pad_i = p.pad_value >> 34 ? static_cast<int>(static_cast<std::int64_t>(p.pad_value) - (std::int64_t{1} << 35))
                                      : static_cast<int>(p.pad_value);
  std::vector<std::uint16_t> out(std::size_t{p.out_h()} * p.out_w() * p.C);
  for (std::uint32_t oy = 0; oy < p.out_h(); ++oy)
    for (std::uint32_t ox = 0; ox < p.out_w(); ++ox)
      for (std::uint32_t c = 0; c < p.C; ++c) {
        float sum = 0, extreme = 0;
        int extreme_i = 0;
        bool first = true;
        for (std::uint32_t ky = 0; ky < p.kh; ++ky)
          for (std::uint32_t kx = 0; kx < p.kw; ++kx) {
            const int y = static_cast<int>(oy * p.sy + ky) - static_cast<int>(p.top);
            const int x = static_cast<int>(ox * p.sx + kx) - static_cast<int>(p.left);
            const bool inside = y >= 0 && x >= 0 && y < static_cast<int>(p.H) && x < static_cast<int>(p.W);
            const std::uint16_t bits =
                inside ? in[(static_cast<std::size_t>(y) * p.W + static_cast<std::size_t>(x)) * p.C + c] : 0;
            if (fp16) {
              const float v = inside ? half_to_float(bits) : pad_f;
              sum += v;
              if (first || (p.method == 1 ? v > extreme : v < extreme)) extreme = v;
            } else {
              const int v = inside ? static_cast<std::int8_t>(static_cast<std::uint8_t>(bits)) : pad_i;
              if (first || (p.method == 1 ? v > extreme_i : v < extreme_i)) extreme_i = v;
            }
            first = false;
          }
        std::uint16_t result = 0;
        if (!fp16) result = static_cast<std::uint8_t>(static_cast<std::int8_t>(extreme_i));
        else result = float_to_half(p.method == 0 ? sum * rw * rh : extreme);
        out[(std::size_t{oy} * p.out_w() + ox) * p.C + c] = result;
      }
  return out;
}

// Seeded random NHWC data: fp16 in [-8, 8], int8 over its whole range.
std::vector<std::uint16_t> random_image(const pool_params& p, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> v(std::size_t{p.H} * p.W * p.C);
  for (std::uint16_t& e : v) {
    if (p.dtype == precision::fp16) e = float_to_half(std::uniform_real_distribution<float>(-8, 8)(rng));
    else e = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(-128, 127)(rng));
  }
  return v;
}

// Runs `p` on random data (in tasks of `rows_per_task` output rows) and returns how many
// outputs differ from the host pooling's bits.
std::size_t mismatches(const pool_params& p, std::uint32_t seed, std::uint32_t rows_per_task = 0) {
  const std::vector<std::uint16_t> image = random_image(p, seed);
  testing::model_board board;
  const std::vector<std::uint8_t> packed = to_nc1hwc2(image, p.H, p.W, p.C, p.bytes());
  std::vector<std::uint8_t>& in = board.allocate(operand_role::feature, packed.size());
  std::copy(packed.begin(), packed.end(), in.begin());
  board.allocate(operand_role::output, p.output_bytes(), 0xee);
  const std::vector<task_desc> tasks = pool_tasks(p, rows_per_task);
  const model::run_result r = run_tasks(board, tasks);
  REQUIRE_MESSAGE(r.faults.empty(), r.faults.front().what);
  REQUIRE(r.tasks_completed == tasks.size());
  const std::vector<std::uint16_t> got = from_nc1hwc2(board[operand_role::output], p.out_h(), p.out_w(), p.C, p.bytes());
  const std::vector<std::uint16_t> want = host_pool(p, image);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      if (differ == 0) MESSAGE("first difference at NHWC index " << i << ": model " << got[i] << ", host " << want[i]);
      ++differ;
    }
  return differ;
}

// fp16 bits of one element of a packed 1-surface output.
std::uint16_t half_at(const std::vector<std::uint8_t>& bytes, std::size_t pixel, std::size_t lane) {
  return static_cast<std::uint16_t>(bytes[pixel * 16 + lane * 2] | bytes[pixel * 16 + lane * 2 + 1] << 8);
}

}  // namespace

TEST_CASE("pooling by hand: a 2 x 2 fp16 average of 1, 2, 3, 4 with RECIP 0x7800 per axis is 2.5") {
  // 0x7800 is binary16 32768: each axis scales by 32768 / 2^16 = 1/2, (1 + 2 + 3 + 4) / 4 = 2.5.
  const pool_params p{.method = 0, .H = 2, .W = 2, .C = 8, .recip_w = 0x7800, .recip_h = 0x7800};
  testing::model_board board;
  std::vector<std::uint8_t>& in = board.allocate(operand_role::feature, 4 * 16);
  const std::uint16_t lane0[4] = {0x3c00, 0x4000, 0x4200, 0x4400};  // 1, 2, 3, 4 at (0,0) (0,1) (1,0) (1,1)
  for (std::size_t px = 0; px < 4; ++px) {
    in[px * 16] = static_cast<std::uint8_t>(lane0[px]);
    in[px * 16 + 1] = static_cast<std::uint8_t>(lane0[px] >> 8);
    in[px * 16 + 2] = 0x00;  // lane 1: -1.5 everywhere (0xbe00)
    in[px * 16 + 3] = 0xbe;
  }
  board.allocate(operand_role::output, 16, 0xee);
  const auto r = run_tasks(board, pool_tasks(p));
  REQUIRE(r.faults.empty());
  const std::vector<std::uint8_t>& out = board[operand_role::output];
  CHECK(half_at(out, 0, 0) == 0x4100);  // 2.5
  CHECK(half_at(out, 0, 1) == 0xbe00);  // -1.5
  for (std::size_t lane = 2; lane < 8; ++lane) CHECK(half_at(out, 0, lane) == 0);
}

TEST_CASE("pooling by hand: a 3-wide global average with RECIP fp16(65536 / 3), rounded to nearest even") {
  // A 3 x 2 image, kernel = stride = the image. fp16(65536 / 3) = 21840 (0x7555): the width
  // scales by 21840 / 65536 = 0.333251953125, the height by 0x7800 -> 1/2.
  //   lane 0: 1 .. 6, sum 21: 21 * 0.333251953125 = 6.998291015625, / 2 = 3.4991455078125,
  //           within half an fp16 step (2^-10) of 3.5 -> 0x4300.
  //   lane 1: all 1, sum 6: 1.99951171875 / 2 = 0.999755859375, exactly between
  //           0.99951171875 (0x3bff) and 1 (0x3c00): nearest even -> 0x3c00.
  CHECK(recip(3) == 0x7555);
  const pool_params p{.method = 0, .H = 2, .W = 3, .C = 8, .kh = 2, .kw = 3, .sy = 2, .sx = 3,
                      .recip_w = 0x7555, .recip_h = 0x7800};
  testing::model_board board;
  std::vector<std::uint8_t>& in = board.allocate(operand_role::feature, 6 * 16);
  const std::uint16_t lane0[6] = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600};  // 1 2 3 / 4 5 6
  for (std::size_t px = 0; px < 6; ++px) {
    in[px * 16] = static_cast<std::uint8_t>(lane0[px]);
    in[px * 16 + 1] = static_cast<std::uint8_t>(lane0[px] >> 8);
    in[px * 16 + 2] = 0x00;
    in[px * 16 + 3] = 0x3c;
  }
  board.allocate(operand_role::output, 16, 0xee);
  const auto r = run_tasks(board, pool_tasks(p));
  REQUIRE(r.faults.empty());
  CHECK(half_at(board[operand_role::output], 0, 0) == 0x4300);
  CHECK(half_at(board[operand_role::output], 0, 1) == 0x3c00);
}

TEST_CASE("pooling by hand: the padding value is what a padded tap reads, -inf for max") {
  // 2 x 2 of -5 (0xc500), a 2 x 2 window at stride 1 with one padding row / column on every
  // side: 3 x 3 outputs; every window but the centre one holds a padded tap.
  pool_params p{.method = 1, .H = 2, .W = 2, .C = 8, .sy = 1, .sx = 1, .top = 1, .bottom = 1, .left = 1, .right = 1};
  for (const auto& padding : {std::pair<std::uint64_t, std::uint16_t>{fp16_minus_inf, 0xc500}, {0x0000, 0x0000}}) {
    const std::uint64_t pad = padding.first;
    const std::uint16_t want = padding.second;
    CAPTURE(pad);
    p.pad_value = pad;
    testing::model_board board;
    board.allocate(operand_role::feature, 4 * 16);
    for (std::size_t px = 0; px < 4; ++px) board[operand_role::feature][px * 16 + 1] = 0xc5;  // lane 0: -5
    board.allocate(operand_role::output, 9 * 16, 0xee);
    const auto r = run_tasks(board, pool_tasks(p));
    REQUIRE(r.faults.empty());
    for (std::size_t px = 0; px < 9; ++px) {
      CAPTURE(px);
      CHECK(half_at(board[operand_role::output], px, 0) == (px == 4 ? 0xc500 : want));
      CHECK(half_at(board[operand_role::output], px, 1) == 0);  // zeros stay 0 whichever pad
    }
  }
}

TEST_CASE("pooling by hand: the average sums its taps in fp32, row by row") {
  // 2 x 2 average, RECIP 0x7800 per axis (1/4 in all). 4096 = 0x6c00, 2^-12 = 0x0c00: in fp32
  // 4096 + 2^-12 is a tie that rounds back to 4096 (its ulp is 2^-11).
  //   lane 0: 4096, 2^-12 / 2^-12, -4096: both small taps are lost -> 0 (exact: 2^-13)
  //   lane 1: 4096, -4096 / 2^-12, 2^-12: the first row cancels, 2^-11 / 4 = 2^-13 -> 0x0800
  //           (column by column the sum would be 2^-12, the output 2^-14 = 0x0400)
  const pool_params p{.method = 0, .H = 2, .W = 2, .C = 8, .recip_w = 0x7800, .recip_h = 0x7800};
  testing::model_board board;
  std::vector<std::uint8_t>& in = board.allocate(operand_role::feature, 4 * 16);
  const std::uint16_t lane0[4] = {0x6c00, 0x0c00, 0x0c00, 0xec00}, lane1[4] = {0x6c00, 0xec00, 0x0c00, 0x0c00};
  for (std::size_t px = 0; px < 4; ++px) {
    in[px * 16] = static_cast<std::uint8_t>(lane0[px]);
    in[px * 16 + 1] = static_cast<std::uint8_t>(lane0[px] >> 8);
    in[px * 16 + 2] = static_cast<std::uint8_t>(lane1[px]);
    in[px * 16 + 3] = static_cast<std::uint8_t>(lane1[px] >> 8);
  }
  board.allocate(operand_role::output, 16, 0xee);
  const auto r = run_tasks(board, pool_tasks(p));
  REQUIRE(r.faults.empty());
  CHECK(half_at(board[operand_role::output], 0, 0) == 0x0000);
  CHECK(half_at(board[operand_role::output], 0, 1) == 0x0800);
}

TEST_CASE("pooling through unpacked strides: a crop of a wider image, output surfaces apart") {
  // 24 fp16 channels of a 6 x 11 image; the pooling reads columns 3 .. 9 (W = 7) through
  // lines 11 atoms apart and surfaces 6 x 11 atoms apart, and writes 3 x 3 outputs with
  // surfaces 9 + 5 atoms apart (5 atoms of gap, left untouched).
  const std::uint32_t full_w = 11, x0 = 3, gap = 5;
  const pool_params p{.method = 1, .H = 6, .W = 7, .C = 24};
  const pool_params full{.method = 1, .H = 6, .W = full_w, .C = 24};
  const std::vector<std::uint16_t> image = random_image(full, 51);
  std::vector<std::uint16_t> crop(std::size_t{p.H} * p.W * p.C);
  for (std::uint32_t y = 0; y < p.H; ++y)
    for (std::uint32_t x = 0; x < p.W; ++x)
      for (std::uint32_t c = 0; c < p.C; ++c)
        crop[(std::size_t{y} * p.W + x) * p.C + c] = image[(std::size_t{y} * full_w + x + x0) * p.C + c];
  const std::uint32_t out_surface = p.out_h() * p.out_w() + gap;
  std::vector<task_desc> tasks = pool_tasks(p);
  tasks[0].ppu_rdma->source = {operand_role::feature, x0 * 16, full.input_bytes() - x0 * 16};
  tasks[0].ppu_rdma->src_line_stride.SRC_LINE_STRIDE = full_w;
  tasks[0].ppu_rdma->src_surf_stride.SRC_SURF_STRIDE = p.H * full_w;
  tasks[0].ppu->dst_surf_stride.DST_SURF_STRIDE = out_surface;
  testing::model_board board;
  const std::vector<std::uint8_t> packed = to_nc1hwc2(image, full.H, full.W, full.C, 2);
  std::vector<std::uint8_t>& in = board.allocate(operand_role::feature, packed.size());
  std::copy(packed.begin(), packed.end(), in.begin());
  board.allocate(operand_role::output, std::size_t{out_surface} * 16 * 3, 0xee);
  const auto r = run_tasks(board, tasks);
  REQUIRE(r.faults.empty());
  const std::vector<std::uint16_t> want = host_pool(p, crop);
  const std::vector<std::uint8_t>& out = board[operand_role::output];
  std::size_t differ = 0, untouched = 0;
  for (std::uint32_t s = 0; s < 3; ++s) {
    for (std::uint32_t px = 0; px < p.out_h() * p.out_w(); ++px)
      for (std::uint32_t lane = 0; lane < 8; ++lane)
        differ += half_at(out, std::size_t{s} * out_surface + px, lane) != want[std::size_t{px} * p.C + s * 8 + lane];
    for (std::uint32_t px = p.out_h() * p.out_w(); px < out_surface; ++px)
      for (std::uint32_t b = 0; b < 16; ++b) untouched += out[(std::size_t{s} * out_surface + px) * 16 + b] == 0xee;
  }
  CHECK(differ == 0);
  CHECK(untouched == 3 * gap * 16);
}

TEST_CASE("fp16 max, min and average pooling of 24 channels on the model, against the host") {
  const std::uint32_t avg = 0, max = 1, min = 2;
  // kernel 2 stride 2, W odd: the last column is never read
  CHECK(mismatches({.method = max, .H = 6, .W = 7, .C = 24}, 1) == 0);
  CHECK(mismatches({.method = min, .H = 6, .W = 7, .C = 24}, 2) == 0);
  CHECK(mismatches({.method = avg, .H = 6, .W = 7, .C = 24, .recip_w = recip(2), .recip_h = recip(2)}, 3) == 0);
  // kernel 2 stride 1
  CHECK(mismatches({.method = max, .H = 5, .W = 6, .C = 24, .sy = 1, .sx = 1}, 4) == 0);
  CHECK(mismatches({.method = avg, .H = 5, .W = 6, .C = 24, .sy = 1, .sx = 1, .recip_w = 0x7800, .recip_h = 0x7800}, 5) == 0);
  // kernel 3, strides 1 and 2, padded with -inf (max), +inf (min), 0 and 1.0 (average)
  CHECK(mismatches({.method = max, .H = 7, .W = 9, .C = 24, .kh = 3, .kw = 3, .top = 1, .bottom = 1, .left = 1,
                    .right = 1, .pad_value = fp16_minus_inf}, 6) == 0);
  CHECK(mismatches({.method = max, .H = 5, .W = 6, .C = 24, .kh = 3, .kw = 3, .sy = 1, .sx = 1, .top = 1, .bottom = 1,
                    .left = 1, .right = 1, .pad_value = fp16_minus_inf}, 7) == 0);
  CHECK(mismatches({.method = min, .H = 7, .W = 8, .C = 24, .kh = 3, .kw = 3, .top = 1, .bottom = 1, .left = 1,
                    .right = 1, .pad_value = fp16_plus_inf}, 8) == 0);
  CHECK(mismatches({.method = avg, .H = 6, .W = 6, .C = 24, .kh = 3, .kw = 3, .sy = 1, .sx = 1, .top = 1, .bottom = 1,
                    .left = 1, .right = 1, .recip_w = recip(3), .recip_h = recip(3)}, 9) == 0);
  CHECK(mismatches({.method = avg, .H = 8, .W = 7, .C = 24, .kh = 3, .kw = 2, .sy = 2, .sx = 1, .top = 1, .bottom = 0,
                    .left = 0, .right = 1, .pad_value = 0x3c00, .recip_w = recip(2), .recip_h = recip(3)}, 10) == 0);
  // an unused bottom / right padding (the strides never reach it)
  CHECK(mismatches({.method = max, .H = 7, .W = 7, .C = 24, .kh = 3, .kw = 3, .sy = 2, .sx = 2, .bottom = 1, .right = 1,
                    .pad_value = fp16_minus_inf}, 11) == 0);
}

TEST_CASE("int8 max and min pooling of 32 channels on the model, against the host") {
  CHECK(mismatches({.method = 1, .dtype = precision::int8, .H = 6, .W = 7, .C = 32}, 21) == 0);
  CHECK(mismatches({.method = 2, .dtype = precision::int8, .H = 5, .W = 6, .C = 32, .sy = 1, .sx = 1}, 22) == 0);
  CHECK(mismatches({.method = 1, .dtype = precision::int8, .H = 7, .W = 9, .C = 32, .kh = 3, .kw = 3, .top = 1,
                    .bottom = 1, .left = 1, .right = 1, .pad_value = int8_minus_128}, 23) == 0);
  CHECK(mismatches({.method = 2, .dtype = precision::int8, .H = 6, .W = 5, .C = 32, .kh = 3, .kw = 3, .sy = 1, .sx = 1,
                    .top = 1, .bottom = 1, .left = 1, .right = 1, .pad_value = int8_plus_127}, 24) == 0);
}

TEST_CASE("global max and average pooling: the kernel and stride are the image") {
  CHECK(mismatches({.method = 1, .H = 5, .W = 7, .C = 24, .kh = 5, .kw = 7, .sy = 5, .sx = 7}, 31) == 0);
  CHECK(mismatches({.method = 0, .H = 5, .W = 7, .C = 24, .kh = 5, .kw = 7, .sy = 5, .sx = 7, .recip_w = recip(7),
                    .recip_h = recip(5)}, 32) == 0);
  CHECK(mismatches({.method = 1, .dtype = precision::int8, .H = 4, .W = 6, .C = 32, .kh = 4, .kw = 6, .sy = 4, .sx = 6}, 33) == 0);
}

TEST_CASE("pooling in row tasks of a taller image: offset input and output bases, the whole image's surface strides") {
  // 20 x 6, kernel 3 stride 2, padding 1: 10 x 3 outputs in tasks of 4, 4 and 2 rows; the
  // first task reads the top padding row, the last the bottom one.
  CHECK(mismatches({.method = 1, .H = 20, .W = 6, .C = 24, .kh = 3, .kw = 3, .top = 1, .bottom = 1, .left = 1,
                    .right = 1, .pad_value = fp16_minus_inf}, 41, 4) == 0);
  CHECK(mismatches({.method = 0, .H = 9, .W = 5, .C = 24, .sy = 1, .sx = 1, .recip_w = 0x7800, .recip_h = 0x7800}, 42, 3) == 0);
  CHECK(mismatches({.method = 1, .dtype = precision::int8, .H = 11, .W = 4, .C = 32, .kh = 3, .kw = 2, .sy = 2, .sx = 2,
                    .top = 1, .bottom = 1, .pad_value = int8_minus_128}, 43, 2) == 0);
}

TEST_CASE("pooling DMA: a read or a write past its buffer is a wild access of the exact range") {
  // 4 x 5 x 24 fp16: 3 surfaces of 4 lines of 5 atoms. The read spans 2 surfaces + 3 lines
  // + 5 atoms = 2 * 320 + 3 * 80 + 80 = 960 bytes; the 2 x 2 outputs 2 * 64 + 64 = 192.
  const pool_params p{.method = 1, .H = 4, .W = 5, .C = 24};
  for (const auto& sizes : {std::pair<std::size_t, std::size_t>{960, 192}, {959, 192}, {960, 191}}) {
    const std::size_t in_bytes = sizes.first, out_bytes = sizes.second;
    CAPTURE(in_bytes);
    CAPTURE(out_bytes);
    testing::model_board board;
    board.allocate(operand_role::feature, in_bytes);
    board.allocate(operand_role::output, out_bytes, 0xee);
    const auto r = run_tasks(board, pool_tasks(p));
    if (in_bytes == 960 && out_bytes == 192) {
      CHECK(r.faults.empty());
      continue;
    }
    REQUIRE(r.faults.size() == 1);
    CHECK(r.faults[0].kind == fault_kind::wild_access);
    CHECK(board.npu.wedged());
    if (in_bytes == 959) {
      CHECK(r.faults[0].address == board.base[static_cast<std::size_t>(operand_role::feature)]);
      CHECK(r.faults[0].bytes == 960);
    } else {
      CHECK(r.faults[0].address == board.base[static_cast<std::size_t>(operand_role::output)]);
      CHECK(r.faults[0].bytes == 192);
      CHECK(board[operand_role::output] == std::vector<std::uint8_t>(191, 0xee));  // nothing written
    }
  }
  // A row task: rows 2 .. 3 of 8 read from the third line, surfaces 8 lines apart: 2 * 640 + 80
  // + 80 bytes from offset 160 (the whole image's 1920 bytes leave 1760 after it).
  const pool_params tall{.method = 1, .H = 8, .W = 5, .C = 24};
  testing::model_board board;
  board.allocate(operand_role::feature, tall.input_bytes());
  board.allocate(operand_role::output, tall.output_bytes());
  std::vector<task_desc> tasks = pool_tasks(tall, 1);
  const auto r = run_tasks(board, {tasks[1]});
  CHECK(r.faults.empty());
  board.allocate(operand_role::feature, 160 + 2 * 640 + 80 + 80 - 1);  // one byte short
  const auto short_read = run_tasks(board, {tasks[1]});
  REQUIRE(short_read.faults.size() == 1);
  CHECK(short_read.faults[0].kind == fault_kind::wild_access);
  CHECK(short_read.faults[0].address == board.base[static_cast<std::size_t>(operand_role::feature)] + 160);
  CHECK(short_read.faults[0].bytes == 2 * 640 + 80 + 80);
}

TEST_CASE("register values outside the pooling contract are unmodelled and write nothing") {
  const pool_params p{.method = 1, .H = 4, .W = 4, .C = 24, .kh = 3, .kw = 3, .sy = 1, .sx = 1, .top = 1, .bottom = 1,
                      .left = 1, .right = 1, .pad_value = fp16_minus_inf};
  struct variant {
    const char* says;  // a part of the fault's message
    void (*change)(task_desc&);
  };
  const variant variants[] = {
      {"int8 average", [](task_desc& t) {
         t.ppu->operation_mode.POOLING_METHOD = 0;
         t.ppu->data_format.PROC_PRECISION = precision::int8;
         t.ppu_rdma->data_format.IN_PRECISION = 1;
         t.ppu->padding_value_1.PAD_VALUE_0 = 0;
       }},
      {"output cube disagrees", [](task_desc& t) { t.ppu->cube_out_width.CUBE_OUT_WIDTH = 4; }},
      {"output cube disagrees", [](task_desc& t) { t.ppu->padding.PAD_BOTTOM = 0; }},
      {"kernel wider or taller", [](task_desc& t) { t.ppu->kernel.KERNEL_WIDTH = 15; }},
      {"neither fp16 nor int8", [](task_desc& t) { t.ppu->data_format.PROC_PRECISION = precision::int16; }},
      {"disagree", [](task_desc& t) { t.ppu_rdma->data_format.IN_PRECISION = 1; }},  // 8-bit storage under fp16
      {"storage width", [](task_desc& t) { t.ppu_rdma->data_format.IN_PRECISION = 3; }},
      {"FLYING_MODE 0", [](task_desc& t) { t.ppu->operation_mode.FLYING_MODE = 0; }},
      {"DPU_FLYIN", [](task_desc& t) { t.ppu->data_format.DPU_FLYIN = 1; }},
      {"INDEX_EN", [](task_desc& t) { t.ppu->operation_mode.INDEX_EN = 1; }},
      {"USE_CNT", [](task_desc& t) { t.ppu->operation_mode.USE_CNT = 1; }},
      {"NOTCH_ADDR", [](task_desc& t) { t.ppu->operation_mode.NOTCH_ADDR = 4; }},
      {"POOLING_METHOD", [](task_desc& t) { t.ppu->operation_mode.POOLING_METHOD = 3; }},
      {"BURST_LEN", [](task_desc& t) { t.ppu->misc_ctrl.BURST_LEN = 5; }},
      {"NONALIGN", [](task_desc& t) { t.ppu->misc_ctrl.NONALIGN = 1; }},
      {"MC_SURF_OUT", [](task_desc& t) { t.ppu->misc_ctrl.MC_SURF_OUT = 1; }},
      {"SURF_LEN", [](task_desc& t) { t.ppu->misc_ctrl.SURF_LEN = 2; }},
      {"RDMA_CUBE_IN sizes disagree", [](task_desc& t) { t.ppu->cube_in_width.CUBE_IN_WIDTH = 4; }},
      {"DATA_CUBE_OUT_CHANNEL", [](task_desc& t) { t.ppu->cube_out_channel.CUBE_OUT_CHANNEL = 15; }},
      {"whole 16-byte atoms", [](task_desc& t) {
         t.ppu->cube_in_channel.CUBE_IN_CHANNEL = 19;
         t.ppu->cube_out_channel.CUBE_OUT_CHANNEL = 19;
         t.ppu_rdma->cube_in_channel.CUBE_IN_CHANNEL = 19;
       }},
      {"overlap each other", [](task_desc& t) { t.ppu->dst_surf_stride.DST_SURF_STRIDE = 15; }},
      {"bits above 15", [](task_desc& t) { t.ppu->padding_value_1.PAD_VALUE_0 = 0xffff'fc00; }},
      {"outside -128..127", [](task_desc& t) {
         t.ppu->data_format.PROC_PRECISION = precision::int8;
         t.ppu_rdma->data_format.IN_PRECISION = 1;
         for (auto* channel : {&t.ppu->cube_in_channel.CUBE_IN_CHANNEL, &t.ppu->cube_out_channel.CUBE_OUT_CHANNEL,
                               &t.ppu_rdma->cube_in_channel.CUBE_IN_CHANNEL})
           *channel = 31;  // 32 int8 channels: two whole atoms
         t.ppu->padding_value_1.PAD_VALUE_0 = 0xffff'ff7f;  // -129 with PAD_VALUE_1 7
         t.ppu->padding_value_2.PAD_VALUE_1 = 7;
       }},
      {"bit 16", [](task_desc& t) {  // the TRM's integer 2^16 / 1
         t.ppu->operation_mode.POOLING_METHOD = 0;
         t.ppu->padding_value_1.PAD_VALUE_0 = 0;
         t.ppu->recip_kernel_width.RECIP_KERNEL_WIDTH = 0x1'0000;
       }},
  };
  for (const variant& v : variants) {
    CAPTURE(std::string(v.says));
    std::vector<task_desc> tasks = pool_tasks(p);
    v.change(tasks[0]);
    testing::model_board board;
    board.allocate(operand_role::feature, p.input_bytes());
    board.allocate(operand_role::output, p.output_bytes() + 64, 0xee);
    const auto r = run_tasks(board, tasks);
    REQUIRE(r.faults.size() == 1);
    CHECK(r.faults[0].kind == fault_kind::unmodelled);
    CHECK_MESSAGE(r.faults[0].what.find(v.says) != std::string::npos, r.faults[0].what);
    CHECK(r.completed());
    CHECK(board[operand_role::output] == std::vector<std::uint8_t>(p.output_bytes() + 64, 0xee));
  }
  // The unmodelled output cube names what disagrees.
  std::vector<task_desc> tasks = pool_tasks(p);
  tasks[0].ppu->cube_out_height.CUBE_OUT_HEIGHT = 2;
  testing::model_board board;
  board.allocate(operand_role::feature, p.input_bytes());
  board.allocate(operand_role::output, p.output_bytes());
  const auto r = run_tasks(board, tasks);
  REQUIRE(r.faults.size() == 1);
  CHECK(r.faults[0].what == "the output cube disagrees with the kernel, stride and padding");
  // The PPU without its read DMA (fed by the DPU) is not a pooling the model runs.
  tasks = pool_tasks(p);
  tasks[0].ppu_rdma.reset();
  const auto alone = run_tasks(board, tasks);
  REQUIRE(alone.faults.size() == 1);
  CHECK(alone.faults[0].kind == fault_kind::unmodelled);
}

TEST_CASE("the pooling's cold start: the first write to a fresh output buffer is stale") {
  const pool_params p{.method = 1, .H = 4, .W = 4, .C = 8};
  testing::model_board board;
  board.npu.behaviour = {true, false};
  board.allocate(operand_role::feature, p.input_bytes(), 0x3c);
  board.allocate(operand_role::output, p.output_bytes(), 0xee);
  const auto cold = run_tasks(board, pool_tasks(p));
  REQUIRE(cold.faults.size() == 1);
  CHECK(cold.faults[0].kind == fault_kind::stale_output);
  CHECK(board[operand_role::output] == std::vector<std::uint8_t>(p.output_bytes(), 0xee));
  const auto warm = run_tasks(board, pool_tasks(p));  // the buffer is warm now
  CHECK(warm.faults.empty());
  CHECK(board[operand_role::output] == std::vector<std::uint8_t>(p.output_bytes(), 0x3c));  // max of 0x3c3c
}
