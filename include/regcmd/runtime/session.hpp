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
// The stateful rules (regcmd-isa-reference "State gotchas"), applied here, not by callers:
//   - RKNPU_ACT_RESET when entering int8 mode, and after any timed-out submit before the next;
//   - a warm-up submit (result discarded) whenever an output buffer is fresh: the first
//     submit to a freshly allocated output buffer returns stale data;
//   - one stable feature buffer per prepared program: rotating feature addresses across
//     submits corrupts results, so binding a different feature buffer is refused.
// Multi-core (reference, "Multi-core submit"): one core (core_mask 1 << i), round-robin
// single-core submits, or all three (core_mask 0x7, tasks split in three chains); every
// subcore_task is populated in every case.

#include <poll.h>

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
#include <regcmd/core/program.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/rules/program_rules.hpp>
#include <regcmd/runtime/buffer.hpp>
#include <regcmd/runtime/device.hpp>
#include <regcmd/runtime/errors.hpp>
#include <regcmd/runtime/rknpu_uapi.hpp>

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

enum class cores : std::uint8_t { one, round_robin, all };

struct prepare_options {
  cores use = cores::one;
};

struct run_options {
  cores use = cores::one;     // one or round_robin (cores::all is chosen at prepare)
  unsigned core = 0;          // with cores::one: which core (0..2)
  std::uint32_t timeout_ms = 6000;
  bool blocking = true;       // false: RKNPU_JOB_NONBLOCK + a fence, waited on with poll()
};

struct run_report {
  unsigned submits = 0;       // including a warm-up
  bool reset = false;         // a reset was issued first
  std::uint32_t core_mask = 0;
  std::int64_t hw_ns = 0;     // the kernel's hw_elapse_time of the last submit
  double wall_us = 0;         // the whole run
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
  std::vector<std::array<std::uint32_t, 2>> chains_;  // [first task, task count] per core chain
  bool pingpong_ = true;
  bool int8_ = false;
  bool bound_ = false;
  bool regcmd_written_ = false;
  buffer regcmd_;
  buffer descriptors_;
  std::optional<std::uint64_t> feature_id_;
  std::array<const buffer*, operand_role_count> bound_to_{};
};

class session {
 public:
  explicit session(const device& dev) : device_{dev} {}

  // Validates every program rule and allocates the regcmd and task buffers. With
  // cores::all the tasks are split into up to three chains (their tails unlinked).
  result<prepared_program> prepare(const program_view& program, const prepare_options& options = {}) {
    if (status s = validate(program); !s) return s.err();
    prepared_program p;
    p.entries_.assign(program.entries.begin(), program.entries.end());
    p.slots_.assign(program.slots.begin(), program.slots.end());
    p.tasks_.assign(program.tasks.begin(), program.tasks.end());
    p.pingpong_ = program.pingpong;
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
    auto descriptors = buffer::create(device_, std::max<std::size_t>(1, n) * sizeof(rknpu::task), buffer_use::tasks);
    if (!descriptors) return descriptors.err();
    p.descriptors_ = std::move(descriptors.value());
    for (std::uint32_t i = 0; i < n; ++i) {
      const task& t = p.tasks_[i];
      const rknpu::task d{0, 0, t.enable_mask, t.int_mask, rknpu::int_clear_all, 0, t.regcfg_amount(), 0,
                          p.regcmd_.iova() + std::uint64_t{t.first} * 8};
      std::memcpy(p.descriptors_.bytes().data() + i * sizeof d, &d, sizeof d);
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
    p.bound_ = true;
    p.regcmd_written_ = true;  // run makes it visible to the device
    return {};
  }

  // Submits a bound program, applying the stateful rules first.
  result<run_report> run(prepared_program& p, const run_options& options = {}) {
    if (!p.bound_) return make_error(rules::operand_missing, "run").with_note("the program was not bound");
    const auto start = std::chrono::steady_clock::now();
    run_report report;
    if (needs_reset_ || (p.int8_ && !in_int8_)) {
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
      if (status s = submit(p, options, report); !s) return s.err();
      ++report.submits;
    }
    if (output) {
      warm_.insert(output->id());
      if (status s = output->sync_from_device(); !s) return s.err();
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
    const std::uint32_t tail = t.first + t.count - 4;
    p.entries_[tail] = p.entries_[tail].with_value(0);
    p.entries_[tail + 1] = p.entries_[tail + 1].with_value(0);
    std::erase_if(p.slots_, [&](const slot& s) { return s.entry == tail; });
  }

  status submit(prepared_program& p, const run_options& options, run_report& report) {
    rknpu::submit args{};
    args.flags = rknpu::job_pc | (p.pingpong_ ? rknpu::job_pingpong : 0u) |
                 (options.blocking ? rknpu::job_block : rknpu::job_nonblock | rknpu::job_fence_out);
    args.timeout = options.timeout_ms;
    args.task_number = static_cast<std::uint32_t>(p.tasks_.size());
    args.task_obj_addr = p.descriptors_.cookie();
    args.fence_fd = -1;
    const auto chains = static_cast<std::uint32_t>(p.chains_.size());
    if (chains > 1) {
      // cores::all: core i runs subcore_task[i + 2] with three cores, [i] with two.
      args.core_mask = chains == 3 ? 0x7u : 0x3u;
      for (std::uint32_t i = 0; i < 5; ++i) {
        const auto& c = p.chains_[chains == 3 ? (i < 2 ? i : i - 2) : std::min(i, chains - 1)];
        args.subcore_task[i] = {c[0], c[1]};
      }
    } else {
      const unsigned core = options.use == cores::round_robin ? next_core_++ % 3 : options.core % 3;
      args.core_mask = 1u << core;
      for (auto& st : args.subcore_task) st = {0, args.task_number};  // whichever entry the kernel reads
    }
    report.core_mask = args.core_mask;
    const status s = device_.ioctl(rknpu::ioctl_submit, &args, "RKNPU_SUBMIT");
    if (!s) {
      if (s.err().os_errno == ETIMEDOUT) needs_reset_ = true;
      return s;
    }
    if (!options.blocking) {
      pollfd fence{args.fence_fd, POLLIN, 0};
      const int ready = ::poll(&fence, 1, static_cast<int>(options.timeout_ms));
      ::close(args.fence_fd);
      if (ready <= 0) {
        needs_reset_ = true;
        return make_error(rules::submit_timeout, "run").with_note("fence").with_errno(ready == 0 ? ETIMEDOUT : errno);
      }
    }
    report.hw_ns = args.hw_elapse_time;
    return {};
  }

  const device& device_;
  bool needs_reset_ = false;
  bool in_int8_ = false;
  std::set<std::uint64_t> warm_;
  unsigned next_core_ = 0;
};

}  // namespace regcmd::runtime
