#pragma once
// A graph (regcmd/programs/graph/spec.hpp) as one program, one submit: every op resolved with its
// own rules, every boundary checked, every tensor placed, the ops' tasks chained.
//
//   resolve  each op's geometry (a matmul is planned: N and M tiles, K slices summed on the
//            device; an element-wise op, an activation, a conv and a pooling as their own
//            programs resolve them), then the tensors, in op order:
//            each use of a tensor (read or written) has a format (regcmd/programs/vocabulary.hpp)
//            and the bytes its DMA reaches; the first use fixes the tensor's format, every
//            other use must agree (graph-tensor-format); a tensor is written once
//            (graph-written-twice), before it is read (graph-read-before-write). Equal formats
//            reach equal bytes, and a tensor is as large as its widest use: no slot's DMA
//            reaches past its tensor.
//   place    inputs and weights in the buffer their first reader reads them from (feature,
//            weight, ew_operand, residual, bias: as in that op's own program), outputs in
//            the output buffer, one after another (64-byte aligned); intermediates in one arena
//            (the intermediate buffer), each at the lowest offset free of every intermediate
//            whose lifetime (from the op writing it to the last op reading it) meets its own,
//            so the arena is as small as the tensors live at once allow.
//   emit     each op's tasks as its own program writes them, checked against every program
//            rule as that program (once per distinct op), then its operand slots moved from
//            the op's roles to its tensors' buffers and offsets (each register must address
//            its new buffer); the writer chains the tasks; the whole program's structure,
//            tails and links are checked (ping-pong off as soon as one op runs on the SDP).
//
// What each kind of op contributes to those steps (its resolution, its tensors, its size and
// tasks) is its graph_step_of<kind> (steps.hpp): the graph reaches its ops only through it.
//
// A graph known at compile time: fixed<Spec>() (a violated rule names itself in a
// static_assert); at run time: build(spec) (the same rule as an error value).
// Packing the host's tensors into their buffers: regcmd/programs/graph/packing.hpp.

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include <regcmd/core/error.hpp>
#include <regcmd/core/math.hpp>
#include <regcmd/task/writer.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/conv/packing.hpp>
#include <regcmd/programs/door.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/graph/steps.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/programs/vocabulary.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/rules/program_rules.hpp>

namespace regcmd {

enum class tensor_kind : std::uint8_t { input, weight, intermediate, output };

// Every tensor starts on 64 bytes in its buffer (the chains' intermediates do the same).
inline constexpr std::uint32_t graph_tensor_alignment = 64;

struct graph_tensor {
  graph_name name;
  tensor_kind kind{};
  tensor_format format{};
  operand_role role{};       // the buffer it lives in
  std::uint32_t offset = 0;  // in that buffer
  std::uint32_t bytes = 0;   // the most any use's DMA reaches
  std::uint32_t writer = no_op;
  std::uint32_t first_use = 0, last_use = 0;  // op indices
  // The op whose packer lays it out on the host, and the operand it is of that op.
  std::uint32_t packer_op = 0;
  operand_role packer_role{};
  // A concatenation's part: the tensor whose bytes hold it (no_op: none), and where in them.
  std::uint32_t parent = no_op;
  std::uint32_t parent_offset = 0;
  bool read_back = false;  // basic_graph_spec::read_back: the host may unpack it after the run
  friend constexpr bool operator==(const graph_tensor&, const graph_tensor&) = default;
};

// What packing and the runtime read of a resolved graph, whatever its capacity: views into
// its geometry, which must outlive them.
struct graph_view {
  std::span<const graph_step> steps;
  std::span<const graph_tensor> tensors;
  std::array<std::uint32_t, operand_role_count> buffer_bytes{};
  bool intermediates_kept = false;

  constexpr const graph_tensor* find(std::string_view name) const {
    for (const graph_tensor& x : tensors)
      if (!name.empty() && x.name.view() == name) return &x;
    return nullptr;
  }
};

template <std::size_t MaxOps>
struct basic_graph_geometry {
  static constexpr std::size_t max_ops = MaxOps;
  static constexpr std::size_t max_tensors = graph_max_tensors_of(MaxOps);
  std::array<graph_step, MaxOps> steps{};
  std::uint32_t step_count = 0;
  std::array<graph_tensor, max_tensors> tensors{};
  std::uint32_t tensor_count = 0;
  std::array<std::uint32_t, operand_role_count> buffer_bytes{};  // per role: what bind needs
  std::uint32_t intermediates_total = 0;  // every intermediate's bytes added: the arena without reuse
  bool sdp = false;                       // some op runs on the SDP (ping-pong off)
  bool intermediates_kept = false;        // graph_spec::keep_intermediates: none shares bytes

