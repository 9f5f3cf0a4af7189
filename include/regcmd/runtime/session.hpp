#pragma once
// Running programs: prepare (validate, allocate, place the program), bind (write the
// slots' addresses), run (submit with the reference's stateful rules applied).
//
//   auto dev = runtime::device::open().value();
//   runtime::session npu{dev};
//   auto prepared = npu.prepare(mm.code.view());          // every program rule, once
//   npu.bind(prepared.value(), {.feature = &a, .weight = &b, .output = &c});
//   npu.run(prepared.value());                             // reset / warm-up as needed
//
// The same programs run on both drivers (device.hpp); how a job reaches each is in
// rknpu_jobs.hpp and rocket_jobs.hpp.
//
// The stateful rules (regcmd-isa-reference "State gotchas"), applied here, not by callers:
//   - entering int8 mode: rknpu: RKNPU_ACT_RESET first. rocket has no reset request: the
//     first int8 job on a core wedges until the kernel stops it (500 ms) and resets the core,
//     which primes it; run then runs the job again (at most once per core);
//   - after a timed-out job: rknpu: RKNPU_ACT_RESET before the next; rocket: the kernel has
//     reset the core already;
//   - a warm-up submit (result discarded) whenever a buffer the NPU writes (the output, an
//     intermediate) is fresh: the first job writing a freshly allocated buffer leaves it
//     stale;
//   - one stable feature buffer per prepared program: rotating feature addresses across
//     submits corrupts results, so binding a different feature buffer is refused.
// Multi-core (reference, "Multi-core submit"): one core (core_mask 1 << i), round-robin
// single-core submits, all three (tasks split in up to three chains), or all three for the
// leading tasks that hand nothing to each other and one core for the rest, in a second
// submit (cores::all_then_one). rocket: the kernel picks the core of each job; the chains
// of a split become one job each. Tasks that hand data on (delta tasks, an intermediate)
// are never split: the cores run together.
// The NPU's state (int8 mode, a reset owed) belongs to the node, whichever session or
// thread ran last (npu_state.hpp).

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <variant>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/task/independent_tasks.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/task/tail.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/rules/program_rules.hpp>
#include <regcmd/runtime/buffer.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/runtime/device.hpp>
#include <regcmd/runtime/npu_state.hpp>
#include <regcmd/runtime/rknpu_jobs.hpp>
#include <regcmd/runtime/rocket_jobs.hpp>
#include <regcmd/runtime/run_options.hpp>

namespace regcmd::runtime {

// The buffers a program's slots point into, by role (the program's own regcmd buffer is
// the session's business).
struct operands {
  const buffer* feature = nullptr;
  const buffer* weight = nullptr;
  const buffer* output = nullptr;
  const buffer* ew_operand = nullptr;
  const buffer* next_program = nullptr;
  const buffer* intermediate = nullptr;
  const buffer* bias = nullptr;
  const buffer* residual = nullptr;
  // Bytes into each role's buffer where its data starts (by operand_role): a sub-range of
  // one allocation, such as one weight block of a larger buffer. 0: the buffer's start.
  std::array<std::uint64_t, operand_role_count> offsets{};

  constexpr const buffer* of(operand_role r) const {
    switch (r) {
      case operand_role::feature: return feature;
      case operand_role::weight: return weight;
      case operand_role::output: return output;
      case operand_role::ew_operand: return ew_operand;
      case operand_role::next_program: return next_program;
      case operand_role::intermediate: return intermediate;
      case operand_role::bias: return bias;
      case operand_role::residual: return residual;
      case operand_role::regcmd: break;
    }
    return nullptr;
  }
};

// The jobs of one driver (one type each): what prepare makes of a program for the device.
using driver_jobs = std::variant<rknpu_jobs, rocket_jobs>;

// Which bytes a program reads its features from: a buffer's id and an offset into it.
struct feature_binding {
  std::uint64_t id = 0;
  std::uint64_t offset = 0;
  friend bool operator==(const feature_binding&, const feature_binding&) = default;
};

// A validated program with its device buffers; bound to operands by session::bind. It
// keeps the buffers bound to it (and its device's file) alive until rebound or destroyed.
// It may be bound and run from several threads: both hold its own lock.
class prepared_program {
 public:
  std::size_t task_count() const { return tasks_.size(); }
  bool int8() const { return int8_; }
  std::span<const slot> slots() const { return slots_; }
  std::uint64_t regcmd_iova() const { return regcmd_.iova(); }
  // The program as the NPU will fetch it (little-endian entries), e.g. to dump it.
  std::span<const std::uint8_t> regcmd_bytes() const { return regcmd_.bytes(); }

