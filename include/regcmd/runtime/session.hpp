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
//   - a warm-up submit (result discarded) whenever an output buffer is fresh: the first
//     submit to a freshly allocated output buffer returns stale data;
//   - one stable feature buffer per prepared program: rotating feature addresses across
//     submits corrupts results, so binding a different feature buffer is refused.
// Multi-core (reference, "Multi-core submit"): one core (core_mask 1 << i), round-robin
// single-core submits, or all three (tasks split in up to three chains). rocket: the
// kernel picks the core of each job; the chains of cores::all become one job each.

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/program/program.hpp>
#include <regcmd/program/tail.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/rules/program_rules.hpp>
#include <regcmd/runtime/buffer.hpp>
#include <regcmd/runtime/device.hpp>
#include <regcmd/rules/catalog.hpp>
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

  constexpr const buffer* of(operand_role r) const {
    switch (r) {
      case operand_role::feature: return feature;
      case operand_role::weight: return weight;
      case operand_role::output: return output;
      case operand_role::ew_operand: return ew_operand;
      case operand_role::next_program: return next_program;
      case operand_role::intermediate: return intermediate;
      case operand_role::regcmd: break;
    }
    return nullptr;
  }
};

// A validated program with its device buffers; bound to operands by session::bind.
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
    std::uint64_t unbound_bits;
    std::uint32_t entry;
    std::uint32_t offset;
    std::uint32_t alignment_mask;
    operand_role role;
    std::uint8_t address_register;  // index into address_registers, for errors
  };
  // Per operand role: whether a slot uses it, the furthest byte a DMA reaches and the
  // largest offset (so bind checks each buffer once, not each slot).
  struct role_use {
    bool used = false;
    std::uint64_t end = 0;
    std::uint32_t max_offset = 0;
  };
  std::vector<entry> entries_;
  std::vector<slot> slots_;
  std::vector<site> sites_;
  std::array<role_use, operand_role_count> uses_{};
  std::vector<task> tasks_;
  std::vector<task_chain> chains_;
  bool int8_ = false;
  bool bound_ = false;
  bool regcmd_written_ = false;
  buffer regcmd_;
  rknpu_jobs rknpu_;    // on an rknpu device
  rocket_jobs rocket_;  // on a rocket device
  std::optional<std::uint64_t> feature_id_;
  std::array<const buffer*, operand_role_count> bound_to_{};
  std::array<std::uint64_t, operand_role_count> listed_ids_{};  // rocket: the buffers the jobs list
};

class session {
 public:
  explicit session(const device& dev) : device_{dev} {}

  // Validates every program rule (and, on rocket, what its kernel cannot run) and
  // allocates the regcmd buffer (rknpu: and the task descriptors). With cores::all the
  // tasks are split into up to three chains (their tails unlinked).
  result<prepared_program> prepare(const program_view& program, const prepare_options& options = {}) {
    if (status s = validate(program); !s) return s.err();
    if (device_.kind() == driver::rocket)
      if (status s = rocket_jobs::check(program); !s) return s.err();
    prepared_program p;
    p.entries_.assign(program.entries.begin(), program.entries.end());
    p.slots_.assign(program.slots.begin(), program.slots.end());
    p.tasks_.assign(program.tasks.begin(), program.tasks.end());
    for (const entry& e : p.entries_)
      if (e.target() == static_cast<std::uint16_t>(block_id::cna) && e.offset() == reg::CNA_CONV_CON1::offset)
        p.int8_ = p.int8_ || unpack<reg::CNA_CONV_CON1>(e.value()).IN_PRECISION.value() == precision::int8;
    const auto n = static_cast<std::uint32_t>(p.tasks_.size());
    if (options.use == cores::all && n > 1) {
      if (program.delta_tasks) return make_error(rules::core_split, "prepare");
      const std::uint32_t chains = std::min<std::uint32_t>(3, n);
      for (std::uint32_t c = 0, first = 0; c < chains; ++c) {
        const std::uint32_t count = n / chains + (c < n % chains ? 1 : 0);
        p.chains_.push_back({first, count});
        first += count;
        if (c + 1 < chains) unlink_after(p, first - 1);
      }
    } else {
      p.chains_.push_back({0, n});
    }
    for (const slot& s : p.slots_) {
      const auto reg = static_cast<std::uint8_t>(address_register_index(p.entries_[s.entry]));
      p.sites_.push_back({p.entries_[s.entry].bits(), s.entry, s.offset, address_registers[reg].alignment_mask(), s.role, reg});
      prepared_program::role_use& use = p.uses_[static_cast<std::size_t>(s.role)];
      use.used = true;
      use.end = std::max(use.end, std::uint64_t{s.offset} + s.extent);
      use.max_offset = std::max(use.max_offset, s.offset);
    }
    auto regcmd = buffer::create(device_, p.entries_.size() * 8, buffer_use::regcmd);
    if (!regcmd) return regcmd.err();
    p.regcmd_ = std::move(regcmd.value());
    // The program is placed once; bind writes only its address entries.
    std::uint8_t* out = p.regcmd_.bytes().data();
    for (std::size_t i = 0; i < p.entries_.size(); ++i) store(out, i, p.entries_[i].bits());
    if (device_.kind() == driver::rocket) {
      auto jobs = rocket_jobs::create(device_, p.regcmd_, p.tasks_, p.chains_);
      if (!jobs) return jobs.err();
      p.rocket_ = std::move(jobs.value());
    } else {
      auto jobs = rknpu_jobs::create(device_, p.tasks_, p.regcmd_.iova(), p.chains_, program.pingpong);
      if (!jobs) return jobs.err();
      p.rknpu_ = std::move(jobs.value());
    }
    return p;
  }

