// The RK35xx family as SoC parameters: each SoC's numbers against the sources, typed from
// them (rknn-matmul-api §1.6 native B tiles, §1.8 the alignment table, the vendor driver's
// per-SoC configs), programs refused on a SoC whose CBUF and limits no source gives, and
// RK3588's numbers read where they are used.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <string_view>
#include <vector>

#include <regcmd/core/soc.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/pooling/pooling.hpp>

using namespace regcmd;

namespace {
constexpr precision fp16 = precision::fp16, int8 = precision::int8, int4 = precision::int4;

// rknn-matmul-api §1.8, "Alignment of K and N": K for int8 / fp16 / int4, then N, per SoC
// (0: "-", no such matmul).
struct alignment_row {
  std::uint32_t k_int8, k_fp16, k_int4, n_int8, n_fp16, n_int4;
};
template <class Soc>
void check_alignment(const alignment_row& row) {
  CAPTURE(Soc::name);
  CHECK(soc::weight_tile_of<Soc>(int8).k == row.k_int8);
  CHECK(soc::weight_tile_of<Soc>(fp16).k == row.k_fp16);
  CHECK(soc::weight_tile_of<Soc>(int4).k == row.k_int4);
  CHECK(soc::weight_tile_of<Soc>(int8).n == row.n_int8);
  CHECK(soc::weight_tile_of<Soc>(fp16).n == row.n_fp16);
  CHECK(soc::weight_tile_of<Soc>(int4).n == row.n_int4);
}

template <class Soc>
constexpr bool has_k_segment = requires {
  Soc::k_segment;
};

// Every program kind's door on SoC `Soc`: the rule it fails with ("" when it builds).
template <class Soc>
std::vector<std::string_view> refusals() {
  auto id = [](const auto& built) { return built ? std::string_view{} : built.err().id(); };
  return {
      id(build<Soc>(matmul_spec{.dtype = fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64})),
      id(build<Soc>(plan_request{{.dtype = fp16, .out_dtype = precision::fp32, .M = 64, .K = 8192, .N = 64}})),
      id(build<Soc>(ew_spec{.op = ew_op::add, .dtype = fp16, .M = 4, .N = 64})),
      id(build<Soc>(fused_spec{.matmul = {.dtype = fp16, .out_dtype = fp16, .M = 4, .K = 64, .N = 64},
                           .op = ew_op::add,
                           .operand = ew_operand::per_channel})),
      id(build<Soc>(conv_spec{.dtype = conv_data::int8, .out_dtype = int8, .H = 8, .W = 8, .C = 16, .out_channels = 16})),
      id(build<Soc>(act_spec{.fn = activation::relu, .dtype = fp16, .M = 1, .N = 64})),
      id(build<Soc>(pool_spec{.op = pool_op::max, .dtype = fp16, .H = 4, .W = 4, .C = 8})),
  };
}
}  // namespace

TEST_CASE("soc: the native weight tiles are the vendor header's, and a matmul's K and N alignment is the tile") {
  check_alignment<soc::rk3588>({32, 32, 32, 32, 16, 64});
  check_alignment<soc::rk3576>({32, 32, 32, 32, 16, 64});
  check_alignment<soc::rk3562>({32, 32, 0, 16, 8, 0});
  check_alignment<soc::rk3568>({32, 16, 0, 16, 8, 0});
  static_assert(std::is_same_v<soc::rk3566, soc::rk3568>);  // one NPU
  // §1.6: the native tile's K is 16 only for RK3566/RK3568's fp16 ("(N/8, K/16, 8, 16)").
  CHECK(soc::rk3562::weight_tile_fp16 == soc::weight_tile{8, 32});
  CHECK(soc::rk3568::weight_tile_fp16 == soc::weight_tile{8, 16});
}

