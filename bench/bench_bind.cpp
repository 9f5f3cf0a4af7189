// What the run-time path costs: binding a prepared program (prepare placed its bytes in
// the regcmd buffer; bind writes every slot's address) against memcpy of the same bytes
// and against building the same program at run time; then submits per operation. Needs an
// NPU node (rknpu or rocket: the groups of the rocket one are marked), or the emulated
// device (LD_PRELOAD=libregcmd-emu.so; scripts/run-bench.sh runs it on both of its nodes where
// there is no board).
// Exit status 3: no device.
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/runtime/session.hpp>

#include "harness.hpp"

using namespace regcmd;
namespace rt = regcmd::runtime;

namespace {

// The chains: M tiles of 8 rows (fp16 at K = 2048 in one slice with the template split takes
// 16384/K rows per op), one task each.
constexpr matmul_spec chain_spec(std::uint32_t tasks) {
  return {.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 8 * tasks, .K = 2048, .N = 64, .sched = schedule::template_split};
}
constexpr plan_options one_slice{.k_slice = 2048};
constexpr matmul_spec single_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 64, .K = 512, .N = 256};

constexpr auto single = fixed<single_spec>();
constexpr auto chain8 = fixed<plan_request{chain_spec(8), one_slice}>();
constexpr auto chain96 = fixed<plan_request{chain_spec(96), one_slice}>();
constexpr auto chain1000 = fixed<plan_request{chain_spec(1000), one_slice}>();
static_assert(chain8.code.task_count == 8 && chain96.code.task_count == 96 && chain1000.code.task_count == 1000);

// The baseline a run-time emitter stands for: every task of the plan resolved and encoded
// register by register from its shape, into storage allocated beforehand.
status build_task_by_task(program_writer& w, const matmul_spec& spec, const plan_options& options) {
  const result<plan_shape> p = plan(spec, options);
  if (!p) return p.err();
  for (std::uint32_t s = 0; s < p.value().slices; ++s)
    for (std::uint32_t j = 0; j < p.value().n_tiles; ++j)
      for (std::uint32_t m = 0; m < p.value().m_tiles; ++m) {
        const plan_tile t = matmul::tile_of(p.value(), m, j, s);
        const result<matmul_geometry> g = shape_geometry(t.shape);
        if (!g) return g.err();
        emit_task(w, matmul::make_task(g.value(), t.at));
      }
  return w.outcome();
}

struct fixture {
  std::string name;
  matmul_spec spec;
  plan_options options;
  program_view code;
};

