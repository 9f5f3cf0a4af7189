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

// A conv's valued options (conv only) and its quantization options (quantized convs only;
// the --add ones with --add only).
inline constexpr std::string_view conv_options[] = {"-H", "-W", "-C", "--out-channels", "--kernel", "--stride", "--dilation", "--pad",
                                                    "--leaky"};
inline constexpr std::string_view conv_quantization_options[] = {
    "--input-zero-point", "--input-scale",  "--weight-zero-point", "--weight-scale",
    "--output-zero-point", "--output-scale", "--add-zero-point",    "--add-scale"};
inline constexpr std::string_view conv_flags[] = {"--depthwise", "--bias", "--relu", "--relu6", "--add"};

// The output activation's options: the conv's, and a matmul's.
inline bool is_output_activation(std::string_view o) { return o == "--relu" || o == "--relu6" || o == "--leaky"; }

// An activation's valued options (act only), and its functions by their command-line names.
inline constexpr std::string_view act_options[] = {"--fn", "--lo", "--hi", "--slope", "--range", "--elements"};
inline constexpr std::pair<std::string_view, activation> act_functions[] = {
    {"relu", activation::relu},         {"relu6", activation::relu6},         {"clip", activation::clip},
    {"leaky", activation::leaky_relu},  {"sigmoid", activation::sigmoid},     {"tanh", activation::tanh},
    {"silu", activation::silu},         {"gelu", activation::gelu},           {"gelu-erf", activation::gelu_erf},
    {"hardswish", activation::hardswish}, {"hardsigmoid", activation::hardsigmoid}, {"exp", activation::exp},
    {"mish", activation::mish}};

// A pooling's ops by their command-line names, and its element types.
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

// The valued options apply() takes.
inline bool is_request_option(std::string_view a) {
  for (std::string_view o : {"--then", "--op", "--operand", "--value", "--dtype", "--in", "--out", "-M", "-K", "-N", "--k-slice", "--layout"})
    if (a == o) return true;
  for (std::string_view o : conv_options)
    if (a == o) return true;
  for (std::string_view o : conv_quantization_options)
    if (a == o) return true;
  for (std::string_view o : act_options)
    if (a == o) return true;
  return false;
}

// Applies a flag of the request (a conv's): false when `a` is not one.
inline bool apply_flag(request& r, std::string_view a) {
  if (a == "--depthwise") r.conv.depthwise = true;
  else if (a == "--bias") r.conv.bias = true;
  else if (a == "--relu") r.conv.activation = output_activation::relu;
  else if (a == "--relu6") r.conv.activation = output_activation::relu6;
  else if (a == "--add") r.conv.residual_add = true;
  else return false;
  return true;
}

// A conv's valued option (nullopt when `a` is not one).
inline std::optional<problem> apply_conv(conv_spec& c, std::string_view a, std::string_view v) {
  constexpr std::uint64_t u32_max = 0xffff'ffffu;
  if (a == "-H") return number_in(c.H, a, v, 1, u32_max);
  if (a == "-W") return number_in(c.W, a, v, 1, u32_max);
  if (a == "-C") return number_in(c.C, a, v, 1, u32_max);
  if (a == "--out-channels") return number_in(c.out_channels, a, v, 1, u32_max);
  if (a == "--kernel") return pair_in(c.kernel_h, c.kernel_w, a, v, "K or KHxKW");
  if (a == "--stride") return pair_in(c.stride_y, c.stride_x, a, v, "S or SYxSX");
  if (a == "--dilation") return pair_in(c.dilation_y, c.dilation_x, a, v, "D or DYxDX");
  if (a == "--pad") return conv_padding_in(c, a, v);
  if (a == "--input-zero-point") return signed_in(c.input.zero_point, a, v);
  if (a == "--weight-zero-point") return signed_in(c.weights.zero_point, a, v);
  if (a == "--output-zero-point") return signed_in(c.output.zero_point, a, v);
  if (a == "--add-zero-point") return signed_in(c.residual.zero_point, a, v);
  if (a == "--input-scale") return scale_in(c.input.scale, a, v);
  if (a == "--weight-scale") return scale_in(c.weights.scale, a, v);
  if (a == "--output-scale") return scale_in(c.output.scale, a, v);
  if (a == "--add-scale") return scale_in(c.residual.scale, a, v);
  if (a == "--leaky") {  // the slope's range is the act-leaky-slope rule's
    c.activation = output_activation::leaky_relu;
    return scale_in(c.leaky_slope, a, v);
  }
  return std::nullopt;
}

