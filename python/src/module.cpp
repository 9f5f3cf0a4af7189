// regcmd._regcmd: the C++ side of the Python package. A spec arrives as keywords, becomes the
// command-line request it spells (include/regcmd/cli/request.hpp: the same options, checks and
// defaults as regcmd-gen), and is built by the run-time door; a device is the NPU node, or the
// emulated device inside this process where there is none (emulator/in_process.hpp).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <regcmd/cli/graph_file.hpp>
#include <regcmd/cli/request.hpp>
#include <regcmd/core/roofline.hpp>
#include <regcmd/decode/accounting.hpp>
#include <regcmd/decode/cpp_template.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/programs/activation.hpp>
#include <regcmd/programs/conv.hpp>
#include <regcmd/programs/matmul.hpp>
#include <regcmd/programs/pooling.hpp>
#include <regcmd/programs/sdp.hpp>
#include <regcmd/runtime/graph_buffers.hpp>
#include <regcmd/runtime/session.hpp>

#include "in_process.hpp"

namespace py = pybind11;
using namespace regcmd;

namespace {

// A refused spec, and a rule a program breaks: raised in Python as regcmd.SpecError and
// regcmd.RuleError, the latter with the rule's id as its `rule` (the module's translator).
struct spec_problem {
  std::string text;
};
struct rule_broken {
  std::string id, text;
};

[[noreturn]] void raise(const error& e) { throw rule_broken{std::string(e.id()), cli::describe(e)}; }

// A keyword as the option it spells: `out_channels` is --out-channels, `M` is -M; a matmul's
// and a conv's element types are their --in and --out.
std::string option_of(std::string_view kind, const std::string& keyword) {
  if ((kind == "matmul" || kind == "plan" || kind == "conv") && (keyword == "dtype" || keyword == "out_dtype"))
    return keyword == "dtype" ? "--in" : "--out";
  if (keyword.size() == 1) return "-" + keyword;
  std::string o = "--" + keyword;
  for (char& c : o)
    if (c == '_') c = '-';
  return o;
}

// A keyword's value as the option's text: True is the flag, (3, 3) is 3x3.
std::optional<std::string> value_text(const std::string& keyword, const py::handle& v) {
  if (py::isinstance<py::bool_>(v)) {
    if (!v.cast<bool>()) throw spec_problem{keyword + "=False: leave it out instead"};
    return std::nullopt;
  }
  if (py::isinstance<py::tuple>(v) || py::isinstance<py::list>(v)) {
    std::string t;
    for (const py::handle& x : v) t += (t.empty() ? "" : "x") + py::str(x).cast<std::string>();
    return t;
  }
  return py::str(v).cast<std::string>();
}

using built = std::variant<runtime_program<matmul_geometry>, runtime_program<plan_shape>, runtime_program<ew_geometry>,
                           runtime_program<act_geometry>, runtime_program<conv_plan>, runtime_program<pool_geometry>,
                           runtime_program<fused_geometry>, runtime_program<large_graph_geometry>>;

// A built program: its kind and what the door built; a graph's norm-family lines, whose
// constants pack from γ and β (cli::constants_of).
struct built_program {
  std::string kind;
  built code;
  std::vector<cli::graph_preset> presets{};