  // Writes every slot's address (its operand's IOVA + offset) into the placed program,
  // after checking each operand once: given, large enough for every DMA into it, and
  // within 32 bits. The checks are those of patch_slots, with the lookups done by prepare.
  status bind(prepared_program& p, const operands& ops) {
    operand_addresses base{};
    std::array<const buffer*, operand_role_count> given{};
    for (std::size_t r = 0; r < operand_role_count; ++r) {
      const auto role = static_cast<operand_role>(r);
      given[r] = ops.of(role);
      const prepared_program::role_use& use = p.uses_[r];
      if (!use.used) continue;
      const buffer* b = role == operand_role::regcmd ? &p.regcmd_ : given[r];
      if (b == nullptr) return make_error(rules::operand_missing, "bind", name_of(role));
      if (use.end > b->size()) return make_error(rules::operand_extent, "bind", name_of(role), use.end);
      if (b->iova() + use.max_offset > 0xffff'ffffu)
        return make_error(rules::iova_32bit, "bind", name_of(role), b->iova() + use.max_offset);
      base[r] = b->iova();
    }
    if (ops.feature && p.feature_id_ && *p.feature_id_ != ops.feature->id())
      return make_error(rules::feature_rotation, "bind");
    p.bound_ = false;  // until every address is written
    std::uint8_t* out = p.regcmd_.bytes().data();
    for (const prepared_program::site& s : p.sites_) {
      const std::uint64_t address = base[static_cast<std::size_t>(s.role)] + s.offset;
      if ((address & s.alignment_mask) != 0)
        return check_address(address_registers[s.address_register], s.role, address).err();
      store(out, s.entry, s.unbound_bits | address << 16);
    }
    if (ops.feature) p.feature_id_ = ops.feature->id();
    p.bound_to_ = given;
    if (device_.kind() == driver::rocket) relist(p, given);
    p.bound_ = true;
    p.regcmd_written_ = true;  // run makes it visible to the device
    return {};
  }

  // Submits a bound program, applying the stateful rules.
  result<run_report> run(prepared_program& p, const run_options& options = {}) {
    if (!p.bound_) return make_error(rules::operand_missing, "run").with_note("the program was not bound");
    const auto start = std::chrono::steady_clock::now();
    const bool rocket = device_.kind() == driver::rocket;
    const bool entering_int8 = p.int8_ && !in_int8_;
    run_report report;
    if (!rocket && (needs_reset_ || entering_int8)) {
      if (status s = device_.reset(); !s) return s.err();
      needs_reset_ = false;
      report.reset = true;
    }
    in_int8_ = p.int8_;
    // What the CPU wrote becomes visible to the device: the operands on every run, the
    // program after a bind.
    for (const buffer* b : p.bound_to_)
      if (b)
        if (status s = b->sync_to_device(); !s) return s.err();
    if (p.regcmd_written_) {
      if (status s = p.regcmd_.sync_to_device(); !s) return s.err();
      p.regcmd_written_ = false;
    }
    const buffer* output = p.bound_to_[static_cast<std::size_t>(operand_role::output)];
    const bool fresh = output && !warm_.count(output->id());
    for (int pass = fresh ? 2 : 1; pass > 0; --pass) {
      status s = submit(p, options, report);
      ++report.submits;
      // rocket, entering int8: a timed-out job has had its core reset (and so primed).
      for (unsigned again = 0; rocket && entering_int8 && !s && s.err().id() == rules::submit_timeout.id && again < 3; ++again) {
        report.reset = true;
        s = submit(p, options, report);
        ++report.submits;
      }
      if (!s) {
        if (s.err().id() == rules::submit_timeout.id) needs_reset_ = !rocket;
        return s.err();
      }
    }
    if (output) {
      warm_.insert(output->id());
      if (status s = output->sync_from_device(options.timeout_ms); !s) return s.err();
    }
    report.wall_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    return report;
  }

 private:
  // Entry i of a regcmd buffer, little-endian whatever the host.
  static void store(std::uint8_t* regcmd, std::size_t i, std::uint64_t bits) {
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(regcmd + i * 8, &bits, 8);
    } else {
      for (std::size_t b = 0; b < 8; ++b) regcmd[i * 8 + b] = static_cast<std::uint8_t>(bits >> (8 * b));
    }
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

  // rocket: what the jobs list as read and written, rebuilt when other buffers are bound.
  static void relist(prepared_program& p, const std::array<const buffer*, operand_role_count>& given) {
    std::array<std::uint64_t, operand_role_count> ids{};
    for (std::size_t r = 0; r < operand_role_count; ++r) ids[r] = given[r] ? given[r]->id() : 0;
    if (ids == p.listed_ids_) return;
    p.listed_ids_ = ids;
    std::array<std::uint32_t, operand_role_count> reads{}, writes{};
    std::size_t read_count = 0, write_count = 0;
    for (std::size_t r = 0; r < operand_role_count; ++r)
      if (p.uses_[r].used && given[r]) {
        const auto role = static_cast<operand_role>(r);
        if (role == operand_role::output || role == operand_role::intermediate) {
          writes[write_count++] = given[r]->handle();
        } else {
          reads[read_count++] = given[r]->handle();
        }
      }
    p.rocket_.list_buffers({reads.data(), read_count}, {writes.data(), write_count});
  }

  status submit(const prepared_program& p, const run_options& options, run_report& report) {
    if (device_.kind() == driver::rocket) return p.rocket_.submit(device_, options, report);
    return p.rknpu_.submit(device_, options, next_core_, report);
  }

  const device& device_;
  bool needs_reset_ = false;
  bool in_int8_ = false;
  std::set<std::uint64_t> warm_;
  unsigned next_core_ = 0;
};

}  // namespace regcmd::runtime
