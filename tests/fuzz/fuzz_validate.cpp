// libFuzzer target: the program rules against the functional model (issue 13, "a fuzz
// target for the rules"). A program that `validate` accepts must not make the NPU hang,
// wedge, time out or DMA outside its buffers.
//
// The input: a door's program of a small shape (a matmul, a K-split plan, an SDP
// element-wise op, a fused matmul -> SDP chain), then up to 32 edits such as a hand editor
// makes: entries rewritten (a value, a bit, another register, a copy, a zero qword),
// inserted or removed (what follows moves along); a task's first, count, enable or
// interrupt mask; a slot's entry, role, offset or extent, slots dropped and added; tasks
// dropped, copied and swapped with the chain links redone; ping-pong and delta_tasks.
//   byte 0      the door (matmul, plan, ew, fused); bytes 1-4: its shape
//   then        per edit: one byte choosing it, then its operands (big-endian)
// Whatever `validate` accepts goes through what prepare and bind check without a device
// (each driver's refusals, the regcmd role's extent, 32-bit and aligned addresses), then
// runs on the model as each driver runs it:
//   rknpu             one PC chain of every task (RKNPU_SUBMIT on one core)
//   rknpu cores::all  prepare's split into up to three chains, unlinked where prepare
//                     unlinks them, one model core each, interleaved as the emulated
//                     device runs them (not for programs that hand data on)
//   rocket            every task kicked alone (TASK_NUMBER 1, ping-pong on), one core
// Every operand buffer is exactly as large as its slots claim (offset + extent), the
// regcmd buffer whole pages as the kernels allocate it. Each core starts with zeroed
// registers and the board's quirks off (cold start and int8 entry are the runtime's
// stateful rules, tested elsewhere).
//
// Findings, each a __builtin_trap after one paragraph on stderr:
//   - a stopping model fault: hang, wedge, timeout, wild-access;
//   - irq-mismatch: the last task of a chain ends on the DPU but its interrupt mask is not
//     the DPU pair (the job's mask for the kernel; the emulated device times it out);
//   - write-to-read-only: a buffer the NPU only reads (feature, weight, EW operand, the
//     program's own regcmd buffer, ...) changed in a run;
//   - exception: the model threw (a crash inside it is ASan's finding: it is built
//     instrumented, tests/fuzz/CMakeLists.txt).
// The message names the likely gap of the rules where it can: a DMA running past the end
// of a buffer (a slot's extent claims less than the registers make the DMA touch: issue 13
// item 4), registers of the op no task of its register group wrote, slots of a role their
// register cannot address, a first task off a 16-byte boundary.
// REGCMD_FUZZ_VALIDATE_TRACE=1 tells what an input became: the edits, the rule that refused
// it, or every fault the model reported in each mode. REGCMD_FUZZ_VALIDATE_IGNORE=a,b,...
// makes findings whose message contains one of the strings non-fatal, to look past a
// known gap while it is being fixed; unset, every finding traps.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/model/npu.hpp>
#include <regcmd/task/tail.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/registers/all.hpp>
#include <regcmd/rules/program_rules.hpp>
#include <regcmd/runtime/rknpu_jobs.hpp>
#include <regcmd/runtime/rocket_jobs.hpp>
#include "fuzz_input.hpp"

namespace {
using namespace regcmd;
using fuzzing::reader;

// A program being edited.
struct editable {
  std::vector<entry> entries;
  std::vector<slot> slots;
  std::vector<task> tasks;
  bool pingpong = true, delta_tasks = false;
  std::string edits;  // what was done to the door's program, for the report

  program_view view() const { return {entries, slots, tasks, pingpong, delta_tasks}; }
  void note(const std::string& s) { edits += s + "; "; }
};

void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_validate: %s\n", what);
  __builtin_trap();
}

template <class Built>
std::optional<editable> take_program(const Built& b, std::string_view kind) {
  if (!b.ok()) return std::nullopt;
  const heap_code& c = b.value().code;
  return editable{
      c.entries, c.slots, c.tasks, c.options.pingpong, c.options.delta_tasks, std::string(kind) + " program; "};
}

