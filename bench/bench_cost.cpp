// What programs cost, read from their registers (decode/accounting.hpp): for a grid of LLM
// matmul shapes and a few conv layers, the traffic against the operation's minimum, tasks,
// submits and the roofline lower bound on RK3588, for the plan chosen by cost and for the
// plan chosen before costs were weighed (fewest tasks), in the same run.
// Not a timing: these are counts, exact for the programs as emitted.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <regcmd/core/roofline.hpp>
#include <regcmd/decode/accounting.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>

#include "harness.hpp"

using namespace regcmd;

namespace {

struct measured {
  program_cost cost;
  std::uint64_t distinct = 0;
  time_bound bound;
};

measured measure(const program_view& p) {
  measured m;
  distinct_bytes once;
  m.cost = account(p, [&](std::size_t, const task_cost& t) { once.add(t); });
  for (std::uint64_t b : once.bytes()) m.distinct += b;
  m.bound = roofline(m.cost, soc_roofline());
  return m;
}

struct llm_shape {
  precision in, out;
  std::uint32_t M, K, N;
};

std::string name_of_pair(precision in) { return in == precision::fp16 ? "fp16" : in == precision::int8 ? "int8" : "int4"; }

}  // namespace

int main() {
  const precision ins[] = {precision::fp16, precision::int8, precision::int4};
  const std::uint32_t Ms[] = {1, 64, 512};
  const std::uint32_t Ks[] = {2048, 4096, 8192, 16384};
  const std::uint32_t Ns[] = {2048, 4096, 16384};
  std::printf("| in | M | K | N | tasks | traffic / min | bound us | limited by | before: tasks | before: traffic / min | traffic before / now | bound before / now |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::uint32_t prefill = 0, prefill_within = 0, worse = 0, shapes = 0;
  double worst_prefill = 0, best_gain = 1;
  for (precision in : ins)
    for (std::uint32_t M : Ms)
      for (std::uint32_t K : Ks)
        for (std::uint32_t N : Ns) {
          const precision out = in == precision::fp16 ? precision::fp16 : in == precision::int8 ? precision::int32 : precision::int16;
          const matmul_spec spec{.dtype = in, .out_dtype = out, .M = M, .K = K, .N = N};
          const auto now = build(plan_request{spec});
          const auto before = build(plan_request{spec, {.objective = plan_objective::fewest_tasks}});
          if (!now || !before) {
            std::printf("| %s | %u | %u | %u | refused: %s |||||||\n", name_of_pair(in).c_str(), M, K, N,
                        std::string((now ? before : now).err().id()).c_str());
            continue;
          }
          const measured a = measure(now.value().view()), b = measure(before.value().view());
          const double minimum = double(matmul::minimum_traffic(now.value().geometry.whole));
          const double ratio = double(a.cost.traffic()) / minimum, before_ratio = double(b.cost.traffic()) / minimum;
          ++shapes;
          if (a.bound.ns() > b.bound.ns() * (1 + 1e-12)) ++worse;
          best_gain = std::max(best_gain, b.bound.ns() / a.bound.ns());
          if (M > 1) {
            ++prefill;
            prefill_within += ratio <= 1.25;
            worst_prefill = std::max(worst_prefill, ratio);
          }
          std::printf("| %s | %u | %u | %u | %llu | %s | %s | %s | %llu | %s | %s | %s |\n", name_of_pair(in).c_str(), M, K,
                      N, static_cast<unsigned long long>(a.cost.tasks), bench::fixed(ratio).c_str(),
                      bench::fixed(a.bound.ns() / 1e3, 0).c_str(), std::string(a.bound.limited_by()).c_str(),
                      static_cast<unsigned long long>(b.cost.tasks), bench::fixed(before_ratio).c_str(),
                      bench::fixed(double(b.cost.traffic()) / double(a.cost.traffic())).c_str(),
                      bench::fixed(b.bound.ns() / a.bound.ns()).c_str());
        }
  std::printf("\n");

  // Conv layers: re-reads of overlap rows and of the input per kernel group, against the
  // distinct bytes (every input, weight and output byte once).
  struct conv_case {
    const char* name;
    conv_spec spec;
  };
  const quantization q{0.05f, 0};
  const conv_case convs[] = {
      {"56x56x64, 3x3, 64 (int8)", {.H = 56, .W = 56, .C = 64, .out_channels = 64, .kernel_h = 3, .kernel_w = 3,
                                    .padding = conv_padding::same, .input = q, .weights = q, .output = q}},
      {"28x28x128, 3x3, 128 (int8)", {.H = 28, .W = 28, .C = 128, .out_channels = 128, .kernel_h = 3, .kernel_w = 3,
                                      .padding = conv_padding::same, .input = q, .weights = q, .output = q}},
      {"14x14x512, 3x3, 512 (int8)", {.H = 14, .W = 14, .C = 512, .out_channels = 512, .kernel_h = 3, .kernel_w = 3,
                                      .padding = conv_padding::same, .input = q, .weights = q, .output = q}},
      {"56x56x256, 1x1, 64 (int8)", {.H = 56, .W = 56, .C = 256, .out_channels = 64, .input = q, .weights = q, .output = q}},
      {"112x112x32, 3x3 depthwise (fp16)", {.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 112, .W = 112, .C = 32,
                                            .out_channels = 32, .kernel_h = 3, .kernel_w = 3,
                                            .padding = conv_padding::same, .depthwise = true}},
  };
  std::printf("| conv | tasks | traffic | distinct | traffic / distinct | bound us | limited by |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (const conv_case& c : convs) {
    const auto built = build(c.spec);
    if (!built) {
      std::printf("| %s | refused: %s ||||||\n", c.name, std::string(built.err().id()).c_str());
      continue;
    }
    const measured m = measure(built.value().view());
    std::printf("| %s | %llu | %llu | %llu | %s | %s | %s |\n", c.name, static_cast<unsigned long long>(m.cost.tasks),
                static_cast<unsigned long long>(m.cost.traffic()), static_cast<unsigned long long>(m.distinct),
                bench::fixed(double(m.cost.traffic()) / double(m.distinct)).c_str(), bench::fixed(m.bound.ns() / 1e3, 0).c_str(),
                std::string(m.bound.limited_by()).c_str());
  }
  std::printf("\nprefill shapes within 1.25x the minimum: %u of %u (worst %.2fx); shapes whose bound got worse: %u of %u; "
              "largest gain in the bound: %.2fx\n",
              prefill_within, prefill, worst_prefill, worse, shapes, best_gain);
  bench::row("cost", "prefill shapes with traffic <= 1.25x the minimum", std::to_string(prefill_within) + " of " + std::to_string(prefill),
             "all", prefill_within == prefill);
  bench::row("cost", "shapes whose bound is worse than the fewest-tasks plan", std::to_string(worse), "0", worse == 0);
  bench::row("cost", "largest bound gain over the fewest-tasks plan", bench::fixed(best_gain) + "x");
  return 0;
}