 private:
  friend class session;
  // Where bind writes an address: the entry as prepared (value 0), in slot order.
  struct site {
    entry unbound;
    std::uint32_t entry_index;
    std::uint32_t offset;
    std::uint32_t alignment_mask;
    operand_role role;
    std::uint8_t address_register;  // index into address_registers, for errors
  };
  std::vector<entry> entries_;
  std::vector<slot> slots_;
  std::vector<site> sites_;
  role_uses uses_{};
  std::vector<task> tasks_;
  bool int8_ = false;
  bool bound_ = false;
  bool regcmd_written_ = false;
  buffer regcmd_;
  driver_jobs jobs_;
  std::optional<feature_binding> feature_;  // the feature buffer (id) and offset bound first
  std::shared_ptr<std::mutex> lock_ = std::make_shared<std::mutex>();  // one bind or run at a time
  std::array<std::shared_ptr<const buffer_object>, operand_role_count> bound_to_{};  // by role, used roles only
  // The bytes of each bound role's buffer its DMAs reach: [offset, offset + size), what run
  // syncs (rknpu MEM_SYNC takes a range: a view into a large buffer syncs only itself).
  struct byte_range {
    std::uint64_t offset = 0, size = 0;
  };
  std::array<byte_range, operand_role_count> bound_range_{};
};

// Prepares, binds and runs programs on one device. A session may be used from several
// threads, and several sessions (and devices) may share a node: runs of several threads
// submit at once (a core each), the NPU's state lives with the node, and a run that changes
// it holds the node alone (npu_state.hpp).
class session {
 public:
  explicit session(const device& dev) : device_{dev} {}

  // Validates every program rule (and what the device's kernel cannot run) and allocates
  // the regcmd buffer (rknpu: and the task descriptors). With cores::all the tasks are
  // split into up to three chains (their tails unlinked).
  result<prepared_program> prepare(const program_view& program, const prepare_options& options = {}) {
    if (!device_.file()) return make_error(rules::wrong_device, "prepare").with_note("the session's device is not open");
    if (status s = soc::with_soc(device_.soc().id, [&](auto soc) { return validate<decltype(soc)>(program); }); !s)
      return s.err();
    if (device_.kind() == driver::rocket) return prepare_with<rocket_jobs>(program, options);
    return prepare_with<rknpu_jobs>(program, options);
  }

