// The emulated device answers raw ioctls as the kernels do, with or without the capture
// shim in front of it: a bad pointer or a count too large is an error the caller gets back
// (never a crash of the process), GEM handles are per open file, freed IOVAs come back.
// Run with LD_PRELOAD=libregcmd-emu.so (or libregcmd-capture.so:libregcmd-emu.so) and
// REGCMD_DEVICE naming the rknpu or the rocket node.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "cpu_cache.hpp"
#include "raw_node.hpp"
#include "runtime_support.hpp"

using namespace regcmd;
using namespace regcmd::testing;
using raw::address_of;

namespace {

// What the kernels answer a submit they cannot read or allocate: copy_from_user's EFAULT,
// kvmalloc's ENOMEM (more than INT_MAX bytes is never allocated), or EINVAL for an
// argument they refuse.
bool refused(int error) { return error == EFAULT || error == EINVAL || error == ENOMEM; }

struct bad_submit {
  const char* what;
  std::function<int()> call;  // the errno of the ioctl, 0 when it returned 0
};

// After each bad submit the device still answers: a buffer is still created on the file.
void check_still_answers(const raw::file& f) {
  raw::bo b;
  CHECK_MESSAGE(raw::create(f, 4096, b) == 0, "the device no longer creates buffers");
  if (b.handle) CHECK(raw::destroy(f, b) == 0);
}

}  // namespace

