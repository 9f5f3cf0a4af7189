// libFuzzer target: librknnrt (Rockchip's matmul API on regcmd) driven through random call
// sequences and arguments, as a client in any order would call it: contexts (one shape or
// several), memory (create_mem, create_mem2, views of it by fd, dma-heap buffers), set_io_mem,
// quantisation parameters, core masks, dynamic shapes, runs, syncs and destroys. It runs on
// the emulated device (LD_PRELOAD=libregcmd-emu.so, REGCMD_DEVICE naming a node), whose
// caches are as strict as a board's. Findings: a crash or a sanitizer report; a run that
// succeeds with a destroyed mem bound; and a successful run whose C, read as a client reads
// it (after a FROM_DEVICE sync, or straight away: the library leaves it coherent), differs
// from the host's matmul of the A and B bytes the run read. The layouts and encodings are
// the fact sheet's formulas (tests/rknn/rknn_formats.h), not the library's.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <rknn/rknn_matmul_api.h>

#include "../rknn/rknn_formats.h"
#include "fuzz_input.hpp"

namespace {
using regcmd::fuzzing::reader;

// The client's own loops (filling operands, the host's matmul) are not what is fuzzed: no
// coverage tracing there, or it would take most of the time a run of the library gets.
#define CLIENT_SIDE __attribute__((no_sanitize("coverage")))

// REGCMD_FUZZ_RKNN_TRACE=1: each call the input makes, and what it returned, on stderr.
template <class... Args>
void trace(const char* format, Args... args) {
  static const bool on = [] {
    const char* v = std::getenv("REGCMD_FUZZ_RKNN_TRACE");
    return v && *v == '1';
  }();
  if (on) std::fprintf(stderr, format, args...);
}

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "\nfuzz_rknn FINDING: %s\n", what.c_str());
  __builtin_trap();
}

// The matmul types (rknn-matmul-api §1.3) as element kinds: A, B, C.
struct type_kinds {
  int type;
  kind a, b, c;
};
constexpr type_kinds types[] = {{RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, FP16, FP16, FP32},
                                {RKNN_INT8_MM_INT8_TO_INT32, INT8, INT8, INT32},
                                {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16, FP16, FP16, FP16},
                                {RKNN_FLOAT16_MM_INT4_TO_FLOAT32, FP16, INT4, FP32},
                                {RKNN_INT4_MM_INT4_TO_INT16, INT4, INT4, INT16},
                                {RKNN_INT8_MM_INT4_TO_INT32, INT8, INT4, INT32}};
const type_kinds* kinds_of(int type) {
  for (const type_kinds& t : types)
    if (t.type == type) return &t;
  return nullptr;
}

// A mem the client holds: the API's struct, whether it is destroyed.
struct mem {
  rknn_tensor_mem* m = nullptr;
  bool alive = false;
  std::uint8_t* bytes() const { return static_cast<std::uint8_t*>(m->virt_addr) + m->offset; }
};

// Quantisation parameters as set: what type 7 computes with (B's scale and zero point per
// channel or group, A's scale).
struct quant {
  std::vector<float> scale;
  std::vector<std::int32_t> zp;
};

struct context {
  rknn_matmul_ctx ctx = 0;
  rknn_matmul_info info{};
  std::vector<rknn_matmul_shape> shapes;
  std::vector<rknn_matmul_io_attr> attrs;
  std::size_t current = 0;
  std::array<int, 3> bound{-1, -1, -1};  // mems by index, as last set successfully
  quant a, b;
  bool alive = false;
};

struct client {
  std::vector<context> contexts;
  std::vector<mem> mems;
  std::vector<int> heap_fds;
  std::vector<std::pair<void*, std::size_t>> heap_maps;

  ~client() {
    for (context& c : contexts)
      if (c.alive) rknn_matmul_destroy(c.ctx);
    for (mem& m : mems)
      if (m.alive) rknn_destroy_mem(0, m.m);
    for (auto& [p, n] : heap_maps) ::munmap(p, n);
    for (int fd : heap_fds) ::close(fd);
  }
  context* some_context(reader& in) {
    if (contexts.empty()) return nullptr;
    return &contexts[in.pick(contexts.size())];
  }
  mem* some_mem(reader& in) {
    if (mems.empty()) return nullptr;
    return &mems[in.pick(mems.size())];
  }
};