  // Writes every slot's address (its operand's IOVA + offset) into the placed program,
  // after checking each operand once: given, made on this device, large enough for every
  // DMA into it, within 32 bits, and a written one bound to no other role. The checks are
  // those of patch_slots, with the lookups done by prepare.
  status bind(prepared_program& p, const operands& ops) {
    if (status s = check_device(p); !s) return s;
    operand_addresses base{};
    std::array<const buffer*, operand_role_count> given{};
    for (std::size_t r = 0; r < operand_role_count; ++r) {
      const auto role = static_cast<operand_role>(r);
      const role_use& use = p.uses_[r];
      if (!use.used) continue;
      const buffer* b = role == operand_role::regcmd ? &p.regcmd_ : ops.of(role);
      if (b == nullptr) return make_error(rules::operand_missing, "bind", name_of(role));
      if (!b->made_on(device_.file().get())) return make_error(rules::wrong_device, "bind", name_of(role));
      const std::uint64_t at = role == operand_role::regcmd ? 0 : ops.offsets[r];
      if (at > b->size() || use.end > b->size() - at) return make_error(rules::operand_extent, "bind", name_of(role), at + use.end);
      if (b->iova() + at + use.max_offset > device_.soc().max_iova)
        return make_error(rules::iova_32bit, "bind", name_of(role), b->iova() + at + use.max_offset);
      given[r] = b;
      base[r] = b->iova() + at;
    }
    if (status s = check_aliases(given); !s) return s;
    const auto feature_at = static_cast<std::size_t>(operand_role::feature);
    const feature_binding feature{ops.feature ? ops.feature->id() : 0, ops.offsets[feature_at]};
    if (ops.feature && p.feature_ && *p.feature_ != feature) return make_error(rules::feature_rotation, "bind");
    const std::lock_guard lock{*p.lock_};  // a run of it may be fetching the program
    p.bound_ = false;  // until every address is written
    std::uint8_t* out = p.regcmd_.bytes().data();
    for (const prepared_program::site& s : p.sites_) {
      const std::uint64_t address = base[static_cast<std::size_t>(s.role)] + s.offset;
      if ((address & s.alignment_mask) != 0)
        return check_address(address_registers[s.address_register], s.role, address).err();  // 32 bits on every SoC
      store(out, s.entry_index, s.unbound.with_value(static_cast<std::uint32_t>(address)));
    }
    if (ops.feature) p.feature_ = feature;
    for (std::size_t r = 0; r < operand_role_count; ++r)
      if (r != static_cast<std::size_t>(operand_role::regcmd)) {
        p.bound_to_[r] = given[r] ? given[r]->object() : nullptr;
        p.bound_range_[r] = {ops.offsets[r], p.uses_[r].end};
      }
    std::visit([&](auto& jobs) { list_buffers(jobs, p.bound_to_); }, p.jobs_);
    p.bound_ = true;
    p.regcmd_written_ = true;  // run makes it visible to the device
    return {};
  }

  // Submits a bound program, applying the stateful rules.
  result<run_report> run(prepared_program& p, const run_options& options = {}) {
    if (!p.bound_) return make_error(rules::operand_missing, "run").with_note("the program was not bound");
    if (status s = check_device(p); !s) return s.err();
    if (status s = check_options(p, options); !s) return s.err();
    return std::visit([&](const auto& jobs) { return run_with(p, jobs, options); }, p.jobs_);
  }

 private:
  template <class Jobs>
  result<prepared_program> prepare_with(const program_view& program, const prepare_options& options) {
    if (status s = soc::with_soc(device_.soc().id, [&](auto soc) { return Jobs::template check<decltype(soc)>(program); }); !s)
      return s.err();
    prepared_program p;
    p.entries_.assign(program.entries.begin(), program.entries.end());
    p.slots_.assign(program.slots.begin(), program.slots.end());
    p.tasks_.assign(program.tasks.begin(), program.tasks.end());
    for (const entry& e : p.entries_)
      if (e.target() == static_cast<std::uint16_t>(block_id::cna) && e.offset() == reg::CNA_CONV_CON1::offset)
        p.int8_ = p.int8_ || unpack<reg::CNA_CONV_CON1>(e.value()).IN_PRECISION.value() == precision::int8;
    std::vector<task_stage> stages;
    const auto n = static_cast<std::uint32_t>(p.tasks_.size());
    const bool split = (options.use == cores::all || options.use == cores::all_then_one) && n > 1;
    if (split) {
      // The cores of one submit run together (vendor kernel) or in any order (rocket's
      // scheduler): tasks that hand data on must stay in one chain.
      if (program.delta_tasks) return make_error(rules::core_split, "prepare", "delta_tasks");
      std::uint32_t parallel = n;
      if (options.use == cores::all && program.hands_on_data())
        return make_error(rules::core_split, "prepare", "intermediate");
      if (options.use == cores::all_then_one && (parallel = independent_prefix(program)) < 2)
        return make_error(rules::core_split, "prepare", "independent tasks", parallel)
            .with_note("the first two tasks hand data on: nothing to split");
      stages.push_back(split_chains(p, parallel));
      if (parallel < n) {  // the rest, after the split stage, on one core
        unlink_after(p, parallel - 1);
        stages.push_back({{parallel, n - parallel}});
      }
    } else {
      stages.push_back({{0, n}});
    }
    for (const slot& s : p.slots_) {
      const auto reg = static_cast<std::uint8_t>(address_register_index(p.entries_[s.entry]));
      p.sites_.push_back({p.entries_[s.entry], s.entry, s.offset, address_registers[reg].alignment_mask(), s.role, reg});
    }
    p.uses_ = uses_of(p.slots_);
    auto regcmd = buffer::create(device_, p.entries_.size() * 8, buffer_use::regcmd);
    if (!regcmd) return regcmd.err();
    p.regcmd_ = std::move(regcmd.value());
    // The program is placed once; bind writes only its address entries.
    std::uint8_t* out = p.regcmd_.bytes().data();
    for (std::size_t i = 0; i < p.entries_.size(); ++i) store(out, i, p.entries_[i]);
    auto jobs = Jobs::create(device_, p.regcmd_, p.tasks_, std::move(stages), program.pingpong);
    if (!jobs) return jobs.err();
    p.jobs_ = std::move(jobs.value());
    return p;
  }