  program_view view() const {
    return std::visit([](const auto& p) { return p.view(); }, code);
  }
};

template <class Result>
built take(const Result& r) {
  if (!r) raise(r.err());
  return r.value();
}

built_program build_program(const std::string& kind, const py::kwargs& keywords) {
  cli::request r{.elementwise = kind == "ew", .convolution = kind == "conv", .activation = kind == "act",
                 .pooling = kind == "pool"};
  if (kind != "matmul" && kind != "plan" && !r.elementwise && !r.convolution && !r.activation && !r.pooling)
    throw spec_problem{"unknown program kind '" + kind + "': matmul, plan, ew, act, conv or pool"};
  std::deque<std::string> options;  // given_options keeps views of them
  cli::given_options given;
  for (const auto& [k, v] : keywords) {
    const std::string keyword = k.cast<std::string>();
    const std::string& option = options.emplace_back(option_of(kind, keyword));
    if (cli::problem twice = given.add(option); !twice.empty()) throw spec_problem{twice};
    const std::optional<std::string> text = value_text(keyword, v);
    if (!text) {
      if (!cli::apply_flag(r, option)) throw spec_problem{keyword + " is no flag of " + kind + ": give it a value"};
      continue;
    }
    const std::optional<cli::problem> applied = cli::apply(r, option, *text);
    if (!applied) throw spec_problem{"unknown keyword " + keyword + " (" + option + ")"};
    if (!applied->empty()) throw spec_problem{*applied};
  }
  if (cli::problem p = cli::check_request(r, given); !p.empty()) throw spec_problem{p};
  // a plan's options, which one matmul program has not (regcmd-gen's --plan)
  if (kind == "matmul" && !r.fused_ew)
    if (cli::problem p = given.refuse_any({"--k-slice", "--delta"}, "to one matmul program: build('plan', ...)"); !p.empty())
      throw spec_problem{p};
  cli::complete_request(r, given);
  if (r.convolution)
    if (cli::problem p = cli::complete_conv(r, given); !p.empty()) throw spec_problem{p};
  built_program p{kind, {}};
  if (r.convolution) p.code = take(build(r.conv));
  else if (r.activation) p.code = take(build(r.act));
  else if (r.pooling) p.code = take(build(r.pool));
  else if (r.elementwise) p.code = take(build(r.ew));
  else if (r.fused_ew) p.code = take(build(r.fused()));
  else if (kind == "plan") p.code = take(build(plan_request{r.spec, r.options}));
  else p.code = take(build(r.spec));
  return p;
}

// A graph from the text of a graph file (docs/graph.md: one op a line, `OUT = PROGRAM IN...
// OPTIONS`), built as regcmd-gen builds it; a problem names its line.
built_program build_graph_text(const std::string& text, bool keep_intermediates) {
  cli::graph_file file = cli::parse_graph_file(text);
  if (!file.problem.empty())
    throw spec_problem{file.problem_line ? "line " + std::to_string(file.problem_line) + ": " + file.problem : file.problem};
  file.graph.keep_intermediates = keep_intermediates;
  auto built = build(file.graph);
  if (!built) {
    const std::size_t line = cli::failing_line(file, [](const large_graph_spec& g) { return build(g).ok(); });
    throw rule_broken{std::string(built.err().id()), "line " + std::to_string(line) + ": " + cli::describe(built.err())};
  }
  return {"graph", std::move(built).value(), std::move(file.presets)};
}

py::dict stats_of(const built_program& p) {
  const program_cost c = account(p.view());
  const time_bound b = roofline(c, soc_roofline());
  py::dict d;
  d["tasks"] = c.tasks;
  d["submits"] = c.submits;
  d["entries"] = c.entries;
  d["reads"] = c.reads();
  d["writes"] = c.writes();
  d["traffic"] = c.traffic();
  d["macs"] = c.all_macs();
  d["bound_ns"] = b.ns();
  d["limited_by"] = std::string(b.limited_by());
  // the bound were its tasks spread over RK3588's three cores (issue 37 splits them)
  roofline_params three = soc_roofline();
  three.cores = 3;
  d["bound_ns_three_cores"] = roofline(c, three).ns();
  return d;
}

std::string hex_of(const built_program& p) {
  std::string text;
  for (const entry& e : p.view().entries) text += hex(e.bits(), 16) + "\n";
  return text;
}

std::string json_of(const built_program& p) {
  const auto entries = p.view().entries;
  std::string text = "[";
  for (std::size_t i = 0; i < entries.size(); ++i) text += (i ? ",\n " : "\n ") + format_json(decode(entries[i]), i);
  return text + "\n]\n";
}

// The program as a C++ header declaring it as a constexpr template (regcmd/programs/captured.hpp),
// its slots as built: rule-checked again where it compiles.
std::string cpp_of(const built_program& p, const std::string& name, const std::string& name_space,
                   const std::string& source) {
  if (!cpp_header::is_identifier(name) || !cpp_header::reserved_reason(name, false).empty())
    throw spec_problem{"'" + name + "' cannot name the program in C++"};
  if (!cpp_header::is_identifier(name_space) || !cpp_header::reserved_reason(name_space, true).empty())
    throw spec_problem{"'" + name_space + "' cannot name the namespace in C++"};
  const program_view v = p.view();
  std::vector<slot> body;  // the tails' links are the writer's own
  for (const slot& x : v.slots)
    if (x.role != operand_role::regcmd && x.role != operand_role::next_program) body.push_back(x);
  const cpp_header::cpp_template t = cpp_header::make_cpp_template(
      v.entries, {.name = name, .name_space = name_space, .source = source, .pingpong = v.pingpong,
                  .program_slots = body, .delta_tasks = v.delta_tasks});
  if (!t.error.empty()) throw spec_problem{t.error};
  return t.text;
}

// An open node, or the emulated device in this process.
struct npu_device {
  runtime::device dev;
  bool emulated = false;
};

npu_device open_device(std::optional<std::string> path, std::optional<bool> emulated) {
  if (!emulated.value_or(false)) {
    auto d = runtime::device::open(path.value_or(""), 0, runtime::os_calls());
    if (d) return {std::move(d).value(), false};
    // no node here: the emulated one, unless the caller asked for the NPU
    if (emulated.has_value() || !d.err().breaks(rules::device_missing)) raise(d.err());
  }
  auto d = runtime::device::open(path.value_or("/dev/dri/card1"), 0, regcmd::emulator::calls());
  if (!d) raise(d.err());
  return {std::move(d).value(), true};
}

runtime::buffer make_buffer(const runtime::device& d, std::size_t size) {
  auto b = runtime::buffer::create(d, size);
  if (!b) raise(b.err());
  return std::move(b).value();
}

template <class T>
using host_array = py::array_t<T, py::array::c_style | py::array::forcecast>;

// `a` as host values of type T (numpy converts what it can, as forcecast does); the packer
// checks their count.
template <class T>
host_array<T> host_values(const py::object& a, const std::string& name) {
  host_array<T> v = host_array<T>::ensure(a);
  if (!v) throw spec_problem{name + " is no array of numbers"};
  return v;
}

// `a` as `count` host values of type T.
template <class T>
host_array<T> values_of(const py::object& a, std::size_t count, const char* name) {
  if (a.is_none()) throw spec_problem{std::string("this program reads ") + name + ": give it"};
  host_array<T> v = host_values<T>(a, name);
  if (static_cast<std::size_t>(v.size()) != count)
    throw spec_problem{std::string(name) + " holds " + std::to_string(v.size()) + " elements, not " + std::to_string(count)};
  return v;
}

template <class T>
std::span<const T> span_of(const host_array<T>& a) {
  return {a.data(), static_cast<std::size_t>(a.size())};
}

void refuse_unread(const py::object& v, const char* why, const char* name = "b") {
  if (!v.is_none()) throw spec_problem{std::string(name) + " does not apply: " + why};
}

// The program run once with its operands bound by role, on buffers of their sizes.
void submit(const npu_device& d, const built_program& p, const runtime::operands& bound) {
  runtime::session npu{d.dev};
  auto prepared = npu.prepare(p.view());
  if (!prepared) raise(prepared.err());
  if (status s = npu.bind(prepared.value(), bound); !s) raise(s.err());
  if (auto r = npu.run(prepared.value()); !r) raise(r.err());
}

void check(const status& s) {
  if (!s) raise(s.err());
}

// A matmul: C (M x N) = A (M x K) . B (K x N); fp16 inputs as floats (C float), int8 as
// int8 (C int32).
template <class In, class Out>
py::array run_matmul_as(const npu_device& d, const built_program& p, const matmul_geometry& g, const py::object& a,
                        const py::object& b) {
  const std::uint32_t M = g.M, K = g.logical_K, N = g.logical_N;
  const host_array<In> av = values_of<In>(a, std::size_t{M} * K, "a"), bv = values_of<In>(b, std::size_t{K} * N, "b");
  runtime::buffer fa = make_buffer(d.dev, g.feature_bytes()), fb = make_buffer(d.dev, g.weight_bytes()),
                  fc = make_buffer(d.dev, g.output_bytes());
  check(matmul::pack_features<In>(g, span_of(av), fa.bytes()));
  check(matmul::pack_weights<In>(g, span_of(bv), fb.bytes()));
  submit(d, p, {.feature = &fa, .weight = &fb, .output = &fc});
  py::array_t<Out> c({static_cast<py::ssize_t>(M), static_cast<py::ssize_t>(N)});
  check(matmul::unpack_output<Out>(g, fc.bytes(), std::span<Out>(c.mutable_data(), std::size_t{M} * N)));
  return c;
}

// A planned matmul: its tiles and K slices in one run, the slices' partials summed on the
// host (matmul::finish_plan); fp16 inputs as floats (C float), int8 as int8 (C int32).
template <class In, class Out>
py::array run_plan_as(const npu_device& d, const built_program& p, const plan_shape& shape, const py::object& a,
                      const py::object& b) {
  const matmul_geometry& g = shape.whole;
  const std::uint32_t M = g.M, K = g.logical_K, N = g.logical_N;
  const host_array<In> av = values_of<In>(a, std::size_t{M} * K, "a"), bv = values_of<In>(b, std::size_t{K} * N, "b");
  runtime::buffer fa = make_buffer(d.dev, matmul::plan_feature_bytes(shape)), fb = make_buffer(d.dev, shape.weight_bytes()),
                  fc = make_buffer(d.dev, matmul::plan_output_bytes(shape));
  check(matmul::pack_features<In>(g, span_of(av), fa.bytes()));
  check(matmul::pack_weights<In>(shape, span_of(bv), fb.bytes()));
  submit(d, p, {.feature = &fa, .weight = &fb, .output = &fc});
  py::array_t<Out> c({static_cast<py::ssize_t>(M), static_cast<py::ssize_t>(N)});
  check(matmul::finish_plan<Out>(shape, fc.bytes(), std::span<Out>(c.mutable_data(), std::size_t{M} * N)));
  return c;
}

// A pooling of one image, H x W x C (NHWC; fp16 as floats, int8), into out_h x out_w x C.
template <class T>
py::array run_pool_as(const npu_device& d, const built_program& p, const pool_geometry& g, const py::object& x) {
  const sdp_shape in = detail::pool_image(g, false), out = detail::pool_image(g, true);
  const host_array<T> xv = values_of<T>(x, std::size_t{g.H} * g.W * g.C, "a");
  runtime::buffer fa = make_buffer(d.dev, in.tensor_bytes()), fc = make_buffer(d.dev, out.tensor_bytes());
  check(sdp::pack_tensor<T>(in, span_of(xv), fa.bytes()));
  submit(d, p, {.feature = &fa, .output = &fc});
  py::array_t<T> c({static_cast<py::ssize_t>(g.out_h), static_cast<py::ssize_t>(g.out_w), static_cast<py::ssize_t>(g.C)});
  check(sdp::unpack_tensor<T>(out, fc.bytes(), std::span<T>(c.mutable_data(), static_cast<std::size_t>(c.size()))));
  return c;
}

// An element-wise op or an activation over M x N: a, and an element-wise op's second
// operand b (M x N per element, N per channel, none for an immediate), in the element type
// (fp16 as floats); the result M x N.
template <class T, class Geometry>
py::array run_sdp_as(const npu_device& d, const built_program& p, const Geometry& g, const py::object& a,
                     const py::object& b) {
  const std::size_t MN = std::size_t{g.M} * g.N;
  const host_array<T> av = values_of<T>(a, MN, "a");
  runtime::buffer fa = make_buffer(d.dev, g.tensor_bytes()), fc = make_buffer(d.dev, g.tensor_bytes());
  check(sdp::pack_tensor<T>(g, span_of(av), fa.bytes()));
  runtime::operands bound{.feature = &fa, .output = &fc};
  std::optional<runtime::buffer> fb;
  if constexpr (std::is_same_v<Geometry, ew_geometry>) {
    if (g.operand == ew_operand::immediate) {
      refuse_unread(b, "the operand is the program's immediate");
    } else {
      const bool channel = g.operand == ew_operand::per_channel;
      const host_array<T> bv = values_of<T>(b, channel ? g.N : MN, "b");
      fb = make_buffer(d.dev, g.operand_bytes());
      check(channel ? sdp::pack_vector<T>(g, span_of(bv), fb->bytes()) : sdp::pack_tensor<T>(g, span_of(bv), fb->bytes()));
      bound.ew_operand = &*fb;
    }
  } else {
    refuse_unread(b, "an activation reads one tensor");
  }
  submit(d, p, bound);
  py::array_t<T> c({static_cast<py::ssize_t>(g.M), static_cast<py::ssize_t>(g.N)});
  check(sdp::unpack_tensor<T>(g, fc.bytes(), std::span<T>(c.mutable_data(), MN)));
  return c;
}

template <class Geometry>
py::array run_sdp(const npu_device& d, const built_program& p, const Geometry& g, const py::object& a, const py::object& b) {
  switch (g.dtype) {
    case precision::fp16: return run_sdp_as<float>(d, p, g, a, b);
    case precision::int8: return run_sdp_as<std::int8_t>(d, p, g, a, b);
    case precision::int16: return run_sdp_as<std::int16_t>(d, p, g, a, b);
    default: throw spec_problem{"this element type does not run from Python yet"};
  }
}

// A convolution: x (H x W x C, NHWC), w (OHWI; depthwise 1 x KH x KW x C) in the input's
// type (fp16 as floats, uint8, int8), a quantized conv's int32 bias (out_channels) and the
// residual of --add (out_h x out_w x out_channels); the output out_h x out_w x out_channels in
// the output's type (fp16 and fp32 as floats, a quantized one as the input's type).
template <class T>
py::array run_conv_as(const npu_device& d, const built_program& p, const conv_geometry& g, const py::object& x,
                      const py::object& w, const py::object& bias, const py::object& residual) {
  const conv_spec& s = g.spec;
  const bool quantized = g.quantized();
  const std::size_t kernels = s.depthwise ? 1 : s.out_channels, out_count = std::size_t{g.out_h} * g.out_w * s.out_channels;
  const host_array<T> xv = values_of<T>(x, std::size_t{s.H} * s.W * s.C, "a");
  const host_array<T> wv = values_of<T>(w, kernels * s.kernel_h * s.kernel_w * s.C, "b");
  runtime::buffer feature = make_buffer(d.dev, conv::feature_bytes(g)), weight = make_buffer(d.dev, conv::weight_bytes(g)),
                  output = make_buffer(d.dev, conv::output_bytes(g));
  check(conv::pack_features<T>(g, span_of(xv), tensor_order::nhwc, feature.bytes()));
  check(conv::pack_weights<T>(g, span_of(wv), conv_weight_order::ohwi, weight.bytes()));
  runtime::operands bound{.feature = &feature, .weight = &weight, .output = &output};
  std::optional<runtime::buffer> bias_buf, residual_buf;
  if constexpr (!std::is_same_v<T, float>) {  // the operand carries the zero points' correction, bias or not
    std::vector<std::int32_t> b(s.bias ? s.out_channels : 0);
    if (s.bias) {
      const host_array<std::int32_t> bv = values_of<std::int32_t>(bias, s.out_channels, "bias");
      b.assign(bv.data(), bv.data() + bv.size());
    }
    bias_buf = make_buffer(d.dev, conv::bias_bytes(g));
    check(conv::pack_bias<T>(g, b, span_of(wv), conv_weight_order::ohwi, bias_buf->bytes()));
    bound.bias = &*bias_buf;
  }
  if (!s.bias) refuse_unread(bias, "the conv has no bias", "bias");
  if (s.residual_add) {
    const host_array<T> rv = values_of<T>(residual, out_count, "residual");
    residual_buf = make_buffer(d.dev, conv::residual_bytes(g));
    check(conv::pack_residual<T>(g, span_of(rv), tensor_order::nhwc, residual_buf->bytes()));
    bound.residual = &*residual_buf;
  } else {
    refuse_unread(residual, "the conv adds none (add=True)", "residual");
  }
  submit(d, p, bound);
  const std::vector<py::ssize_t> shape{g.out_h, g.out_w, s.out_channels};
  if (quantized) {
    py::array_t<T> out(shape);
    check(conv::unpack_output<T>(g, output.bytes(), tensor_order::nhwc, std::span<T>(out.mutable_data(), out_count)));
    return out;
  }
  py::array_t<float> out(shape);
  check(conv::unpack_output<float>(g, output.bytes(), tensor_order::nhwc, std::span<float>(out.mutable_data(), out_count)));
  return out;
}

// Runs a program with numpy arrays in and out: a matmul or a plan, an element-wise op, an
// activation, a conv or a pooling.
py::array run_program(const npu_device& d, const built_program& p, const py::object& a, const py::object& b,
                      const py::object& bias, const py::object& residual) {
  if (const auto* cv = std::get_if<runtime_program<conv_plan>>(&p.code)) {
    const conv_geometry& g = cv->geometry.conv;
    switch (g.spec.dtype) {
      case conv_data::fp16: return run_conv_as<float>(d, p, g, a, b, bias, residual);
      case conv_data::uint8: return run_conv_as<std::uint8_t>(d, p, g, a, b, bias, residual);
      case conv_data::int8: return run_conv_as<std::int8_t>(d, p, g, a, b, bias, residual);
    }
  }
  refuse_unread(bias, "only a conv reads a bias", "bias");
  refuse_unread(residual, "only a conv adds a residual", "residual");
  if (const auto* mm = std::get_if<runtime_program<matmul_geometry>>(&p.code)) {
    const matmul_geometry& g = mm->geometry;
    if (g.in == precision::fp16) return run_matmul_as<float, float>(d, p, g, a, b);
    if (g.in == precision::int8) return run_matmul_as<std::int8_t, std::int32_t>(d, p, g, a, b);
    throw spec_problem{"an int4 matmul does not run from Python yet"};
  }
  if (const auto* plan = std::get_if<runtime_program<plan_shape>>(&p.code)) {
    const plan_shape& shape = plan->geometry;
    if (shape.whole.in == precision::fp16) return run_plan_as<float, float>(d, p, shape, a, b);
    if (shape.whole.in == precision::int8) return run_plan_as<std::int8_t, std::int32_t>(d, p, shape, a, b);
    throw spec_problem{"an int4 plan does not run from Python yet"};
  }
  if (const auto* ew = std::get_if<runtime_program<ew_geometry>>(&p.code)) return run_sdp(d, p, ew->geometry, a, b);
  if (const auto* act = std::get_if<runtime_program<act_geometry>>(&p.code)) return run_sdp(d, p, act->geometry, a, b);
  if (const auto* pool = std::get_if<runtime_program<pool_geometry>>(&p.code)) {
    refuse_unread(b, "a pooling reads one image");
    if (pool->geometry.dtype == precision::fp16) return run_pool_as<float>(d, p, pool->geometry, a);
    return run_pool_as<std::int8_t>(d, p, pool->geometry, a);
  }
  throw spec_problem{"a " + p.kind + " program does not run from Python: a fused chain runs as a graph (regcmd.graph)"};
}

// What a host array of a tensor holds: its element type from the tensor's format.
template <class F>
auto with_host_type(const tensor_format& f, F&& f_of) {
  switch (f.type) {
    case precision::int32: return f_of(std::int32_t{});
    case precision::int16: return f_of(std::int16_t{});
    case precision::int8: return f.is_unsigned ? f_of(std::uint8_t{}) : f_of(std::int8_t{});
    default: return f_of(float{});
  }
}

// The shape of what step s writes, in its logical order.
std::vector<py::ssize_t> written_shape(const graph_step& s) {
  auto n = [](std::uint32_t v) { return static_cast<py::ssize_t>(v); };
  switch (s.kind) {
    case graph_op_kind::matmul: return {n(s.matmul.whole.M), n(s.matmul.whole.logical_N)};
    case graph_op_kind::ew: return {n(s.ew.M), n(s.ew.N)};
    case graph_op_kind::act: return {n(s.act.M), n(s.act.N)};
    case graph_op_kind::conv: return {n(s.conv.conv.out_h), n(s.conv.conv.out_w), n(s.conv.conv.spec.out_channels)};
    case graph_op_kind::pool: return {n(s.pool.out_h), n(s.pool.out_w), n(s.pool.C)};
    case graph_op_kind::concat: return {n(s.concat.M), n(s.concat.N)};
  }
  return {};
}

const large_graph_geometry& graph_of(const built_program& p) {
  const auto* built_graph = std::get_if<runtime_program<large_graph_geometry>>(&p.code);
  if (!built_graph) throw spec_problem{"a graph program is needed, not " + p.kind};
  return built_graph->geometry;
}

// Packs a graph's inputs and weights given by name (a conv's weights OHWI, its bias by the
// conv's output name in `biases`: int32 quantized, fp16 values) into the bytes of their roles' buffers,
// `bytes(role)`. With `all_inputs`, every input the graph reads must be given.
template <class Bytes>
void pack_graph_inputs(const built_program& p, const py::dict& inputs, const py::dict& biases, bool all_inputs,
                       Bytes&& bytes) {
  const large_graph_geometry& g = graph_of(p);
  std::size_t used = 0;
  // the norm family's constants, from γ and β by the names their lines give
  std::vector<std::string> constants;
  for (const cli::graph_preset& preset : p.presets) {
    auto vector_of = [&](const std::string& name) {
      if (name.empty()) return host_array<float>{};
      if (!inputs.contains(name)) throw spec_problem{"the " + preset.prefix + " norm reads '" + name + "': give it in inputs"};
      ++used;
      return values_of<float>(inputs[name.c_str()], preset.norm.D, "a norm's γ or β");
    };
    const host_array<float> gamma = vector_of(preset.gamma), beta = vector_of(preset.beta);
    const auto values = cli::constants_of(preset, span_of(gamma), span_of(beta));
    if (!values) raise(values.err());
    for (const norm_constant& c : values.value()) {
      check(pack_tensor<float>(g, c.name.view(), c.values, bytes(c.role)));
      constants.emplace_back(c.name.view());
    }
  }
  for (std::uint32_t t = 0; t < g.tensor_count; ++t) {
    const graph_tensor& x = g.tensors[t];
    // what an op writes is no input; a quantized conv's bias has no name: it packs with the conv's weights
    if (x.writer != no_op || x.name.view().empty()) continue;
    const std::string name(x.name.view());
    if (std::find(constants.begin(), constants.end(), name) != constants.end()) continue;
    if (!inputs.contains(name)) {
      if (all_inputs) throw spec_problem{"the graph reads '" + name + "': give it in inputs"};
      continue;
    }
    ++used;
    const py::object host = inputs[name.c_str()];
    // a conv's weights pack with its bias operand, each conv's
    bool conv_weights = false;
    for (std::uint32_t i = 0; i < g.step_count; ++i) {
      const graph_step& s = g.steps[i];
      if (s.kind != graph_op_kind::conv || s.b != t) continue;
      conv_weights = true;
      const std::string conv(g.tensors[s.out].name.view());
      const conv_spec& c = s.conv.conv.spec;
      std::vector<std::int32_t> bias;
      if (c.bias && s.conv.conv.quantized()) {
        if (!biases.contains(conv)) throw spec_problem{"the conv '" + conv + "' adds a bias: give it in biases"};
        const host_array<std::int32_t> b = values_of<std::int32_t>(biases[conv.c_str()], c.out_channels, "a bias");
        bias.assign(b.data(), b.data() + b.size());
      }
      check(with_host_type(x.format, [&](auto element) {
        using T = decltype(element);
        return pack_conv<T>(g, conv, span_of(host_values<T>(host, name)), bias, bytes(operand_role::weight),
                            bytes(operand_role::bias));
      }));
      if (s.conv.conv.ew_bias()) {  // an fp16 conv's bias: fp16 values, packed apart
        if (!biases.contains(conv)) throw spec_problem{"the conv '" + conv + "' adds a bias: give it in biases"};
        const host_array<float> b = values_of<float>(biases[conv.c_str()], c.out_channels, "a bias");
        check(pack_fp16_conv_bias(g, conv, span_of(b), bytes(operand_role::bias)));
      }
    }
    if (conv_weights) continue;
    check(with_host_type(x.format, [&](auto element) {
      using T = decltype(element);
      return pack_tensor<T>(g, name, span_of(host_values<T>(host, name)), bytes(x.role));
    }));
  }
  if (used != inputs.size()) {
    for (const auto& [k, v] : inputs) {
      const std::string key = py::cast<std::string>(k);
      const graph_tensor* x = g.find(key);
      const bool norm_vector = std::any_of(p.presets.begin(), p.presets.end(), [&](const cli::graph_preset& n) {
        return n.gamma == key || n.beta == key;
      });
      if (!norm_vector && (!x || x->writer != no_op)) throw spec_problem{"the graph reads no input '" + key + "'"};
    }
  }
}

// The bytes of each buffer a graph's tensors live in, with the given inputs and weights
// packed (the others' bytes zero): what a firmware image stores for the constants.
py::dict pack_graph(const built_program& p, const py::dict& inputs, const py::dict& biases) {
  const large_graph_geometry& g = graph_of(p);
  std::vector<std::vector<std::uint8_t>> buffers(operand_role_count);
  for (std::size_t r = 0; r < operand_role_count; ++r) buffers[r].resize(g.buffer_bytes[r]);
  pack_graph_inputs(p, inputs, biases, false,
                    [&](operand_role r) { return std::span<std::uint8_t>(buffers[static_cast<std::size_t>(r)]); });
  py::dict out;
  for (std::size_t r = 0; r < operand_role_count; ++r)
    if (!buffers[r].empty())
      out[py::str(std::string(name_of(static_cast<operand_role>(r))))] =
          py::bytes(reinterpret_cast<const char*>(buffers[r].data()), buffers[r].size());
  return out;
}

// A graph with its inputs and weights by name (pack_graph_inputs); its outputs by name.
py::dict run_graph(const npu_device& d, const built_program& p, const py::dict& inputs, const py::dict& biases) {
  const large_graph_geometry& g = graph_of(p);
  auto io = runtime::graph_buffers::create(d.dev, g);
  if (!io) raise(io.err());
  pack_graph_inputs(p, inputs, biases, true, [&](operand_role r) { return io.value().bytes(r); });
  submit(d, p, io.value().operands());
  // intermediates in bytes of their own are read back too
  const bool intermediates = g.intermediates_kept;
  if (intermediates) check(io.value().read_back(operand_role::intermediate));
  py::dict out;
  for (std::uint32_t t = 0; t < g.tensor_count; ++t) {
    const graph_tensor& x = g.tensors[t];
    if (x.kind != tensor_kind::output && !(intermediates && x.kind == tensor_kind::intermediate)) continue;
    const std::vector<py::ssize_t> shape = written_shape(g.steps[x.writer]);
    out[py::str(std::string(x.name.view()))] = with_host_type(x.format, [&](auto element) -> py::object {
      using T = decltype(element);
      py::array_t<T> a(shape);
      check(io.value().unpack<T>(x.name.view(), std::span<T>(a.mutable_data(), static_cast<std::size_t>(a.size()))));
      return py::object(std::move(a));
    });
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_regcmd, m) {
  m.doc() = "regcmd's C++ side: programs built from keyword specs, and the device they run on";
  static py::exception<spec_problem> spec_error(m, "SpecError", PyExc_ValueError);
  static py::exception<rule_broken> rule_error(m, "RuleError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const spec_problem& p) {
      PyErr_SetString(spec_error.ptr(), p.text.c_str());
    } catch (const rule_broken& r) {
      py::object error = py::reinterpret_borrow<py::object>(rule_error.ptr())(r.text);
      error.attr("rule") = r.id;
      PyErr_SetObject(rule_error.ptr(), error.ptr());
    }
  });