// A dimension: small mostly, now and then past one K segment (8192) or not aligned.
std::int32_t dimension(reader& in, std::int32_t unit) {
  switch (in.pick(8)) {
    case 0: return static_cast<std::int32_t>(in.take(2)) - 8;        // anything, negatives too
    case 1: return 8192 + unit * (1 + static_cast<std::int32_t>(in.pick(3)));  // two K segments
    default: return unit * (1 + static_cast<std::int32_t>(in.pick(4)));
  }
}

// An enum the client passes as the int it holds: a value no enumerator names, within the
// enum's range (a C++ enum may not hold one outside it; tests/rknn's C client passes those).
template <class Enum>
Enum as_enum(std::int32_t v) {
  static_assert(sizeof(Enum) == sizeof v);
  Enum e;
  std::memcpy(&e, &v, sizeof e);
  return e;
}

rknn_matmul_info random_info(reader& in) {
  rknn_matmul_info info{};
  const std::size_t t = in.pick(std::size(types) + 1);
  info.type = as_enum<rknn_matmul_type>(t < std::size(types) ? types[t].type : static_cast<std::int32_t>(in.take(1) & 15));
  info.M = 1 + static_cast<std::int32_t>(in.pick(8));
  info.K = dimension(in, 32);
  info.N = info.K > 8192 ? 64 * (1 + static_cast<std::int32_t>(in.pick(4))) : dimension(in, 64);  // one of them large
  info.B_layout = static_cast<std::int16_t>(in.pick(4));   // 3 is no layout
  info.AC_layout = static_cast<std::int16_t>(in.pick(3));  // 2 is no A/C layout
  info.B_quant_type = static_cast<std::int16_t>(in.pick(6));
  info.group_size = static_cast<std::int16_t>(32 * in.pick(3));
  info.iommu_domain_id = static_cast<std::int32_t>(in.pick(4)) - (in.pick(8) == 0 ? 20 : 0);
  return info;
}

void create_context(client& c, reader& in) {
  context x;
  x.info = random_info(in);
  const std::size_t count = in.pick(3) + 1;
  x.shapes.push_back({x.info.M, x.info.K, x.info.N});
  for (std::size_t i = 1; i < count; ++i)
    x.shapes.push_back({1 + static_cast<std::int32_t>(in.pick(8)), x.info.K, x.info.N});
  x.attrs.resize(count);
  const int rc = count == 1 ? rknn_matmul_create(&x.ctx, &x.info, x.attrs.data())
                            : rknn_matmul_create_dynamic_shape(&x.ctx, &x.info, static_cast<int>(count), x.shapes.data(),
                                                               x.attrs.data());
  std::int32_t type;
  std::memcpy(&type, &x.info.type, sizeof type);
  trace("create type %d %dx%dx%d B_layout %d AC_layout %d quant %d group %d domain %d, %zu shapes: %d\n", type, x.info.M,
        x.info.K, x.info.N, x.info.B_layout, x.info.AC_layout, x.info.B_quant_type, x.info.group_size,
        x.info.iommu_domain_id, count, rc);
  if (rc != RKNN_SUCC) return;
  x.alive = true;
  c.contexts.push_back(std::move(x));
}

