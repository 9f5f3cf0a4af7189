// The main job: build a matmul program at compile time, bind example addresses, print it
// decoded, and show how a plan splits a shape one op cannot take.
#include <array>
#include <cstdio>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/matmul.hpp>
#include <regcmd/programs/plan.hpp>
#include <regcmd/rules/program_rules.hpp>

using namespace regcmd;

// One line, checked at compile time: a shape that breaks a rule would not compile.
constexpr auto mm = matmul<matmul_spec{.in = precision::fp16, .out = precision::fp32, .M = 64, .K = 512, .N = 256}>();

// A prefill shape beyond one op (K > 10752): a K-split plan, one chained program.
constexpr auto prefill = plan_matmul<matmul_spec{.in = precision::fp16, .out = precision::fp32, .M = 128, .K = 16384, .N = 4096}>();

int main() {
  std::array<entry, matmul_task_entries> code = mm.code.entries;
  operand_addresses base{};
  base[static_cast<std::size_t>(operand_role::feature)] = 0x1000'0000;
  base[static_cast<std::size_t>(operand_role::weight)] = 0x2000'0000;
  base[static_cast<std::size_t>(operand_role::output)] = 0x3000'0000;
  if (status s = patch_slots(code, mm.code.view().slots, base); !s) {
    std::fprintf(stderr, "demo: %s\n", to_string(s.err()).c_str());
    return 1;
  }
  std::printf("fp16 x fp16 -> fp32 matmul, M=64 K=512 N=256, row-major: %u entries, 1 task\n", mm.code.entry_count);
  for (std::size_t i = 0; i < mm.code.entry_count; ++i)
    std::printf("%016llx  %s\n", static_cast<unsigned long long>(code[i].bits()), format_text(decode(code[i]), i).c_str());
  const plan_shape& p = prefill.shape;
  std::printf("\nM=128 K=16384 N=4096 as a plan: %u K slices of %u, %u N tiles, %u M tiles = %u tasks in one "
              "program (%u entries); partials summed on the host\n",
              p.slices, p.k_slice, p.n_tiles, p.m_tiles, p.tasks(), prefill.code.entry_count);
}