  py::class_<built_program>(m, "Program", "A regcmd program: its entries, tasks and address slots, and its accounting.")
      .def_readonly("kind", &built_program::kind)
      .def_property_readonly("entries", [](const built_program& p) {
        const auto e = p.view().entries;
        py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(e.size()));
        for (std::size_t i = 0; i < e.size(); ++i) out.mutable_data()[i] = e[i].bits();
        return out;
      }, "The 64-bit entries, in submit order (block << 48 | value << 16 | offset).")
      .def_property_readonly("task_count", [](const built_program& p) { return p.view().tasks.size(); })
      .def_property_readonly("slot_count", [](const built_program& p) { return p.view().slots.size(); })
      .def_property_readonly("slots", [](const built_program& p) {
        py::list out;
        for (const slot& x : p.view().slots)
          out.append(py::make_tuple(x.entry, std::string(name_of(x.role)), x.offset, x.extent));
        return out;
      }, "The address slots: (entry index, operand role, byte offset, extent), which binding patches.")
      .def_property_readonly("pingpong", [](const built_program& p) { return p.view().pingpong; })
      .def("stats", &stats_of, "Tasks, submits, entries, bytes read and written, MACs and the roofline bound (ns).")
      .def("hex", &hex_of, "One 16-digit hex entry a line, as regcmd-gen writes.")
      .def("json", &json_of, "Every entry decoded, as regcmd-gen --format json writes.")
      .def("cpp", &cpp_of, py::arg("name"), py::arg("namespace") = "regcmd_model", py::arg("source") = "a regcmd program",
           "The program as a C++ header: a constexpr template (regcmd/programs/captured.hpp) with its slots as built, "
           "checked by every program rule where it compiles.")
      .def_property_readonly("tensors", [](const built_program& p) {
        const large_graph_geometry& g = graph_of(p);
        py::list out;
        for (std::uint32_t t = 0; t < g.tensor_count; ++t) {
          const graph_tensor& x = g.tensors[t];
          static constexpr const char* kinds[] = {"input", "weight", "intermediate", "output"};
          out.append(py::make_tuple(std::string(x.name.view()), kinds[static_cast<int>(x.kind)],
                                    std::string(name_of(x.role)), x.offset, x.bytes));
        }
        return out;
      }, "A graph's tensors: (name, kind, buffer role, byte offset in it, bytes).")
      .def_property_readonly("buffer_bytes", [](const built_program& p) {
        const large_graph_geometry& g = graph_of(p);
        py::dict out;
        for (std::size_t r = 0; r < operand_role_count; ++r)
          if (g.buffer_bytes[r]) out[py::str(std::string(name_of(static_cast<operand_role>(r))))] = g.buffer_bytes[r];
        return out;
      }, "A graph's buffers: bytes per role.")
      .def("__repr__", [](const built_program& p) {
        return "<regcmd.Program " + p.kind + ": " + std::to_string(p.view().tasks.size()) + " tasks, " +
               std::to_string(p.view().entries.size()) + " entries>";
      });

  m.def("softmax_row_length", &softmax_row_length, py::arg("length"),
        "The elements a softmax row of `length` is held in on the NPU (a multiple of 32 its pooling takes); the "
        "padding is masked.");
  m.def("build", &build_program, py::arg("kind"),
        "build(kind, **spec): a program of kind matmul, plan, ew, act, conv or pool from its spec's keywords "
        "(regcmd-gen's options: M=4, K=64, N=32, dtype='fp16', out_dtype='fp32', kernel=(3, 3), relu=True, ...).");

  m.def("graph", &build_graph_text, py::arg("text"), py::arg("keep_intermediates") = false,
        "graph(text, keep_intermediates=False): one program of the ops a graph file's text wires by named tensors "
        "(docs/graph.md), one op a line: 'y = conv x k --in fp16 -H 8 -W 8 -C 16 --out-channels 16'. With "
        "keep_intermediates every intermediate has bytes of its own, and run_graph returns it beside the outputs.");

  py::class_<npu_device>(m, "Device", "The NPU node, or the emulated device in this process.")
      .def_property_readonly("path", [](const npu_device& d) { return d.dev.path(); })
      .def_property_readonly("driver", [](const npu_device& d) { return std::string(runtime::name_of(d.dev.kind())); })
      .def_property_readonly("driver_version", [](const npu_device& d) { return d.dev.driver_version(); })
      .def_readonly("emulated", &npu_device::emulated)
      .def("run_graph", &run_graph, py::arg("program"), py::arg("inputs"), py::arg("biases") = py::dict(),
           "Runs a graph program: its inputs and weights by name in `inputs` (numpy arrays: row-major matrices, NHWC "
           "images, OHWI conv weights), a quantized conv's int32 bias by the conv's output name in `biases`; its "
           "outputs by name (and its intermediates, when the graph keeps them).")
      .def("run", &run_program, py::arg("program"), py::arg("a"), py::arg("b") = py::none(), py::arg("bias") = py::none(),
           py::arg("residual") = py::none(),
           "Runs a matmul or a plan (a: M x K, b: K x N; fp16 as floats, int8 as int8 with an int32 result; a plan's "
           "K slices summed on the host), a pooling (a: H x W x C, the result out_h x out_w x C), an element-wise "
           "op (a: M x N; b: M x N per element, N per channel, none for an immediate), an activation (a: M x N) or a "
           "conv (a: H x W x C, b: OHWI weights, a quantized conv's int32 bias, add=True's residual; the output "
           "out_h x out_w x out_channels), with numpy arrays in and the result out.");

  m.def("pack_graph", &pack_graph, py::arg("program"), py::arg("inputs"), py::arg("biases") = py::dict(),
        "pack_graph(program, inputs, biases={}): the bytes of each buffer of a graph program by role name "
        "(feature, weight, ...), with the inputs and weights given packed as run_graph packs them and the rest zero.");

  m.def("open_device", &open_device, py::arg("path") = py::none(), py::arg("emulated") = py::none(),
        "The NPU node (path, else $REGCMD_DEVICE, else the first node found); where there is none, the emulated "
        "device in this process. emulated=True asks for the emulated one, False for the NPU only.");
}
