// Runs a model's first partition as `regcmd-onnx --format cpp` wrote it: the header's
// constexpr program (its rules checked as this file compiled), the weights blob copied into
// the buffers whose images it holds, the input packed at its place (fp16 flat rows), one run
// on the emulated device, the output read from its place and compared with the expected
// values. Usage: header_main BLOB INPUT.f32 EXPECTED.f32 (raw little-endian floats).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <string_view>
#include <vector>

#include <regcmd/core/half.hpp>
#include <regcmd/runtime/session.hpp>

#include "in_process.hpp"
#include "model.hpp"

namespace {

std::vector<char> read_file(const char* path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<float> read_floats(const char* path) {
  const std::vector<char> bytes = read_file(path);
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

std::optional<regcmd::operand_role> role_named(std::string_view name) {
  for (std::size_t r = 0; r < regcmd::operand_role_count; ++r)
    if (regcmd::name_of(static_cast<regcmd::operand_role>(r)) == name) return static_cast<regcmd::operand_role>(r);
  return std::nullopt;
}

int fail(const char* what) {
  std::fprintf(stderr, "header_main: %s\n", what);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace regcmd;
  if (argc != 4) return fail("usage: header_main BLOB INPUT.f32 EXPECTED.f32");
  static_assert(model::partition_count == 1, "the test model is one partition");
  const std::vector<char> blob = read_file(argv[1]);
  const std::vector<float> input = read_floats(argv[2]), expected = read_floats(argv[3]);

  auto dev = runtime::device::open("/dev/dri/card1", 0, emulator::calls());
  if (!dev) return fail("no emulated device");
  std::vector<runtime::buffer> buffers;
  runtime::operands bound;
  std::vector<std::pair<operand_role, std::size_t>> index;
  for (const model::buffer_image& b : model::partition0_buffers) {
    const std::optional<operand_role> role = role_named(b.role);
    auto made = runtime::buffer::create(dev.value(), b.bytes);
    if (!role || !made) return fail("a buffer");
    if (b.blob_offset >= 0) {
      if (static_cast<std::size_t>(b.blob_offset) + b.bytes > blob.size()) return fail("the blob is short");
      std::memcpy(made.value().bytes().data(), blob.data() + b.blob_offset, b.bytes);
    }
    index.emplace_back(*role, buffers.size());
    buffers.push_back(std::move(made).value());
  }
  auto buffer_of = [&](std::string_view role) -> runtime::buffer* {
    for (auto [r, i] : index)
      if (name_of(r) == role) return &buffers[i];
    return nullptr;
  };
  for (auto [r, i] : index) {
    const runtime::buffer* b = &buffers[i];
    switch (r) {
      case operand_role::feature: bound.feature = b; break;
      case operand_role::weight: bound.weight = b; break;
      case operand_role::output: bound.output = b; break;
      case operand_role::ew_operand: bound.ew_operand = b; break;
      case operand_role::intermediate: bound.intermediate = b; break;
      case operand_role::bias: bound.bias = b; break;
      case operand_role::residual: bound.residual = b; break;
      default: return fail("a role the program does not bind");
    }
  }

  const model::tensor_place* in = nullptr;
  const model::tensor_place* out = nullptr;
  for (const model::tensor_place& t : model::partition0_tensors)
    (std::string_view(t.direction) == "input" ? in : out) = &t;
  if (!in || !out || std::string_view(in->layout) != "flat" || std::string_view(in->dtype) != "fp16")
    return fail("the test model reads one fp16 flat input");
  if (input.size() != std::size_t{in->M} * in->columns || expected.size() != std::size_t{out->M} * out->columns)
    return fail("the input or the expected values do not fit the model");
  std::uint8_t* x = buffer_of(in->role)->bytes().data() + in->offset;
  for (unsigned m = 0; m < in->M; ++m)
    for (unsigned n = 0; n < in->N; ++n) {
      const std::uint16_t h = n < in->columns ? float_to_half(input[m * in->columns + n]) : 0;
      std::memcpy(x + 2 * (std::size_t{m} * in->N + n), &h, 2);
    }

  runtime::session npu{dev.value()};
  auto prepared = npu.prepare(model::partition0.view());
  if (!prepared) return fail("prepare refused the program");
  if (!npu.bind(prepared.value(), bound)) return fail("bind refused the buffers");
  if (!npu.run(prepared.value())) return fail("the run failed");

  const std::uint8_t* y = buffer_of(out->role)->bytes().data() + out->offset;
  int wrong = 0;
  for (unsigned m = 0; m < out->M; ++m)
    for (unsigned n = 0; n < out->columns; ++n) {
      std::uint16_t h;
      std::memcpy(&h, y + 2 * (std::size_t{m} * out->N + n), 2);
      const float got = half_to_float(h), want = expected[m * out->columns + n];
      if (std::fabs(got - want) > 1e-3f + 1e-2f * std::fabs(want)) {
        std::printf("%s[%u][%u] = %g, expected %g\n", out->value, m, n, double(got), double(want));
        ++wrong;
      }
    }
  std::printf("%s: %u values, %d wrong\n", out->value, out->M * out->columns, wrong);
  return wrong == 0 ? 0 : 1;
}
