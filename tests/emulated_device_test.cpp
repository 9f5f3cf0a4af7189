// The emulated device answers raw ioctls as the kernels do, with or without the capture
// shim in front of it: a bad pointer or a count too large is an error the caller gets back
// (never a crash of the process), GEM handles are per open file, freed IOVAs come back.
// Run with LD_PRELOAD=libregcmd-emu.so (or libregcmd-capture.so:libregcmd-emu.so) and
// REGCMD_DEVICE naming the rknpu or the rocket node.
#include <regcmd/testing/doctest.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

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
