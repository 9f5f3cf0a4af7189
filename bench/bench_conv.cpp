// Conv task splitting: tasks per conv and input rows read more than once, regcmd's CBUF plan
// against Mesa's split (its bank arithmetic and NVDLA-derived row split as ops-reference
// §2.2 and rknpu-uapi-and-register-map §5.3 describe them, evaluated here). Fewer tasks or
// fewer re-read rows than Mesa's is a win.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <regcmd/programs/conv/emit.hpp>

#include "harness.hpp"

using namespace regcmd;

namespace {

struct split {
  std::uint32_t tasks = 0;
  std::uint64_t rows_read = 0;
};

// Mesa's split of an int8 conv (one stride for both axes, real channel counts in the
// weight banks, weights never split).
split mesa_split(const conv_geometry& g) {
  const conv_spec& s = g.spec;
  const std::uint64_t atoms = (s.C + 15) / 16, W = s.W, H = s.H, kh = s.kernel_h, stride = s.stride_y;
  const std::uint64_t last = atoms % 8;
  const std::uint64_t entries = atoms / 8 * W + (last == 3 ? W : (last * W + 7) / 8);
  const std::uint64_t input_banks = (entries * H + 255) / 256;
  const std::uint64_t weight_bytes = std::uint64_t{s.kernel_w} * kh * s.C * (s.depthwise ? 1 : s.out_channels);
  const std::uint64_t weight_banks = ((weight_bytes + 127) / 128 + 255) / 256 + 1;
  const std::uint64_t available = weight_banks + 1 < 12 ? 12 - weight_banks : 7;
  if (input_banks <= available) return {1, H};
  const std::uint64_t slices = 256 * available / entries;
  struct rows {
    std::uint64_t top, bottom;
  };
  std::vector<rows> tasks{{0, slices - 1}};
  std::uint64_t cursor = kh - g.pad.top - 1;
  while (cursor < H) {
    const rows prev = tasks.back();
    while (cursor <= prev.bottom) cursor += stride;
    cursor -= stride;
    const std::uint64_t top = std::min(cursor, prev.bottom) - (kh - 1) + stride;
    std::uint64_t bottom = top + slices - 1;
    if (bottom >= H - 1) {
      tasks.push_back({top, H - 1});
      break;
    }
    cursor = top + kh - 1;
    tasks.push_back({top, bottom});
  }
  if (tasks.back().top >= H || tasks.back().bottom >= H + g.pad.bottom) tasks.pop_back();
  split out{static_cast<std::uint32_t>(tasks.size()), 0};
  for (const rows& r : tasks) out.rows_read += std::min(r.bottom, H - 1) - r.top + 1;
  return out;
}

split regcmd_split(const conv_plan& p) {
  split out{p.tasks(), 0};
  for (std::uint32_t t = 0; t < p.row_tasks; ++t) out.rows_read += std::uint64_t{p.rows_of(t).rows} * p.groups;
  return out;
}

struct named_shape {
  const char* name;
  conv_spec spec;
};

}  // namespace

int main() {
  const quantization q{0.02f, 100};
  const named_shape shapes[] = {
      {"A 20x20x80->40 3x3 s1", {.dtype = conv_data::uint8, .H = 20, .W = 20, .C = 80, .out_channels = 40, .kernel_h = 3,
                                 .kernel_w = 3, .padding = conv_padding::same, .input = q, .weights = q, .output = q}},
      {"B 88x88x80->40 3x3 s2", {.dtype = conv_data::uint8, .H = 88, .W = 88, .C = 80, .out_channels = 40, .kernel_h = 3,
                                 .kernel_w = 3, .stride_y = 2, .stride_x = 2, .padding = conv_padding::same, .input = q,
                                 .weights = q, .output = q}},
      {"C dw 100x100x48 3x3 s1", {.dtype = conv_data::uint8, .H = 100, .W = 100, .C = 48, .out_channels = 48, .kernel_h = 3,
                                  .kernel_w = 3, .padding = conv_padding::same, .depthwise = true, .input = q,
                                  .weights = q, .output = q}},
      {"MobileNet stem 224x224x3->32 3x3 s2",
       {.dtype = conv_data::uint8, .H = 224, .W = 224, .C = 3, .out_channels = 32, .kernel_h = 3, .kernel_w = 3,
        .stride_y = 2, .stride_x = 2, .padding = conv_padding::same, .input = q, .weights = q, .output = q}},
      {"MobileNet dw 112x112x32 3x3", {.dtype = conv_data::uint8, .H = 112, .W = 112, .C = 32, .out_channels = 32,
                                       .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same, .depthwise = true,
                                       .input = q, .weights = q, .output = q}},
      {"MobileNet pw 112x112x32->64", {.dtype = conv_data::uint8, .H = 112, .W = 112, .C = 32, .out_channels = 64,
                                       .input = q, .weights = q, .output = q}},
      {"5x5 s1 160x160x64->64", {.dtype = conv_data::uint8, .H = 160, .W = 160, .C = 64, .out_channels = 64, .kernel_h = 5,
                                 .kernel_w = 5, .padding = conv_padding::same, .input = q, .weights = q, .output = q}},
  };
  std::printf("%-38s %14s %14s\n", "conv", "tasks M / r", "re-read M / r");
  for (const named_shape& s : shapes) {
    const auto g = resolve_conv(s.spec);
    const auto p = g ? conv::plan(g.value()) : result<conv_plan>(g.err());
    if (!p) {
      std::printf("%-38s refused: %s\n", s.name, std::string(p.err().id()).c_str());
      return 2;
    }
    const split mesa = mesa_split(g.value()), ours = regcmd_split(p.value());
    const std::uint64_t mesa_reread = mesa.rows_read - s.spec.H, ours_reread = ours.rows_read - std::uint64_t{s.spec.H} * p.value().groups;
    std::printf("%-38s %6u / %-6u %6llu / %-6llu\n", s.name, mesa.tasks, ours.tasks,
                static_cast<unsigned long long>(mesa_reread), static_cast<unsigned long long>(ours_reread));
    bench::row("conv split (Mesa / regcmd)", std::string(s.name) + ": tasks",
               std::to_string(mesa.tasks) + " / " + std::to_string(ours.tasks), "regcmd <= Mesa", ours.tasks <= mesa.tasks);
    bench::row("conv split (Mesa / regcmd)", std::string(s.name) + ": input rows read twice",
               std::to_string(mesa_reread) + " / " + std::to_string(ours_reread), "regcmd <= Mesa", ours_reread <= mesa_reread);
  }
  return 0;
}
