#pragma once
// A graph description file (docs/graph.md, "Graph files"): one op per line,
//
//   OUT = PROGRAM IN... OPTIONS
//
//   # LLaMA's FFN at decode, hidden 64, intermediate 256
//   gate = matmul x w_gate --in fp16 --out fp16 -M 1 -K 64 -N 256
//   up   = matmul x w_up   --in fp16 --out fp16 -M 1 -K 64 -N 256
//   act  = act gate --fn silu -M 1 -N 256
//   h    = ew act up --op mul -M 1 -N 256 --layout flat
//   y    = matmul h w_down --in fp16 --out fp16 -M 1 -K 256 -N 64
//
// PROGRAM is one of regcmd-gen's (matmul, ew, conv, act, pool) and takes its options, read
// by the same parsers, or concat or one of the norm family (softmax, rmsnorm, layernorm,
// reduce: several ops a line, parse_preset); IN are the tensors it reads: a matmul's features and weights, a
// conv's input and weights (and with --add its residual), an ew op's two operands (one
// with --operand immediate), an act's or a pool's input. '#' starts a comment. Every problem is one line naming the line
// of the file it is on.

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/norm/layer_norm.hpp>
#include <regcmd/programs/norm/reduce.hpp>
#include <regcmd/programs/norm/rms_norm.hpp>
#include <regcmd/programs/norm/softmax.hpp>

#include <regcmd/cli/request.hpp>

namespace regcmd::cli {

// A line of the norm family (softmax, rmsnorm, layernorm, reduce): several ops, named after
// its output, and constants the host packs (constants_of), from γ and β for the norms.
struct graph_preset {
  enum class family : std::uint8_t { softmax, rms_norm, layer_norm, reduce } what{};
  std::string prefix;  // the output's name: the ops' tensors are "<prefix>.<part>"
  softmax_spec softmax{};
  layer_norm_spec norm{};  // rms_norm: bias false, eps, M, D
  row_reduce_spec reduce{};
  std::string gamma, beta;  // the host tensors γ and β are given by (norms)
};

// A preset's constants: γ and β as the line names them (empty for the others).
inline result<std::vector<norm_constant>> constants_of(const graph_preset& p, std::span<const float> gamma,
                                                       std::span<const float> beta) {
  switch (p.what) {
    case graph_preset::family::softmax: return softmax_constants(p.prefix, p.softmax);
    case graph_preset::family::rms_norm: return rms_norm_constants(p.prefix, rms_part(p.norm), gamma);
    case graph_preset::family::layer_norm: return layer_norm_constants(p.prefix, p.norm, gamma, beta);
    case graph_preset::family::reduce: return row_reduce_constants(p.prefix, p.reduce);
  }
  return make_error(rules::unknown_tensor, "preset");
}

// A graph file's ops and the line of each, or the line that is wrong.
struct graph_file {
  large_graph_spec graph{};
  std::vector<std::size_t> lines;  // of each op, from 1
  std::vector<graph_preset> presets;
  std::size_t problem_line = 0;    // 0: the file as a whole
  std::string problem;             // empty when the file is a graph
};

namespace detail {

// The words of one line, up to a '#'. Nullopt (and `bad` set) for a byte that is no
// printable ASCII: a binary file given by mistake.
inline std::optional<std::vector<std::string_view>> words_of(std::string_view line, std::string& bad) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c < 0x20 || c >= 0x7f) {
      bad = "byte " + regcmd::hex(c, 1) + " at column " + std::to_string(i + 1) + " is not text (a graph file is ASCII)";
      return std::nullopt;
    }
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '#' &&
           static_cast<unsigned char>(line[i]) >= 0x21 && static_cast<unsigned char>(line[i]) < 0x7f)
      ++i;
    words.push_back(line.substr(start, i - start));
  }
  return words;
}

// A tensor name: 1 to 23 letters, digits, '_' or '.', not starting with '-' (an option).
inline problem check_name(std::string_view name, std::string_view what) {
  if (!graph_name::fits(name))
    return std::string(what) + " " + cli::quoted(name) + " is longer than " + std::to_string(graph_name::capacity) +
           " characters";
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'))
      return std::string(what) + " " + cli::quoted(name) + " holds " + cli::quoted(std::string_view(&c, 1)) +
             ": a name is letters, digits, '_' and '.'";
  return {};
}