// A door's program of a small shape the input chooses; a known-good one of the same kind
// when the door refuses the shape. Selectors from 0xf0 pick an activation or a pooling
// (the inputs kept in the corpus mostly start lower, and keep their meaning).
editable door_program(reader& in) {
  const std::uint32_t selector = in.take(1);
  const std::uint32_t kind = selector >= 0xf0 ? 4 + selector % 2 : selector % 4;
  const std::uint32_t a = in.take(1), b = in.take(1), c = in.take(1), d = in.take(1);
  constexpr std::array<std::array<precision, 2>, 4> pairs{{{precision::fp16, precision::fp32},
                                                           {precision::fp16, precision::fp16},
                                                           {precision::int8, precision::int32},
                                                           {precision::int4, precision::int16}}};
  matmul_spec mm;
  mm.dtype = pairs[d & 3][0];
  mm.out_dtype = pairs[d & 3][1];
  mm.M = 1 + a % 24;
  mm.K = 1 + b % 160;
  mm.N = 1 + c % 40;
  mm.layout = d & 4 ? operand_layout::surface : operand_layout::row_major;
  constexpr std::array<precision, 3> ew_types{precision::fp16, precision::int8, precision::int16};
  // mul, or for an odd a prelu (the same multiply on the negatives only)
  const ew_spec ew{.op = (d & 3) == 1 && a % 2 == 1 ? ew_op::prelu : static_cast<ew_op>(d & 3),
                   .dtype = ew_types[(d >> 2) % 3],
                   .M = 1 + a % 32,
                   .N = 1 + c % 64,
                   .operand = static_cast<ew_operand>(b % 3),
                   .layout = d & 0x20 ? operand_layout::row_major : operand_layout::surface,
                   .immediate = 1.5f};
  std::optional<editable> p;
  switch (kind) {
    case 0:
      p = take_program(build(mm), "matmul");
      if (!p) p = take_program(build(matmul_spec{.M = 4, .K = 32, .N = 16}), "matmul");
      break;
    case 1: {
      mm.K = 1 + b * 2;
      const plan_options o{.k_slice = 32 * (1 + (d >> 3) % 4), .delta_tasks = (d & 0x80) != 0};
      p = take_program(build(plan_request{mm, o}), "plan");
      if (!p)
        p = take_program(build(plan_request{{.M = 4, .K = 128, .N = 16}, {.k_slice = 32, .delta_tasks = (d & 0x80) != 0}}),
                         "plan");
      break;
    }
    case 2:
      p = take_program(build(ew), "ew");
      if (!p) p = take_program(build(ew_spec{.M = 4, .N = 16}), "ew");
      break;
    case 4: {
      // the ReLU family (any dtype) or a table (fp16) over an SDP tensor
      const auto fn = static_cast<activation>(b % (static_cast<std::uint32_t>(activation::reciprocal_band) + 1));
      const act_spec act{.fn = fn, .dtype = ew.dtype, .M = ew.M, .N = ew.N, .layout = ew.layout, .lo = -2, .hi = 3};
      p = take_program(build(act), "act");
      if (!p) p = take_program(build(act_spec{.fn = activation::sigmoid, .M = 4, .N = 16}), "act");
      break;
    }
    case 5: {
      const pool_spec pool{.op = static_cast<pool_op>(d & 3), .dtype = d & 4 ? precision::int8 : precision::fp16,
                           .H = 1 + a % 20, .W = 1 + c % 20, .C = 1 + b % 40, .kernel_h = 1 + (d >> 3) % 3,
                           .kernel_w = 1 + (d >> 5) % 3, .padding = d & 0x80 ? conv_padding::same : conv_padding::valid};
      p = take_program(build(pool), "pool");
      if (!p) p = take_program(build(pool_spec{.H = 4, .W = 4, .C = 8}), "pool");
      break;
    }
    default: {
      fused_spec f = per_channel_scaled_matmul(mm.M, mm.K, mm.N);
      f.op = ew.op;
      f.operand = ew.operand;
      f.immediate = ew.immediate;
      p = take_program(build(f), "fused");
      if (!p) p = take_program(build(per_channel_scaled_matmul(4, 32, 16)), "fused");
      break;
    }
  }
  require(p.has_value(), "a door refused its known-good spec");
  return *std::move(p);
}

constexpr entry pc_entry(std::uint16_t offset, std::uint32_t value) { return entry::make(block_id::pc, value, offset); }

void put_slot(editable& p, const slot& s) {
  const auto at = std::lower_bound(p.slots.begin(), p.slots.end(), s.entry,
                                   [](const slot& x, std::uint32_t e) { return x.entry < e; });
  p.slots.insert(at, s);
}

bool in_bounds(const editable& p, const task& k) {
  return k.count >= task_tail_entries && std::uint64_t{k.first} + k.count <= p.entries.size();
}

// Every tail links the task after it, as the writer links them: a regcmd slot with the next
// task's offset and length, and its fetch amount; the last tail ends the chain.
void relink(editable& p) {
  for (std::size_t t = 0; t < p.tasks.size(); ++t) {
    const task& k = p.tasks[t];
    if (!in_bounds(p, k)) continue;
    const std::uint32_t at = tail_index(k, tail_entry::next_address);
    std::erase_if(p.slots, [&](const slot& s) { return s.entry == at; });
    p.entries[at] = pc_entry(reg::PC_BASE_ADDRESS::offset, 0);
    std::uint32_t amount = 0;
    if (t + 1 < p.tasks.size()) {
      const task& next = p.tasks[t + 1];
      put_slot(p, {at, operand_role::regcmd, next.first * 8, next.count * 8});
      amount = pc_fetch_amount(next.count);
    }
    p.entries[at + 1] = pc_entry(reg::PC_REGISTER_AMOUNTS::offset, amount);
  }
}

