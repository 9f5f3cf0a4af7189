// Graph description files (regcmd/cli/graph_file.hpp): each line's op against the graph_op
// written by hand, and every problem named with its line.
#include <regcmd/testing/doctest.hpp>

#include <cstdio>
#include <string>

#include <regcmd/programs/graph/blocks.hpp>
#include <regcmd/programs/graph/graph.hpp>

#include <regcmd/cli/graph_file.hpp>

using namespace regcmd;

namespace {
cli::graph_file parse(const char* text) { return cli::parse_graph_file(text); }
}  // namespace

TEST_CASE("a graph file: the FFN block's lines are llama_ffn's ops") {
  const cli::graph_file f = parse(
      "# LLaMA's FFN, decode\n"
      "gate = matmul x w_gate --in fp16 --out fp16 -M 1 -K 64 -N 256\n"
      "up   = matmul x w_up   --in fp16 --out fp16 -M 1 -K 64 -N 256   # the second branch\n"
      "\n"
      "act  = act gate --fn silu -M 1 -N 256\r\n"
      "h\t=\tew act up --op mul -M 1 -N 256 --layout flat  # caf\xc3\xa9: any byte in a comment\n"
      "y    = matmul h w_down --in fp16 --out fp16 -M 1 -K 256 -N 64");
  REQUIRE(f.problem == "");
  CHECK(f.graph == llama_ffn(1, 64, 256));
  CHECK(f.lines == std::vector<std::size_t>{2, 3, 5, 6, 7});
}

TEST_CASE("a graph file: conv, pool and immediate ops, options in any order") {
  const cli::graph_file f = parse(
      "c = conv img k --relu --pad same --kernel 3 --out-channels 16 -C 8 -W 10 -H 10 --in fp16\n"
      "p = pool c --op global-avg -H 10 -W 10 -C 16\n"
      "s = ew p --op mul --operand immediate --value 0.5 -M 1 -N 16 --layout flat\n"
      "r = conv img k2 c --in fp16 -H 10 -W 10 -C 8 --out-channels 16 --kernel 3 --pad same --add\n");
  REQUIRE(f.problem == "");
  const conv_spec conv{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = 10, .W = 10, .C = 8, .out_channels = 16,
                       .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same,
                       .activation = output_activation::relu};
  const pool_spec pool{.op = pool_op::global_average, .H = 10, .W = 10, .C = 16, .kernel_h = 2, .kernel_w = 2};
  const ew_spec ew{.op = ew_op::mul, .dtype = precision::fp16, .M = 1, .N = 16, .operand = ew_operand::immediate,
                   .layout = operand_layout::row_major, .tile_pad = tile_padding::zero, .immediate = 0.5f};
  conv_spec residual = conv;
  residual.activation = output_activation::none;
  residual.residual_add = true;
  CHECK(f.graph == make_graph(graph_conv("c", "img", "k", conv), graph_pool("p", "c", pool), graph_ew("s", "p", ew),
                              graph_conv("r", "img", "k2", residual, "c")));
}