TEST_CASE("soc: cores, K segment, PC fetch scale and precision pairs per SoC") {
  // The vendor driver's configs: core_mask 0x7, 0x3, 0x1, 0x1.
  CHECK(soc::rk3588::cores == 3);
  CHECK(soc::rk3576::cores == 2);
  CHECK(soc::rk3568::cores == 1);
  CHECK(soc::rk3562::cores == 1);
  CHECK(soc::rk3588::pc_data_amount_scale == 2);
  CHECK(soc::rk3568::pc_data_amount_scale == 1);
  // Native B's K segments: 8192 on RK3588, 4096 on RK3576 (§1.6); none documented elsewhere.
  CHECK(soc::rk3588::k_segment == 8192);
  CHECK(soc::rk3576::k_segment == 4096);
  CHECK_FALSE(has_k_segment<soc::rk3568>);
  CHECK_FALSE(has_k_segment<soc::rk3562>);
  // RK3588: fp16 -> fp16 as well (measured); no int4 on RK3566/RK3568/RK3562.
  CHECK(soc::rk3588::matmul_pair(fp16, fp16));
  CHECK_FALSE(soc::rk3576::matmul_pair(fp16, fp16));
  CHECK(soc::rk3576::matmul_pair(int4, precision::int16));
  CHECK_FALSE(soc::rk3568::matmul_pair(int4, precision::int16));
  CHECK_FALSE(soc::rk3562::matmul_pair(int4, precision::int16));
  CHECK(soc::rk3562::matmul_pair(int8, precision::int32));
  // The address registers are the ISA's: 32 bits on every SoC.
  for (const soc::soc_info& s : soc::family) CHECK(s.max_iova == 0xffff'ffffu);
}

TEST_CASE("soc: RK3588 builds every program kind, the others none, each refusal naming the value no source gives") {
  static_assert(soc::programs_known<soc::rk3588>);
  static_assert(!soc::programs_known<soc::rk3576> && !soc::programs_known<soc::rk3568> &&
                !soc::programs_known<soc::rk3562>);
  CHECK(refusals<soc::rk3588>() == std::vector<std::string_view>(7, ""));
  const std::vector<std::string_view> refused(7, "soc-value-unknown");
  CHECK(refusals<soc::rk3576>() == refused);
  CHECK(refusals<soc::rk3568>() == refused);
  CHECK(refusals<soc::rk3562>() == refused);
  const auto e = build<soc::rk3576>(matmul_spec{.dtype = fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64}).err();
  CHECK(e.subject == "RK3576");
  CHECK(e.detail == "CBUF banks and bank size");
  CHECK(soc::first_unknown_value<soc::rk3588>().empty());
}

TEST_CASE("soc: every program rule is refused on a SoC without its numbers, whoever built the program") {
  const auto m = build(matmul_spec{.dtype = fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 64});
  REQUIRE(m.ok());
  CHECK(validate(m.value().view()).ok());
  CHECK_BREAKS(validate<soc::rk3576>(m.value().view()), rules::soc_value_unknown);
  CHECK(validate<soc::rk3562>(m.value().view()).err().subject == "RK3562");
}

TEST_CASE("soc: RK3588's request rules read its tiles: N aligned to 16 (fp16), 32 (int8), 64 (int4) without padding") {
  auto n_rule = [](precision in, precision out, std::uint32_t N) {
    const auto g = resolve({.dtype = in, .out_dtype = out, .M = 1, .K = 64, .N = N, .tile_pad = tile_padding::none});
    return g ? std::string_view{} : g.err().id();
  };
  CHECK(n_rule(fp16, precision::fp32, 16) == "");
  CHECK(n_rule(int8, precision::int32, 16) == "n-alignment");
  CHECK(n_rule(int8, precision::int32, 32) == "");
  CHECK(n_rule(int4, precision::int16, 32) == "n-alignment");
  CHECK(n_rule(int4, precision::int16, 64) == "");
  // Padded, N goes up to the tile: 40 -> 48 fp16, 64 int8, 64 int4.
  CHECK(resolve({.dtype = fp16, .out_dtype = precision::fp32, .M = 1, .K = 64, .N = 40}).value().N == 48);
  CHECK(resolve({.dtype = int8, .out_dtype = precision::int32, .M = 1, .K = 64, .N = 40}).value().N == 64);
}

TEST_CASE("soc: weights packed in a SoC's tiles (RK3566/RK3568's fp16 8 x 16)") {
  // Element (n, k) of an N x K = 16 x 32 block in 8 x 16 tiles, K fastest in an N block:
  // (n / 8) * 8 * K + (k / 16) * 8 * 16 + (n % 8) * 16 + k % 16.
  const soc::weight_tile t = soc::rk3568::weight_tile_fp16;
  CHECK(detail::weight_index(t, 32, 0, 0) == 0);
  CHECK(detail::weight_index(t, 32, 0, 15) == 15);
  CHECK(detail::weight_index(t, 32, 0, 16) == 128);
  CHECK(detail::weight_index(t, 32, 1, 0) == 16);
  CHECK(detail::weight_index(t, 32, 9, 17) == 256 + 128 + 16 + 1);
  // RK3588's fp16 16 x 32: (n / 16) * 16 * K + (k / 32) * 512 + (n % 16) * 32 + k % 32.
  CHECK(detail::weight_index(soc::rk3588::weight_tile_fp16, 64, 17, 33) == 16 * 64 + 512 + 32 + 1);
  // The packer in those tiles: B[k][n] = k * 16 + n for K 32, N 16 (fp16 values, exact).
  std::vector<float> b(32 * 16);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i);
  std::vector<std::uint8_t> out(32 * 16 * 2);
  REQUIRE(matmul::pack_weight_block<float, soc::rk3568>(fp16, 32, 16, 0, 0, 32, 16, std::span<const float>(b),
                                                        matmul_weight_order::k_by_n, out)
              .ok());
  auto at = [&](std::size_t element) { return static_cast<unsigned>(out[element * 2] | out[element * 2 + 1] << 8); };
  CHECK(at(401) == float_to_half(17 * 16 + 9));  // (n 9, k 17)
  CHECK(at(16) == float_to_half(0 * 16 + 1));    // (n 1, k 0)
  // int4 has no tile on RK3568, fp32 none anywhere: refused, not packed in a tile of zero.
  CHECK(matmul::pack_weight_block<float, soc::rk3568>(precision::int4, 32, 16, 0, 0, 32, 16, std::span<const float>(b),
                                                      matmul_weight_order::k_by_n, out)
            .err()
            .id() == "precision-pair");
  CHECK(matmul::pack_weight_block<float>(precision::fp32, 32, 16, 0, 0, 32, 16, std::span<const float>(b), matmul_weight_order::k_by_n,
                                         out)
            .err()
            .id() == "precision-pair");
}