// A copy of task t's entries and body slots after the last entry, as one more task.
void duplicate(editable& p, std::size_t t) {
  const task k = p.tasks[t];
  if (!in_bounds(p, k)) return;
  if (p.entries.size() % 2) p.entries.push_back(entry{});
  const auto first = static_cast<std::uint32_t>(p.entries.size());
  for (std::uint32_t i = 0; i < k.count; ++i) p.entries.push_back(p.entries[k.first + i]);
  std::vector<slot> copies;
  for (const slot& s : p.slots)
    if (s.entry >= k.first && s.entry < body_end(k))
      copies.push_back({s.entry - k.first + first, s.role, s.offset, s.extent});
  for (const slot& s : copies) put_slot(p, s);
  p.tasks.push_back({first, k.count, k.enable_mask, k.int_mask});
}

// Entry e inserted at i, everything from i on one entry further; a task around i grows.
void insert_entry(editable& p, std::size_t i, entry e) {
  p.entries.insert(p.entries.begin() + static_cast<std::ptrdiff_t>(i), e);
  for (task& k : p.tasks) {
    if (k.first >= i) ++k.first;
    else if (std::uint64_t{k.first} + k.count > i) ++k.count;
  }
  for (slot& s : p.slots)
    if (s.entry >= i) ++s.entry;
}

// Entry i removed, with its slot; everything after it one entry nearer; a task around it shrinks.
void erase_entry(editable& p, std::size_t i) {
  p.entries.erase(p.entries.begin() + static_cast<std::ptrdiff_t>(i));
  for (task& k : p.tasks) {
    if (k.first > i) --k.first;
    else if (std::uint64_t{k.first} + k.count > i) --k.count;
  }
  std::erase_if(p.slots, [&](const slot& s) { return s.entry == i; });
  for (slot& s : p.slots)
    if (s.entry > i) --s.entry;
}

std::uint32_t& task_field(task& k, std::uint32_t f) {
  switch (f % 4) {
    case 0: return k.first;
    case 1: return k.count;
    case 2: return k.enable_mask;
    default: return k.int_mask;
  }
}

constexpr std::array<const char*, 4> task_fields{"first", "count", "enable_mask", "int_mask"};
constexpr std::array<const char*, 4> slot_fields{"entry", "role", "offset", "extent"};

void set_slot_field(slot& s, std::uint32_t f, std::uint64_t v) {
  switch (f % 4) {
    case 0: s.entry = static_cast<std::uint32_t>(v); break;
    case 1: s.role = static_cast<operand_role>(v % operand_role_count); break;
    case 2: s.offset = static_cast<std::uint32_t>(v); break;
    default: s.extent = static_cast<std::uint32_t>(v); break;
  }
}
std::uint32_t slot_field(const slot& s, std::uint32_t f) {
  switch (f % 4) {
    case 0: return s.entry;
    case 1: return static_cast<std::uint32_t>(s.role);
    case 2: return s.offset;
    default: return s.extent;
  }
}

