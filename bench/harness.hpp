#pragma once
// A small benchmark harness: the median of repeated timed samples, and result rows that
// scripts/run-bench.sh gathers into one summary table.
//
// Each sample runs the measured function enough times to last at least `min_sample_ns`
// (calibrated once), so short operations are not lost in the clock's resolution.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace regcmd::bench {

// Keeps a value (or the memory behind a pointer) alive for the optimizer.
template <class T>
inline void keep(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}

// A value the optimizer cannot see through: run-time shapes stay run-time.
template <class T>
inline T opaque(T value) {
  asm volatile("" : "+r,m"(value) : : "memory");
  return value;
}

struct timing {
  double median_ns = 0;  // per call
  double min_ns = 0;
  double max_ns = 0;
  std::uint64_t calls_per_sample = 0;
};

template <class F>
timing measure(F&& f, int samples = 15, double min_sample_ns = 2e6) {
  using clock = std::chrono::steady_clock;
  auto run = [&](std::uint64_t calls) {
    const auto start = clock::now();
    for (std::uint64_t i = 0; i < calls; ++i) f();
    return std::chrono::duration<double, std::nano>(clock::now() - start).count();
  };
  std::uint64_t calls = 1;
  for (double took = run(calls); took < min_sample_ns && calls < (1ull << 30); took = run(calls))
    calls *= took <= 0 ? 16 : std::max<std::uint64_t>(2, static_cast<std::uint64_t>(min_sample_ns / took) + 1);
  std::vector<double> per_call;
  for (int s = 0; s < samples; ++s) per_call.push_back(run(calls) / static_cast<double>(calls));
  std::sort(per_call.begin(), per_call.end());
  return {per_call[per_call.size() / 2], per_call.front(), per_call.back(), calls};
}

// One line of the summary table: "ROW<TAB>group<TAB>measure<TAB>value<TAB>target<TAB>verdict".
// `target` is empty for figures without one; verdict is "hit", "missed" or "".
inline void row(const std::string& group, const std::string& what, const std::string& value,
                const std::string& target = "", int hit = -1) {
  std::printf("ROW\t%s\t%s\t%s\t%s\t%s\n", group.c_str(), what.c_str(), value.c_str(), target.c_str(),
              hit < 0 ? "" : hit ? "hit" : "MISSED");
}

inline std::string fixed(double v, int decimals = 2) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

}  // namespace regcmd::bench
