// libFuzzer target: the run-time program builders with random requests (a matmul, a plan,
// an SDP element-wise op, a fused chain). Every input gets a program or a rule error, and
// every program it gets passes every program rule.
#include <cstddef>
#include <cstdint>

#include <regcmd/programs/elementwise.hpp>
#include <regcmd/programs/fused.hpp>
#include <regcmd/programs/matmul.hpp>
#include <regcmd/programs/plan.hpp>
#include <regcmd/rules/program_rules.hpp>

namespace {
struct reader {
  const std::uint8_t* data;
  std::size_t size;
  std::uint32_t take(unsigned bytes) {
    std::uint32_t v = 0;
    for (unsigned i = 0; i < bytes; ++i) {
      v = v << 8 | (size ? *data : 0u);
      if (size) ++data, --size;
    }
    return v;
  }
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace regcmd;
  reader in{data, size};
  const std::uint32_t flags = in.take(2);
  matmul_spec spec;
  spec.in = input_precisions{static_cast<precision>(flags & 7), static_cast<precision>(flags & 0x100 ? (flags >> 3) & 7 : flags & 7)};
  spec.out = static_cast<precision>((flags >> 6) & 7);
  spec.M = in.take(2) % 5000;
  spec.K = in.take(2) % 24000;
  spec.N = in.take(2) % 20000;
  spec.layout = flags & 0x200 ? operand_layout::surface : operand_layout::row_major;
  spec.sched = static_cast<schedule>((flags >> 10) % 3);
  spec.pad = flags & 0x1000 ? padding::none : padding::zero;
  if (flags & 0x2000) spec.feature_pitch = in.take(2) * 16;
  if (flags & 0x4000) spec.output_pitch = in.take(2) * 16;
  plan_options options;
  if (flags & 0x8000) options.k_slice = in.take(2) % 4096;
  options.delta_tasks = in.take(1) & 1;

  // one op
  if (const auto mm = build_matmul(spec); mm.ok()) {
    if (!validate(mm.value().code.view()).ok()) __builtin_trap();
  } else if (*mm.err().violated == no_violation || mm.err().message().empty()) {
    __builtin_trap();
  }
  // an SDP op and a fused chain from the same request
  const std::uint32_t ew_flags = in.take(1);
  ew_spec e{.op = static_cast<ew_op>(ew_flags & 3),
            .dtype = static_cast<precision>((ew_flags >> 2) & 7),
            .M = spec.M,
            .N = spec.N % 9000,
            .operand = static_cast<ew_operand>((ew_flags >> 5) % 3),
            .layout = ew_flags & 0x80 ? ew_layout::flat : ew_layout::surface,
            .pad = spec.pad,
            .immediate = static_cast<float>(spec.K) / 7.0f};
  if (std::uint64_t{e.M} * e.N <= 2'000'000) {
    if (const auto built = build_ew(e); built.ok()) {
      if (!validate(built.value().view()).ok()) __builtin_trap();
    } else if (*built.err().violated == no_violation) {
      __builtin_trap();
    }
    if (const auto chain = build_fused({.matmul = spec, .op = e.op, .operand = e.operand, .immediate = e.immediate});
        chain.ok()) {
      if (!validate(chain.value().view()).ok()) __builtin_trap();
    } else if (*chain.err().violated == no_violation) {
      __builtin_trap();
    }
  }
  // a plan, bounded so one input stays fast
  const auto p = plan(spec, options);
  if (!p.ok()) {
    if (*p.err().violated == no_violation) __builtin_trap();
    return 0;
  }
  if (p.value().tasks() > 512) return 0;
  const auto built = build_plan(spec, options);
  if (!built.ok()) __builtin_trap();  // a plan that resolves must emit
  if (!options.delta_tasks && !validate(built.value().view()).ok()) __builtin_trap();
  return 0;
}