std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// One edit of the program, chosen by the input.
void edit(editable& p, reader& in) {
  const std::uint32_t op = in.take(1) % 22;
  const std::size_t entries = p.entries.size(), slots = p.slots.size(), tasks = p.tasks.size();
  switch (op) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6: {
      if (!entries) return;
      const std::size_t i = in.pick(entries);
      entry& e = p.entries[i];
      std::string what;
      switch (op) {
        case 0: e = e.with_value(in.take(4)); break;
        case 1: e = e.with_value(e.value() ^ 1u << (in.take(1) % 32)); break;
        case 2: e = e.with_value(e.value() + static_cast<std::uint32_t>(in.small())); break;
        case 3: {
          const register_info& r = register_table[in.pick(register_table.size())];
          e = entry::make(r.block, e.value(), r.offset);
          what = "becomes " + std::string(r.name);
          break;
        }
        case 4: {
          const std::size_t j = in.pick(entries);
          e = p.entries[j];
          what = "= entry " + std::to_string(j);
          break;
        }
        case 5:
          e = entry{};
          what = "zeroed";
          break;
        default: e = e.with_value(in.take(2)); break;
      }
      p.note("entry " + std::to_string(i) + " " + (what.empty() ? "value=" + hex(e.value()) : what));
      return;
    }
    case 7:
    case 8: {
      if (!tasks) return;
      const std::size_t t = in.pick(tasks);
      const std::uint32_t f = in.take(1) % 4;
      std::uint32_t& v = task_field(p.tasks[t], f);
      v = op == 7 ? in.take(4) : v + static_cast<std::uint32_t>(in.small());
      p.note("task " + std::to_string(t) + " " + task_fields[f] + "=" + hex(v));
      return;
    }
    case 9: {  // a new op-enable mask, in the task and its tail alike
      if (!tasks) return;
      const std::size_t t = in.pick(tasks);
      task& k = p.tasks[t];
      k.enable_mask = in.take(1) & 0x7d;
      if (in_bounds(p, k))
        p.entries[tail_index(k, tail_entry::op_enable)] =
            p.entries[tail_index(k, tail_entry::op_enable)].with_value(k.enable_mask);
      p.note("task " + std::to_string(t) + " op-enable " + hex(k.enable_mask));
      return;
    }
    case 10: {
      if (!tasks) return;
      const std::size_t t = in.pick(tasks);
      constexpr std::array<std::uint32_t, 4> masks{dpu_done_interrupts, ppu_done_interrupts, 0x3, 0xc};
      const std::uint32_t c = in.take(1);
      p.tasks[t].int_mask = c < 200 ? masks[c % 4] : in.take(2) & 0x3fff;
      p.note("task " + std::to_string(t) + " int_mask=" + hex(p.tasks[t].int_mask));
      return;
    }
    case 11:
    case 12:
    case 13: {
      if (!slots) return;
      const std::size_t s = in.pick(slots);
      const std::uint32_t f = in.take(1) % 4;
      std::uint64_t v = slot_field(p.slots[s], f);
      if (op == 11) v = in.take(4);
      if (op == 12)
        v += static_cast<std::uint64_t>(static_cast<std::int64_t>(static_cast<std::int16_t>(in.take(2))) * 16);
      if (op == 13) v = v * in.take(1) / 128;  // 0 .. about twice
      set_slot_field(p.slots[s], f, v);
      p.note("slot " + std::to_string(s) + " " + slot_fields[f] + "=" + hex(slot_field(p.slots[s], f)));
      return;
    }
    case 14:
      if (!slots) return;
      {
        const std::size_t s = in.pick(slots);
        p.note("slot " + std::to_string(s) + " (entry " + std::to_string(p.slots[s].entry) + ") dropped");
        p.slots.erase(p.slots.begin() + static_cast<std::ptrdiff_t>(s));
      }
      return;
    case 15: {
      if (!entries) return;
      slot s{static_cast<std::uint32_t>(in.pick(entries)), static_cast<operand_role>(in.take(1) % operand_role_count),
             in.take(2) * 16, in.take(2) * 16};
      put_slot(p, s);
      p.note("slot added: entry " + std::to_string(s.entry) + " " + std::string(name_of(s.role)) + " offset " +
             hex(s.offset) + " extent " + hex(s.extent));
      return;
    }
    case 16:
      if (tasks < 2) return;
      {
        const std::size_t t = in.pick(tasks);
        p.tasks.erase(p.tasks.begin() + static_cast<std::ptrdiff_t>(t));
        relink(p);
        p.note("task " + std::to_string(t) + " dropped, relinked");
      }
      return;
    case 17:
      if (!tasks || tasks >= 64) return;
      {
        const std::size_t t = in.pick(tasks);
        duplicate(p, t);
        relink(p);
        p.note("task " + std::to_string(t) + " copied to the end, relinked");
      }
      return;
    case 18:
      if (tasks < 2) return;
      {
        const std::size_t t = in.pick(tasks), u = in.pick(tasks);
        std::swap(p.tasks[t], p.tasks[u]);
        relink(p);
        p.note("tasks " + std::to_string(t) + " and " + std::to_string(u) + " swapped, relinked");
      }
      return;
    case 20: {  // an entry inserted (a copy of another, or a zero qword), the links redone
      const std::size_t i = in.pick(entries + 1), j = in.pick(entries);
      const bool zero = in.take(1) & 1;
      insert_entry(p, i, zero || !entries ? entry{} : p.entries[j]);
      relink(p);
      p.note("entry inserted at " + std::to_string(i) + (zero ? ": zero" : ": a copy of entry " + std::to_string(j)) +
             ", relinked");
      return;
    }
    case 21: {
      if (!entries) return;
      const std::size_t i = in.pick(entries);
      erase_entry(p, i);
      relink(p);
      p.note("entry " + std::to_string(i) + " removed, relinked");
      return;
    }
    default:
      if (in.take(1) & 1) p.pingpong = !p.pingpong, p.note(p.pingpong ? "ping-pong on" : "ping-pong off");
      else p.delta_tasks = !p.delta_tasks, p.note(p.delta_tasks ? "delta_tasks on" : "delta_tasks off");
      return;
  }
}

constexpr std::uint64_t page = 4096;
constexpr std::uint64_t buffer_budget = 256u << 10;  // bytes of operand buffers per run (keeps a run fast)