  constexpr const graph_tensor* find(std::string_view name) const {
    for (std::uint32_t t = 0; t < tensor_count; ++t)
      if (!name.empty() && tensors[t].name.view() == name) return &tensors[t];
    return nullptr;
  }
  constexpr std::uint32_t arena_bytes() const {
    return buffer_bytes[static_cast<std::size_t>(operand_role::intermediate)];
  }
  constexpr operator graph_view() const {  // NOLINT: every geometry is read as a view
    return {{steps.data(), step_count}, {tensors.data(), tensor_count}, buffer_bytes, intermediates_kept};
  }
};
using graph_geometry = basic_graph_geometry<graph_max_ops>;
using large_graph_geometry = basic_graph_geometry<large_graph_max_ops>;

namespace detail {

// The op's operands named as its kind needs them, then its spec resolved with its kind's
// rules (steps.hpp).
template <class Soc>
constexpr status resolve_step(const graph_op& op, graph_step& s) {
  s.kind = op.kind;
  const bool needs_b = op.kind == graph_op_kind::matmul || op.kind == graph_op_kind::conv || op.kind == graph_op_kind::concat ||
                       (op.kind == graph_op_kind::ew && op.ew.operand != ew_operand::immediate);
  if (op.out.empty() || op.a.empty() || needs_b == op.b.empty())
    return make_error(rules::graph_operands, "graph", "op").with_note(op.out.view());
  if ((op.kind == graph_op_kind::conv && op.conv.residual_add) == op.c.empty())
    return make_error(rules::graph_conv_operands, "graph", "conv").with_note(op.out.view());
  return with_step_kind(op.kind, [&](auto k) { return decltype(k)::template resolve<Soc>(op, s); });
}


template <class G>
constexpr std::uint32_t index_of(const G& g, const graph_name& name) {
  for (std::uint32_t t = 0; t < g.tensor_count; ++t)
    if (g.tensors[t].name == name) return t;
  return no_op;
}

// Whether a reader's format takes the bytes an op wrote in `written`: the same format, or
// the same channels of an NC1HWC2 surface of the same pixels with less padding: the planes
// of 16-byte atoms it reads are the first ones written (a quantized conv writes every
// channel its DPU computes, 32- or 64-aligned; the next op reads its own padding).
constexpr bool reads_as(const tensor_format& written, const tensor_format& read) {
  tensor_format padded = read;
  padded.cols = written.cols;
  return same_bytes(written, read) || (read.layout == tensor_layout::surface && written == padded && read.cols <= written.cols);
}

// Whether `use` reads all of x, which an earlier op wrote, as one flat vector of x's
// element type (an element-wise op's view of any layout: steps.hpp, reads_flat_view).
constexpr bool views_flat(const graph_tensor& x, const tensor_use& use) {
  const tensor_format& f = use.format;
  return x.writer != no_op && f.layout == tensor_layout::rows && f.rows == 1 && f.type == x.format.type &&
         f.is_unsigned == x.format.is_unsigned && use.extent == x.bytes;
}

// A read of `use` by op i: a new input (or weight), or another use of a known tensor; a
// flat view of it where the op takes one.
template <class G>
constexpr result<std::uint32_t> read(G& g, const tensor_use& use, std::uint32_t i, bool flat_view = false) {
  std::uint32_t t = index_of(g, *use.name);
  if (t == no_op) {
    if (g.tensor_count == G::max_tensors)
      return make_error(rules::graph_capacity, "graph", "tensors", g.tensor_count + 1);
    t = g.tensor_count++;
    g.tensors[t] = {.name = *use.name,
                    .kind = use.role == operand_role::weight ? tensor_kind::weight : tensor_kind::input,
                    .format = use.format,
                    .bytes = use.extent,
                    .first_use = i,
                    .packer_op = i,
                    .packer_role = use.role};
  }
  graph_tensor& x = g.tensors[t];
  if (use.role == operand_role::weight && x.writer != no_op)
    return make_error(rules::graph_weight_source, "graph", "tensor").with_note(use.name->view());
  const bool viewed = flat_view && views_flat(x, use);
  if (!viewed && (x.writer == no_op ? !same_bytes(x.format, use.format) : !reads_as(x.format, use.format)))
    return make_error(rules::graph_tensor_format, "graph", "tensor").with_note(use.name->view());
  x.bytes = std::max(x.bytes, use.extent);  // equal formats reach equal bytes: only inputs grow
  if (x.writer != no_op) x.kind = tensor_kind::intermediate;
  x.last_use = i;
  return t;
}

// The write of `use` by op i: a tensor no op has used yet.
template <class G>
constexpr result<std::uint32_t> write(G& g, const tensor_use& use, std::uint32_t i) {
  if (const std::uint32_t t = index_of(g, *use.name); t != no_op) {
    if (g.tensors[t].writer != no_op)
      return make_error(rules::graph_written_twice, "graph", "tensor").with_note(use.name->view());
    return make_error(rules::graph_read_before_write, "graph", "tensor").with_note(use.name->view());
  }
  if (g.tensor_count == G::max_tensors)
    return make_error(rules::graph_capacity, "graph", "tensors", g.tensor_count + 1);
  const std::uint32_t t = g.tensor_count++;
  g.tensors[t] = {.name = *use.name,
                  .kind = tensor_kind::output,
                  .format = use.format,
                  .bytes = use.extent,
                  .writer = i,
                  .first_use = i,
                  .last_use = i,
                  .packer_op = i,
                  .packer_role = use.role};
  return t;
}

// 64-bit: a placement past 4 GiB is refused below, not wrapped.
constexpr std::uint64_t aligned(std::uint64_t at) { return round_up(at, graph_tensor_alignment); }

// A tensor of op i's own, which no other op names: a K-split's partials and running sums
// (intermediates), a quantized conv's bias (a weight: the host packs it, pack_conv).
template <class G>
constexpr result<std::uint32_t> own_tensor(G& g, std::uint32_t bytes, std::uint32_t i,
                                           tensor_kind kind = tensor_kind::intermediate) {
  if (g.tensor_count == G::max_tensors)
    return make_error(rules::graph_capacity, "graph", "tensors", g.tensor_count + 1);
  const std::uint32_t t = g.tensor_count++;
  graph_tensor& x = g.tensors[t];
  x = {};
  x.kind = kind;
  x.packer_role = kind == tensor_kind::weight ? operand_role::bias : operand_role::output;
  x.bytes = bytes;
  x.writer = kind == tensor_kind::intermediate ? i : no_op;
  x.first_use = x.last_use = x.packer_op = i;
  return t;
}

// A concatenation's parts (step s's a and b) as slices of its result, the second right after
// the first's planes: each written by an earlier op exactly as the part reads it (no more
// planes), into one concatenation only.
template <class G>
constexpr status join_parts(G& g, const graph_step& s) {
  using concat = graph_step_of<graph_op_kind::concat>;
  std::uint32_t at = 0;
  for (const bool second : {false, true}) {
    graph_tensor& x = g.tensors[second ? s.b : s.a];
    const std::uint32_t bytes = concat::part(s, second).tensor_bytes();
    if (x.writer == no_op || x.parent != no_op || s.a == s.b || x.bytes != bytes)
      return make_error(rules::graph_concat_source, "graph", "tensor").with_note(x.name.view());
    x.parent = s.out;
    x.parent_offset = at;
    at += bytes;
  }
  return {};
}

// Inputs, weights and outputs one after another in their buffers; intermediates in the
// arena at the lowest offset clear of every placed intermediate whose lifetime meets theirs
// (of every placed intermediate, when they are kept). A concatenation's parts take their
// result's place (join_parts): the result lives while any part does.
template <class Soc, class G>
constexpr status place(G& g) {
  for (std::uint32_t t = 0; t < g.tensor_count; ++t) {
    graph_tensor& x = g.tensors[t];
    if (x.parent != no_op) {
      graph_tensor& whole = g.tensors[x.parent];
      whole.first_use = std::min(whole.first_use, x.first_use);
      whole.last_use = std::max(whole.last_use, x.last_use);
    }
  }
  for (std::uint32_t t = 0; t < g.tensor_count; ++t) {
    graph_tensor& x = g.tensors[t];
    if (x.parent != no_op) continue;  // placed with its whole, below
    // what the host fills sits in the buffer its first reader reads it from, as in that op's own
    // program: features, weights, an element-wise op's second operand, a residual, a bias
    x.role = x.kind == tensor_kind::input || x.kind == tensor_kind::weight ? x.packer_role
             : x.kind == tensor_kind::intermediate                         ? operand_role::intermediate
                                                                           : operand_role::output;
    std::uint64_t at = 0;
    if (x.kind == tensor_kind::intermediate) {
      g.intermediates_total += x.bytes;
      // First fit: move past every overlapping live neighbour until none overlaps.
      for (bool moved = true; moved;) {
        moved = false;
        for (std::uint32_t o = 0; o < t; ++o) {
          const graph_tensor& y = g.tensors[o];
          const bool live_together = y.kind == tensor_kind::intermediate && y.parent == no_op &&
                                     (g.intermediates_kept || (y.first_use <= x.last_use && x.first_use <= y.last_use));
          if (live_together && at < y.offset + std::uint64_t{y.bytes} && y.offset < at + x.bytes) {
            at = aligned(y.offset + std::uint64_t{y.bytes});
            moved = true;
          }
        }
      }
    } else {
      at = aligned(g.buffer_bytes[static_cast<std::size_t>(x.role)]);
    }
    if (!fits_address_space<Soc>(at + x.bytes))
      return make_error(rules::operand_size, "graph", "tensor", at + x.bytes).with_note(x.name.view());
    x.offset = static_cast<std::uint32_t>(at);
    std::uint32_t& end = g.buffer_bytes[static_cast<std::size_t>(x.role)];
    end = std::max(end, static_cast<std::uint32_t>(at + x.bytes));
  }
  for (std::uint32_t t = 0; t < g.tensor_count; ++t) {
    graph_tensor& x = g.tensors[t];
    if (x.parent == no_op) continue;
    const graph_tensor& whole = g.tensors[x.parent];
    x.role = whole.role;
    x.offset = whole.offset + x.parent_offset;
  }
  return {};
}

}  // namespace detail

template <class Soc = soc::rk3588, std::size_t MaxOps>
constexpr result<basic_graph_geometry<MaxOps>> resolve_graph(const basic_graph_spec<MaxOps>& spec) {
  if (spec.refused) return make_error(*spec.refused, "graph", "preset");
  if (spec.count == 0 || spec.count > MaxOps) return make_error(rules::graph_capacity, "graph", "ops", spec.count);
  basic_graph_geometry<MaxOps> g;
  g.step_count = spec.count;
  g.intermediates_kept = spec.keep_intermediates;
  for (std::uint32_t i = 0; i < spec.count; ++i) {
    const graph_op& op = spec.ops[i];
    graph_step& s = g.steps[i];
    if (status r = detail::resolve_step<Soc>(op, s); !r) return r.err();
    if (op.out == op.a || op.out == op.b)
      return make_error(rules::graph_read_before_write, "graph", "op").with_note(op.out.view());
    bool flat_view = false;
    detail::op_uses u = with_step_kind(op.kind, [&](auto k) {
      g.sdp = g.sdp || decltype(k)::on_sdp(s);
      flat_view = decltype(k)::reads_flat_view;
      return decltype(k)::uses(op, s);
    });
    for (std::uint32_t k = 0; k + 1 < u.count; ++k) {
      const result<std::uint32_t> t = detail::read(g, u.uses[k], i, flat_view);
      if (!t) return t.err();
      (k == 0 ? s.a : k == 1 ? s.b : s.c) = t.value();
    }
    // a flat view writes the layout it read, which the op that wrote it unpacks
    const graph_tensor* viewed = flat_view && g.tensors[s.a].format != u.uses[0].format ? &g.tensors[s.a] : nullptr;
    if (viewed) u.uses[u.count - 1].format = viewed->format;
    if (const std::uint64_t bytes = with_step_kind(op.kind, [&](auto k) { return decltype(k)::bias_bytes(s); })) {
      const result<std::uint32_t> bias = detail::own_tensor(g, static_cast<std::uint32_t>(bytes), i, tensor_kind::weight);
      if (!bias) return bias.err();
      s.bias = bias.value();
    }
    const result<std::uint32_t> t = detail::write(g, u.uses[u.count - 1], i);
    if (!t) return t.err();
    s.out = t.value();
    if (op.kind == graph_op_kind::concat)
      if (status r = detail::join_parts(g, s); !r) return r.err();
    if (viewed) g.tensors[s.out].packer_op = viewed->packer_op;
    if (s.sums_slices()) {
      // S partials; S - 1 adds, all but the last into a running sum (two, alternating)
      const result<std::uint32_t> partials = detail::own_tensor(g, matmul::plan_output_bytes(s.matmul), i);
      if (!partials) return partials.err();
      s.partials = partials.value();
      for (std::uint32_t k = 0; k < 2 && k + 2 < s.matmul.slices; ++k) {
        const result<std::uint32_t> sum = detail::own_tensor(g, s.ew.tensor_bytes(), i);
        if (!sum) return sum.err();
        s.sums[k] = sum.value();
      }
    }
  }
  for (const graph_name& name : spec.read_back) {
    if (name.empty()) continue;
    const std::uint32_t t = detail::index_of(g, name);
    if (t == no_op || g.tensors[t].writer == no_op || g.tensors[t].parent != no_op)
      return make_error(rules::graph_read_back, "graph", "tensor").with_note(name.view());
    // an intermediate read back lives to the end: no later tensor takes its bytes
    g.tensors[t].read_back = true;
    g.tensors[t].last_use = spec.count;
  }
  if (status r = detail::place<Soc>(g); !r) return r.err();
  return g;
}

template <std::size_t MaxOps>
constexpr program_size graph_size(const basic_graph_geometry<MaxOps>& g) {
  program_size total;
  for (std::uint32_t i = 0; i < g.step_count; ++i) {
    const program_size s = with_step_kind(g.steps[i].kind, [&](auto k) { return decltype(k)::size(g.steps[i]); });
    total.entries += s.entries;
    total.slots += s.slots;
    total.tasks += s.tasks;
  }
  return total;
}

namespace detail {
// Step s's operands bound to its tensors: `tensor[r]` is the tensor behind role r (no_op:
// not this op's), `plus[r]` bytes into it.
struct tensor_binding {
  std::array<std::uint32_t, operand_role_count> tensor{};
  std::array<std::uint32_t, operand_role_count> plus{};
  constexpr tensor_binding() { tensor.fill(no_op); }
  constexpr tensor_binding& operator()(operand_role r, std::uint32_t t, std::uint32_t offset = 0) {
    tensor[static_cast<std::size_t>(r)] = t;
    plus[static_cast<std::size_t>(r)] = offset;
    return *this;
  }
  template <class G>
  constexpr operand_binding in(const G& g) const {
    operand_binding b;
    for (std::size_t r = 0; r < operand_role_count; ++r)
      if (const std::uint32_t t = tensor[r]; t != no_op)
        b(static_cast<operand_role>(r), g.tensors[t].role, g.tensors[t].offset + plus[r]);
    return b;
  }
};

// An op written with its slots bound to its tensors. Each slot's register must address the
// buffer it was bound to (rule address-slots: the CNA reads weights only from the weight
// buffer, the DPU writes only outputs and intermediates).
template <class G, class Emit>
constexpr void emit_bound(program_writer& w, const G& g, const tensor_binding& at, Emit&& emit) {
  const std::uint32_t first = w.slot_count();
  w.bind(at.in(g));
  emit();
  w.bind({});
  if (!w.ok()) return;
  for (const slot& x : w.slots().subspan(first)) {
    const std::size_t a = address_register_index(w.entries()[x.entry]);
    if (a >= address_registers.size() || !role_fits(address_registers[a].offset, x.role))
      return w.fail(make_error(rules::address_slots, "graph", name_of(x.role), x.entry));
  }
}

// The tasks an op just emitted, from task `first_task` and slot `first_slot` on, checked
// against every program rule as a program of their own (ping-pong off, as SDP ops need it):
// what the op's own door checks. The link from the task before them, inserted at
// `first_slot`, belongs to that task.
template <class Soc>
constexpr void check_op(program_writer& w, std::uint32_t first_task, std::uint32_t first_slot) {
  if (!w.ok()) return;
  const std::uint32_t own_slots = first_slot + (first_task > 0 ? 1 : 0);
  const program_view op{w.entries(), w.slots().subspan(own_slots), w.tasks().subspan(first_task), false, false};
  if (status s = validate<Soc>(op, "graph op"); !s) w.fail(s.err());
}

// A K-split matmul's sums: partial 0 + partial 1, then the running sum + partial k, the
// last add into the output. Every add is the same op: the first is checked.
template <class Soc, class G>
constexpr void emit_slice_sums(program_writer& w, const G& g, const graph_step& s) {
  const std::uint32_t slices = s.matmul.slices;
  const std::uint32_t slice_bytes = matmul::plan_output_bytes(s.matmul) / slices;
  for (std::uint32_t k = 1; k < slices && w.ok(); ++k) {
    const std::uint32_t first_task = w.task_count(), first = w.slot_count();
    const tensor_binding at = tensor_binding{}(operand_role::feature, k == 1 ? s.partials : s.sums[(k - 2) % 2])(
        operand_role::ew_operand, s.partials, k * slice_bytes)(operand_role::output,
                                                               k + 1 == slices ? s.out : s.sums[(k - 1) % 2]);
    emit_bound(w, g, at, [&] { sdp::emit(w, s.ew); });
    if (k == 1) check_op<Soc>(w, first_task, first);
  }
}
}  // namespace detail

// Every op's tasks as its emitter writes them, checked as the op's own program would be
// (a plan checks each of its tile templates; an element-wise op equal to an earlier one of
// the graph is not checked again), its slots bound to its tensors. The boundaries between ops
// are the graph's rules (resolve_graph); the whole program's structure, tails and links are
// checked once it is written (graph_kind).
template <class Soc = soc::rk3588, std::size_t MaxOps>
constexpr void emit_graph(program_writer& w, const basic_graph_geometry<MaxOps>& g) {
  for (std::uint32_t i = 0; i < g.step_count && w.ok(); ++i) {
    const graph_step& s = g.steps[i];
    const std::uint32_t first_task = w.task_count(), first = w.slot_count();
    // every kind's roles at once: each op uses only its own
    const auto at = detail::tensor_binding{}(operand_role::feature, s.a)(operand_role::weight, s.b)(
        operand_role::ew_operand, s.b)(operand_role::residual, s.c)(operand_role::bias, s.bias)(
        operand_role::output, s.sums_slices() ? s.partials : s.out);
    // checked by its emitter, or as an equal op of the graph was already
    bool checked = false;
    with_step_kind(s.kind, [&](auto k) {
      using kind = decltype(k);
      detail::emit_bound(w, g, at, [&] { kind::template emit<Soc>(w, s); });
      checked = kind::checks_itself;
      for (std::uint32_t j = 0; j < i; ++j) checked = checked || (g.steps[j].kind == s.kind && kind::same_op(g.steps[j], s));
    });
    if (!checked) detail::check_op<Soc>(w, first_task, first);
    if (s.sums_slices()) detail::emit_slice_sums<Soc>(w, g, s);
  }
}

// A graph program: every op's tasks chained in one submit, each op checked as it was
// emitted (emit_graph), the whole program's structure once written.
template <std::size_t MaxOps>
struct basic_graph_kind {
  using spec = basic_graph_spec<MaxOps>;
  using geometry = basic_graph_geometry<MaxOps>;
  static constexpr std::string_view name = "graph";
  template <class Soc>
  static constexpr result<geometry> resolve(const spec& s) {
    return resolve_graph<Soc>(s);
  }
  static constexpr program_size size(const geometry& g) { return graph_size(g); }
  static constexpr submit_options options(const geometry& g) { return {.pingpong = !g.sdp}; }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& g) {
    emit_graph<Soc>(w, g);
  }
  static constexpr program_checks checks = program_checks::structure;
};