void create_mem(client& c, reader& in) {
  context* x = c.some_context(in);
  const rknn_context ctx = x && in.pick(4) ? x->ctx : static_cast<rknn_context>(in.pick(2) ? 0 : 99999);
  std::uint64_t size = 1 + in.take(2) * (1 + in.pick(64));
  if (x && x->alive && in.pick(2)) {  // the size of one of its operands, now and then one short
    const rknn_matmul_io_attr& io = x->attrs[x->current];
    const std::uint32_t sizes[] = {io.A.size, io.B.size, io.C.size};
    size = sizes[in.pick(3)] - (in.pick(8) == 0 ? 1 : 0);
  }
  rknn_tensor_mem* m = nullptr;
  switch (in.pick(4)) {
    case 0: m = rknn_create_mem2(ctx, size, in.pick(2) ? RKNN_MEM_FLAG_ALLOC_NO_CONTEXT : in.take(1)); break;
    case 1: {  // a view of a mem by its fd
      mem* base = c.some_mem(in);
      if (!base || !base->alive) return;
      const std::int32_t offset = static_cast<std::int32_t>(in.take(2)) - (in.pick(16) == 0 ? 70000 : 0);
      m = rknn_create_mem_from_fd(ctx, base->m->fd, base->m->virt_addr, static_cast<std::uint32_t>(size), offset);
      break;
    }
    case 2: {  // a dma-heap buffer, maybe smaller than the size claimed
      const int heap = ::open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
      if (heap < 0) return;
      struct {
        std::uint64_t len;
        std::uint32_t fd, fd_flags;
        std::uint64_t heap_flags;
      } alloc{in.pick(4) == 0 ? std::max<std::uint64_t>(1, size / 2) : size + 4096 * in.pick(2), 0, O_RDWR | O_CLOEXEC, 0};
      const bool made = ::ioctl(heap, 0xC0184800 /* DMA_HEAP_IOCTL_ALLOC */, &alloc) == 0;
      ::close(heap);
      if (!made) return;
      const int fd = static_cast<int>(alloc.fd);
      c.heap_fds.push_back(fd);
      void* host = ::mmap(nullptr, alloc.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (host == MAP_FAILED) return;
      c.heap_maps.emplace_back(host, alloc.len);
      m = rknn_create_mem_from_fd(ctx, fd, in.pick(2) ? host : nullptr, static_cast<std::uint32_t>(size), 0);
      break;
    }
    default: m = rknn_create_mem(ctx, static_cast<std::uint32_t>(size)); break;
  }
  trace("mem %zu: %s, size %llu\n", c.mems.size(), m ? "made" : "refused", static_cast<unsigned long long>(size));
  if (m) c.mems.push_back({m, true});
}

// Fills a mem with elements of kind k (FP32: raw bytes): small fp16 values (multiples of
// 1/64 in [-2, 2]), int8 or int4 over their ranges.
CLIENT_SIDE void fill(mem* m, kind k, reader& in) {
  if (!m || !m->alive) return;
  trace("fill a mem of %u bytes with kind %d\n", m->m->size, static_cast<int>(k));
  std::uint32_t state = in.take(4) | 1;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  const std::size_t count = k == INT4 ? m->m->size * 2 : m->m->size / (k == FP16 ? 2 : 1);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t r = next();
    if (k == FP16) put(m->bytes(), FP16, i, to_half(static_cast<float>(static_cast<int>(r % 257) - 128) / 64));
    else if (k == FP32) m->bytes()[i] = static_cast<std::uint8_t>(r);  // raw bytes
    else put(m->bytes(), k, i, r);
  }
}

void fill(client& c, reader& in) {
  mem* m = c.some_mem(in);
  fill(m, std::array{FP16, INT8, INT4, FP32}[in.pick(4)], in);
}

// What a client does before its first run: A, B and C of the current shape's sizes, made
// one of the ways the API offers, filled with the type's values, bound.
void set_up(client& c, reader& in) {
  context* x = c.some_context(in);
  if (!x || !x->alive) return;
  std::int32_t type;
  std::memcpy(&type, &x->info.type, sizeof type);
  const type_kinds* t = kinds_of(type);
  const rknn_matmul_io_attr& io = x->attrs[x->current];
  const rknn_matmul_tensor_attr* attrs[] = {&io.A, &io.B, &io.C};
  for (std::size_t which = 0; which < 3; ++which) {
    rknn_tensor_mem* made = in.pick(4) == 0 ? rknn_create_mem2(x->ctx, attrs[which]->size, 0)
                                            : rknn_create_mem(x->ctx, attrs[which]->size);
    if (!made) return;
    c.mems.push_back({made, true});
    if (t && which < 2) fill(&c.mems.back(), which == 0 ? t->a : t->b, in);
    rknn_matmul_tensor_attr attr = *attrs[which];
    const int rc = rknn_matmul_set_io_mem(x->ctx, made, &attr);
    trace("set up: context %llu %c = mem %zu: %d\n", static_cast<unsigned long long>(x->ctx), "ABC"[which], c.mems.size() - 1, rc);
    if (rc == RKNN_SUCC) x->bound[which] = static_cast<int>(c.mems.size() - 1);
  }
}