TEST_CASE("a graph file's problems name their line") {
  struct bad {
    const char* text;
    std::size_t line;
    const char* problem;
  };
  const bad cases[] = {
      {"", 0, "holds no op (an op is 'OUT = PROGRAM IN... OPTIONS')"},
      {"# only a comment\n\n", 0, "holds no op (an op is 'OUT = PROGRAM IN... OPTIONS')"},
      {"y matmul x w\n", 1, "an op is 'OUT = PROGRAM IN... OPTIONS'"},
      {"y =\n", 1, "an op is 'OUT = PROGRAM IN... OPTIONS'"},
      {"\ny = conv2d x w\n", 2, "unknown program 'conv2d': matmul, ew, conv, act, pool, concat, softmax, rmsnorm, layernorm or reduce"},
      {"y = matmul x --in fp16 -M 1 -K 64 -N 64\n", 1, "matmul reads 2 tensors, not 1"},
      {"y = act x z --fn relu -M 1 -N 8\n", 1, "act reads 1 tensor, not 2"},
      {"y = ew x z --operand immediate --value 2 -M 1 -N 8\n", 1, "ew reads 1 tensor, not 2"},
      {"y = conv x k --in fp16 -H 4 -W 4 -C 16 --out-channels 16 --add\n", 1, "conv reads 3 tensors, not 2"},
      {"y = matmul x w --in fp16 -M 1 -K 64\n", 1, "matmul needs -M, -K and -N"},
      {"y = matmul x w --in fp16 --in fp16 -M 1 -K 64 -N 8\n", 1, "--in is given twice: give it once"},
      {"y = matmul x w --in fp64 -M 1 -K 64 -N 8\n", 1, "--in takes int8 | int16 | fp16 | bf16 | int32 | fp32 | int4 | tf32, not 'fp64'"},
      {"y = matmul x w -M 1 -K 64 -N\n", 1, "-N needs a value"},
      {"y = matmul x w -M 1 -K 64 -N 8 --then ew\n", 1,
       "--then does not apply in a graph file: write the SDP op on its own line"},
      {"y = matmul x w -M 1 -K 64 -N 8 --k-slice 32\n", 1,
       "--k-slice does not apply in a graph file: the graph plans its matmuls"},
      {"y = matmul x w -M 1 -K 64 -N 8 --plan\n", 1,
       "option '--plan' does not apply in a graph file (the options of regcmd-gen's programs do, without --then, "
       "--k-slice, --delta and addresses)"},
      {"y = act x --fn relu -M 1 -N 8 z\n", 1, "the input 'z' comes after an option: the inputs come first"},
      {"y = act x+1 --fn relu -M 1 -N 8\n", 1, "the input 'x+1' holds '+': a name is letters, digits, '_' and '.'"},
      {"a_name_of_twenty_four_ch = act x --fn relu -M 1 -N 8\n", 1,
       "the output 'a_name_of_twenty_four_ch' is longer than 23 characters"},
      {"y = act x --fn relu\x01 -M 1 -N 8\n", 1, "byte 0x1 at column 20 is not text (a graph file is ASCII)"},
      {"y = act caf\xc3\xa9 --fn relu -M 1 -N 8\n", 1, "byte 0xc3 at column 12 is not text (a graph file is ASCII)"},
      {"y = concat a -M 4 --channels 8,8\n", 1, "concat reads 2 tensors: OUT = concat A B ..."},
      {"y = concat a b c -M 4 --channels 8,8\n", 1, "concat reads 2 tensors, not 'c' as well"},
      {"y = concat a b -M 4 --channels 8\n", 1, "--channels takes CA,CB, not '8'"},
      {"y = concat a b -M 4 --channels 8,8 --kernel 3\n", 1, "option '--kernel' does not apply to concat (--dtype, -M, --channels)"},
      {"y = concat a b --channels 8,8\n", 1, "concat needs -M (the pixels) and --channels CA,CB"},
      {"y = concat a b -M 4 --channels 8,8 --dtype int16\n", 1, "--dtype takes fp16 | int8, not 'int16'"},
  };
  for (const bad& b : cases) {
    CAPTURE(b.text);
    const cli::graph_file f = parse(b.text);
    CHECK(f.problem_line == b.line);
    CHECK(f.problem == b.problem);
  }
}

TEST_CASE("a graph file's concat: its parts, pixels and channels") {
  const cli::graph_file f = parse(
      "a = conv x k1 --in fp16 -H 4 -W 4 -C 16 --out-channels 16\n"
      "b = conv x k2 --in fp16 -H 4 -W 4 -C 16 --out-channels 32 --kernel 3 --pad same\n"
      "y = concat a b --dtype fp16 -M 16 --channels 16,32\n");
  REQUIRE(f.problem == "");
  CHECK(f.graph.ops[2] == graph_concat("y", "a", "b", {.dtype = precision::fp16, .pixels = 16, .channels_a = 16, .channels_b = 32}));
}

TEST_CASE("a graph file of more than 128 ops is refused at the 129th") {
  std::string text;
  for (int i = 0; i < 129; ++i) {  // t1 = act t0, t2 = act t1, ...
    text += 't';
    text += std::to_string(i + 1);
    text += " = act t";
    text += std::to_string(i);
    text += " --fn relu -M 1 -N 8\n";
  }
  const cli::graph_file f = cli::parse_graph_file(text);
  CHECK(f.problem_line == 129);
  CHECK(f.problem.rfind("graph-capacity: ", 0) == 0);
}

TEST_CASE("a graph that does not build: the line of the first op where it fails") {
  const cli::graph_file f = parse(
      "a = act x --fn silu -M 1 -N 64\n"
      "# b reads 32 of a's 64 elements\n"
      "b = act a --fn silu -M 1 -N 32\n"
      "c = act b --fn relu -M 1 -N 32\n");
  REQUIRE(f.problem == "");
  const auto built = build(f.graph);
  REQUIRE_FALSE(built.ok());
  CHECK_BREAKS(built, rules::graph_tensor_format);
  CHECK(cli::failing_line(f, [](const large_graph_spec& g) { return build(g).ok(); }) == 3);
}

namespace {
std::string file_text(const std::string& path) {
  std::string text;
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
    char chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) text.append(chunk, n);
    std::fclose(f);
  }
  return text;
}
}  // namespace

