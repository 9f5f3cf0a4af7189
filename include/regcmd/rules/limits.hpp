#pragma once
// The size limits of one op and of an operand, one predicate each, called by the requests,
// the plans and the program rules alike. Reference: regcmd-isa-reference "Limits & tiling
// (RK3588)"; fact sheet §1.5 (32-bit address registers), §4 (field widths).

#include <cstdint>

#include <regcmd/registers/cna.hpp>

namespace regcmd {

// k-single-op-max: K = 10752 runs, K = 10784 wedges the submit.
template <class Soc>
constexpr bool k_fits_one_op(std::uint64_t K) { return K <= Soc::max_k_single_op; }

// n-max: N > 8192 is silently wrong.
template <class Soc>
constexpr bool n_fits_one_op(std::uint64_t N) { return N <= Soc::max_n; }

// k-slice-max: a K-split slice (summed on the host) is at most 2048.
template <class Soc>
constexpr bool k_slice_fits(std::uint64_t k) { return k <= Soc::max_k_slice; }

// operand-size: every byte an operand's DMA reaches must have a 32-bit address, and its size
// is itself a 32-bit number (the programs' byte counts, rocket's BO size): at most 4 GiB - 1
// bytes. (4 GiB exactly would reach from address 0, but no driver places it there: rknpu's
// IOVAs start above 0, rocket's BOs hold less; its size read 0 in 32 bits.)
template <class Soc>
constexpr bool fits_address_space(std::uint64_t bytes) { return bytes <= Soc::max_iova; }

// m-register-limit: M rows in CNA_DATA_SIZE0.DATAIN_HEIGHT, the rows buffered before the
// MACs start in CNA_CONV_CON2.FEATURE_GRAINS.
constexpr bool rows_fit_registers(std::uint64_t rows, std::uint64_t feature_grains) {
  return rows <= decltype(reg::CNA_DATA_SIZE0::DATAIN_HEIGHT)::shape.max_value() &&
         feature_grains <= decltype(reg::CNA_CONV_CON2::FEATURE_GRAINS)::shape.max_value();
}

}  // namespace regcmd