// How many tensors a program reads.
inline std::size_t inputs_of(const request& r) {
  if (r.activation || r.pooling) return 1;
  if (r.elementwise) return r.ew.operand == ew_operand::immediate ? 1 : 2;
  if (r.convolution && r.conv.residual_add) return 3;  // the features, the weights, the residual
  return 2;  // matmul, conv: the features and the weights
}

// `OUT = concat A B --dtype fp16|int8 -M PIXELS --channels CA,CB`: no program of its own,
// so its options are its line's (graph/spec.hpp, concat_spec).
inline problem parse_concat(const std::vector<std::string_view>& words, graph_op& op) {
  if (words.size() < 5 || words[3][0] == '-' || words[4][0] == '-') return "concat reads 2 tensors: OUT = concat A B ...";
  for (std::size_t i = 0; i < 5; i += (i == 0 ? 3 : 1))
    if (problem p = check_name(words[i], i == 0 ? "the output" : "the input"); !p.empty()) return p;
  concat_spec s;
  given_options given;
  for (std::size_t i = 5; i < words.size(); i += 2) {
    const std::string_view a = words[i];
    if (problem twice = given.add(a); !twice.empty()) return twice;
    if (a != "--dtype" && a != "-M" && a != "--channels")
      return a[0] == '-' ? "option " + cli::quoted(a) + " does not apply to concat (--dtype, -M, --channels)"
                         : "concat reads 2 tensors, not " + cli::quoted(a) + " as well";
    if (i + 1 == words.size()) return std::string(a) + " needs a value";
    const std::string_view v = words[i + 1];
    problem p;
    if (a == "--dtype") p = one_of(s.dtype, a, v, pool_dtypes);
    else if (a == "-M") p = number_in(s.pixels, a, v, 1, detail::u32_max);
    else if (const std::size_t comma = v.find(','); comma == std::string_view::npos) p = takes(a, "CA,CB", v);
    else if ((p = number_in(s.channels_a, a, v.substr(0, comma), 1, detail::u32_max)).empty())
      p = number_in(s.channels_b, a, v.substr(comma + 1), 1, detail::u32_max);
    if (!p.empty()) return p;
  }
  if (!given.has("-M") || !given.has("--channels")) return "concat needs -M (the pixels) and --channels CA,CB";
  op = graph_concat(graph_name::of(words[0]), graph_name::of(words[3]), graph_name::of(words[4]), s);
  return {};
}

// The norm family's lines, several ops each:
//   OUT = softmax X -M ROWS -N HELD [--mask]                   (mask: OUT.mask)
//   OUT = rmsnorm X GAMMA -M ROWS -D N [--eps E]
//   OUT = layernorm X GAMMA [BETA] -M ROWS -D N [--eps E]
//   OUT = reduce X --op sum|mean|max -M ROWS -N HELD [--count C] [--mask]
inline bool is_preset(std::string_view program) {
  return program == "softmax" || program == "rmsnorm" || program == "layernorm" || program == "reduce";
}
inline constexpr std::pair<std::string_view, row_reduce_op> reduce_ops[] = {
    {"sum", row_reduce_op::sum}, {"mean", row_reduce_op::mean}, {"max", row_reduce_op::max}};
// The longest part a preset names: "<OUT>.negmean_w".
inline constexpr std::size_t preset_output_capacity = graph_name::capacity - 10;