void set_io(client& c, reader& in) {
  context* x = c.some_context(in);
  mem* m = c.some_mem(in);
  if (!x || !x->alive || !m) return;
  const std::size_t which = in.pick(3);
  const rknn_matmul_io_attr& io = x->attrs[x->current];
  rknn_matmul_tensor_attr attr = which == 0 ? io.A : which == 1 ? io.B : io.C;
  if (in.pick(16) == 0) attr.name[0] = 'X';
  const int rc = rknn_matmul_set_io_mem(x->ctx, m->alive ? m->m : nullptr, &attr);
  trace("set io: context %llu %c = mem %td: %d\n", static_cast<unsigned long long>(x->ctx), "ABC"[which], m - c.mems.data(), rc);
  if (rc == RKNN_SUCC && attr.name[0] != 'X') x->bound[which] = static_cast<int>(m - c.mems.data());
}

void set_quant(client& c, reader& in) {
  context* x = c.some_context(in);
  if (!x || !x->alive) return;
  rknn_quant_params q{};
  const char name = "ABCX"[in.pick(4)];
  q.name[0] = name;
  const std::size_t length = in.pick(4) == 0 ? in.pick(5) : name != 'B' ? 1
                             : x->info.B_quant_type >= RKNN_QUANT_TYPE_PER_GROUP_SYM && x->info.group_size > 0
                                 ? static_cast<std::size_t>(x->shapes[x->current].N) *
                                       static_cast<std::size_t>(std::max(1, x->shapes[x->current].K / x->info.group_size))
                             : x->info.B_quant_type >= RKNN_QUANT_TYPE_PER_CHANNEL_SYM ? static_cast<std::size_t>(x->shapes[x->current].N)
                                                                                       : 1;
  std::vector<float> scale(length);
  std::vector<std::int32_t> zp(in.pick(2) ? length : 0);
  for (float& s : scale) s = in.pick(16) == 0 ? -0.5f : static_cast<float>(1 + in.pick(8)) / 4;
  for (std::int32_t& z : zp) z = static_cast<std::int32_t>(in.pick(5)) - 2;
  q.scale = scale.data();
  q.scale_len = static_cast<std::int32_t>(scale.size());
  q.zp = zp.empty() ? nullptr : zp.data();
  q.zp_len = static_cast<std::int32_t>(zp.size());
  if (rknn_matmul_set_quant_params(x->ctx, &q) != RKNN_SUCC) return;
  quant& to = name == 'A' ? x->a : x->b;
  if (name == 'A' || name == 'B') to = {scale, zp};
}