  template <class Jobs>
  result<run_report> run_with(prepared_program& p, const Jobs& jobs, const run_options& options) {
    const auto start = std::chrono::steady_clock::now();
    npu_state& npu = device_.file()->npu();
    const std::lock_guard program_lock{*p.lock_};
    run_report report;
    // Runs in the NPU's current state share the node; one that changes it (the int8 mode, a
    // reset owed) holds the node alone for the whole run, as its first job may be the one
    // that primes a core (rocket's int8 entry).
    std::shared_lock shared{npu.lock};
    std::unique_lock<std::shared_mutex> alone;
    bool entering_int8 = false;
    if (p.int8_ != npu.in_int8 || npu.owes_reset) {
      shared.unlock();
      alone = std::unique_lock{npu.lock};
      entering_int8 = p.int8_ && !npu.in_int8;
      if (status s = Jobs::prime(device_, npu, entering_int8, report); !s) return s.err();
      npu.in_int8 = p.int8_;
    }
    // What the CPU wrote becomes visible to the device: the operands on every run, the
    // program after a bind.
    for (std::size_t r = 0; r < operand_role_count; ++r)
      if (const auto& b = p.bound_to_[r])
        if (status s = buffer::sync_to_device(*b, p.bound_range_[r].offset, p.bound_range_[r].size); !s) return s.err();
    if (p.regcmd_written_) {
      if (status s = p.regcmd_.sync_to_device(); !s) return s.err();
      p.regcmd_written_ = false;
    }
    // A buffer the NPU writes for the first time comes back stale: a warm-up submit first.
    bool fresh = false;
    for (std::size_t r = 0; r < operand_role_count; ++r)
      fresh = fresh || (npu_writes(static_cast<operand_role>(r)) && p.bound_to_[r] && !p.bound_to_[r]->npu_written());
    const unsigned core = options.use == cores::round_robin ? next_core_++ % device_.soc().cores : options.core;
    for (int pass = fresh ? 2 : 1; pass > 0; --pass)
      for (std::size_t stage = 0; stage < jobs.stages(); ++stage) {
        status s = jobs.submit(device_, options, core, report, stage);
        ++report.submits;
        for (unsigned again = 0; Jobs::reruns_int8_entry && entering_int8 && !s &&
                                 s.err().breaks(rules::submit_timeout) && again < device_.soc().cores;
             ++again) {
          report.reset = true;  // the kernel reset the core that timed out
          s = jobs.submit(device_, options, core, report, stage);
          ++report.submits;
        }
        if (!s) {
          if (s.err().breaks(rules::submit_timeout)) npu.owes_reset = Jobs::timeout_needs_reset;
          return s.err();
        }
      }
    for (std::size_t r = 0; r < operand_role_count; ++r)
      if (npu_writes(static_cast<operand_role>(r)) && p.bound_to_[r]) p.bound_to_[r]->set_npu_written();
    constexpr auto output_role = static_cast<std::size_t>(operand_role::output);
    if (const auto& output = p.bound_to_[output_role])
      if (status s = buffer::sync_from_device(*output, options.timeout_ms, p.bound_range_[output_role].offset,
                                              p.bound_range_[output_role].size);
          !s)
        return s.err();
    report.wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    return report;
  }

