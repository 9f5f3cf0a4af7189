// The doors: fixed<spec>() and build(spec) find the kind from the spec's type and give the
// bytes the kind-explicit forms give; the deprecated names of before still compile and give
// the same program (docs/changelog.md).
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <type_traits>

#include <regcmd/programs/conv.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/programs/graph.hpp>
#include <regcmd/programs/matmul.hpp>
#include <regcmd/programs/norm.hpp>
#include <regcmd/programs/pooling.hpp>
#include <regcmd/programs/sdp.hpp>

using namespace regcmd;

namespace {
constexpr matmul_spec mm{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32};
constexpr ew_spec add{.op = ew_op::add, .M = 8, .N = 40};

template <class A, class B>
bool same_entries(const A& a, const B& b) {
  const program_view x = a.view(), y = b.view();
  return std::equal(x.entries.begin(), x.entries.end(), y.entries.begin(), y.entries.end());
}
}  // namespace

TEST_CASE("door: the kind of a spec is found from its type") {
  static_assert(std::is_same_v<kind_for<matmul_spec>, matmul_kind>);
  static_assert(std::is_same_v<kind_for<plan_request>, plan_kind>);
  static_assert(std::is_same_v<kind_for<conv_spec>, conv_kind>);
  static_assert(std::is_same_v<kind_for<ew_spec>, ew_kind>);
  static_assert(std::is_same_v<kind_for<act_spec>, act_kind>);
  static_assert(std::is_same_v<kind_for<table_act_spec>, table_act_kind>);
  static_assert(std::is_same_v<kind_for<pool_spec>, pool_kind>);
  static_assert(std::is_same_v<kind_for<fused_spec>, fused_kind>);
  static_assert(std::is_same_v<kind_for<graph_spec>, graph_kind>);
  static_assert(!program_spec<int>);
  static_assert(!program_spec<matmul_geometry>);
  CHECK(program_spec<matmul_spec>);
}

TEST_CASE("door: fixed, build and build_into give the kind-explicit forms' bytes") {
  constexpr auto a = fixed<mm>();
  constexpr auto b = build_fixed<matmul_kind, mm>();
  CHECK(same_entries(a, b));
  const auto c = build(mm);
  const auto d = build_kind<matmul_kind>(mm);
  REQUIRE(c.ok());
  REQUIRE(d.ok());
  CHECK(same_entries(c.value(), d.value()));
  CHECK(same_entries(a, c.value()));
  // A plan request is a spec of its own; its program is not the one-task matmul's.
  const auto p = build(plan_request{mm, {.k_slice = 32}});
  REQUIRE(p.ok());
  CHECK(p.value().view().tasks.size() == 2);
  // The error is the same rule through either door.
  const auto refused = build(matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 2048, .K = 512, .N = 256});
  REQUIRE_FALSE(refused.ok());
  CHECK_BREAKS(refused, rules::m_ceiling_fp16);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
TEST_CASE("door: the deprecated names build what the doors build") {
  CHECK(same_entries(pool<pool_spec{.op = pool_op::max, .H = 4, .W = 4, .C = 16}>(), fixed<pool_spec{.op = pool_op::max, .H = 4, .W = 4, .C = 16}>()));
  CHECK(same_entries(ew<add>(), fixed<add>()));
  CHECK(same_entries(plan_matmul<mm, plan_options{.k_slice = 32}>(), fixed<plan_request{mm, {.k_slice = 32}}>()));
  const auto old_m = build_matmul(mm);
  const auto old_e = build_ew(add);
  const auto old_p = build_plan(mm, {.k_slice = 32});
  REQUIRE(old_m.ok());
  REQUIRE(old_e.ok());
  REQUIRE(old_p.ok());
  CHECK(same_entries(old_m.value(), fixed<mm>()));
  CHECK(same_entries(old_e.value(), fixed<add>()));
  CHECK(same_entries(old_p.value(), fixed<plan_request{mm, {.k_slice = 32}}>()));
}

TEST_CASE("vocabulary: the deprecated names of tile padding, the row-major layout and weight orders are the new ones") {
  static_assert(std::is_same_v<padding, tile_padding>);
  static_assert(std::is_same_v<ew_layout, operand_layout>);
  static_assert(std::is_same_v<weights_order, matmul_weight_order>);
  static_assert(std::is_same_v<weight_order, conv_weight_order>);
  // the SDP ops' flat layout was row-major: the same bytes
  constexpr ew_spec old_flat{.M = 3, .N = 40, .layout = ew_layout::flat, .tile_pad = padding::zero};
  constexpr ew_spec row_major{.M = 3, .N = 40, .layout = operand_layout::row_major};
  CHECK(same_entries(fixed<old_flat>(), fixed<row_major>()));
  CHECK_FALSE(same_entries(fixed<old_flat>(), fixed<ew_spec{.M = 3, .N = 40}>()));  // surface differs
}
#pragma GCC diagnostic pop