// A pooling's valued option (nullopt when `a` is not one): its shape, kernel, stride and
// padding in the conv's forms, read by the conv's parsers. --kernel and --stride start from
// the spec's defaults (2 x 2, stride the kernel), not the conv's 1.
inline std::optional<problem> apply_pool(pool_spec& p, std::string_view a, std::string_view v) {
  constexpr std::uint64_t u32_max = 0xffff'ffffu;
  if (a == "--op") return one_of(p.op, a, v, pool_ops);
  if (a == "--dtype") return one_of(p.dtype, a, v, pool_dtypes);
  if (a == "-H") return number_in(p.H, a, v, 1, u32_max);
  if (a == "-W") return number_in(p.W, a, v, 1, u32_max);
  if (a == "-C") return number_in(p.C, a, v, 1, u32_max);
  if (a == "--kernel") return pair_in(p.kernel_h, p.kernel_w, a, v, "K or KHxKW");
  if (a == "--stride") return pair_in(p.stride_y, p.stride_x, a, v, "S or SYxSX");
  if (a == "--pad") {
    conv_spec c;
    problem bad = conv_padding_in(c, a, v);
    p.padding = c.padding;
    p.pad = c.pad;
    return bad;
  }
  return std::nullopt;
}

// Applies one valued option of the request: nullopt when `a` is not one, else the
// problem with `v` (empty when it applied). Which options fit the program is checked
// once all are known (check_request), so their order does not matter.
inline std::optional<problem> apply(request& r, std::string_view a, std::string_view v) {
  constexpr std::uint64_t u32_max = 0xffff'ffffu;
  static constexpr std::pair<std::string_view, ew_op> ops[] = {
      {"add", ew_op::add}, {"mul", ew_op::mul}, {"max", ew_op::max}, {"min", ew_op::min}, {"prelu", ew_op::prelu}};
  static constexpr std::pair<std::string_view, ew_operand> operands[] = {
      {"per-element", ew_operand::per_element}, {"per-channel", ew_operand::per_channel}, {"immediate", ew_operand::immediate}};
  static constexpr std::pair<std::string_view, operand_layout> ew_layouts[] = {{"surface", operand_layout::surface}, {"flat", operand_layout::row_major}};
  static constexpr std::pair<std::string_view, operand_layout> matmul_layouts[] = {{"row_major", operand_layout::row_major},
                                                                                  {"surface", operand_layout::surface}};
  static constexpr std::pair<std::string_view, bool> then[] = {{"ew", true}};
  if (r.pooling)
    if (const std::optional<problem> pool = apply_pool(r.pool, a, v)) return pool;  // the others are refused below
  if (r.convolution) {
    static constexpr std::pair<std::string_view, conv_data> conv_inputs[] = {
        {"uint8", conv_data::uint8}, {"int8", conv_data::int8}, {"fp16", conv_data::fp16}};
    static constexpr std::pair<std::string_view, precision> conv_outputs[] = {
        {"int8", precision::int8}, {"fp16", precision::fp16}, {"fp32", precision::fp32}};
    if (a == "--in") return one_of(r.conv.dtype, a, v, conv_inputs);
    if (a == "--out") return one_of(r.conv.out_dtype, a, v, conv_outputs);
  }
  if (const std::optional<problem> conv = apply_conv(r.conv, a, v)) return conv;  // refused below unless conv
  if (a == "--fn") return one_of(r.act.fn, a, v, act_functions);
  if (a == "--lo") return finite_in(r.act.lo, a, v, 65504.0, "a number from -65504 to 65504");
  if (a == "--hi") return finite_in(r.act.hi, a, v, 65504.0, "a number from -65504 to 65504");
  if (a == "--slope") return finite_in(r.act.slope, a, v, 3.4028234663852886e38, "a finite number");  // [0, 1): the rule's
  if (a == "--range") return range_in(r.act.range, a, v);  // the tails: complete_act
  if (a == "--elements") {
    r.act.M = 1;
    r.act.layout = operand_layout::row_major;
    return number_in(r.act.N, a, v, 1, u32_max);
  }
  if (a == "--dtype" && r.activation) return named(r.act.dtype, a, v);
  if (a == "--then") return one_of(r.fused_ew, a, v, then);
  if (a == "--op") return one_of(r.ew.op, a, v, ops);
  if (a == "--operand") return one_of(r.ew.operand, a, v, operands);
  if (a == "--value") return immediate_in(r.ew.immediate, a, v);
  if (a == "--dtype") return named(r.ew.dtype, a, v);
  if (a == "--in") {
    precision p{};
    problem bad = named(p, a, v);
    if (bad.empty()) r.spec.dtype = p;
    return bad;
  }
  if (a == "--out") return named(r.spec.out_dtype, a, v);
  // The shape fields are 32 bits; the programs' rules give the real limits.
  if (a == "-M") return number_in(r.activation ? r.act.M : r.elementwise ? r.ew.M : r.spec.M, a, v, 1, u32_max);
  if (a == "-K") return number_in(r.spec.K, a, v, 1, u32_max);
  if (a == "-N") return number_in(r.activation ? r.act.N : r.elementwise ? r.ew.N : r.spec.N, a, v, 1, u32_max);
  if (a == "--k-slice") {
    // k-slice-max and the weight tile's K of 32 (regcmd-isa-reference "Limits & tiling
    // (RK3588)", "Operand tile layouts"); 0 would silently mean "choose".
    const auto k = parse_number(v);
    if (!k || *k < 32 || *k > soc::rk3588::max_k_slice || *k % 32 != 0)
      return takes(a, "a multiple of 32 from 32 to " + std::to_string(soc::rk3588::max_k_slice), v);
    r.options.k_slice = static_cast<std::uint32_t>(*k);
    return problem{};
  }
  if (a == "--layout") {
    if (r.activation) return one_of(r.act.layout, a, v, ew_layouts);
    return r.elementwise ? one_of(r.ew.layout, a, v, ew_layouts) : one_of(r.spec.layout, a, v, matmul_layouts);
  }
  return std::nullopt;
}