inline problem parse_preset(const std::vector<std::string_view>& words, graph_preset& p) {
  const std::string_view program = words[2];
  if (problem bad = check_name(words[0], "the output"); !bad.empty()) return bad;
  if (words[0].size() > preset_output_capacity)
    return "a " + std::string(program) + " names its tensors after its output: at most " +
           std::to_string(preset_output_capacity) + " characters, not " + cli::quoted(words[0]);
  std::vector<std::string_view> inputs;
  std::size_t i = 3;
  for (; i < words.size() && words[i][0] != '-'; ++i) {
    if (problem bad = check_name(words[i], "the input"); !bad.empty()) return bad;
    inputs.push_back(words[i]);
  }
  const bool norm = program == "rmsnorm" || program == "layernorm";
  const std::size_t least = norm ? 2 : 1, most = program == "layernorm" ? 3 : least;
  if (inputs.size() < least || inputs.size() > most)
    return std::string(program) + " reads " + (norm ? "X and GAMMA" : "X") + (most == 3 ? " (and BETA)" : "") +
           ", not " + std::to_string(inputs.size()) + " tensor" + (inputs.size() == 1 ? "" : "s");
  p = {};
  p.prefix = std::string(words[0]);
  std::uint32_t M = 0, N = 0, count = 0;
  float eps = 1e-5f;
  bool mask = false;
  row_reduce_op op{};
  given_options given;
  for (; i < words.size(); ++i) {
    const std::string_view a = words[i];
    if (problem twice = given.add(a); !twice.empty()) return twice;
    const bool applies = a == "-M" || (a == "-N" && !norm) || (a == "-D" && norm) || (a == "--eps" && norm) ||
                         (a == "--mask" && !norm) || ((a == "--op" || a == "--count") && program == "reduce");
    if (!applies)
      return a[0] == '-' ? "option " + cli::quoted(a) + " does not apply to " + std::string(program)
                         : "the input " + cli::quoted(a) + " comes after an option: the inputs come first";
    if (a == "--mask") {
      mask = true;
      continue;
    }
    if (i + 1 == words.size()) return std::string(a) + " needs a value";
    const std::string_view v = words[++i];
    problem bad;
    if (a == "-M") bad = number_in(M, a, v, 1, detail::u32_max);
    else if (a == "-N" || a == "-D") bad = number_in(N, a, v, 1, detail::u32_max);
    else if (a == "--count") bad = number_in(count, a, v, 1, detail::u32_max);
    else if (a == "--op") bad = one_of(op, a, v, reduce_ops);
    else bad = finite_in(eps, a, v, 65504, "a number from 0 to 65504");
    if (!bad.empty()) return bad;
  }
  const char* size = norm ? "-D" : "-N";
  if (!given.has("-M") || !given.has(size) || (program == "reduce" && !given.has("--op")))
    return std::string(program) + " needs -M (the rows), " + size + " (the row)" + (program == "reduce" ? " and --op" : "");
  status checked{};
  if (program == "softmax") {
    p.what = graph_preset::family::softmax;
    p.softmax = {.M = M, .N = N, .mask = mask};
    checked = check_softmax(p.softmax);
  } else if (program == "reduce") {
    p.what = graph_preset::family::reduce;
    p.reduce = {.op = op, .M = M, .N = N, .count = count, .mask = mask};
    checked = check_row_reduce(p.reduce);
  } else {
    p.what = program == "rmsnorm" ? graph_preset::family::rms_norm : graph_preset::family::layer_norm;
    p.norm = {.M = M, .D = N, .eps = eps, .bias = inputs.size() == 3};
    p.gamma = std::string(inputs[1]);
    if (inputs.size() == 3) p.beta = std::string(inputs[2]);
    checked = check_layer_norm(p.norm);
  }
  if (!checked) return describe(checked.err());
  return {};
}

// A preset's ops appended to g.
inline status add_preset(large_graph_spec& g, const graph_preset& p, std::string_view x) {
  const graph_name out = graph_name::of(p.prefix), in = graph_name::of(x);
  switch (p.what) {
    case graph_preset::family::softmax: return add_softmax(g, out, in, p.prefix, p.softmax);
    case graph_preset::family::rms_norm: return add_rms_norm(g, out, in, p.prefix, rms_part(p.norm));
    case graph_preset::family::layer_norm: return add_layer_norm(g, out, in, p.prefix, p.norm);
    case graph_preset::family::reduce: return add_row_reduce(g, out, in, p.prefix, p.reduce);
  }
  return {};
}