  // A prepared program runs only on the open device that prepared it.
  status check_device(const prepared_program& p) const {
    if (!device_.file()) return make_error(rules::wrong_device, "session").with_note("the session's device is not open");
    if (!p.regcmd_.made_on(device_.file().get())) return make_error(rules::wrong_device, "prepared program");
    return {};
  }

  // operand-aliased: a buffer the NPU writes is bound to that role alone.
  static status check_aliases(const std::array<const buffer*, operand_role_count>& given) {
    for (std::size_t w = 0; w < operand_role_count; ++w) {
      if (!npu_writes(static_cast<operand_role>(w)) || !given[w]) continue;
      for (std::size_t r = 0; r < operand_role_count; ++r)
        if (r != w && given[r] && given[r]->object() == given[w]->object())
          return make_error(rules::operand_aliased, name_of(static_cast<operand_role>(w)), name_of(static_cast<operand_role>(r)));
    }
    return {};
  }

  // run-options: every option in range and applicable to the prepared program.
  status check_options(const prepared_program& p, const run_options& o) const {
    if (o.use == cores::all || o.use == cores::all_then_one)
      return make_error(rules::run_options_range, "run", "use").with_note("cores::all and all_then_one are prepare's");
    if (o.core >= device_.soc().cores) return make_error(rules::run_options_range, "run", "core", o.core);
    if (o.timeout_ms == 0 || o.timeout_ms > max_timeout_ms) return make_error(rules::run_options_range, "run", "timeout_ms", o.timeout_ms);
    const bool split = std::visit([](const auto& jobs) { return jobs.split(); }, p.jobs_);
    if (split && (o.core != 0 || o.use == cores::round_robin))
      return make_error(rules::run_options_range, "run", o.core != 0 ? "core" : "use").with_note("the program is split over cores");
    return {};
  }

  // Entry i of a regcmd buffer, little-endian whatever the host.
  static void store(std::uint8_t* regcmd, std::size_t i, entry e) { std::memcpy(regcmd + i * 8, e.to_bytes().data(), 8); }

  // Tasks [0, n) in up to three chains of balanced lengths, each ending its PC chain.
  task_stage split_chains(prepared_program& p, std::uint32_t n) const {
    task_stage chains;
    const std::uint32_t count = std::min<std::uint32_t>(device_.soc().cores, n);
    for (std::uint32_t c = 0, first = 0; c < count; ++c) {
      const std::uint32_t length = n / count + (c < n % count ? 1 : 0);
      chains.push_back({first, length});
      first += length;
      if (c + 1 < count) unlink_after(p, first - 1);
    }
    return chains;
  }

  // Ends the chain after task `last`: its tail no longer points at the next task.
  static void unlink_after(prepared_program& p, std::uint32_t last) {
    const task& t = p.tasks_[last];
    const std::uint32_t address = tail_index(t, tail_entry::next_address);
    const std::uint32_t amount = tail_index(t, tail_entry::next_amount);
    p.entries_[address] = p.entries_[address].with_value(0);
    p.entries_[amount] = p.entries_[amount].with_value(0);
    std::erase_if(p.slots_, [&](const slot& s) { return s.entry == address; });
  }

  // What the jobs list as read and written (rocket; rknpu lists nothing).
  template <class Jobs>
  static void list_buffers(Jobs& jobs, const std::array<std::shared_ptr<const buffer_object>, operand_role_count>& bound) {
    std::array<std::uint32_t, operand_role_count> reads{}, writes{};
    std::size_t read_count = 0, write_count = 0;
    for (std::size_t r = 0; r < operand_role_count; ++r)
      if (bound[r]) {
        if (npu_writes(static_cast<operand_role>(r))) {
          writes[write_count++] = bound[r]->handle();
        } else {
          reads[read_count++] = bound[r]->handle();
        }
      }
    jobs.list_buffers({reads.data(), read_count}, {writes.data(), write_count});
  }

  static constexpr std::uint32_t max_timeout_ms = 60'000;
  device device_;
  std::atomic<unsigned> next_core_ = 0;
};

}  // namespace regcmd::runtime
