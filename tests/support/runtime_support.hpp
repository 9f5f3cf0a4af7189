// What the runtime tests share: the emulated device's counters, opening the node under
// test, buffers, and a matmul job with its host reference.
#pragma once

#include <doctest/doctest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <regcmd/decode/format.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/packing.hpp>
#include <regcmd/runtime/session.hpp>
#include <regcmd/reference/matmul.hpp>

#include "emu_stats.h"

namespace regcmd::testing {

using namespace regcmd::runtime;

inline regcmd_emu_stats stats() {
  using get = int (*)(regcmd_emu_stats*);
  static const auto fn = reinterpret_cast<get>(dlsym(RTLD_DEFAULT, "regcmd_emu_get_stats"));
  const bool preloaded = fn != nullptr;
  REQUIRE_MESSAGE(preloaded, "run these tests with LD_PRELOAD=libregcmd-emu.so");
  regcmd_emu_stats s{};
  fn(&s);
  return s;
}

inline device open_device() {
  auto d = device::open();
  REQUIRE_MESSAGE(d.ok(), to_string(d.err()));
  return std::move(d).value();
}

// The device of a driver-specific case: the run must be on that driver's node.
inline device open_device(driver expected) {
  device d = open_device();
  REQUIRE_MESSAGE(d.kind() == expected, "this case runs with REGCMD_DEVICE set to the ", name_of(expected), " node");
  return d;
}

// Sets an environment variable for one scope.
struct scoped_env {
  std::string name;
  std::optional<std::string> saved;
  scoped_env(const char* n, const char* value) : name{n} {
    if (const char* old = std::getenv(n)) saved = old;
    if (value) {
      setenv(n, value, 1);
    } else {
      unsetenv(n);
    }
  }
  ~scoped_env() {
    if (saved) {
      setenv(name.c_str(), saved->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
};

inline buffer make(const device& d, std::size_t size) {
  auto b = buffer::create(d, size);
  REQUIRE_MESSAGE(b.ok(), to_string(b.err()));
  return std::move(b).value();
}

// A matmul ready to run: program, geometry, buffers filled with random data, reference.
struct job {
  runtime_program<matmul_geometry> mm;
  buffer a, b, c;
  std::vector<double> ref;

  job(const device& d, const matmul_spec& s, std::uint32_t seed)
      : mm{build(s).value()},
        a{make(d, mm.geometry.feature_bytes())},
        b{make(d, mm.geometry.weight_bytes())},
        c{make(d, mm.geometry.output_bytes())} {
    const auto& g = mm.geometry;
    std::mt19937 rng(seed);
    const std::uint32_t M = g.M, K = g.logical_K, N = g.logical_N;
    std::vector<double> ad(std::size_t{M} * K), bd(std::size_t{K} * N);
    if (g.in == precision::fp16) {
      std::uniform_real_distribution<float> dist(-1, 1);
      std::vector<float> af(ad.size()), bf(bd.size());
      for (std::size_t i = 0; i < af.size(); ++i) ad[i] = af[i] = half_to_float(float_to_half(dist(rng)));
      for (std::size_t i = 0; i < bf.size(); ++i) bd[i] = bf[i] = half_to_float(float_to_half(dist(rng)));
      REQUIRE(matmul::pack_features<float>(g, af, a.bytes()).ok());
      REQUIRE(matmul::pack_weights<float>(g, bf, b.bytes()).ok());
    } else {
      std::uniform_int_distribution<int> dist(-100, 100);
      std::vector<std::int8_t> ai(ad.size()), bi(bd.size());
      for (std::size_t i = 0; i < ai.size(); ++i) ad[i] = ai[i] = static_cast<std::int8_t>(dist(rng));
      for (std::size_t i = 0; i < bi.size(); ++i) bd[i] = bi[i] = static_cast<std::int8_t>(dist(rng));
      REQUIRE(matmul::pack_features<std::int8_t>(g, ai, a.bytes()).ok());
      REQUIRE(matmul::pack_weights<std::int8_t>(g, bi, b.bytes()).ok());
    }
    ref.clear();
    for (const reference::products& p : reference::matmul<double, double>(ad, bd, M, K, N)) ref.push_back(p.sum);
  }
  operands ops() const { return {.feature = &a, .weight = &b, .output = &c}; }
  double error() const {
    std::vector<float> out(ref.size());
    if (mm.geometry.out == precision::int32) {
      std::vector<std::int32_t> oi(ref.size());
      REQUIRE(matmul::unpack_output<std::int32_t>(mm.geometry, c.bytes(), oi).ok());
      for (std::size_t i = 0; i < oi.size(); ++i) out[i] = static_cast<float>(oi[i]);
    } else {
      REQUIRE(matmul::unpack_output<float>(mm.geometry, c.bytes(), out).ok());
    }
    double e = 0;
    for (std::size_t i = 0; i < out.size(); ++i) e = std::max(e, std::abs(out[i] - ref[i]));
    return e;
  }
};

inline constexpr matmul_spec fp16_op{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 16, .K = 256, .N = 64};
inline constexpr matmul_spec int8_op{.dtype = precision::int8, .out_dtype = precision::int32, .M = 16, .K = 256, .N = 64};


// An int8 and a fp16 matmul, prepared and bound on one session: entering and leaving
// int8 mode.
struct int8_and_fp16 {
  session npu;
  job i8, f16;
  prepared_program pi, pf;
  explicit int8_and_fp16(const device& d)
      : npu{d}, i8(d, int8_op, 3), f16(d, fp16_op, 4), pi{npu.prepare(i8.mm.code.view()).value()},
        pf{npu.prepare(f16.mm.code.view()).value()} {
    REQUIRE(npu.bind(pi, i8.ops()).ok());
    REQUIRE(npu.bind(pf, f16.ops()).ok());
    // fp16 work first: the node leaves the int8 mode an earlier case may have left
    REQUIRE(npu.run(pf).ok());
  }
};

}  // namespace regcmd::testing