// One op line's words into an op, or the problem.
inline problem parse_op(const std::vector<std::string_view>& words, graph_op& op) {
  if (words.size() < 3 || words[1] != "=") return "an op is 'OUT = PROGRAM IN... OPTIONS'";
  const std::string_view program = words[2];
  if (program == "concat") return parse_concat(words, op);
  request r{.elementwise = program == "ew", .convolution = program == "conv", .activation = program == "act",
            .pooling = program == "pool"};
  if (program != "matmul" && !r.elementwise && !r.convolution && !r.activation && !r.pooling)
    return "unknown program " + cli::quoted(program) +
           ": matmul, ew, conv, act, pool, concat, softmax, rmsnorm, layernorm or reduce";
  if (problem p = check_name(words[0], "the output"); !p.empty()) return p;
  std::size_t i = 3;
  std::vector<std::string_view> inputs;
  for (; i < words.size() && words[i][0] != '-'; ++i) {
    if (problem p = check_name(words[i], "the input"); !p.empty()) return p;
    inputs.push_back(words[i]);
  }
  given_options given;
  for (; i < words.size(); ++i) {
    const std::string_view a = words[i];
    if (problem twice = given.add(a); !twice.empty()) return twice;
    // --delta, a plan's, is refused below: the graph plans its own matmuls
    if (a != "--delta" && apply_flag(r, a)) continue;
    if (!is_request_option(a)) {
      if (a[0] != '-') return "the input " + cli::quoted(a) + " comes after an option: the inputs come first";
      return "option " + cli::quoted(a) + " does not apply in a graph file (the options of regcmd-gen's programs do, " +
             "without --then, --k-slice, --delta and addresses)";
    }
    if (a == "--then" || a == "--k-slice")
      return std::string(a) + " does not apply in a graph file: " +
             (a == "--then" ? "write the SDP op on its own line" : "the graph plans its matmuls");
    if (i + 1 == words.size()) return std::string(a) + " needs a value";
    if (const std::optional<problem> bad = apply(r, a, words[++i]); bad && !bad->empty()) return *bad;
  }
  if (problem p = check_request(r, given); !p.empty()) return p;
  complete_request(r, given);
  if (r.convolution)
    if (problem p = complete_conv(r, given); !p.empty()) return p;
  const std::size_t wanted = inputs_of(r);
  if (inputs.size() != wanted)
    return std::string(program) + " reads " + std::to_string(wanted) + " tensor" + (wanted == 1 ? "" : "s") + ", not " +
           std::to_string(inputs.size());
  const graph_name out = graph_name::of(words[0]), a = graph_name::of(inputs[0]);
  const graph_name b = wanted >= 2 ? graph_name::of(inputs[1]) : graph_name{};
  const graph_name c = wanted == 3 ? graph_name::of(inputs[2]) : graph_name{};
  if (r.convolution) op = graph_conv(out, a, b, r.conv, c);
  else if (r.pooling) op = graph_pool(out, a, r.pool);
  else if (r.activation) op = graph_act(out, a, r.act);
  else if (r.elementwise) op = wanted == 2 ? graph_ew(out, a, b, r.ew) : graph_ew(out, a, r.ew);
  else op = graph_matmul(out, a, b, r.spec);
  return {};
}

}  // namespace detail

// The graph a file describes. The graph's own rules are regcmd::build's.
inline graph_file parse_graph_file(std::string_view text) {
  graph_file f;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    f.problem_line = number;
    const auto words = detail::words_of(line, f.problem);
    if (!words) return f;
    if (words->empty()) continue;
    if (words->size() >= 3 && (*words)[1] == "=" && detail::is_preset((*words)[2])) {
      graph_preset p;
      if ((f.problem = detail::parse_preset(*words, p)); !f.problem.empty()) return f;
      const std::uint32_t before = f.graph.count;
      if (status s = detail::add_preset(f.graph, p, (*words)[3]); !s) {
        f.problem = describe(s.err());
        return f;
      }
      f.lines.insert(f.lines.end(), f.graph.count - before, number);
      f.presets.push_back(std::move(p));
      continue;
    }
    graph_op op;
    if ((f.problem = detail::parse_op(*words, op)); !f.problem.empty()) return f;
    if (status s = add_op(f.graph, op); !s) {
      f.problem = describe(s.err());
      return f;
    }
    f.lines.push_back(number);
  }
  f.problem_line = 0;
  if (f.graph.count == 0) f.problem = "holds no op (an op is 'OUT = PROGRAM IN... OPTIONS')";
  return f;
}