int fail(const std::string& what) {
  std::fprintf(stderr, "bench_bind: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main() {
  auto dev = rt::device::open();
  if (!dev) {
    std::fprintf(stderr, "bench_bind: %s\n", to_string(dev.err()).c_str());
    return 3;
  }
  rt::session npu{dev.value()};
  const std::string node = dev.value().kind() == rt::driver::rocket ? " (rocket)" : "";

  const fixture fixtures[] = {{"1 task", single_spec, {}, single.code.view()},
                              {"8 tasks", chain_spec(8), one_slice, chain8.code.view()},
                              {"96 tasks", chain_spec(96), one_slice, chain96.code.view()},
                              {"1000 tasks", chain_spec(1000), one_slice, chain1000.code.view()}};
  std::printf("%-11s %12s %12s %12s %14s %14s %9s %9s\n", "program", "bind ns", "memcpy ns", "sync ns",
              "task-by-task", "build_plan ns", "bind/cpy", "build/bind");
  for (const fixture& f : fixtures) {
    const auto tasks = static_cast<double>(f.code.tasks.size());
    const std::size_t bytes = f.code.entries.size() * sizeof(entry);
    const result<plan_shape> shape = plan(f.spec, f.options);
    if (!shape) return fail(to_string(shape.err()));
    auto feature = rt::buffer::create(dev.value(), matmul::plan_feature_bytes(shape.value()));
    auto weight = rt::buffer::create(dev.value(), shape.value().weight_bytes());
    auto output = rt::buffer::create(dev.value(), matmul::plan_output_bytes(shape.value()));
    auto copy_target = rt::buffer::create(dev.value(), bytes, rt::buffer_use::regcmd);
    for (const auto* b : {&feature, &weight, &output, &copy_target})
      if (!*b) return fail(to_string(b->err()));
    auto prepared = npu.prepare(f.code);
    if (!prepared) return fail(to_string(prepared.err()));
    const rt::operands ops{.feature = &feature.value(), .weight = &weight.value(), .output = &output.value()};

    const bench::timing bind = bench::measure([&] {
      if (!npu.bind(prepared.value(), ops)) std::abort();
    });
    const bench::timing copy = bench::measure([&] {
      std::memcpy(copy_target.value().bytes().data(), f.code.entries.data(), bytes);
      bench::keep(copy_target.value().bytes().data());
    });
    const bench::timing sync = bench::measure([&] {
      if (!copy_target.value().sync_to_device()) std::abort();
    });
    std::vector<entry> entries(matmul::plan_entries(shape.value()));
    std::vector<slot> slots(matmul::plan_slots(shape.value()));
    std::vector<task> task_storage(shape.value().tasks());
    const bench::timing by_task = bench::measure([&] {
      program_writer w{entries, slots, task_storage};
      if (!build_task_by_task(w, bench::opaque(f.spec), f.options)) std::abort();
      bench::keep(entries.data());
    }, 7);
    const bench::timing planned = bench::measure([&] {
      const result<runtime_program<plan_shape>> p = build(plan_request{bench::opaque(f.spec), f.options});
      if (!p) std::abort();
      bench::keep(p.value().code.entries.data());
    }, 7);

    const double bind_vs_copy = bind.median_ns / copy.median_ns;
    const double build_vs_bind = by_task.median_ns / bind.median_ns;
    std::printf("%-11s %12.0f %12.0f %12.0f %14.0f %14.0f %9.2f %9.1f\n", f.name.c_str(), bind.median_ns,
                copy.median_ns, sync.median_ns, by_task.median_ns, planned.median_ns, bind_vs_copy, build_vs_bind);
    const std::string g = "bind, " + f.name + node;
    bench::row(g, "bind, ns per task", bench::fixed(bind.median_ns / tasks, 1));
    bench::row(g, "bind / memcpy of the same bytes", bench::fixed(bind_vs_copy), "<= 1.2", bind_vs_copy <= 1.2);
    bench::row(g, "(placement copy + bind) / memcpy", bench::fixed((copy.median_ns + bind.median_ns) / copy.median_ns));
    bench::row(g, "sync ioctl (MEM_SYNC / FINI_BO), ns (run pays it once after a bind)", bench::fixed(sync.median_ns, 0));
    bench::row(g, "task-by-task run-time build / bind", bench::fixed(build_vs_bind, 1), ">= 20", build_vs_bind >= 20);
    bench::row(g, "build_plan (run-time, templated) / bind", bench::fixed(planned.median_ns / bind.median_ns, 1));
  }

  // Submits per operation, counted in the steady state (after the warm-up of a fresh
  // output buffer): one program per operation, whatever its task count.
  const matmul_spec decode{.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 1, .K = 4096, .N = 11008};
  const matmul_spec prefill{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 128, .K = 16384, .N = 2048};
  for (const auto& [name, spec] : {std::pair{"decode 1x4096x11008", decode}, std::pair{"prefill 128x16384x2048", prefill}}) {
    const result<runtime_program<plan_shape>> p = build(plan_request{spec});
    if (!p) return fail(to_string(p.err()));
    auto feature = rt::buffer::create(dev.value(), matmul::plan_feature_bytes(p.value().geometry));
    auto weight = rt::buffer::create(dev.value(), p.value().geometry.weight_bytes());
    auto output = rt::buffer::create(dev.value(), matmul::plan_output_bytes(p.value().geometry));
    for (const auto* b : {&feature, &weight, &output})
      if (!*b) return fail(to_string(b->err()));
    auto prepared = npu.prepare(p.value().view());
    if (!prepared) return fail(to_string(prepared.err()));
    if (status s = npu.bind(prepared.value(), {.feature = &feature.value(), .weight = &weight.value(), .output = &output.value()}); !s)
      return fail(to_string(s.err()));
    const auto first = npu.run(prepared.value());
    const auto steady = npu.run(prepared.value());
    if (!first || !steady) return fail(to_string(first ? steady.err() : first.err()));
    const std::string g = std::string("submits, ") + name + node;
    bench::row(g, "tasks in the program", std::to_string(p.value().view().tasks.size()));
    bench::row(g, "submits per operation", std::to_string(steady.value().submits), "1", steady.value().submits == 1);
  }
  return 0;
}
