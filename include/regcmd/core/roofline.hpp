#pragma once
// A lower bound on a program's time on the NPU, from its cost (core/cost.hpp) and the SoC's
// peak rates (core/soc.hpp): max(MACs / peak MAC rate, bytes / DRAM bandwidth), plus the
// submits times a per-submit overhead. It says how fast a program cannot be, never how fast
// it is: the reference's best measured rates are an order of magnitude under the peaks
// ("every binding constraint found to date is upstream of the MACs").

#include <algorithm>
#include <cstdint>
#include <string_view>

#include <regcmd/core/cost.hpp>
#include <regcmd/core/soc.hpp>

namespace regcmd {

struct roofline_params {
  double npu_hz = 0;
  double macs_per_cycle[mac_class_count] = {};  // per core: fp16, int8, int4
  double bytes_per_second = 0;                  // what the NPU's DMAs draw from DRAM at best
  double submit_overhead_ns = 0;
  unsigned cores = 1;                           // cores the program's tasks run on at once
};

template <class Soc = soc::rk3588>
constexpr roofline_params soc_roofline() {
  return {.npu_hz = double(Soc::npu_hz),
          .macs_per_cycle = {double(Soc::macs_per_cycle_fp16), double(Soc::macs_per_cycle_int8),
                             double(Soc::macs_per_cycle_int4)},
          .bytes_per_second = double(Soc::dram_bytes_per_second),
          .submit_overhead_ns = double(Soc::submit_overhead_ns),
          .cores = 1};
}

struct time_bound {
  double compute_ns = 0, memory_ns = 0, overhead_ns = 0;
  constexpr double ns() const { return std::max(compute_ns, memory_ns) + overhead_ns; }
  constexpr std::string_view limited_by() const { return memory_ns >= compute_ns ? "memory" : "compute"; }
};

constexpr time_bound roofline(const program_cost& c, const roofline_params& p) {
  time_bound b;
  for (std::size_t k = 0; k < mac_class_count; ++k)
    b.compute_ns += double(c.macs[k]) / (p.macs_per_cycle[k] * p.cores * p.npu_hz) * 1e9;
  b.memory_ns = double(c.traffic()) / p.bytes_per_second * 1e9;
  b.overhead_ns = double(c.submits) * p.submit_overhead_ns;
  return b;
}

}  // namespace regcmd