// The most a graph file may hold: 16 op lines with comments fit in a few KiB; /dev/zero or
// a dump given by mistake stops here.
inline constexpr std::size_t max_graph_file_bytes = std::size_t{1} << 20;

// The graph in the file at `path` ('-': standard input).
inline graph_file read_graph_file(const std::string& path) {
  graph_file f;
  const bool from_stdin = path == "-";
  std::error_code ec;
  if (!from_stdin && std::filesystem::is_directory(path, ec)) {
    f.problem = "cannot read " + cli::quoted(path) + ": it is a directory";
    return f;
  }
  std::FILE* in = from_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (!in) {
    f.problem = "cannot open " + cli::quoted(path) + ": " + std::strerror(errno);
    return f;
  }
  std::string text(max_graph_file_bytes + 1, '\0');
  const std::size_t n = std::fread(text.data(), 1, text.size(), in);
  const bool failed = std::ferror(in) != 0;
  const int reason = errno;
  if (!from_stdin) std::fclose(in);
  if (failed) f.problem = "cannot read " + cli::quoted(path) + ": " + std::strerror(reason);
  else if (n > max_graph_file_bytes) f.problem = cli::quoted(path) + " holds more than 1 MiB: not a graph file";
  if (!f.problem.empty()) return f;
  text.resize(n);
  f = parse_graph_file(text);
  if (f.problem_line == 0 && !f.problem.empty())
    f.problem = (from_stdin ? std::string("the standard input") : cli::quoted(path)) + " " + f.problem;
  return f;
}

// "PATH:LINE: problem", or "PATH: problem" for the file as a whole.
inline std::string located(const std::string& path, std::size_t line, const std::string& problem) {
  return (path == "-" ? std::string("<stdin>") : path) + (line ? ":" + std::to_string(line) : std::string()) + ": " + problem;
}

// The line of the op where a graph that does not build first fails: the first op whose
// graph up to and including it does not build.
template <class Build>
std::size_t failing_line(const graph_file& f, Build build) {
  for (std::uint32_t n = 1; n < f.graph.count; ++n) {
    large_graph_spec prefix = f.graph;
    prefix.count = n;
    if (!build(prefix)) return f.lines[n - 1];
  }
  return f.lines.empty() ? 0 : f.lines.back();
}

// The problem with `regcmd-gen graph FILE` / `regcmd-run graph FILE`'s FILE (argv[2]), or
// an empty string.
inline problem graph_file_argument(int argc, char** argv) {
  if (argc < 3 || (argv[2][0] == '-' && argv[2][1] != 0))
    return "graph needs a graph file first ('-': standard input; docs/graph.md, \"Graph files\")";
  return {};
}

// The graph in the file at `path`, read, parsed and built: its ops and its program, or the
// one-line problem naming the file and the line.
using built_graph = std::decay_t<decltype(build(large_graph_spec{}).value())>;
struct loaded_graph {
  large_graph_spec spec{};
  std::optional<built_graph> built;
  std::string problem;
  std::vector<graph_preset> presets{};
};
inline loaded_graph load_graph_file(const std::string& path) {
  const graph_file file = read_graph_file(path);
  if (!file.problem.empty()) return {{}, {}, file.problem_line ? located(path, file.problem_line, file.problem) : file.problem};
  auto built = build(file.graph);
  if (!built) {
    const std::size_t line = failing_line(file, [](const large_graph_spec& g) { return build(g).ok(); });
    return {{}, {}, located(path, line, describe(built.err()))};
  }
  return {file.graph, std::move(built).value(), {}, file.presets};
}

}  // namespace regcmd::cli
