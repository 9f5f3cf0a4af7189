#pragma once
// What `--stats` prints (regcmd-dis, regcmd-gen): a program's accounting from its registers
// (decode/accounting.hpp), the bytes once re-reads are removed, the operation's minimum
// where the tool knows the operation, and the roofline lower bound (core/roofline.hpp);
// as text or as one JSON object. The options that change the bound's rates are shared.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/core/roofline.hpp>
#include <regcmd/core/soc.hpp>
#include <regcmd/decode/accounting.hpp>
#include <regcmd/programs/matmul/plan.hpp>

#include "cli.hpp"

namespace regcmd::cli {

struct stats_report {
  program_cost cost;
  stream_bytes distinct{};
  std::optional<std::uint64_t> minimum;  // the operation's operands once, when known
  roofline_params rates = soc_roofline();
};

// Accounts a program or a dump, its distinct bytes along.
inline stats_report report_of(const program_view& p, const roofline_params& rates) {
  stats_report r;
  r.rates = rates;
  distinct_bytes once;
  r.cost = account(p, [&](std::size_t, const task_cost& t) { once.add(t); });
  r.distinct = once.bytes();
  return r;
}
inline stats_report report_of_dump(std::span<const entry> entries, bool pingpong, const roofline_params& rates) {
  stats_report r;
  r.rates = rates;
  distinct_bytes once;
  r.cost = account_dump(entries, pingpong, [&](std::size_t, const task_cost& t) { once.add(t); });
  r.distinct = once.bytes();
  return r;
}

inline constexpr const char* rate_options_help =
    "  --cores N           cores the tasks run on at once, 1 to 3, for the bound (default 1)\n"
    "  --bandwidth MB      DRAM megabytes a second the NPU draws at best (default 34128: four\n"
    "                      16-bit LPDDR4X channels at 4266 MT/s; the NPU's share is not public)\n"
    "  --submit-us US      per-submit overhead in microseconds (default 38, the smallest submit\n"
    "                      the reference measured; 0 makes the bound a strict lower bound)\n";

inline bool is_rate_option(std::string_view a) { return a == "--cores" || a == "--bandwidth" || a == "--submit-us"; }

inline problem apply_rate_option(roofline_params& r, std::string_view a, std::string_view v) {
  std::uint64_t n = 0;
  if (a == "--cores") {
    problem p = number_in(n, a, v, 1, soc::rk3588::cores);
    r.cores = static_cast<unsigned>(n);
    return p;
  }
  if (a == "--bandwidth") {
    problem p = number_in(n, a, v, 1, 10'000'000);
    r.bytes_per_second = static_cast<double>(n) * 1e6;
    return p;
  }
  problem p = number_in(n, a, v, 0, 1'000'000);
  r.submit_overhead_ns = static_cast<double>(n) * 1e3;
  return p;
}

namespace detail {
inline std::string fixed(double v, int digits = 2) {
  char s[48];
  std::snprintf(s, sizeof s, "%.*f", digits, v);
  return s;
}
}  // namespace detail

inline std::string format_stats_text(const stats_report& r) {
  const program_cost& c = r.cost;
  const time_bound b = roofline(c, r.rates);
  std::string out = std::to_string(c.tasks) + (c.tasks == 1 ? " task, " : " tasks, ") + std::to_string(c.submits) +
                    (c.submits == 1 ? " submit, " : " submits, ") + std::to_string(c.entries) + " regcmd entries";
  if (c.lut_entries) out += " (" + std::to_string(c.lut_entries) + " of them DPU_LUT_ACCESS_DATA writes)";
  out += "\n";
  char line[128];
  std::snprintf(line, sizeof line, "  %-12s %14s %14s\n", "stream", "bytes moved", "distinct");
  out += line;
  for (std::size_t s = 0; s < stream_count; ++s) {
    if (!c.bytes[s]) continue;
    std::snprintf(line, sizeof line, "  %-12s %14llu %14llu\n", std::string(name_of(static_cast<stream>(s))).c_str(),
                  static_cast<unsigned long long>(c.bytes[s]), static_cast<unsigned long long>(r.distinct[s]));
    out += line;
  }
  const std::uint64_t distinct = total_bytes(r.distinct);
  std::snprintf(line, sizeof line, "  %-12s %14llu %14llu  (reads %llu, writes %llu)\n", "total",
                static_cast<unsigned long long>(c.traffic()), static_cast<unsigned long long>(distinct),
                static_cast<unsigned long long>(c.reads()), static_cast<unsigned long long>(c.writes()));
  out += line;
  if (distinct) out += "  traffic / distinct: " + detail::fixed(double(c.traffic()) / double(distinct)) + "x (re-reads)\n";
  if (r.minimum)
    out += "  traffic / minimum:  " + detail::fixed(double(c.traffic()) / double(*r.minimum)) + "x (the operation's " +
           "operands read once and its result written once: " + std::to_string(*r.minimum) + " bytes)\n";
  out += "  work: " + std::to_string(c.macs[0]) + " fp16 MACs, " + std::to_string(c.macs[1]) + " int8, " +
         std::to_string(c.macs[2]) + " int4; " + std::to_string(c.dpu_elements) + " DPU elements; " +
         std::to_string(c.ppu_operations) + " PPU operations\n";
  if (c.saturated())
    out += "  counts at 18446744073709551615 stopped there: the registers claim more than 64 bits count\n";
  out += "  bound on " + std::string(soc::rk3588::name) + " (" + std::to_string(r.rates.cores) +
         (r.rates.cores == 1 ? " core): " : " cores): ") + detail::fixed(b.ns() / 1e3) + " us = max(compute " +
         detail::fixed(b.compute_ns / 1e3) + " us, memory " + detail::fixed(b.memory_ns / 1e3) + " us) + " +
         std::to_string(c.submits) + " submit x " + detail::fixed(r.rates.submit_overhead_ns / 1e3) + " us; " +
         std::string(b.limited_by()) + "-bound\n";
  out += "  a lower bound from peak rates (docs/cost.md), not a prediction\n";
  return out;
}

inline std::string format_stats_json(const stats_report& r) {
  const program_cost& c = r.cost;
  const time_bound b = roofline(c, r.rates);
  auto streams = [](const stream_bytes& bytes) {
    std::string s = "{";
    for (std::size_t i = 0; i < stream_count; ++i)
      s += (i ? ", \"" : "\"") + std::string(name_of(static_cast<stream>(i))) + "\": " + std::to_string(bytes[i]);
    return s + "}";
  };
  std::string out = "{\"tasks\": " + std::to_string(c.tasks) + ", \"submits\": " + std::to_string(c.submits) +
                    ", \"entries\": " + std::to_string(c.entries) + ", \"lut_entries\": " + std::to_string(c.lut_entries) +
                    ",\n \"bytes\": " + streams(c.bytes) + ",\n \"distinct\": " + streams(r.distinct) +
                    ",\n \"reads\": " + std::to_string(c.reads()) + ", \"writes\": " + std::to_string(c.writes()) +
                    ", \"traffic\": " + std::to_string(c.traffic()) +
                    ", \"distinct_traffic\": " + std::to_string(total_bytes(r.distinct)) +
                    ", \"minimum_traffic\": " + (r.minimum ? std::to_string(*r.minimum) : std::string("null")) +
                    ",\n \"macs\": {\"fp16\": " + std::to_string(c.macs[0]) + ", \"int8\": " + std::to_string(c.macs[1]) +
                    ", \"int4\": " + std::to_string(c.macs[2]) + "}, \"dpu_elements\": " + std::to_string(c.dpu_elements) +
                    ", \"ppu_operations\": " + std::to_string(c.ppu_operations) +
                    ", \"saturated\": " + (c.saturated() ? "true" : "false") + ",\n \"bound\": {\"soc\": \"" +
                    soc::rk3588::name + "\", \"cores\": " + std::to_string(r.rates.cores) +
                    ", \"bytes_per_second\": " + detail::fixed(r.rates.bytes_per_second, 0) +
                    ", \"submit_overhead_ns\": " + detail::fixed(r.rates.submit_overhead_ns, 0) +
                    ", \"compute_ns\": " + detail::fixed(b.compute_ns, 1) + ", \"memory_ns\": " + detail::fixed(b.memory_ns, 1) +
                    ", \"overhead_ns\": " + detail::fixed(b.overhead_ns, 1) + ", \"ns\": " + detail::fixed(b.ns(), 1) +
                    ", \"limited_by\": \"" + std::string(b.limited_by()) + "\"}}\n";
  return out;
}

// The grids a plan weighed (regcmd/programs/matmul/plan.hpp), best first by the planner's order, the one
// it took marked '*', the one the fewest-tasks rule takes '+'.
inline std::string format_explanation(const plan_explanation& why, std::size_t rows = 16) {
  std::vector<std::uint32_t> order(why.count);
  for (std::uint32_t i = 0; i < why.count; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return regcmd::detail::better(why.candidates[a], why.candidates[b]);
  });
  std::string out = "plan: " + std::to_string(why.count) + " grids weighed; the operands once: " +
                    std::to_string(why.minimum_traffic) + " bytes\n";
  char line[160];
  std::snprintf(line, sizeof line, "   %6s %7s %-8s %7s %6s %7s %6s %12s %7s %11s  %s\n", "slices", "k_slice", "schedule",
                "M tiles", "rows", "N tiles", "tasks", "traffic", "x min", "bound us", "limited by");
  out += line;
  for (std::size_t n = 0; n < order.size(); ++n) {
    const std::uint32_t i = order[n];
    if (n >= rows && i != why.chosen && i != why.previous) continue;
    const plan_candidate& c = why.candidates[i];
    const std::string_view sched = c.sched == schedule::bank_split ? "bank" : c.sched == schedule::template_split ? "template" : "auto";
    std::snprintf(line, sizeof line, " %c %6u %7u %-8s %7u %6u %7u %6llu %12llu %7.2f %11.2f  %s\n",
                  i == why.chosen ? '*' : i == why.previous ? '+' : ' ', c.slices, c.k_slice, std::string(sched).c_str(),
                  c.m_tiles, c.m_tile, c.n_tiles, static_cast<unsigned long long>(c.tasks),
                  static_cast<unsigned long long>(c.traffic), double(c.traffic) / double(why.minimum_traffic),
                  c.bound_ns / 1e3, std::string(c.limited_by).c_str());
    out += line;
  }
  if (order.size() > rows) out += "   (" + std::to_string(order.size() - rows) + " more not shown)\n";
  const plan_candidate& chosen = why.candidates[why.chosen];
  const plan_candidate& previous = why.candidates[why.previous];
  out += "* taken: the lowest bound, then the least traffic, the fewest tasks, the fewest slices\n";
  out += "+ the fewest-tasks rule (plan_objective::fewest_tasks): " +
         (why.chosen == why.previous ? std::string("the same grid")
                                     : detail::fixed(double(previous.traffic) / double(chosen.traffic)) + "x the traffic, " +
                                           detail::fixed(previous.bound_ns / chosen.bound_ns) + "x the bound") +
         "\n";
  return out;
}

}  // namespace regcmd::cli
