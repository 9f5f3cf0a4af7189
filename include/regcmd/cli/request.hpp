#pragma once
// The command-line language of specs, the request: the program a tool or a graph file's line
// asks for (a matmul, a plan, an SDP op, a fused chain, a convolution, an activation, a
// pooling) from its options, each checked against the program (an option of another program
// is refused by name), the defaults that follow from the others, and a library error as
// one line.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <regcmd/cli/values.hpp>
#include <regcmd/core/precision.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/programs/activation/activation.hpp>
#include <regcmd/programs/conv/spec.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/pooling/pooling.hpp>
#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/reference/activation.hpp>
#include <regcmd/rules/catalog.hpp>

namespace regcmd::cli {

// The program a tool is asked for: `ew` (an SDP op), `conv` (a convolution), `act` (an
// activation), `pool` (a pooling), or `matmul` (planned, or with `--then ew` a fused chain).
struct request {
  bool elementwise = false;
  bool fused_ew = false;
  bool convolution = false;
  bool activation = false;
  bool pooling = false;
  matmul_spec spec{};
  ew_spec ew{};
  conv_spec conv{};
  act_spec act{};
  pool_spec pool{};
  plan_options options{};

  fused_spec fused() const { return {.matmul = spec, .op = ew.op, .operand = ew.operand, .immediate = ew.immediate}; }
};

// An activation's functions and a pooling's ops by their command-line names, and a pooling's
// element types.
inline constexpr std::pair<std::string_view, activation> act_functions[] = {
    {"relu", activation::relu},         {"relu6", activation::relu6},         {"clip", activation::clip},
    {"leaky", activation::leaky_relu},  {"sigmoid", activation::sigmoid},     {"tanh", activation::tanh},
    {"silu", activation::silu},         {"gelu", activation::gelu},           {"gelu-erf", activation::gelu_erf},
    {"hardswish", activation::hardswish}, {"hardsigmoid", activation::hardsigmoid}, {"exp", activation::exp},
    {"mish", activation::mish},         {"elu", activation::elu},             {"selu", activation::selu},
    {"softplus", activation::softplus}, {"rsqrt-band", activation::rsqrt_band},
    {"reciprocal-band", activation::reciprocal_band}};
inline constexpr std::pair<std::string_view, pool_op> pool_ops[] = {
    {"max", pool_op::max}, {"avg", pool_op::average}, {"global-max", pool_op::global_max}, {"global-avg", pool_op::global_average}};
inline constexpr std::pair<std::string_view, precision> pool_dtypes[] = {{"fp16", precision::fp16}, {"int8", precision::int8}};

inline std::string_view name_of(pool_op op) {
  for (const auto& [name, value] : pool_ops)
    if (value == op) return name;
  return "?";
}

inline std::string_view name_of(activation f) {
  for (const auto& [name, value] : act_functions)
    if (value == f) return name;
  return "custom";
}

// The programs a request can ask for, each with its table of options below (a matmul's table
// holds its fused chain's options too: --then ew makes it one).
enum class request_program { matmul, ew, act, conv, pool };
inline constexpr std::string_view request_program_names[] = {"matmul", "ew", "act", "conv", "pool"};

inline request_program program_of(const request& r) {
  return r.pooling ? request_program::pool
         : r.convolution ? request_program::conv
         : r.activation  ? request_program::act
         : r.elementwise ? request_program::ew
                         : request_program::matmul;
}

// One option of a program: its name and what it sets, from its value (a flag has none).
// The shape fields are 32 bits; the programs' rules give the real limits.
struct request_option {
  std::string_view name;
  problem (*set)(request&, std::string_view option, std::string_view value);
  bool valued = true;
};

namespace detail {
inline constexpr std::uint64_t u32_max = 0xffff'ffffu;
inline constexpr std::pair<std::string_view, ew_op> ew_ops[] = {
    {"add", ew_op::add}, {"mul", ew_op::mul}, {"max", ew_op::max}, {"min", ew_op::min}, {"prelu", ew_op::prelu}};
inline constexpr std::pair<std::string_view, ew_operand> ew_operands[] = {
    {"per-element", ew_operand::per_element}, {"per-channel", ew_operand::per_channel}, {"immediate", ew_operand::immediate}};
inline constexpr std::pair<std::string_view, operand_layout> sdp_layouts[] = {{"surface", operand_layout::surface},
                                                                             {"flat", operand_layout::row_major}};
inline constexpr std::pair<std::string_view, operand_layout> matmul_layouts[] = {{"row_major", operand_layout::row_major},
                                                                                {"surface", operand_layout::surface}};
inline constexpr std::pair<std::string_view, bool> then_ew[] = {{"ew", true}};
inline constexpr std::pair<std::string_view, conv_data> conv_inputs[] = {
    {"uint8", conv_data::uint8}, {"int8", conv_data::int8}, {"fp16", conv_data::fp16}};
inline constexpr std::pair<std::string_view, precision> conv_outputs[] = {
    {"int8", precision::int8}, {"fp16", precision::fp16}, {"fp32", precision::fp32}};

inline problem no_tile_padding(request& r, std::string_view, std::string_view) {
  r.spec.tile_pad = r.ew.tile_pad = r.act.tile_pad = tile_padding::none;
  return {};
}
inline problem set_leaky(request& r, std::string_view a, std::string_view v) {  // the slope's range is the act-leaky-slope rule's
  r.conv.activation = output_activation::leaky_relu;
  return scale_in(r.conv.leaky_slope, a, v);
}
// A pooling's padding, in the conv's form and read by the conv's parser.
inline problem set_pool_pad(request& r, std::string_view a, std::string_view v) {
  conv_spec c;
  problem bad = conv_padding_in(c, a, v);
  r.pool.padding = c.padding;
  r.pool.pad = c.pad;
  return bad;
}
}  // namespace detail

// Each program's options. A matmul's output activation is parsed as the conv's
// (complete_request copies it). A pooling's --kernel and --stride start from its spec's
// defaults (2 x 2, stride the kernel), not the conv's 1.
inline constexpr request_option matmul_options[] = {
    {"-M", [](request& r, auto a, auto v) { return number_in(r.spec.M, a, v, 1, detail::u32_max); }},
    {"-K", [](request& r, auto a, auto v) { return number_in(r.spec.K, a, v, 1, detail::u32_max); }},
    {"-N", [](request& r, auto a, auto v) { return number_in(r.spec.N, a, v, 1, detail::u32_max); }},
    {"--in", [](request& r, auto a, auto v) {
       precision p{};
       problem bad = named(p, a, v);
       if (bad.empty()) r.spec.dtype = p;
       return bad;
     }},
    {"--out", [](request& r, auto a, auto v) { return named(r.spec.out_dtype, a, v); }},
    {"--layout", [](request& r, auto a, auto v) { return one_of(r.spec.layout, a, v, detail::matmul_layouts); }},
    {"--k-slice", [](request& r, auto a, auto v) {
       // k-slice-max and the weight tile's K of 32 (regcmd-isa-reference "Limits & tiling
       // (RK3588)", "Operand tile layouts"); 0 would silently mean "choose".
       const auto k = parse_number(v);
       if (!k || *k < 32 || *k > soc::rk3588::max_k_slice || *k % 32 != 0)
         return takes(a, "a multiple of 32 from 32 to " + std::to_string(soc::rk3588::max_k_slice), v);
       r.options.k_slice = static_cast<std::uint32_t>(*k);
       return problem{};
     }},
    {"--delta", [](request& r, auto, auto) { r.options.delta_tasks = true; return problem{}; }, false},
    {"--no-pad", detail::no_tile_padding, false},
    {"--then", [](request& r, auto a, auto v) { return one_of(r.fused_ew, a, v, detail::then_ew); }},
    {"--op", [](request& r, auto a, auto v) { return one_of(r.ew.op, a, v, detail::ew_ops); }},
    {"--operand", [](request& r, auto a, auto v) { return one_of(r.ew.operand, a, v, detail::ew_operands); }},
    {"--value", [](request& r, auto a, auto v) { return immediate_in(r.ew.immediate, a, v); }},
    {"--relu", [](request& r, auto, auto) { r.conv.activation = output_activation::relu; return problem{}; }, false},
    {"--relu6", [](request& r, auto, auto) { r.conv.activation = output_activation::relu6; return problem{}; }, false},
    {"--leaky", detail::set_leaky},
};
inline constexpr request_option ew_options[] = {
    {"-M", [](request& r, auto a, auto v) { return number_in(r.ew.M, a, v, 1, detail::u32_max); }},
    {"-N", [](request& r, auto a, auto v) { return number_in(r.ew.N, a, v, 1, detail::u32_max); }},
    {"--dtype", [](request& r, auto a, auto v) { return named(r.ew.dtype, a, v); }},
    {"--layout", [](request& r, auto a, auto v) { return one_of(r.ew.layout, a, v, detail::sdp_layouts); }},
    {"--no-pad", detail::no_tile_padding, false},
    {"--op", [](request& r, auto a, auto v) { return one_of(r.ew.op, a, v, detail::ew_ops); }},
    {"--operand", [](request& r, auto a, auto v) { return one_of(r.ew.operand, a, v, detail::ew_operands); }},
    {"--value", [](request& r, auto a, auto v) { return immediate_in(r.ew.immediate, a, v); }},
};
inline constexpr request_option act_options[] = {
    {"-M", [](request& r, auto a, auto v) { return number_in(r.act.M, a, v, 1, detail::u32_max); }},
    {"-N", [](request& r, auto a, auto v) { return number_in(r.act.N, a, v, 1, detail::u32_max); }},
    {"--dtype", [](request& r, auto a, auto v) { return named(r.act.dtype, a, v); }},
    {"--layout", [](request& r, auto a, auto v) { return one_of(r.act.layout, a, v, detail::sdp_layouts); }},
    {"--no-pad", detail::no_tile_padding, false},
    {"--fn", [](request& r, auto a, auto v) { return one_of(r.act.fn, a, v, act_functions); }},
    {"--lo", [](request& r, auto a, auto v) { return finite_in(r.act.lo, a, v, 65504.0, "a number from -65504 to 65504"); }},
    {"--hi", [](request& r, auto a, auto v) { return finite_in(r.act.hi, a, v, 65504.0, "a number from -65504 to 65504"); }},
    {"--slope", [](request& r, auto a, auto v) {  // [0, 1): the rule's
       return finite_in(r.act.slope, a, v, 3.4028234663852886e38, "a finite number");
     }},
    {"--alpha", [](request& r, auto a, auto v) { return finite_in(r.act.alpha, a, v, 65504.0, "a number from -65504 to 65504"); }},
    {"--range", [](request& r, auto a, auto v) { return range_in(r.act.range, a, v); }},  // the tails: complete_request
    {"--elements", [](request& r, auto a, auto v) {
       r.act.M = 1;
       r.act.layout = operand_layout::row_major;
       return number_in(r.act.N, a, v, 1, detail::u32_max);
     }},
};
inline constexpr request_option conv_options[] = {
    {"-H", [](request& r, auto a, auto v) { return number_in(r.conv.H, a, v, 1, detail::u32_max); }},
    {"-W", [](request& r, auto a, auto v) { return number_in(r.conv.W, a, v, 1, detail::u32_max); }},
    {"-C", [](request& r, auto a, auto v) { return number_in(r.conv.C, a, v, 1, detail::u32_max); }},
    {"--out-channels", [](request& r, auto a, auto v) { return number_in(r.conv.out_channels, a, v, 1, detail::u32_max); }},
    {"--kernel", [](request& r, auto a, auto v) { return pair_in(r.conv.kernel_h, r.conv.kernel_w, a, v, "K or KHxKW"); }},
    {"--stride", [](request& r, auto a, auto v) { return pair_in(r.conv.stride_y, r.conv.stride_x, a, v, "S or SYxSX"); }},
    {"--dilation", [](request& r, auto a, auto v) { return pair_in(r.conv.dilation_y, r.conv.dilation_x, a, v, "D or DYxDX"); }},
    {"--pad", [](request& r, auto a, auto v) { return conv_padding_in(r.conv, a, v); }},
    {"--in", [](request& r, auto a, auto v) { return one_of(r.conv.dtype, a, v, detail::conv_inputs); }},
    {"--out", [](request& r, auto a, auto v) { return one_of(r.conv.out_dtype, a, v, detail::conv_outputs); }},
    {"--depthwise", [](request& r, auto, auto) { r.conv.depthwise = true; return problem{}; }, false},
    {"--bias", [](request& r, auto, auto) { r.conv.bias = true; return problem{}; }, false},
    {"--add", [](request& r, auto, auto) { r.conv.residual_add = true; return problem{}; }, false},
    {"--relu", [](request& r, auto, auto) { r.conv.activation = output_activation::relu; return problem{}; }, false},
    {"--relu6", [](request& r, auto, auto) { r.conv.activation = output_activation::relu6; return problem{}; }, false},
    {"--leaky", detail::set_leaky},
    {"--input-zero-point", [](request& r, auto a, auto v) { return signed_in(r.conv.input.zero_point, a, v); }},
    {"--input-scale", [](request& r, auto a, auto v) { return scale_in(r.conv.input.scale, a, v); }},
    {"--weight-zero-point", [](request& r, auto a, auto v) { return signed_in(r.conv.weights.zero_point, a, v); }},
    {"--weight-scale", [](request& r, auto a, auto v) { return scale_in(r.conv.weights.scale, a, v); }},
    {"--output-zero-point", [](request& r, auto a, auto v) { return signed_in(r.conv.output.zero_point, a, v); }},
    {"--output-scale", [](request& r, auto a, auto v) { return scale_in(r.conv.output.scale, a, v); }},
    {"--add-zero-point", [](request& r, auto a, auto v) { return signed_in(r.conv.residual.zero_point, a, v); }},
    {"--add-scale", [](request& r, auto a, auto v) { return scale_in(r.conv.residual.scale, a, v); }},
};
inline constexpr request_option pool_options[] = {
    {"--op", [](request& r, auto a, auto v) { return one_of(r.pool.op, a, v, pool_ops); }},
    {"--dtype", [](request& r, auto a, auto v) { return one_of(r.pool.dtype, a, v, pool_dtypes); }},
    {"-H", [](request& r, auto a, auto v) { return number_in(r.pool.H, a, v, 1, detail::u32_max); }},
    {"-W", [](request& r, auto a, auto v) { return number_in(r.pool.W, a, v, 1, detail::u32_max); }},
    {"-C", [](request& r, auto a, auto v) { return number_in(r.pool.C, a, v, 1, detail::u32_max); }},
    {"--kernel", [](request& r, auto a, auto v) { return pair_in(r.pool.kernel_h, r.pool.kernel_w, a, v, "K or KHxKW"); }},
    {"--stride", [](request& r, auto a, auto v) { return pair_in(r.pool.stride_y, r.pool.stride_x, a, v, "S or SYxSX"); }},
    {"--pad", detail::set_pool_pad},
};

inline std::span<const request_option> options_of(request_program p) {
  switch (p) {
    case request_program::matmul: return matmul_options;
    case request_program::ew: return ew_options;
    case request_program::act: return act_options;
    case request_program::conv: return conv_options;
    case request_program::pool: return pool_options;
  }
  return {};
}

inline const request_option* find_option(request_program p, std::string_view a) {
  for (const request_option& o : options_of(p))
    if (o.name == a) return &o;
  return nullptr;
}

// The option `a` as some program has it (nullptr: no program's).
inline const request_option* any_program_option(std::string_view a) {
  for (std::size_t p = 0; p < std::size(request_program_names); ++p)
    if (const request_option* o = find_option(static_cast<request_program>(p), a)) return o;
  return nullptr;
}

// The valued options apply() takes.
inline bool is_request_option(std::string_view a) {
  const request_option* o = any_program_option(a);
  return o && o->valued;
}

// Applies a flag of the request: false when `a` is no program's flag. A flag of another
// program is taken and refused by check_request, with the programs that have it.
inline bool apply_flag(request& r, std::string_view a) {
  const request_option* any = any_program_option(a);
  if (!any || any->valued) return false;
  if (const request_option* mine = find_option(program_of(r), a)) mine->set(r, a, {});
  return true;
}

// Applies one valued option of the request: nullopt when `a` is not one, else the
// problem with `v` (empty when it applied). An option of another program is taken unread
// and refused by check_request once all are known, so their order does not matter.
inline std::optional<problem> apply(request& r, std::string_view a, std::string_view v) {
  if (!is_request_option(a)) return std::nullopt;
  if (const request_option* mine = find_option(program_of(r), a)) return mine->set(r, a, v);
  return problem{};
}

// The first option given that the request's program does not take, named with the programs
// that do ("-M does not apply to conv (a matmul, ew and act option)").
inline problem refuse_other_programs(const request& r, const given_options& given) {
  const request_program mine = program_of(r);
  for (std::size_t p = 0; p < std::size(request_program_names); ++p)
    for (const request_option& o : options_of(static_cast<request_program>(p))) {
      if (!given.has(o.name) || find_option(mine, o.name)) continue;
      std::string owners;
      std::size_t count = 0;
      for (std::size_t q = 0; q < std::size(request_program_names); ++q)
        if (find_option(static_cast<request_program>(q), o.name)) ++count;
      for (std::size_t q = 0, seen = 0; q < std::size(request_program_names); ++q)
        if (find_option(static_cast<request_program>(q), o.name)) {
          ++seen;
          owners += std::string(seen == 1 ? "" : seen == count ? " and " : ", ") + std::string(request_program_names[q]);
        }
      const bool vowel = owners[0] == 'a' || owners[0] == 'e';
      return std::string(o.name) + " does not apply to " + std::string(request_program_names[static_cast<std::size_t>(mine)]) +
             (vowel ? " (an " : " (a ") + owners + " option)";
    }
  return {};
}

// An activation's options that do not fit its function, the shape given twice over; and
// the options it needs.
inline problem check_act(const request& r, const given_options& given) {
  const activation f = r.act.fn;
  const std::string fn = "to --fn " + std::string(name_of(f));
  problem p;
  if (!given.has("--fn")) {
    std::string names;
    for (const auto& [name, value] : act_functions) names += (names.empty() ? "" : " | ") + std::string(name);
    p = "act needs --fn: " + names;
  }
  if (p.empty() && f != activation::clip) p = given.refuse_any({"--lo", "--hi"}, fn + " (clip's bounds)");
  if (p.empty() && f != activation::leaky_relu) p = given.refuse_any({"--slope"}, fn + " (leaky's slope)");
  if (p.empty() && f != activation::elu) p = given.refuse_any({"--alpha"}, fn + " (elu's alpha)");
  if (p.empty() && !uses_lut(f)) p = given.refuse_any({"--range"}, fn + " (a lookup table's range)");
  if (p.empty() && given.has("--elements")) {
    for (std::string_view o : {"-M", "-N"})
      if (p.empty() && given.has(o)) p = "--elements and " + std::string(o) + " exclude each other: give one";
    if (p.empty()) p = given.refuse_any({"--layout"}, "with --elements (a flat vector of N elements)");
  }
  if (p.empty() && !given.has("--elements") && !(given.has("-M") && given.has("-N"))) p = "act needs -M and -N, or --elements";
  return p;
}

// A pooling's kernel, stride or padding on a global op (its kernel is the image); and the
// options it needs.
inline problem check_pool(const request& r, const given_options& given) {
  problem p;
  if (!given.has("--op")) {
    std::string names;
    for (const auto& [name, value] : pool_ops) names += (names.empty() ? "" : " | ") + std::string(name);
    p = "pool needs --op: " + names;
  }
  if (p.empty() && (r.pool.op == pool_op::global_max || r.pool.op == pool_op::global_average))
    p = given.refuse_any({"--kernel", "--stride", "--pad"}, "to --op " + std::string(name_of(r.pool.op)) + " (its kernel is the whole image)");
  if (p.empty() && !(given.has("-H") && given.has("-W") && given.has("-C"))) p = "pool needs -H, -W and -C";
  return p;
}

inline problem one_output_activation(const given_options& given);

// A conv's quantization options on fp16, the residual's without --add, two output
// activations; and the options it needs.
inline problem check_conv(const request& r, const given_options& given) {
  problem p;
  for (std::string_view o : {"--input-zero-point", "--input-scale", "--weight-zero-point", "--weight-scale",
                             "--output-zero-point", "--output-scale", "--add-zero-point", "--add-scale"})
    if (p.empty() && r.conv.dtype == conv_data::fp16 && given.has(o))
      p = std::string(o) + " does not apply to an fp16 conv (quantized inputs only)";
  if (p.empty() && !r.conv.residual_add) p = given.refuse_any({"--add-zero-point", "--add-scale"}, "without --add");
  if (p.empty()) p = one_output_activation(given);
  if (p.empty() && !(given.has("-H") && given.has("-W") && given.has("-C") && (given.has("--out-channels") || r.conv.depthwise)))
    p = "conv needs -H, -W, -C and --out-channels (with --depthwise, --out-channels is C)";
  return p;
}

// At most one of the output activations.
inline problem one_output_activation(const given_options& given) {
  if (int(given.has("--relu")) + int(given.has("--relu6")) + int(given.has("--leaky")) > 1)
    return "--relu, --relu6 and --leaky exclude each other: give one";
  return {};
}

// The request's options that do not fit its program (given once all are known), and the
// options it needs: what a matmul takes only with --then ew (or never with it) first, then
// another program's options, then each program's own.
inline problem check_request(const request& r, const given_options& given) {
  const request_program program = program_of(r);
  problem p;
  if (program == request_program::matmul && !r.fused_ew) {
    p = given.refuse_any({"--op", "--operand", "--value"}, "to a matmul without --then ew");
    if (p.empty()) p = given.refuse_any({"--dtype"}, "to matmul (--in and --out)");
  } else if (program == request_program::matmul) {
    p = given.refuse_any({"--dtype"}, "after --then ew (the fused op computes fp16)");
    if (p.empty()) p = given.refuse_any({"--k-slice", "--delta"}, "with --then ew (the fused chain's matmul is one task, not a plan)");
  }
  if (p.empty()) p = refuse_other_programs(r, given);
  if (!p.empty()) return p;
  switch (program) {
    case request_program::pool: return check_pool(r, given);
    case request_program::act: return check_act(r, given);
    case request_program::conv: return check_conv(r, given);
    case request_program::ew:
      if (!(given.has("-M") && given.has("-N"))) return "ew needs -M and -N";
      break;
    case request_program::matmul:
      p = one_output_activation(given);
      if (p.empty() && !(given.has("-M") && given.has("-K") && given.has("-N"))) p = "matmul needs -M, -K and -N";
      if (!p.empty()) return p;
      break;
  }
  if (given.has("--value") && r.ew.operand != ew_operand::immediate) return "--value does not apply without --operand immediate";
  return {};
}

// A conv's defaults, once its options are known (check_request passed): the output int8 for
// a quantized input and fp16 for fp16; zero points 0 (int8) or 128 (uint8); scales: input
// 0.05, weights 0.02, output input · weights · 128 · sqrt(KH · KW · C) (C 1 for depthwise),
// which keeps a sum of that many products of uniformly random int8 values mostly within the
// output's range; the residual's the output's. A depthwise conv's out_channels is C.
// The problem with what the options leave to defaults, or empty: an output scale not given is
// computed from the others, and may not be a float (1e30 x 1e30) or may be 0.
inline problem complete_conv(request& r, const given_options& given) {
  conv_spec& c = r.conv;
  if (!given.has("--out")) c.out_dtype = c.dtype == conv_data::fp16 ? precision::fp16 : precision::int8;
  if (c.depthwise && !given.has("--out-channels")) c.out_channels = c.C;
  if (c.dtype == conv_data::fp16) return {};
  const std::int32_t zero = c.dtype == conv_data::uint8 ? 128 : 0;
  if (!given.has("--input-zero-point")) c.input.zero_point = zero;
  if (!given.has("--weight-zero-point")) c.weights.zero_point = zero;
  if (!given.has("--output-zero-point")) c.output.zero_point = zero;
  if (!given.has("--add-zero-point")) c.residual.zero_point = zero;
  if (!given.has("--input-scale")) c.input.scale = 0.05f;
  if (!given.has("--weight-scale")) c.weights.scale = 0.02f;
  if (!given.has("--output-scale")) {
    const double taps = double(c.kernel_h) * c.kernel_w * (c.depthwise ? 1.0 : double(c.C));
    const double scale = double(c.input.scale) * c.weights.scale * 128.0 * std::sqrt(taps);
    c.output.scale = static_cast<float>(scale);
    // (a scale given that is no float above 0 is the conv-scale rule's, and names itself)
    auto valid = [](float s) { return std::isfinite(s) && s > 0; };
    if (valid(c.input.scale) && valid(c.weights.scale) && !valid(c.output.scale)) {
      char line[256];
      std::snprintf(line, sizeof line,
                    "--output-scale is not given and its default, input scale x weight scale x 128 x sqrt(%g taps) "
                    "= %g, is no float above 0: give --output-scale",
                    taps, scale);
      return line;
    }
  }
  if (!given.has("--add-scale")) c.residual.scale = c.output.scale;
  return {};
}

// What follows from the options once all are known: an activation's table range (a
// --range moves the function's bounds and keeps its tails: SiLU, GELU, hardswish and mish
// continue linearly above), and a matmul's fused activation (parsed as the conv's).
inline void complete_request(request& r, const given_options& given) {
  r.spec.activation = r.conv.activation;
  if (r.conv.activation == output_activation::leaky_relu) r.spec.leaky_slope = r.conv.leaky_slope;  // else the spec's 0
  if (!r.activation || !given.has("--range")) return;
  lut_range range = reference::default_range(r.act.fn);
  range.lo = r.act.range.lo;
  range.hi = r.act.range.hi;
  r.act.range = range;
}

// A library error as one line, a precision by its name and an address in hex: the doors
// report the request's precision fields as numbers ("ew.dtype = 5" is fp32).
inline std::string describe(const error& e) {
  const bool precision_field = e.detail == "dtype" || e.detail == "out_dtype" || e.detail == "matmul.out_dtype" ||
                               e.detail == "conv.out_dtype";
  const std::string_view name = info_of<precision>().name_of(static_cast<std::uint32_t>(e.value));
  std::string value;
  if (e.has_value && e.breaks(rules::iova_32bit)) value = regcmd::hex(e.value, 1);
  else if (e.has_value && precision_field && e.value <= 0xffff'ffffu && !name.empty()) value = name;
  if (value.empty()) return to_string(e);
  error named = e;
  const std::string detail = std::string(e.detail) + " = " + value;
  named.detail = detail;
  named.has_value = false;
  return to_string(named);
}

}  // namespace regcmd::cli