// An activation's options that do not fit it: the matmul's and ew's, each function's own
// options on another function, the shape given twice over; and the options it needs.
inline problem check_act(const request& r, const given_options& given) {
  const activation f = r.act.fn;
  const std::string fn = "to --fn " + std::string(name_of(f));
  problem p = given.refuse_any({"--in", "--out", "-K", "--then", "--k-slice", "--delta"}, "to act (a matmul option)");
  if (p.empty()) p = given.refuse_any({"--op", "--operand", "--value"}, "to act (an ew option)");
  if (p.empty() && !given.has("--fn")) {
    std::string names;
    for (const auto& [name, value] : act_functions) names += (names.empty() ? "" : " | ") + std::string(name);
    p = "act needs --fn: " + names;
  }
  if (p.empty() && f != activation::clip) p = given.refuse_any({"--lo", "--hi"}, fn + " (clip's bounds)");
  if (p.empty() && f != activation::leaky_relu) p = given.refuse_any({"--slope"}, fn + " (leaky's slope)");
  if (p.empty() && !uses_lut(f)) p = given.refuse_any({"--range"}, fn + " (a lookup table's range)");
  if (p.empty() && given.has("--elements")) {
    for (std::string_view o : {"-M", "-N"})
      if (p.empty() && given.has(o)) p = "--elements and " + std::string(o) + " exclude each other: give one";
    if (p.empty()) p = given.refuse_any({"--layout"}, "with --elements (a flat vector of N elements)");
  }
  if (p.empty() && !given.has("--elements") && !(given.has("-M") && given.has("-N"))) p = "act needs -M and -N, or --elements";
  return p;
}

// A pooling's options that do not fit it: the other programs', a kernel, stride or padding
// on a global op (its kernel is the image); and the options it needs.
inline problem check_pool(const request& r, const given_options& given) {
  problem p = given.refuse_any({"-M", "-N", "--layout"}, "to pool (a matmul, ew and act option)");
  if (p.empty()) p = given.refuse_any({"--in", "--out"}, "to pool (a matmul and conv option)");
  if (p.empty()) p = given.refuse_any({"-K", "--then", "--k-slice", "--delta"}, "to pool (a matmul option)");
  if (p.empty()) p = given.refuse_any({"--operand", "--value"}, "to pool (an ew option)");
  for (std::string_view o : act_options)
    if (p.empty() && given.has(o)) p = std::string(o) + " does not apply to pool (an act option)";
  for (auto options : {std::span<const std::string_view>(conv_quantization_options), std::span<const std::string_view>(conv_flags)})
    for (std::string_view o : options)
      if (p.empty() && given.has(o)) p = std::string(o) + " does not apply to pool (a conv option)";
  if (p.empty()) p = given.refuse_any({"--out-channels", "--dilation"}, "to pool (a conv option)");
  if (p.empty() && !given.has("--op")) {
    std::string names;
    for (const auto& [name, value] : pool_ops) names += (names.empty() ? "" : " | ") + std::string(name);
    p = "pool needs --op: " + names;
  }
  if (p.empty() && (r.pool.op == pool_op::global_max || r.pool.op == pool_op::global_average))
    p = given.refuse_any({"--kernel", "--stride", "--pad"}, "to --op " + std::string(name_of(r.pool.op)) + " (its kernel is the whole image)");
  if (p.empty() && !(given.has("-H") && given.has("-W") && given.has("-C"))) p = "pool needs -H, -W and -C";
  return p;
}