// A and B as the host reads them: [M][K] and [K][N] values in double (type 7's B widened to
// fp16 as the API defines it: (b - zp) * scale_B * scale_A); a value no exact judgement
// can use (not finite, past fp16) is NaN, and so is every C it reaches.
struct host_operands {
  std::vector<double> a, b;
};
CLIENT_SIDE host_operands decoded(const context& x, const type_kinds& t, const std::uint8_t* a, const std::uint8_t* b) {
  const rknn_matmul_shape& s = x.shapes[x.current];
  const bool native_acl = x.info.AC_layout == RKNN_MM_LAYOUT_NATIVE;
  const std::size_t M = static_cast<std::size_t>(s.M), K = static_cast<std::size_t>(s.K), N = static_cast<std::size_t>(s.N);
  host_operands h{std::vector<double>(M * K), std::vector<double>(K * N)};
  for (int m = 0; m < s.M; ++m)
    for (int k = 0; k < s.K; ++k) {
      const double v = decode_input(t.a, get(a, t.a, native_acl ? native_ac(t.a, s.M, m, k) : row_major(s.K, m, k)));
      h.a[row_major(s.K, m, k)] = std::isfinite(v) ? v : NAN;
    }
  for (int k = 0; k < s.K; ++k)
    for (int n = 0; n < s.N; ++n) {
      double v = decode_input(t.b, get(b, t.b, b_at(x.info.B_layout, t.b, s.K, s.N, k, n)));
      if (t.type == RKNN_FLOAT16_MM_INT4_TO_FLOAT32) {
        const std::size_t q = x.b.scale.size() <= 1 ? 0
                              : x.b.scale.size() == N
                                  ? static_cast<std::size_t>(n)
                                  : static_cast<std::size_t>(n) * static_cast<std::size_t>(s.K / x.info.group_size) +
                                        static_cast<std::size_t>(k / x.info.group_size);
        const double scale_b = x.b.scale.empty() ? 1.0 : x.b.scale[q], zp = x.b.zp.empty() ? 0.0 : x.b.zp[q];
        const double scale_a = x.a.scale.empty() ? 1.0 : x.a.scale[0];
        const double widened = (v - zp) * scale_b * scale_a;
        v = std::abs(widened) > 65504 ? NAN : double(from_half(to_half(static_cast<float>(widened))));
      }
      h.b[row_major(s.N, k, n)] = v;
    }
  return h;
}

// The host's C[m][n], in double, with its tolerance; nullopt where no exact judgement is
// possible (a NaN operand, an fp16 result beyond its range).
struct expected_value {
  double value, tolerance;
};
CLIENT_SIDE std::optional<expected_value> host_matmul(const context& x, const type_kinds& t, const host_operands& h, int m,
                                                     int n) {
  const rknn_matmul_shape& s = x.shapes[x.current];
  double sum = 0, magnitude = 0;
  for (int k = 0; k < s.K; ++k) {
    const double p = h.a[row_major(s.K, m, k)] * h.b[row_major(s.N, k, n)];
    sum += p;
    magnitude += std::abs(p);
  }
  if (!std::isfinite(sum)) return std::nullopt;
  if (t.c == INT16) sum = std::clamp(sum, -32768.0, 32767.0);
  if (t.c == FP16 && std::abs(sum) + 1e-3 * magnitude > 65504) return std::nullopt;
  const bool integer = t.c == INT32 || t.c == INT16;
  return expected_value{sum, integer ? 0.0 : 1e-3 * magnitude + (t.c == FP16 ? std::abs(sum) / 1024 : 0) + 1e-6};
}

