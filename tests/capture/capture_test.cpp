// The capture shim records exactly the bytes submitted, on either driver: run with
// LD_PRELOAD=libregcmd-capture.so:libregcmd-emu.so REGCMD_CAPTURE_DIR=<empty dir> and
// REGCMD_DEVICE naming the rknpu or the rocket node.
#include <regcmd/testing/doctest.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/runtime/session.hpp>

using namespace regcmd;
using namespace regcmd::runtime;

namespace {

std::vector<std::uint8_t> read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), p.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs `view` once on fresh buffers (one warm-up + one submit) and returns what the
// submit should have carried: the patched program, and its task descriptors.
struct expected {
  std::vector<std::uint8_t> regcmd, tasks;
  std::uint32_t task_number;
};

expected run(const device& d, const program_view& view, std::size_t f, std::size_t w, std::size_t o) {
  session npu{d};
  auto a = buffer::create(d, f).value(), b = buffer::create(d, w).value(), c = buffer::create(d, o).value();
  auto p = npu.prepare(view).value();
  REQUIRE(npu.bind(p, {.feature = &a, .weight = &b, .output = &c}).ok());
  const auto r = npu.run(p);
  REQUIRE_MESSAGE(r.ok(), to_string(r.err()));
  REQUIRE(r.value().submits == 2);
  std::vector<entry> code(view.entries.begin(), view.entries.end());
  operand_addresses base{};
  base[static_cast<std::size_t>(operand_role::feature)] = a.iova();
  base[static_cast<std::size_t>(operand_role::weight)] = b.iova();
  base[static_cast<std::size_t>(operand_role::output)] = c.iova();
  base[static_cast<std::size_t>(operand_role::regcmd)] = p.regcmd_iova();
  REQUIRE(patch_slots(code, view.slots, base).ok());
  expected e;
  for (const task& t : view.tasks)
    for (std::uint32_t i = t.first; i < t.first + (t.count + 1) / 2 * 2; ++i) {
      const auto bytes = code[i].to_bytes();
      e.regcmd.insert(e.regcmd.end(), bytes.begin(), bytes.end());
    }
  // the descriptors, written out by hand from the fact sheet's layouts (§1.6, §3.1)
  for (const task& t : view.tasks) {
    const std::uint64_t address = p.regcmd_iova() + std::uint64_t{t.first} * 8;
    if (d.kind() == driver::rknpu) {
      const rknpu::task td{0, 0, t.enable_mask, t.int_mask, rknpu::int_clear_all, 0, t.count - 4, 0, address};
      const auto* raw = reinterpret_cast<const std::uint8_t*>(&td);
      e.tasks.insert(e.tasks.end(), raw, raw + sizeof td);
    } else {
      const rocket::task td{static_cast<std::uint32_t>(address), t.count};
      const auto* raw = reinterpret_cast<const std::uint8_t*>(&td);
      e.tasks.insert(e.tasks.end(), raw, raw + sizeof td);
    }
  }
  e.task_number = static_cast<std::uint32_t>(view.tasks.size());
  return e;
}

void check_capture(const device& d, const std::filesystem::path& dir, unsigned number, const expected& e) {
  char name[16];
  std::snprintf(name, sizeof name, "%04u", number);
  CAPTURE(name);
  CHECK(read(dir / (std::string(name) + "-regcmd.bin")) == e.regcmd);
  CHECK(read(dir / (std::string(name) + "-tasks.bin")) == e.tasks);
  const auto submit = read(dir / (std::string(name) + "-submit.bin"));
  if (d.kind() == driver::rknpu) {
    REQUIRE(submit.size() == sizeof(rknpu::submit));
    rknpu::submit s{};
    std::memcpy(&s, submit.data(), sizeof s);
    CHECK(s.task_number == e.task_number);
    CHECK(s.core_mask == 0x1);
    CHECK(s.flags == (rknpu::job_pc | rknpu::job_pingpong));
  } else {
    REQUIRE(submit.size() == sizeof(rocket::submit));
    rocket::submit s{};
    std::memcpy(&s, submit.data(), sizeof s);
    CHECK(s.job_count == 1);
    CHECK(s.job_struct_size == sizeof(rocket::job));
    CHECK(s.reserved == 0);
  }
  CHECK(std::filesystem::exists(dir / (std::string(name) + ".txt")));
}

}  // namespace

TEST_CASE("the shim captures the bytes of a one-task and of a chained program") {
  const char* dir_env = std::getenv("REGCMD_CAPTURE_DIR");
  REQUIRE_MESSAGE(dir_env != nullptr, "run with REGCMD_CAPTURE_DIR and LD_PRELOAD=libregcmd-capture.so:libregcmd-emu.so");
  const std::filesystem::path dir = dir_env;
  const device d = device::open().value();

  constexpr auto mm = fixed<matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 16, .K = 256, .N = 64}>();
  const expected one = run(d, mm.code.view(), mm.geometry.feature_bytes(), mm.geometry.weight_bytes(), mm.geometry.output_bytes());

  // a chain of three tasks (with delta tasks on rknpu; rocket takes only full tasks)
  const auto chained = build(plan_request{matmul_spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 2100, .K = 256, .N = 64}, {.delta_tasks = d.kind() == driver::rknpu}});
  REQUIRE(chained.ok());
  REQUIRE(chained.value().view().tasks.size() == 3);
  const plan_shape& shape = chained.value().geometry;
  const expected three = run(d, chained.value().view(), matmul::plan_feature_bytes(shape), shape.weight_bytes(), matmul::plan_output_bytes(shape));

  // submits 1 and 2: the one-task program (warm-up, then the run); 3 and 4: the chain
  check_capture(d, dir, 1, one);
  check_capture(d, dir, 2, one);
  check_capture(d, dir, 3, three);
  check_capture(d, dir, 4, three);
}