using graph_kind = basic_graph_kind<graph_max_ops>;
template <std::size_t MaxOps>
basic_graph_kind<MaxOps> program_kind_of(const basic_graph_spec<MaxOps>&);

// A preset of its own spec (fused.hpp, chain.hpp): the spec turned into a graph, whose
// program it is. Its geometry holds the graph's as `.graph`, beside what its packers read.
template <class Spec, class Geometry>
struct graph_preset {
  using spec = Spec;
  using geometry = Geometry;
  static constexpr program_size size(const geometry& g) { return graph_size(g.graph); }
  static constexpr submit_options options(const geometry& g) { return graph_kind::options(g.graph); }
  template <class Soc>
  static constexpr void emit(program_writer& w, const geometry& g) {
    emit_graph<Soc>(w, g.graph);
  }
  static constexpr program_checks checks = graph_kind::checks;
};

// The names before regcmd::fixed and regcmd::build (docs/changelog.md).
template <graph_spec Spec, class Soc = soc::rk3588>
[[deprecated("use regcmd::fixed<spec>()")]] constexpr auto graph() { return fixed<Spec, Soc>(); }
template <class Soc = soc::rk3588>
[[deprecated("use regcmd::build(spec)")]] auto build_graph(const graph_spec& spec) { return build<Soc>(spec); }

}  // namespace regcmd
