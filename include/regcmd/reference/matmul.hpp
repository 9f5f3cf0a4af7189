#pragma once
// The host reference of a matmul: C = A · B with A M x K and B K x N, both row-major, each
// element a sum of products in double (exact for the integer types).
#include <cstdint>
#include <span>
#include <vector>

#include <regcmd/reference/values.hpp>

namespace regcmd::reference {

// Row m of C into `row` (N elements), walking B a row at a time (memory for A and B only,
// never M x N, and B read in order).
template <class A, class B>
void matmul_row(std::span<const A> a, std::span<const B> b, std::uint32_t K, std::uint32_t N, std::uint32_t m,
                std::span<products> row) {
  std::fill(row.begin(), row.begin() + N, products{});
  for (std::uint32_t k = 0; k < K; ++k) {
    const double am = double(a[std::size_t{m} * K + k]);
    const B* bk = &b[std::size_t{k} * N];
    for (std::uint32_t n = 0; n < N; ++n) row[n].add(am * double(bk[n]));
  }
}

// The whole of C, M x N row-major.
template <class A, class B>
std::vector<products> matmul(std::span<const A> a, std::span<const B> b, std::uint32_t M, std::uint32_t K,
                             std::uint32_t N) {
  std::vector<products> c(std::size_t{M} * N);
  for (std::uint32_t m = 0; m < M; ++m)
    matmul_row(a, b, K, N, m, std::span<products>(c).subspan(std::size_t{m} * N, N));
  return c;
}

}  // namespace regcmd::reference
