#pragma once
// Operand packers for element-wise (SDP) programs: host [M][N] tensors and [N] vectors in
// the layouts of regcmd/programs/sdp_pass.hpp (element-wise and activation programs).
//
//   surface   element (m, n) at ((n / C2) * M + m) * 16 + (n % C2) * bytes; C2 = 16 / bytes
//   flat      element (m, n) at (m * N + n) * bytes (row-major), zero-padded to whole atoms
//   vector    per channel: element n at n * bytes, zero-padded to whole atoms
//
// Host element types: fp16 from `float` (rounded to nearest even) or raw binary16
// `std::uint16_t`, int8 from `std::int8_t`, int16 from `std::int16_t`. Little-endian.

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <regcmd/core/error.hpp>
#include <regcmd/core/half.hpp>
#include <regcmd/programs/sdp_pass.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd {

namespace detail {
constexpr std::size_t ew_offset(const sdp_shape& g, std::uint32_t m, std::uint32_t n) {
  const std::uint32_t bytes = g.element_bytes();
  if (g.layout == operand_layout::row_major) return (std::size_t{m} * g.N + n) * bytes;
  return nc1hwc2_offset(g.M, 1, bytes, m, 0, n);
}

template <class T>
constexpr std::uint32_t ew_bits(precision p, T v) {
  if (p == precision::fp16) {
    if constexpr (std::is_same_v<T, std::uint16_t>) return v;
    else return float_to_half(static_cast<float>(v));
  }
  if (p == precision::int8) return static_cast<std::uint8_t>(static_cast<std::int8_t>(v));
  return static_cast<std::uint16_t>(static_cast<std::int16_t>(v));
}

template <class T>
constexpr T ew_value(precision p, std::uint32_t bits) {
  if (p == precision::fp16) {
    if constexpr (std::is_same_v<T, std::uint16_t>) return static_cast<T>(bits);
    else return static_cast<T>(half_to_float(static_cast<std::uint16_t>(bits)));
  }
  if (p == precision::int8) return static_cast<T>(static_cast<std::int8_t>(bits));
  return static_cast<T>(static_cast<std::int16_t>(bits));
}
}  // namespace detail

namespace sdp {
// a[M][N] (row-major host array) into the layout of an input, a per-element operand or an
// output of geometry g.
template <class T>
constexpr status pack_tensor(const sdp_shape& g, std::span<const T> a, std::span<std::uint8_t> out) {
  if (a.size() != std::size_t{g.M} * g.N) return make_error(rules::host_size, "ew tensor", "", a.size());
  if (out.size() < g.tensor_bytes()) return make_error(rules::buffer_size, "ew tensor", "", out.size());
  detail::fill_zero(out.first(g.tensor_bytes()));
  const unsigned bytes = g.element_bytes();
  for (std::uint32_t m = 0; m < g.M; ++m)
    for (std::uint32_t n = 0; n < g.N; ++n)
      detail::store_le(out, detail::ew_offset(g, m, n), detail::ew_bits(g.dtype, a[std::size_t{m} * g.N + n]), bytes);
  return {};
}

// v[N] into the per-channel operand of geometry g.
template <class T>
constexpr status pack_vector(const sdp_shape& g, std::span<const T> v, std::span<std::uint8_t> out) {
  if (v.size() != g.N) return make_error(rules::ew_vector_size, "ew vector", "", v.size());
  if (out.size() < std::size_t{g.padded_N} * g.element_bytes())
    return make_error(rules::buffer_size, "ew vector", "", out.size());
  detail::fill_zero(out.first(std::size_t{g.padded_N} * g.element_bytes()));
  for (std::uint32_t n = 0; n < g.N; ++n)
    detail::store_le(out, std::size_t{n} * g.element_bytes(), detail::ew_bits(g.dtype, v[n]), g.element_bytes());
  return {};
}

// v[N] repeated on every row, as a per-element operand: how a per-channel operand reaches
// an SDP reading the flat layout (the vendor's compiler broadcasts it the same way;
// reference "0x4070 DPU_EW_CFG + 0x5034 ERDMA_CFG data-mode fields").
template <class T>
constexpr status pack_broadcast(const sdp_shape& g, std::span<const T> v, std::span<std::uint8_t> out) {
  if (v.size() != g.N) return make_error(rules::ew_vector_size, "ew vector", "", v.size());
  if (out.size() < g.tensor_bytes()) return make_error(rules::buffer_size, "ew tensor", "", out.size());
  detail::fill_zero(out.first(g.tensor_bytes()));
  for (std::uint32_t m = 0; m < g.M; ++m)
    for (std::uint32_t n = 0; n < g.N; ++n)
      detail::store_le(out, detail::ew_offset(g, m, n), detail::ew_bits(g.dtype, v[n]), g.element_bytes());
  return {};
}

// The output (or any tensor) of geometry g back into c[M][N].
template <class T>
constexpr status unpack_tensor(const sdp_shape& g, std::span<const std::uint8_t> in, std::span<T> c) {
  if (c.size() != std::size_t{g.M} * g.N) return make_error(rules::host_size, "ew tensor", "", c.size());
  if (in.size() < g.tensor_bytes()) return make_error(rules::buffer_size, "ew tensor", "", in.size());
  for (std::uint32_t m = 0; m < g.M; ++m)
    for (std::uint32_t n = 0; n < g.N; ++n)
      c[std::size_t{m} * g.N + n] = detail::ew_value<T>(
          g.dtype, static_cast<std::uint32_t>(detail::load_le(in, detail::ew_offset(g, m, n), g.element_bytes())));
  return {};
}
}  // namespace sdp

}  // namespace regcmd