struct problem {
  std::string mode;
  std::string kind;
  std::uint32_t task = 0;  // in the program's task list
  std::string what;
  std::uint64_t address = 0, bytes = 0;  // of a wild access
  // The chain the task ran in: its first task, and whether the register groups alternated.
  std::uint32_t chain_first = 0;
  bool alternating = true;
};

// The last task of a chain ends on the DPU (not the PPU): its job is done when the DPU pair
// of interrupts is raised. The kernel takes the last task's int_mask as the job's and the
// emulated device accepts the DPU pair alone: another mask times out (a block that never
// raises it) or ends the job before the DPU has written (one that finishes earlier).
std::optional<problem> irq_mismatch(const std::string& mode, const task& last, std::uint32_t index) {
  const auto blocks = unpack<reg::GLOBAL_OPERATION_ENABLE>(last.enable_mask);
  if (!blocks.DPU_OP_EN.value() || blocks.PPU_OP_EN.value() || last.int_mask == dpu_done_interrupts)
    return std::nullopt;
  return problem{mode, "irq-mismatch", index,
                 "the chain's last task ends on the DPU but its int_mask " + hex(last.int_mask) +
                     " is not the DPU pair: the job times out or ends before the DPU has written"};
}

// The board: a buffer per used role at its own IOVA, as large as the slots claim.
struct board {
  model::iova_space memory;
  std::array<std::vector<std::uint8_t>, operand_role_count> buffers;
  operand_addresses base{};

  void place(operand_role role, std::uint64_t bytes) {
    const auto r = static_cast<std::size_t>(role);
    buffers[r].assign(bytes, 0xa5);
    base[r] = 0x1000'0000u * (r + 1);
    memory.add(base[r], buffers[r]);
    memory.mark_warm(base[r]);
  }
  std::uint64_t regcmd() const { return base[static_cast<std::size_t>(operand_role::regcmd)]; }
};

bool tracing() {
  static const bool on = std::getenv("REGCMD_FUZZ_VALIDATE_TRACE") != nullptr;
  return on;
}

// The first stopping fault of a chain that started at task `chain_first`.
std::optional<problem> first_stop(const std::string& mode, const model::run_result& r, std::uint32_t chain_first,
                                  bool alternating) {
  if (tracing()) {
    std::fprintf(stderr, "  %s: %u tasks completed\n", mode.c_str(), r.tasks_completed);
    for (const model::fault& f : r.faults)
      std::fprintf(stderr, "    %s in task %u: %s\n", model::name_of(f.kind), f.task, f.what.c_str());
  }
  for (const model::fault& f : r.faults)
    if (model::stops(f.kind)) {
      problem found{mode, model::name_of(f.kind), chain_first + f.task, f.what, f.address, f.bytes};
      found.chain_first = chain_first;
      found.alternating = alternating;
      return found;
    }
  return std::nullopt;
}

// The program's buffers on a board, and the program with its addresses bound (nullopt where
// bind refuses them: iova-32bit, alignment). The regcmd buffer is whole pages, as the
// kernels allocate it (a task of an odd entry count fetches 8 bytes past its end).
std::optional<std::vector<entry>> bind_on(board& b, const editable& p, const role_uses& uses) {
  const auto regcmd = static_cast<std::size_t>(operand_role::regcmd);
  for (std::size_t r = 0; r < operand_role_count; ++r)
    if (r != regcmd && uses[r].used) b.place(static_cast<operand_role>(r), uses[r].end);
  b.place(operand_role::regcmd, (p.entries.size() * 8 + page - 1) / page * page);
  std::vector<entry> code(p.entries);
  if (!patch_slots(code, p.slots, b.base)) return std::nullopt;
  return code;
}

void place_code(board& b, std::span<const entry> code) {
  std::uint8_t* out = b.buffers[static_cast<std::size_t>(operand_role::regcmd)].data();
  for (std::size_t i = 0; i < code.size(); ++i) {
    const auto bytes = code[i].to_bytes();
    std::copy(bytes.begin(), bytes.end(), out + i * 8);
  }
}

// A fresh core (register groups zero) with the board's state quirks off: cold start and
// int8 entry are the runtime's stateful rules, tested elsewhere.
model::npu fresh_core() {
  model::npu n;
  n.behaviour = {false, false};
  n.threads = 1;
  n.reset();
  return n;
}

// The buffers the NPU only reads (every role but output and intermediate, the program's
// own regcmd buffer included), as they were before a run.
struct read_only {
  std::array<std::vector<std::uint8_t>, operand_role_count> bytes;
  explicit read_only(const board& b) {
    for (std::size_t r = 0; r < operand_role_count; ++r)
      if (!npu_writes(static_cast<operand_role>(r))) bytes[r] = b.buffers[r];
  }
  // A buffer the run changed: a slot of a read-only role on an address the NPU writes.
  std::optional<problem> changed(const board& b, const std::string& mode) const {
    for (std::size_t r = 0; r < operand_role_count; ++r)
      if (bytes[r] != b.buffers[r] && !npu_writes(static_cast<operand_role>(r)))
        return problem{mode, "write-to-read-only", 0,
                       "the NPU wrote into the " + std::string(name_of(static_cast<operand_role>(r))) +
                           " buffer, which it only reads: a slot of that role on an address a DMA writes"};
    return std::nullopt;
  }
};