TEST_CASE("the example graph files are the blocks they say") {
  const cli::graph_file ffn = cli::parse_graph_file(file_text(REGCMD_EXAMPLES_DIR "/graphs/ffn.graph"));
  REQUIRE(ffn.problem == "");
  CHECK(ffn.graph == llama_ffn(1, 64, 256));
  const cli::graph_file cnn = cli::parse_graph_file(file_text(REGCMD_EXAMPLES_DIR "/graphs/cnn.graph"));
  REQUIRE(cnn.problem == "");
  // examples/cnn.cpp's graph
  constexpr auto conv3x3 = [](std::uint32_t hw, std::uint32_t in, std::uint32_t out) {
    return conv_spec{.dtype = conv_data::fp16, .out_dtype = precision::fp16, .H = hw, .W = hw, .C = in, .out_channels = out,
                     .kernel_h = 3, .kernel_w = 3, .padding = conv_padding::same, .activation = output_activation::relu};
  };
  CHECK(cnn.graph == make_graph(graph_conv("c1", "image", "k1", conv3x3(32, 3, 32)),
                                graph_pool("p1", "c1", {.op = pool_op::max, .H = 32, .W = 32, .C = 32}),
                                graph_conv("c2", "p1", "k2", conv3x3(16, 32, 64)),
                                graph_pool("p2", "c2", {.op = pool_op::global_average, .H = 16, .W = 16, .C = 64}),
                                graph_matmul("logits", "p2", "w_fc",
                                             {.dtype = precision::fp16, .out_dtype = precision::fp16, .M = 1, .K = 64, .N = 10})));
  CHECK(build(cnn.graph).ok());
}

TEST_CASE("a graph file's norm family: one line, the preset's ops, its constants from γ and β") {
  const auto f = cli::parse_graph_file(
      "h = rmsnorm x g -M 2 -D 64 --eps 1e-6\n"
      "p = softmax h -M 2 -N 64 --mask\n"
      "n = layernorm p g2 b2 -M 2 -D 64\n"
      "r = reduce n --op max -M 2 -N 64\n");
  REQUIRE(f.problem.empty());
  large_graph_spec want;
  REQUIRE(add_rms_norm(want, "h", "x", "h", {.M = 2, .D = 64, .eps = 1e-6f}).ok());
  REQUIRE(add_softmax(want, "p", "h", "p", {.M = 2, .N = 64, .mask = true}).ok());
  REQUIRE(add_layer_norm(want, "n", "p", "n", {.M = 2, .D = 64}).ok());
  REQUIRE(add_row_reduce(want, "r", "n", "r", {.op = row_reduce_op::max, .M = 2, .N = 64}).ok());
  CHECK(f.graph == want);
  REQUIRE(f.presets.size() == 4);
  CHECK(f.lines.front() == 1);
  CHECK(f.lines.back() == 4);
  CHECK(f.presets[0].gamma == "g");
  CHECK(f.presets[2].beta == "b2");
  const std::vector<float> gamma(64, 1.0f);
  const auto norm = cli::constants_of(f.presets[0], gamma, {});
  REQUIRE(norm.ok());
  CHECK(norm.value().size() == 3);  // S, G and ε
  CHECK(norm.value()[1].name.view() == "h.gamma_w");
  const auto wrong = cli::constants_of(f.presets[2], gamma, {});  // β of no values
  CHECK_BREAKS(wrong, rules::host_size);
  REQUIRE(build(f.graph).ok());

  struct bad {
    const char* text;
    const char* problem;
  };
  const bad cases[] = {
      {"y = softmax x -M 2\n", "softmax needs -M (the rows), -N (the row)"},
      {"y = softmax x -M 2 -N 100\n", "softmax-shape: "},
      {"y = rmsnorm x -M 2 -D 64\n", "rmsnorm reads X and GAMMA, not 1 tensor"},
      {"y = rmsnorm x g -M 2 -D 64 --mask\n", "option '--mask' does not apply to rmsnorm"},
      {"y = layernorm x g b c -M 2 -D 64\n", "layernorm reads X and GAMMA (and BETA), not 4 tensors"},
      {"y = reduce x -M 2 -N 64\n", "reduce needs -M (the rows), -N (the row) and --op"},
      {"y = reduce x --op min -M 2 -N 64\n", "--op takes sum | mean | max, not 'min'"},
      {"a_long_output_name = softmax x -M 2 -N 64\n", "a softmax names its tensors after its output: at most 13 characters"},
  };
  for (const bad& b : cases) {
    const auto g = cli::parse_graph_file(b.text);
    CHECK(g.problem_line == 1);
    CHECK_MESSAGE(g.problem.find(b.problem) == 0, g.problem);
  }
}