TEST_CASE("rknpu: a submit with a bad pointer or a huge task count is refused with an errno") {
  const raw::node n = raw::node_under_test();
  REQUIRE_FALSE(n.rocket);
  raw::file f{n};
  const raw::guarded g;
  const raw::bo tasks = raw::create(f, 4096);
  std::uint8_t* tasks_map = raw::map(f, tasks);
  std::memset(tasks_map, 0, tasks.size);

  // A submit the kernel would take (fact sheet §1.6), then one field made bad.
  auto valid = [&] {
    rknpu::submit s{};
    s.flags = rknpu::job_pc | rknpu::job_pingpong;
    s.timeout = 6000;
    s.task_number = 1;
    s.task_obj_addr = tasks.obj_addr;
    s.core_mask = 1;
    s.subcore_task[0] = {0, 1};
    return s;
  };
  auto submit = [&](rknpu::submit s) { return raw::call(f.fd(), rknpu::ioctl_submit, &s); };
  const std::vector<bad_submit> cases{
      // drm_ioctl copies the argument in first: an unreadable one is EFAULT
      {"the argument unreadable", [&] { return raw::call(f.fd(), rknpu::ioctl_submit, g.unreadable()); }},
      {"the argument's second half unreadable",
       [&] { return raw::call(f.fd(), rknpu::ioctl_submit, g.before(sizeof(rknpu::submit) / 2)); }},
      // obj_addr is the kernel object MEM_CREATE returned (fact sheet §1.5), and a core's
      // range must lie in that buffer: anything else is refused, never followed
      {"task_obj_addr naming no buffer",
       [&] {
         auto s = valid();
         s.task_obj_addr = 0xffff'ff80'dead'0000u;
         return submit(s);
       }},
      {"task_obj_addr a user address",
       [&] {
         auto s = valid();
         s.task_obj_addr = address_of(tasks_map);
         return submit(s);
       }},
      {"task_number and the core's range huge",
       [&] {
         auto s = valid();
         s.task_number = 0xffff'ffffu;
         for (auto& r : s.subcore_task) r = {0, 0xffff'ffffu};
         return submit(s);
       }},
      {"the core's range starting past the task buffer",
       [&] {
         auto s = valid();
         s.subcore_task[0] = {0xffff'ffffu, 1};
         return submit(s);
       }},
  };
  for (const bad_submit& c : cases) {
    CAPTURE(c.what);
    const int error = c.call();
    CHECK_MESSAGE(refused(error), "errno ", error, " (", std::strerror(error), ")");
    check_still_answers(f);
  }
  // a submit that wedged a core would leave it so for later cases
  rknpu::action reset{rknpu::action_reset, 0};
  CHECK(raw::call(f.fd(), rknpu::ioctl_action, &reset) == 0);
}

TEST_CASE("rocket: a submit with a bad pointer or a huge count is refused, a bad job dropped") {
  const raw::node n = raw::node_under_test();
  REQUIRE(n.rocket);
  raw::file f{n};
  // 4 GiB and a page inaccessible: a stride of 2^32 - 1 from the readable page faults too
  const raw::guarded g{(std::uint64_t{1} << 32) + 4096};
  const raw::bo regcmd = raw::create(f, 4096);

  // A job the kernel would queue (fact sheet §3.1), then one field made bad.
  const rocket::task task{static_cast<std::uint32_t>(regcmd.iova), 4};
  const std::uint32_t handles[1] = {regcmd.handle};
  auto valid_job = [&] { return rocket::job{address_of(&task), address_of(handles), 0, 1, sizeof task, 1, 0}; };
  auto submit_one = [&](const rocket::job& j) {
    rocket::submit s{address_of(&j), 1, sizeof j, 0};
    return raw::call(f.fd(), rocket::ioctl_submit, &s);
  };

  SUBCASE("the submit: EFAULT, ENOMEM or EINVAL") {
    // rocket_ioctl_submit: the argument and every job are copied in, into a kvmalloc'd
    // array, before any job is queued; a failure there is the ioctl's.
    const std::vector<bad_submit> cases{
        {"the argument unreadable", [&] { return raw::call(f.fd(), rocket::ioctl_submit, g.unreadable()); }},
        {"the argument's second half unreadable",
         [&] { return raw::call(f.fd(), rocket::ioctl_submit, g.before(sizeof(rocket::submit) / 2)); }},
        {"jobs unreadable",
         [&] {
           rocket::submit s{g.unreadable_address(), 1, sizeof(rocket::job), 0};
           return raw::call(f.fd(), rocket::ioctl_submit, &s);
         }},
        {"job_count 2^32 - 1 (an array of 160 GiB)",
         [&] {
           rocket::submit s{address_of(g.place(valid_job())), 0xffff'ffffu, sizeof(rocket::job), 0};
           return raw::call(f.fd(), rocket::ioctl_submit, &s);
         }},
        {"job_count 65536 with one job readable",
         [&] {
           rocket::submit s{address_of(g.place(valid_job())), 65536, sizeof(rocket::job), 0};
           return raw::call(f.fd(), rocket::ioctl_submit, &s);
         }},
        {"job_struct_size 2^32 - 1: the second job 4 GiB on",
         [&] {
           rocket::submit s{address_of(g.place(valid_job())), 2, 0xffff'ffffu, 0};
           return raw::call(f.fd(), rocket::ioctl_submit, &s);
         }},
    };
    for (const bad_submit& c : cases) {
      CAPTURE(c.what);
      const int error = c.call();
      CHECK_MESSAGE(refused(error), "errno ", error, " (", std::strerror(error), ")");
      check_still_answers(f);
    }
  }

  SUBCASE("a job: dropped, the ioctl still returns 0") {
    // rocket_ioctl_submit ignores what rocket_ioctl_submit_job returns: a job whose tasks or
    // BO handles cannot be copied in or allocated is dropped and the ioctl returns 0.
    struct bad_job {
      const char* what;
      std::function<void(rocket::job&)> edit;  // of a valid job
    };
    const std::vector<bad_job> cases{
        {"tasks unreadable", [&](rocket::job& j) { j.tasks = g.unreadable_address(); }},
        {"task_count 2^32 - 1 with one task readable",
         [&](rocket::job& j) {
           j.tasks = address_of(g.place(task));
           j.task_count = 0xffff'ffffu;
         }},
        {"task_struct_size 2^32 - 1: the second task 4 GiB on",
         [&](rocket::job& j) {
           j.tasks = address_of(g.place(task));
           j.task_count = 2;
           j.task_struct_size = 0xffff'ffffu;
         }},
        {"in_bo_handles unreadable", [&](rocket::job& j) { j.in_bo_handles = g.unreadable_address(); }},
        {"in_bo_handle_count 2^32 - 1 with one handle readable",
         [&](rocket::job& j) {
           j.in_bo_handles = address_of(g.place(handles));
           j.in_bo_handle_count = 0xffff'ffffu;
         }},
        {"in_bo_handle_count 2^20 with one handle readable",
         [&](rocket::job& j) {
           j.in_bo_handles = address_of(g.place(handles));
           j.in_bo_handle_count = 1u << 20;
         }},
        {"out_bo_handles unreadable",
         [&](rocket::job& j) {
           j.out_bo_handles = g.unreadable_address();
           j.out_bo_handle_count = 1;
         }},
    };
    for (const bad_job& c : cases) {
      CAPTURE(c.what);
      const std::uint64_t dropped = stats().jobs_dropped;
      auto j = valid_job();
      c.edit(j);
      CHECK(submit_one(j) == 0);
      CHECK(stats().jobs_dropped == dropped + 1);
      check_still_answers(f);
    }
  }
}

TEST_CASE("GEM handles are numbered per open file from 1; a freed handle is the next one given") {
  // drm_gem_handle_create_tail: idr_alloc(&file_priv->object_idr, obj, 1, 0), the lowest
  // free id from 1 in the file's own table, on both drivers.
  const raw::node n = raw::node_under_test();
  raw::file one{n}, two{n};
  const raw::bo first = raw::create(one, 4096);
  CHECK(first.handle == 1);
  CHECK(raw::create(two, 4096).handle == 1);
  const raw::bo second = raw::create(one, 4096);
  CHECK(second.handle == 2);
  REQUIRE(raw::destroy(one, first) == 0);
  CHECK(raw::create(one, 4096).handle == 1);
  CHECK(raw::create(one, 4096).handle == 3);
}

TEST_CASE("freed IOVAs are reused: 256 MiB created and freed 20 times stays under 4 GiB") {
  // The IOVA allocators (rknpu: the IOMMU DMA API; rocket: a drm_mm per file, fact sheet
  // §3.2) take freed ranges back; an NPU address is 32 bits (§1.5), so a device that never
  // reused them would run out after 15 cycles from the default base.
  const device d = open_device();
  const buffer alive = make(d, 4096);
  constexpr std::uint64_t size = std::uint64_t{256} << 20;
  for (int cycle = 1; cycle <= 20; ++cycle) {
    CAPTURE(cycle);
    auto b = buffer::create(d, size);
    REQUIRE_MESSAGE(b.ok(), to_string(b.err()));
    CHECK(b.value().iova() + b.value().size() <= std::uint64_t{1} << 32);
  }
  CHECK(alive.iova() + alive.size() <= std::uint64_t{1} << 32);
}

// ---- caches (emulator/cpu_cache.hpp) ----

namespace {

// A fp16 matmul (fp16_op: M 16, K 256, N 64) placed by hand at raw buffers' IOVAs and
// submitted raw, so that no sync happens but the case's own. A = B = 1.0: every C is K.
struct raw_matmul {
  const raw::file& f;
  runtime_program<matmul_geometry> mm = build(fp16_op).value();
  raw::bo a, b, c, code, tasks;
  std::uint8_t *a_map, *b_map, *c_map, *code_map, *tasks_map = nullptr;
  std::vector<std::uint64_t> entries;

  // Operands made with `operand_flags` on rknpu (cacheable or not, zeroed either way).
  raw_matmul(const raw::file& file, std::uint32_t operand_flags) : f{file} {
    const matmul_geometry& g = mm.geometry;
    a = raw::create(f, g.feature_bytes(), operand_flags);
    b = raw::create(f, g.weight_bytes(), operand_flags);
    c = raw::create(f, g.output_bytes(), operand_flags);
    code = raw::create(f, mm.code.view().entries.size() * 8);
    a_map = raw::map(f, a);
    b_map = raw::map(f, b);
    c_map = raw::map(f, c);
    code_map = raw::map(f, code);
    if (!f.rocket()) {
      tasks = raw::create(f, 4096);
      tasks_map = raw::map(f, tasks);
    }
    for (const entry& e : mm.code.view().entries) entries.push_back(e.bits());
    for (const slot& s : mm.code.view().slots) {
      const raw::bo& to = s.role == operand_role::feature ? a : s.role == operand_role::weight ? b : c;
      REQUIRE((s.role == operand_role::feature || s.role == operand_role::weight || s.role == operand_role::output));
      entries[s.entry] = entry::from_bits(entries[s.entry]).with_value(static_cast<std::uint32_t>(to.iova + s.offset)).bits();
    }
    const std::vector<float> ones_a(std::size_t{g.M} * g.logical_K, 1.0f), ones_b(std::size_t{g.logical_K} * g.logical_N, 1.0f);
    REQUIRE(matmul::pack_features<float>(g, ones_a, {a_map, a.size}).ok());
    REQUIRE(matmul::pack_weights<float>(g, ones_b, {b_map, b.size}).ok());
  }
  // Two submits: the first job writing a fresh buffer leaves it stale (regcmd-isa-reference
  // "State gotchas"), the second lands.
  void run() {
    for (int i = 0; i < 2; ++i) REQUIRE(raw::submit(f, code, code_map, entries, &tasks, tasks_map) == 0);
  }
  // How many elements of C, as the CPU reads it now, are K.
  std::size_t c_equal_to_k() const {
    std::vector<float> out(std::size_t{mm.geometry.M} * mm.geometry.logical_N);
    REQUIRE(matmul::unpack_output<float>(mm.geometry, {c_map, c.size}, out).ok());
    return static_cast<std::size_t>(std::count(out.begin(), out.end(), float(fp16_op.K)));
  }
  std::size_t c_elements() const { return std::size_t{mm.geometry.M} * mm.geometry.logical_N; }
  float c0() const {
    float v;
    std::memcpy(&v, c_map, 4);  // C[0][0] (row-major output: the first element)
    return v;
  }
  void set_c0(float v) { std::memcpy(c_map, &v, 4); }
};

}  // namespace

TEST_CASE("cacheable buffers: the CPU and the NPU see each other's writes only through syncs") {
  const raw::node n = raw::node_under_test();
  raw::file f{n};
  raw_matmul j{f, rknpu::mem_cacheable | rknpu::mem_zeroing};
  const std::size_t all = j.c_elements();

  // A and B written by the CPU, never synced: the NPU reads zeros.
  j.run();
  REQUIRE(raw::sync(f, j.c, false) == 0);
  CHECK(j.c_equal_to_k() == 0);
  CHECK(j.c0() == 0.0f);

  // Synced to the device: the NPU computes K, but the CPU still reads its own stale C.
  REQUIRE(raw::sync(f, j.a, true) == 0);
  REQUIRE(raw::sync(f, j.b, true) == 0);
  j.run();
  CHECK(j.c_equal_to_k() == 0);
  REQUIRE(raw::sync(f, j.c, false) == 0);
  CHECK(j.c_equal_to_k() == all);

  // A CPU write a FROM_DEVICE sync finds unsynced is dropped, as an invalidate drops it.
  const std::uint64_t dropped = stats().dirty_lines_dropped;
  j.set_c0(-1.0f);
  REQUIRE(raw::sync(f, j.c, false) == 0);
  CHECK(j.c0() == float(fp16_op.K));
  CHECK(stats().dirty_lines_dropped == dropped + 1);

  // Synced to the device first, it survives the FROM_DEVICE sync.
  j.set_c0(-1.0f);
  REQUIRE(raw::sync(f, j.c, true) == 0);
  REQUIRE(raw::sync(f, j.c, false) == 0);
  CHECK(j.c0() == -1.0f);

  // A TO_DEVICE sync writes back only the lines the CPU wrote: the NPU's newer C is not
  // overwritten by the CPU's stale copy of lines it never touched.
  j.run();  // the NPU writes K over the -1; the CPU's copy still reads -1
  CHECK(j.c0() == -1.0f);
  REQUIRE(raw::sync(f, j.c, true) == 0);
  REQUIRE(raw::sync(f, j.c, false) == 0);
  CHECK(j.c_equal_to_k() == all);

  if (!n.rocket) {
    // rknpu syncs a range; a partial line at its edge is cleaned before it is invalidated
    // (arm64's dcache_inval_poc), so a CPU write sharing that line survives.
    j.set_c0(-1.0f);
    const std::uint64_t before = stats().dirty_lines_dropped;
    REQUIRE(raw::sync(f, j.c, false, 32, 32) == 0);  // the second half of line 0
    CHECK(j.c0() == -1.0f);
    CHECK(stats().dirty_lines_dropped == before);
    REQUIRE(raw::sync(f, j.c, false) == 0);  // the write reached the device: it stays
    CHECK(j.c0() == -1.0f);
  }
}

TEST_CASE("rknpu: a buffer that is not cacheable is one copy, and MEM_SYNC refuses it") {
  const raw::node n = raw::node_under_test();
  REQUIRE_FALSE(n.rocket);
  raw::file f{n};
  raw_matmul j{f, rknpu::mem_zeroing};  // write-back caching off: no sync needed, none taken
  j.run();
  CHECK(j.c_equal_to_k() == j.c_elements());
  CHECK(raw::sync(f, j.a, true) == EINVAL);
  CHECK(raw::sync(f, j.c, false) == EINVAL);
}

TEST_CASE("the cache model: clean writes back dirty lines only, invalidate drops them but at a partial edge") {
  // emulator/cpu_cache.hpp on its own: three views of four 64-byte lines.
  std::vector<std::uint8_t> cpu(256, 1), device(256, 1), clean(256, 1);
  emu::cpu_cache cache{cpu.data(), device.data(), clean.data(), cpu.size()};
  device[130] = 5;  // the NPU wrote line 2
  cpu[10] = 7;      // the CPU wrote line 0
  CHECK(cache.clean_range(0, 256) == 1);
  CHECK(device[10] == 7);
  CHECK(device[130] == 5);  // line 2 was clean in the CPU's cache: not written back
  cpu[70] = 9;              // line 1
  cpu[200] = 3;             // line 3
  CHECK(cache.invalidate_range(64, 100) == 1);  // [64, 164): line 1 dropped, line 2 read again
  CHECK(cpu[70] == 1);
  CHECK(cpu[130] == 5);
  CHECK(cpu[200] == 3);  // outside the range
  CHECK(cache.invalidate_range(200, 8) == 0);  // inside line 3 at both ends: cleaned first
  CHECK(cpu[200] == 3);
  CHECK(device[200] == 3);
  CHECK(cache.clean_range(300, 10) == 0);  // past the end: nothing
}