// Runs the bound program as each driver would; the first finding, if any.
std::optional<problem> run_modes(const program_view& v, board& b, std::span<const entry> code, bool rocket) {
  auto at = [&](const task& k) { return b.regcmd() + std::uint64_t{k.first} * 8; };
  const auto n = static_cast<std::uint32_t>(v.tasks.size());
  std::string mode;
  try {
    // rknpu, one core: one chain of every task.
    mode = "rknpu";
    place_code(b, code);
    {
      const read_only before{b};
      model::npu core = fresh_core();
      const model::run_result r = core.run(b.memory, at(v.tasks[0]), pc_fetch_amount(v.tasks[0].count), n, v.pingpong);
      if (auto f = before.changed(b, mode)) return f;  // first: it may be why the run stopped
      if (auto f = first_stop(mode, r, 0, v.pingpong)) return f;
      if (auto f = irq_mismatch(mode, v.tasks[n - 1], n - 1)) return f;
    }
    // rknpu, cores::all: prepare's split (refused for programs that hand data on: delta
    // tasks, an intermediate), the tails before each chain unlinked; the chains interleave
    // a task at a time, the highest core first.
    if (n > 1 && !v.delta_tasks && !v.hands_on_data()) {
      mode = "rknpu cores::all";
      std::vector<entry> split(code.begin(), code.end());
      std::vector<std::array<std::uint32_t, 2>> chains;
      const std::uint32_t count = std::min<std::uint32_t>(soc::rk3588::cores, n);
      for (std::uint32_t c = 0, first = 0; c < count; ++c) {
        const std::uint32_t length = n / count + (c < n % count ? 1 : 0);
        chains.push_back({first, length});
        first += length;
        if (c + 1 < count)
          for (const tail_entry e : {tail_entry::next_address, tail_entry::next_amount})
            split[tail_index(v.tasks[first - 1], e)] = split[tail_index(v.tasks[first - 1], e)].with_value(0);
      }
      place_code(b, split);
      const read_only before{b};
      std::vector<model::npu> cores;
      std::vector<model::chain> runs;
      for (const auto& [first, length] : chains) {
        cores.push_back(fresh_core());
        runs.push_back(
            cores.back().start(at(v.tasks[first]), pc_fetch_amount(v.tasks[first].count), length, v.pingpong));
      }
      for (bool more = true; more;) {
        more = false;
        for (std::size_t i = runs.size(); i-- > 0;) more = cores[i].step(b.memory, runs[i]) || more;
      }
      b.memory.end_job();
      if (auto f = before.changed(b, mode)) return f;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const std::string chain = mode + ", chain " + std::to_string(i);
        if (auto f = first_stop(chain, runs[i].result, chains[i][0], v.pingpong)) return f;
        const std::uint32_t last = chains[i][0] + chains[i][1] - 1;
        if (auto f = irq_mismatch(chain, v.tasks[last], last)) return f;
      }
    }
    // rocket: a kick per task (TASK_NUMBER 1: register group 0 every time), the links not
    // followed.
    if (rocket) {
      mode = "rocket";
      place_code(b, code);
      const read_only before{b};
      model::npu core = fresh_core();
      for (std::uint32_t t = 0; t < n; ++t) {
        const model::run_result r = core.run(b.memory, at(v.tasks[t]), pc_fetch_amount(v.tasks[t].count), 1, true);
        if (auto f = before.changed(b, mode)) return f;
        if (auto f = first_stop(mode, r, t, false)) {
          f->chain_first = 0;  // the registers persist from kick to kick
          return f;
        }
      }
    }
  } catch (const std::exception& e) {
    return problem{mode, "exception", 0, e.what()};
  } catch (...) {
    return problem{mode, "exception", 0, "(not a std::exception)"};
  }
  return std::nullopt;
}

// A wild access, placed: past the end of one of the buffers (what the slots of its role
// claim is less than the DMA reaches), or outside all of them.
void place_wild(problem& f, const board& b) {
  for (std::size_t r = 0; r < operand_role_count; ++r) {
    const std::uint64_t size = b.buffers[r].size();
    if (b.base[r] == 0 || f.address < b.base[r] || f.address - b.base[r] > size) continue;
    const std::string range = hex(f.bytes) + " bytes from offset " + hex(f.address - b.base[r]);
    if (r == static_cast<std::size_t>(operand_role::regcmd)) {
      f.what += " (" + range + " of the program's own buffer, " + hex(size) + " bytes)";
      return;
    }
    f.what += " (" + range + " of the " + std::string(name_of(static_cast<operand_role>(r))) + " buffer, " + hex(size) +
              " bytes as its slots claim: a slot's extent claims less than its task's DMA reaches, issue 13 item 4)";
    return;
  }
  f.what += " (" + hex(f.bytes) + " bytes from " + hex(f.address) + ", in no buffer: an address no slot made)";
}