// At most one of the output activations.
inline problem one_output_activation(const given_options& given) {
  if (int(given.has("--relu")) + int(given.has("--relu6")) + int(given.has("--leaky")) > 1)
    return "--relu, --relu6 and --leaky exclude each other: give one";
  return {};
}

// The request's options that do not fit its program (given once all are known), and the
// shape options it needs.
inline problem check_request(const request& r, const given_options& given) {
  problem p;
  if (r.pooling) return check_pool(r, given);
  if (r.convolution) {
    p = given.refuse_any({"-M", "-N", "--layout"}, "to conv (a matmul, ew and act option)");
    if (p.empty()) p = given.refuse_any({"-K", "--then", "--k-slice", "--delta"}, "to conv (a matmul option)");
    if (p.empty()) p = given.refuse_any({"--op", "--operand", "--value"}, "to conv (an ew option)");
    if (p.empty()) p = given.refuse_any({"--dtype"}, "to conv (an ew and act option)");
    for (std::string_view o : act_options)
      if (p.empty() && given.has(o)) p = std::string(o) + " does not apply to conv (an act option)";
    for (std::string_view o : conv_quantization_options)
      if (p.empty() && r.conv.dtype == conv_data::fp16 && given.has(o))
        p = std::string(o) + " does not apply to an fp16 conv (quantized inputs only)";
    if (p.empty() && !r.conv.residual_add) p = given.refuse_any({"--add-zero-point", "--add-scale"}, "without --add");
    if (p.empty()) p = one_output_activation(given);
    if (p.empty() && !(given.has("-H") && given.has("-W") && given.has("-C") && (given.has("--out-channels") || r.conv.depthwise)))
      p = "conv needs -H, -W, -C and --out-channels (with --depthwise, --out-channels is C)";
    return p;
  }
  // a conv's options, before anything else is asked of the matmul, ew or act; a matmul
  // takes the conv's output activation
  const std::string program = r.activation ? "act" : r.elementwise ? "ew" : "matmul";
  const bool matmul = program == "matmul";
  for (auto options : {std::span<const std::string_view>(conv_options), std::span<const std::string_view>(conv_quantization_options),
                       std::span<const std::string_view>(conv_flags)})
    for (std::string_view o : options)
      if (p.empty() && given.has(o) && !(matmul && is_output_activation(o)))
        p = std::string(o) + " does not apply to " + program + " (a conv option)";
  if (!p.empty()) return p;
  if (matmul) p = one_output_activation(given);
  if (!p.empty()) return p;
  if (r.activation) return check_act(r, given);
  for (std::string_view o : act_options)
    if (p.empty() && given.has(o)) p = std::string(o) + " does not apply to " + program + " (an act option)";
  if (!p.empty()) return p;
  if (r.elementwise) {
    p = given.refuse_any({"--in", "--out", "-K", "--then", "--k-slice", "--delta"}, "to ew (a matmul option)");
    if (p.empty() && !(given.has("-M") && given.has("-N"))) p = "ew needs -M and -N";
  } else {
    if (!r.fused_ew) p = given.refuse_any({"--op", "--operand", "--value"}, "to a matmul without --then ew");
    if (p.empty()) p = given.refuse_any({"--dtype"}, r.fused_ew ? "after --then ew (the fused op computes fp16)" : "to matmul (--in and --out)");
    if (p.empty() && r.fused_ew)
      p = given.refuse_any({"--k-slice", "--delta"}, "with --then ew (the fused chain's matmul is one task, not a plan)");
    if (p.empty() && !(given.has("-M") && given.has("-K") && given.has("-N"))) p = "matmul needs -M, -K and -N";
  }
  if (p.empty() && given.has("--value") && r.ew.operand != ew_operand::immediate)
    p = "--value does not apply without --operand immediate";
  return p;
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