TEST_CASE("soc: the SoC a device tree names, and the --soc names") {
  using soc::soc_from_compatible;
  // The vendor driver's compatibles and mainline's rknn-core ones (a NUL-separated list).
  CHECK(soc_from_compatible("rockchip,rk3588-rknpu rockchip,rknpu ")->id == soc::soc_id::rk3588);
  CHECK(soc_from_compatible("rockchip,rk3568-rknn-core")->id == soc::soc_id::rk3568);
  CHECK(soc_from_compatible("rockchip,rk3576-rknpu")->id == soc::soc_id::rk3576);
  CHECK(soc_from_compatible("rockchip,rk3562-rknpu")->id == soc::soc_id::rk3562);
  CHECK_FALSE(soc_from_compatible("rockchip,rv1106-rknpu"));
  // The first one the list mentions, whatever the family's order.
  CHECK(soc_from_compatible("rockchip,rk3562-rknpu rockchip,rk3588-rknpu ")->id == soc::soc_id::rk3562);
  CHECK_FALSE(soc_from_compatible(""));
  CHECK(soc::soc_by_option("rk3566")->id == soc::soc_id::rk3568);
  CHECK(soc::soc_by_option("rk3566")->name == "RK3566/RK3568");
  CHECK_FALSE(soc::soc_by_option("RK3588"));
  CHECK(soc::with_soc(soc::soc_id::rk3562, [](auto s) { return decltype(s)::cores; }) == 1u);
}