std::optional<problem> run_on_model(const editable& p, const role_uses& uses, bool rocket) {
  board b;
  const std::optional<std::vector<entry>> code = bind_on(b, p, uses);
  if (!code) return std::nullopt;  // bind refuses it
  std::optional<problem> f = run_modes(p.view(), b, *code, rocket);
  if (f && f->kind == model::name_of(model::fault_kind::wild_access)) place_wild(*f, b);
  return f;
}

// The registers (target << 16 | offset) the body of task t writes.
std::vector<std::uint32_t> written_by(const editable& p, const task& k) {
  std::vector<std::uint32_t> out;
  if (!in_bounds(p, k)) return out;
  for (std::uint32_t i = k.first; i < body_end(k); ++i)
    if (kind_of(p.entries[i]) == entry_kind::register_write)
      out.push_back(std::uint32_t{p.entries[i].target()} << 16 | p.entries[i].offset());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Slots whose role cannot be what their register addresses: the NPU writes through
// DPU_DST_BASE_ADDR and PPU_DST_BASE_ADDR (output or intermediate only), the PC fetches
// through PC_BASE_ADDRESS (the program's own or the next program's regcmd buffer), and
// nothing else reaches a regcmd buffer.
std::string role_mismatches(const editable& p) {
  std::string out;
  for (const slot& s : p.slots) {
    const address_register* r = address_register_of(p.entries[s.entry]);
    if (!r) continue;
    const bool writes = r->name == reg::DPU_DST_BASE_ADDR::name || r->name == reg::PPU_DST_BASE_ADDR::name;
    const bool fetches = r->name == reg::PC_BASE_ADDRESS::name;
    const bool code = s.role == operand_role::regcmd || s.role == operand_role::next_program;
    if ((writes && !npu_writes(s.role)) || fetches != code)
      out += (out.empty() ? "" : ", ") + std::string(r->name) + " (entry " + std::to_string(s.entry) + ") as " +
             std::string(name_of(s.role));
  }
  return out;
}

// Programs whose tasks write every register of their op: a matmul (enable 0x0d) and an SDP
// op (0x18).
const std::vector<editable>& full_programs() {
  static const std::vector<editable> list = [] {
    std::vector<editable> out;
    if (auto p = take_program(build(matmul_spec{.M = 4, .K = 32, .N = 16}), "matmul")) out.push_back(*p);
    if (auto p = take_program(build(ew_spec{.M = 4, .N = 16}), "ew")) out.push_back(*p);
    // the SDP task with the LUT configuration, and the PPU task
    if (auto p = take_program(build(act_spec{.fn = activation::sigmoid, .M = 4, .N = 16}), "act")) out.push_back(*p);
    if (auto p = take_program(build(pool_spec{.H = 4, .W = 4, .C = 8}), "pool")) out.push_back(*p);
    // the CNA + CORE + DPU + DPU_RDMA task: a quantized conv's complete list
    if (auto p = take_program(build(conv_spec{.dtype = conv_data::int8, .H = 4, .W = 4, .C = 16, .out_channels = 16, .kernel_h = 3,
                                          .kernel_w = 3, .padding = conv_padding::same}),
                              "conv"))
      out.push_back(*p);
    return out;
  }();
  return list;
}

// Registers a task of the faulting task's kind (its enable mask) writes — every such task of
// the door's program (the program before the edits), or else the fullest of a full program —
// and that no task of the faulting task's register group wrote up to it, in its chain: what
// the task then reads as zeros here, and as whatever the last job left on a board. The door
// comes first: another program's task of the same mask may run another op (a lookup table
// instead of an element-wise operand) and not write what this one reads.
std::string unwritten(const editable& door, const editable& p, const problem& f) {
  if (f.task >= p.tasks.size()) return {};
  const std::uint32_t mask = p.tasks[f.task].enable_mask;
  std::vector<std::uint32_t> needed;
  for (const task& k : door.tasks)
    if (k.enable_mask == mask)
      for (std::uint32_t r : written_by(door, k)) needed.push_back(r);
  if (needed.empty())
    for (const editable& full : full_programs())
      for (const task& k : full.tasks)
        if (k.enable_mask == mask)
          if (std::vector<std::uint32_t> w = written_by(full, k); w.size() > needed.size()) needed = std::move(w);
  std::sort(needed.begin(), needed.end());
  needed.erase(std::unique(needed.begin(), needed.end()), needed.end());
  std::vector<std::uint32_t> have;
  for (std::uint32_t t = f.chain_first; t <= f.task; ++t)
    if (!f.alternating || (t - f.chain_first) % 2 == (f.task - f.chain_first) % 2)
      for (std::uint32_t r : written_by(p, p.tasks[t])) have.push_back(r);
  std::sort(have.begin(), have.end());
  std::string names;
  int listed = 0;
  for (std::uint32_t r : needed)
    if (!std::binary_search(have.begin(), have.end(), r) && listed++ < 4) {
      std::string name = hex(r);
      for (const register_info& i : register_table)
        if ((std::uint32_t{static_cast<std::uint16_t>(i.block)} << 16 | i.offset) == r) name = i.name;
      names += (names.empty() ? "" : ", ") + name;
    }
  return names;
}

const std::vector<std::string>& ignored() {
  static const std::vector<std::string> list = [] {
    std::vector<std::string> out;
    const char* env = std::getenv("REGCMD_FUZZ_VALIDATE_IGNORE");
    for (std::string_view s = env ? env : ""; !s.empty();) {
      const std::size_t comma = s.find(',');
      if (const std::string_view item = s.substr(0, comma); !item.empty()) out.emplace_back(item);
      s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
    }
    return out;
  }();
  return list;
}

void report(const editable& p, const problem& f) {
  const std::string where = f.kind == "write-to-read-only" ? "" : " in task " + std::to_string(f.task);
  const std::string message = "validated program, " + f.mode + ": " + f.kind + where + ": " + f.what;
  for (const std::string& s : ignored())
    if (message.find(s) != std::string::npos) return;
  std::fprintf(stderr, "\nfuzz_validate FINDING: %s\n  edits: %s\n  ping-pong %d, delta_tasks %d, %zu entries\n",
               message.c_str(), p.edits.c_str(), p.pingpong, p.delta_tasks, p.entries.size());
  for (std::size_t t = 0; t < p.tasks.size(); ++t)
    std::fprintf(stderr, "  task %zu: first %u count %u enable 0x%x int 0x%x\n", t, p.tasks[t].first, p.tasks[t].count,
                 p.tasks[t].enable_mask, p.tasks[t].int_mask);
  for (const slot& s : p.slots) {
    const address_register* r = address_register_of(p.entries[s.entry]);
    std::fprintf(stderr, "  slot: entry %u (%s) %s offset 0x%x extent 0x%x\n", s.entry,
                 r ? std::string(r->name).c_str() : "?", std::string(name_of(s.role)).c_str(), s.offset, s.extent);
  }
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  reader in{data, size};
  const editable door = door_program(in);
  editable p = door;
  for (int edits = 0; in.size && edits < 32; ++edits) edit(p, in);

  const program_view v = p.view();
  if (tracing())
    std::fprintf(stderr, "fuzz_validate: %s%zu entries, %zu tasks, %zu slots\n", p.edits.c_str(), p.entries.size(),
                 p.tasks.size(), p.slots.size());
  if (const status s = validate(v); !s) {
    if (tracing()) std::fprintf(stderr, "  refused: %s\n", std::string(s.err().id()).c_str());
    require(*s.err().violated != no_violation && !s.err().message().empty(), "validate refused without naming a rule");
    return 0;
  }
  // prepare: the driver's own refusals (rknpu has none; rocket's leave a program unrun there).
  if (!runtime::rknpu_jobs::check(v)) return 0;
  const bool rocket = runtime::rocket_jobs::check(v).ok();
  // bind: the regcmd role's DMAs (chain links) inside the program's own buffer; every other
  // buffer is made as large as its slots claim, so bind's extent check passes by design.
  const role_uses uses = uses_of(v.slots);
  if (uses[static_cast<std::size_t>(operand_role::regcmd)].end > p.entries.size() * 8) return 0;
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < operand_role_count; ++r)
    if (r != static_cast<std::size_t>(operand_role::regcmd)) total += uses[r].end;
  if (total > buffer_budget) return 0;

  if (std::optional<problem> f = run_on_model(p, uses, rocket)) {
    const std::uint32_t kicked = f->mode == "rocket" ? f->task : f->chain_first;  // the task the kernel started
    if (kicked < p.tasks.size() && p.tasks[kicked].first % 2 != 0)
      f->what += " [task " + std::to_string(kicked) + " starts at entry " + std::to_string(p.tasks[kicked].first) +
                 ", off a 16-byte boundary: the PC fetches from the boundary below it]";
    if (const std::string slots = role_mismatches(p); !slots.empty())
      f->what += " [slots of a role their register cannot address: " + slots + "]";
    if (const std::string names = unwritten(door, p, *f); !names.empty())
      f->what += " [registers of the op that no task of its register group wrote before it: " + names + "]";
    report(p, *f);
  }
  return 0;
}