void run(client& c, reader& in) {
  context* x = c.some_context(in);
  if (!x || !x->alive) return;
  if (in.pick(4) == 0) rknn_matmul_set_core_mask(x->ctx, as_enum<rknn_core_mask>(static_cast<std::int32_t>(in.pick(9) == 8 ? 0xffff : in.take(1))));
  // The bytes the run will read, as the client holds them now.
  std::int32_t type;
  std::memcpy(&type, &x->info.type, sizeof type);
  const type_kinds* t = kinds_of(type);
  std::array<mem*, 3> bound{};
  bool destroyed = false;
  for (std::size_t i = 0; i < 3; ++i)
    if (x->bound[i] >= 0) {
      bound[i] = &c.mems[static_cast<std::size_t>(x->bound[i])];
      destroyed = destroyed || !bound[i]->alive;
    }
  std::vector<std::uint8_t> a, b;
  if (bound[0] && bound[0]->alive) a.assign(bound[0]->bytes(), bound[0]->bytes() + bound[0]->m->size);
  if (bound[1] && bound[1]->alive) b.assign(bound[1]->bytes(), bound[1]->bytes() + bound[1]->m->size);
  const int rc = rknn_matmul_run(x->ctx);
  trace("run context %llu (A mem %d, B mem %d, C mem %d): %d\n", static_cast<unsigned long long>(x->ctx), x->bound[0],
        x->bound[1], x->bound[2], rc);
  if (rc != RKNN_SUCC) return;
  if (destroyed) finding("rknn_matmul_run succeeded with a destroyed mem bound");
  if (!t || !bound[2]) finding("rknn_matmul_run succeeded without a type or C the client knows of");
  const rknn_matmul_shape& s = x->shapes[x->current];
  const rknn_matmul_io_attr& io = x->attrs[x->current];
  if (a.size() < io.A.size || b.size() < io.B.size || bound[2]->m->size < io.C.size)
    finding("rknn_matmul_run succeeded with an operand smaller than its attributes");
  if (in.pick(2) && rknn_mem_sync(x->ctx, bound[2]->m, RKNN_MEMORY_SYNC_FROM_DEVICE) != RKNN_SUCC)
    finding("rknn_mem_sync of C after a run failed");
  const bool native_c = x->info.AC_layout == RKNN_MM_LAYOUT_NATIVE;
  const host_operands h = decoded(*x, *t, a.data(), b.data());
  for (int m = 0; m < s.M; ++m)
    for (int n = 0; n < s.N; ++n) {
      const std::optional<expected_value> want = host_matmul(*x, *t, h, m, n);
      if (!want) continue;
      const std::size_t at = native_c ? native_ac(t->c, s.M, m, n) : row_major(s.N, m, n);
      const double got = decode_output(t->c, get(bound[2]->bytes(), t->c, at));
      if (!(std::abs(got - want->value) <= want->tolerance)) {
        char line[256];
        std::snprintf(line, sizeof line, "type %d %dx%dx%d B_layout %d AC_layout %d: C[%d][%d] = %.9g, expected %.9g",
                      t->type, s.M, s.K, s.N, x->info.B_layout, x->info.AC_layout, m, n, got, want->value);
        finding(line);
      }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!std::getenv("REGCMD_DEVICE")) {
    std::fprintf(stderr, "fuzz_rknn: run with LD_PRELOAD=libregcmd-emu.so and REGCMD_DEVICE naming a node\n");
    std::abort();
  }
  static const bool quiet = [] { return ::setenv("REGCMD_RKNN_LOG", "0", 1) == 0; }();
  (void)quiet;
  reader in{data, size};
  client c;
  for (int steps = 0; steps < 24 && in.size; ++steps) {
    switch (in.pick(14)) {
      case 0:
      case 1: create_context(c, in); break;
      case 2: create_mem(c, in); break;
      case 3: fill(c, in); break;
      case 4: set_io(c, in); break;
      case 5: set_quant(c, in); break;
      case 6:
      case 7: set_up(c, in); break;
      case 8: {  // another shape of its own, or one it was not created with
        context* x = c.some_context(in);
        if (!x || !x->alive) break;
        const std::size_t i = in.pick(x->shapes.size() + 1);
        rknn_matmul_shape shape = i < x->shapes.size() ? x->shapes[i] : rknn_matmul_shape{3, 32, 64};
        if (rknn_matmul_set_dynamic_shape(x->ctx, &shape) == RKNN_SUCC && i < x->shapes.size()) x->current = i;
        break;
      }
      case 9: {  // a sync, or a destroy
        mem* m = c.some_mem(in);
        const std::size_t what = in.pick(5);
        if (what < 4 && m && m->alive) {  // modes 0 (none) to 3 (both ways)
          rknn_mem_sync(0, m->m, as_enum<rknn_mem_sync_mode>(static_cast<std::int32_t>(what)));
        } else if (what == 4 && m && m->alive && in.pick(2)) {
          if (rknn_destroy_mem(0, m->m) != RKNN_SUCC) finding("rknn_destroy_mem of a live mem failed");
          m->alive = false;
        } else if (context* x = c.some_context(in); x && x->alive) {
          if (rknn_matmul_destroy(x->ctx) != RKNN_SUCC) finding("rknn_matmul_destroy of a live context failed");
          x->alive = false;
        }
        break;
      }
      default: run(c, in); break;
    }
  }
  return 0;
}
