/* A client of the matmul API, written in C as the API's users write them: every function,
 * type, layout, K segmentation, dynamic shapes, quantisation parameters, memory from fds
 * (the library's own and a dma-heap's), three contexts running at once, and bad input.
 * Results are checked against a matmul on the host; the layouts are computed here from the
 * fact sheet's formulas (rknn-matmul-api §1.6), not by the library.
 *
 * Usage: rknn_client [GROUP]   (no argument: every group). Exit 0 when every check passed. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <dlfcn.h>

#include <rknn/rknn_matmul_api.h>

#include "emu_stats.h"
#include "rknn_formats.h"

/* The ABI of the 2.1+ headers on LP64, the fact sheet's numbers (§1.4). */
_Static_assert(sizeof(rknn_tensor_mem) == 40, "rknn_tensor_mem");
_Static_assert(offsetof(rknn_tensor_mem, fd) == 16 && offsetof(rknn_tensor_mem, size) == 24, "rknn_tensor_mem fields");
_Static_assert(offsetof(rknn_tensor_mem, priv_data) == 32, "rknn_tensor_mem priv_data");
_Static_assert(sizeof(rknn_matmul_tensor_attr) == 332, "rknn_matmul_tensor_attr");
_Static_assert(offsetof(rknn_matmul_tensor_attr, dims) == 260 && offsetof(rknn_matmul_tensor_attr, type) == 328, "attr fields");
_Static_assert(sizeof(rknn_matmul_io_attr) == 996 && offsetof(rknn_matmul_io_attr, C) == 664, "rknn_matmul_io_attr");
_Static_assert(sizeof(rknn_matmul_info) == 64, "rknn_matmul_info");
_Static_assert(offsetof(rknn_matmul_info, B_layout) == 16 && offsetof(rknn_matmul_info, AC_layout) == 20, "info layouts");
_Static_assert(offsetof(rknn_matmul_info, iommu_domain_id) == 24 && offsetof(rknn_matmul_info, group_size) == 28, "info ids");
_Static_assert(sizeof(rknn_quant_params) == 288 && offsetof(rknn_quant_params, zp_len) == 280, "rknn_quant_params");
_Static_assert(sizeof(rknn_matmul_shape) == 12, "rknn_matmul_shape");

static _Atomic int checks, failures; /* counted from several threads */

#define CHECK(cond, ...)                              \
  do {                                                \
    ++checks;                                         \
    if (!(cond)) {                                    \
      ++failures;                                     \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);     \
      printf(__VA_ARGS__);                            \
      printf("\n");                                   \
    }                                                 \
  } while (0)

/* ---- the types ---- */

struct type_case { rknn_matmul_type type; enum kind a, b, c; };
static const struct type_case types[] = {
    {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, FP16, FP16, FP32}, {RKNN_INT8_MM_INT8_TO_INT32, INT8, INT8, INT32},
    {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16, FP16, FP16, FP16}, {RKNN_INT4_MM_INT4_TO_INT16, INT4, INT4, INT16},
    {RKNN_FLOAT16_MM_INT4_TO_FLOAT32, FP16, INT4, FP32},    {RKNN_INT8_MM_INT4_TO_INT32, INT8, INT4, INT32},
};
static const struct type_case* case_of(rknn_matmul_type t) {
  for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
    if (types[i].type == t) return &types[i];
  return NULL;
}

static uint32_t rng = 12345;
static int next_int(int lo, int hi) {
  rng = rng * 1664525u + 1013904223u;
  return lo + (int)((rng >> 8) % (uint32_t)(hi - lo + 1));
}
static double random_value(enum kind k) {
  if (k == FP16) return next_int(-64, 64) / 32.0;
  if (k == INT4) return next_int(-8, 7);
  return next_int(-128, 127);
}

/* One operand set on the host, with its quantisation (type 7). */
struct problem {
  const struct type_case* t;
  int M, K, N, b_layout, ac_layout;
  double *a, *b;
  const float* b_scale; /* per channel (N) or per group (N * K / group), or NULL */
  int group;
};

static double expected(const struct problem* p, int m, int n) {
  double sum = 0;
  for (int k = 0; k < p->K; ++k) {
    double w = p->b[(size_t)k * p->N + n];
    if (p->b_scale) w *= p->group ? p->b_scale[(size_t)n * (p->K / p->group) + k / p->group] : p->b_scale[n];
    sum += p->a[(size_t)m * p->K + k] * w;
  }
  if (p->t->c == INT16) sum = sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum;
  return sum;
}
static double tolerance(const struct problem* p, int m, int n) {
  if (p->t->c == INT32 || p->t->c == INT16) return 0;
  double magnitude = 0;
  for (int k = 0; k < p->K; ++k) magnitude += fabs(p->a[(size_t)m * p->K + k] * p->b[(size_t)k * p->N + n]);
  if (p->b_scale) magnitude *= 2; /* the scale of the largest group */
  return 1e-3 * magnitude + (p->t->c == FP16 ? fabs(expected(p, m, n)) / 1024 : 0) + 1e-6;
}

static void fill_problem(struct problem* p) {
  p->a = malloc(sizeof(double) * (size_t)p->M * p->K);
  p->b = malloc(sizeof(double) * (size_t)p->K * p->N);
  for (size_t i = 0; i < (size_t)p->M * p->K; ++i) p->a[i] = random_value(p->t->a);
  for (size_t i = 0; i < (size_t)p->K * p->N; ++i) p->b[i] = random_value(p->t->b);
}
static void free_problem(struct problem* p) {
  free(p->a);
  free(p->b);
}

static void write_a(const struct problem* p, uint8_t* out) {
  for (int m = 0; m < p->M; ++m)
    for (int k = 0; k < p->K; ++k) {
      size_t at = p->ac_layout == RKNN_MM_LAYOUT_NATIVE ? native_ac(p->t->a, p->M, m, k) : (size_t)m * p->K + k;
      put(out, p->t->a, at, encode(p->t->a, p->a[(size_t)m * p->K + k]));
    }
}
static void write_b(const struct problem* p, int layout, uint8_t* out) {
  for (int k = 0; k < p->K; ++k)
    for (int n = 0; n < p->N; ++n) put(out, p->t->b, b_at(layout, p->t->b, p->K, p->N, k, n), encode(p->t->b, p->b[(size_t)k * p->N + n]));
}
/* Counts the elements of C that differ from the host's; prints the first. */
static int check_c(const struct problem* p, const uint8_t* c, const char* what) {
  int wrong = 0;
  for (int m = 0; m < p->M; ++m)
    for (int n = 0; n < p->N; ++n) {
      size_t at = p->ac_layout == RKNN_MM_LAYOUT_NATIVE ? native_ac(p->t->c, p->M, m, n) : (size_t)m * p->N + n;
      double got = decode_output(p->t->c, get(c, p->t->c, at)), want = expected(p, m, n);
      if (fabs(got - want) > tolerance(p, m, n)) {
        if (wrong == 0) printf("  %s: C[%d][%d] = %g, expected %g\n", what, m, n, got, want);
        ++wrong;
      }
    }
  return wrong;
}

/* The emulated device's counters, when it is there (0), else -1 (a board). */
static int emu_stats(regcmd_emu_stats* out) {
  int (*get)(regcmd_emu_stats*) = NULL;
  void* self = dlopen(NULL, RTLD_NOW);
  if (!self) return -1;
  *(void**)(&get) = dlsym(self, "regcmd_emu_get_stats");
  const int rc = get ? get(out) : -1;
  dlclose(self);
  return rc;
}

/* ---- one matmul through the API ---- */

struct operands { rknn_tensor_mem *a, *b, *c; };

static int create_context(const struct problem* p, rknn_matmul_ctx* ctx, rknn_matmul_io_attr* io, int domain) {
  rknn_matmul_info info;
  memset(&info, 0, sizeof info);
  info.M = p->M;
  info.K = p->K;
  info.N = p->N;
  info.type = p->t->type;
  info.B_layout = (int16_t)p->b_layout;
  info.AC_layout = (int16_t)p->ac_layout;
  info.iommu_domain_id = domain;
  if (p->b_scale) {
    info.B_quant_type = (int16_t)(p->group ? RKNN_QUANT_TYPE_PER_GROUP_SYM : RKNN_QUANT_TYPE_PER_CHANNEL_SYM);
    info.group_size = (int16_t)p->group;
  }
  return rknn_matmul_create(ctx, &info, io);
}

static int set_b_scales(rknn_matmul_ctx ctx, const struct problem* p) {
  rknn_quant_params q;
  memset(&q, 0, sizeof q);
  strcpy(q.name, "B");
  q.scale = (float*)p->b_scale;
  q.scale_len = p->group ? p->N * (p->K / p->group) : p->N;
  return rknn_matmul_set_quant_params(ctx, &q);
}

/* Creates, binds, runs and checks one problem; returns the number of wrong elements. */
static int run_problem(const struct problem* p, rknn_core_mask mask) {
  rknn_matmul_ctx ctx = 0;
  rknn_matmul_io_attr io;
  char what[128];
  snprintf(what, sizeof what, "type %d %dx%dx%d B_layout %d AC_layout %d", p->t->type, p->M, p->K, p->N, p->b_layout, p->ac_layout);
  int rc = create_context(p, &ctx, &io, 0);
  CHECK(rc == RKNN_SUCC, "%s: create: %d", what, rc);
  if (rc) return 1;
  CHECK(rknn_matmul_set_core_mask(ctx, mask) == RKNN_SUCC, "%s: core mask", what);
  if (p->b_scale) CHECK(set_b_scales(ctx, p) == RKNN_SUCC, "%s: quant params", what);
  /* the attributes the API reports (§1.5) */
  CHECK(strcmp(io.A.name, "A") == 0 && strcmp(io.B.name, "B") == 0 && strcmp(io.C.name, "C") == 0, "%s: names", what);
  CHECK(io.A.size == bytes_for(p->t->a, (size_t)p->M * p->K) && io.B.size == bytes_for(p->t->b, (size_t)p->K * p->N) &&
            io.C.size == bytes_for(p->t->c, (size_t)p->M * p->N),
        "%s: sizes %u %u %u", what, io.A.size, io.B.size, io.C.size);
  if (p->b_layout == RKNN_MM_LAYOUT_NATIVE)
    CHECK(io.B.n_dims == 4 && io.B.dims[0] == (uint32_t)(p->N / sub_n_of(p->t->b)) && io.B.dims[1] == (uint32_t)(p->K / 32) &&
              io.B.dims[2] == (uint32_t)sub_n_of(p->t->b) && io.B.dims[3] == 32,
          "%s: native B dims", what);
  else
    CHECK(io.B.n_dims == 2 && io.B.dims[0] == (uint32_t)(p->b_layout ? p->N : p->K), "%s: B dims", what);
  if (p->ac_layout == RKNN_MM_LAYOUT_NATIVE)
    CHECK(io.A.n_dims == 3 && io.A.dims[0] == (uint32_t)(p->K / atom_of(p->t->a)) && io.A.dims[1] == (uint32_t)p->M &&
              io.C.n_dims == 3 && io.C.dims[2] == (uint32_t)atom_of(p->t->c),
          "%s: native A/C dims", what);
  else
    CHECK(io.A.n_dims == 2 && io.A.dims[0] == (uint32_t)p->M && io.A.dims[1] == (uint32_t)p->K && io.C.dims[1] == (uint32_t)p->N,
          "%s: A/C dims", what);
  CHECK(io.A.type == (p->t->a == FP16 ? RKNN_TENSOR_FLOAT16 : p->t->a == INT8 ? RKNN_TENSOR_INT8 : RKNN_TENSOR_INT4), "%s: A type", what);

  struct operands o = {rknn_create_mem(ctx, io.A.size), rknn_create_mem(ctx, io.B.size), rknn_create_mem(ctx, io.C.size)};
  CHECK(o.a && o.b && o.c, "%s: create_mem", what);
  if (!o.a || !o.b || !o.c) return 1;
  CHECK(o.a->fd >= 0 && o.a->virt_addr && o.a->size == io.A.size && o.a->flags == RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE, "%s: mem", what);
  write_a(p, o.a->virt_addr);
  write_b(p, p->b_layout, o.b->virt_addr);
  CHECK(rknn_matmul_set_io_mem(ctx, o.a, &io.A) == RKNN_SUCC, "%s: set A", what);
  CHECK(rknn_matmul_set_io_mem(ctx, o.b, &io.B) == RKNN_SUCC, "%s: set B", what);
  CHECK(rknn_matmul_set_io_mem(ctx, o.c, &io.C) == RKNN_SUCC, "%s: set C", what);
  rc = rknn_matmul_run(ctx);
  CHECK(rc == RKNN_SUCC, "%s: run: %d", what, rc);
  /* As the API's documentation tells clients of cacheable memory (the GGML backends do): C
   * synced from the device before it is read. Whatever the library wrote on the host (K
   * segments summed, native C) must have reached the device's view, or this loses it. */
  CHECK(rknn_mem_sync(ctx, o.c, RKNN_MEMORY_SYNC_FROM_DEVICE) == RKNN_SUCC, "%s: sync C from the device", what);
  int wrong = rc ? 1 : check_c(p, o.c->virt_addr, what);
  CHECK(wrong == 0, "%s: %d elements of C wrong", what, wrong);
  /* the context goes first: memory outlives it (§1.10) */
  CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC, "%s: destroy", what);
  CHECK(rknn_destroy_mem(0, o.a) == RKNN_SUCC && rknn_destroy_mem(0, o.b) == RKNN_SUCC && rknn_destroy_mem(0, o.c) == RKNN_SUCC,
        "%s: destroy_mem", what);
  return wrong;
}

/* Every type in every layout, with K segmented above 8192. */
static void test_grid(void) {
  static const int shapes[][3] = {{1, 64, 64}, {4, 96, 128}, {33, 256, 192}};
  int runs = 0;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t)
    for (int bl = 0; bl <= 2; ++bl)
      for (int acl = 0; acl <= 1; ++acl)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
          int N = shapes[s][2];
          if (N % sub_n_of(types[t].b)) N = (N / sub_n_of(types[t].b) + 1) * sub_n_of(types[t].b);
          struct problem p = {&types[t], shapes[s][0], shapes[s][1], N, bl, acl, NULL, NULL, NULL, 0};
          fill_problem(&p);
          float* scales = NULL;
          if (types[t].type == RKNN_FLOAT16_MM_INT4_TO_FLOAT32) { /* per channel: scales of 1/8 .. 2 */
            scales = malloc(sizeof(float) * (size_t)N);
            for (int n = 0; n < N; ++n) scales[n] = (float)(1 + n % 16) / 8;
            p.b_scale = scales;
          }
          run_problem(&p, RKNN_NPU_CORE_AUTO);
          free(scales);
          free_problem(&p);
          ++runs;
        }
  printf("grid: %d matmuls (6 types x 3 B layouts x 2 A/C layouts x 3 shapes)\n", runs);
}

/* K above 8192: native B in two segments, summed (§1.6). */
static void test_k_segments(void) {
  static const rknn_matmul_type seg_types[] = {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, RKNN_INT8_MM_INT8_TO_INT32,
                                              RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16, RKNN_INT4_MM_INT4_TO_INT16};
  for (size_t t = 0; t < 4; ++t)
    for (int bl = 0; bl <= 1; ++bl) {
      struct problem p = {case_of(seg_types[t]), 2, 8192 + 96, 64, bl, 0, NULL, NULL, NULL, 0};
      fill_problem(&p);
      run_problem(&p, RKNN_NPU_CORE_0);
      free_problem(&p);
    }
  /* rknn_B_normal_layout_to_native_layout writes the same segments */
  const struct type_case* t = case_of(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32);
  int K = 8192 + 64, N = 32;
  struct problem p = {t, 1, K, N, 0, 0, NULL, NULL, NULL, 0};
  fill_problem(&p);
  size_t bytes = bytes_for(FP16, (size_t)K * N);
  uint8_t *normal = malloc(bytes), *mine = calloc(1, bytes), *theirs = calloc(1, bytes);
  write_b(&p, RKNN_MM_LAYOUT_NORM, normal);
  write_b(&p, RKNN_MM_LAYOUT_NATIVE, mine);
  rknn_matmul_info info;
  memset(&info, 0, sizeof info);
  info.type = t->type;
  CHECK(rknn_B_normal_layout_to_native_layout(normal, theirs, K, N, &info) == RKNN_SUCC, "B to native");
  CHECK(memcmp(mine, theirs, bytes) == 0, "B to native: the library's native B differs from the fact sheet's formula");
  free(normal);
  free(mine);
  free(theirs);
  free_problem(&p);
  printf("K segments: 8 matmuls at K = 8288, one layout conversion at K = 8256\n");
}

/* Per-group scales for type 7, and get_quant_params for type 2. */
static void test_quant(void) {
  const struct type_case* t = case_of(RKNN_FLOAT16_MM_INT4_TO_FLOAT32);
  struct problem p = {t, 3, 128, 64, RKNN_MM_LAYOUT_NATIVE, 0, NULL, NULL, NULL, 32};
  fill_problem(&p);
  float* scales = malloc(sizeof(float) * 64 * 4);
  for (int i = 0; i < 64 * 4; ++i) scales[i] = (float)(1 + i % 7) / 4;
  p.b_scale = scales;
  run_problem(&p, RKNN_NPU_CORE_AUTO);
  free(scales);
  free_problem(&p);

  rknn_matmul_info info;
  memset(&info, 0, sizeof info);
  info.M = 1, info.K = 32, info.N = 32, info.type = RKNN_INT8_MM_INT8_TO_INT32, info.B_quant_type = RKNN_QUANT_TYPE_PER_CHANNEL_SYM;
  rknn_matmul_ctx ctx;
  rknn_matmul_io_attr io;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC, "quant: create");
  rknn_quant_params q;
  float got[32] = {0}, set[32];
  memset(&q, 0, sizeof q);
  CHECK(rknn_matmul_get_quant_params(ctx, &q, got) == RKNN_ERR_PARAM_INVALID, "get before set");
  for (int i = 0; i < 32; ++i) set[i] = 0.5f + (float)i;
  strcpy(q.name, "B");
  q.scale = set;
  q.scale_len = 31;
  CHECK(rknn_matmul_set_quant_params(ctx, &q) == RKNN_ERR_PARAM_INVALID, "scale_len N - 1 refused");
  q.scale_len = 32;
  CHECK(rknn_matmul_set_quant_params(ctx, &q) == RKNN_SUCC, "set per channel");
  strcpy(q.name, "D");
  CHECK(rknn_matmul_set_quant_params(ctx, &q) == RKNN_ERR_PARAM_INVALID, "name D refused");
  memset(&q, 0, sizeof q);
  CHECK(rknn_matmul_get_quant_params(ctx, &q, got) == RKNN_SUCC && q.scale_len == 32 && got[31] == 31.5f, "get per channel");
  rknn_matmul_destroy(ctx);
  printf("quant: per-group type 7, per-channel get/set on type 2\n");
}

/* One context, several shapes (the dynshape demo's flow: one buffer each, the largest). */
static void test_dynamic_shapes(void) {
  const struct type_case* t = case_of(RKNN_INT8_MM_INT8_TO_INT32);
  rknn_matmul_shape shapes[3] = {{1, 64, 32}, {4, 64, 32}, {8, 128, 64}};
  rknn_matmul_io_attr io[3];
  rknn_matmul_info info;
  memset(&info, 0, sizeof info);
  info.type = t->type;
  info.B_layout = RKNN_MM_LAYOUT_TP_NORM;
  rknn_matmul_ctx ctx;
  CHECK(rknn_matmul_create_dynamic_shape(&ctx, &info, 3, shapes, io) == RKNN_SUCC, "dynamic: create");
  rknn_tensor_mem *a = rknn_create_mem(ctx, io[2].A.size), *b = rknn_create_mem(ctx, io[2].B.size), *c = rknn_create_mem(ctx, io[2].C.size);
  for (int i = 0; i < 3; ++i) {
    struct problem p = {t, shapes[i].M, shapes[i].K, shapes[i].N, RKNN_MM_LAYOUT_TP_NORM, 0, NULL, NULL, NULL, 0};
    fill_problem(&p);
    CHECK(io[i].A.dims[0] == (uint32_t)shapes[i].M && io[i].B.dims[0] == (uint32_t)shapes[i].N, "dynamic: attrs of shape %d", i);
    CHECK(rknn_matmul_set_dynamic_shape(ctx, &shapes[i]) == RKNN_SUCC, "dynamic: set shape %d", i);
    write_a(&p, a->virt_addr);
    write_b(&p, p.b_layout, b->virt_addr);
    CHECK(rknn_matmul_set_io_mem(ctx, a, &io[i].A) == RKNN_SUCC && rknn_matmul_set_io_mem(ctx, b, &io[i].B) == RKNN_SUCC &&
              rknn_matmul_set_io_mem(ctx, c, &io[i].C) == RKNN_SUCC,
          "dynamic: set io %d", i);
    CHECK(rknn_matmul_run(ctx) == RKNN_SUCC, "dynamic: run %d", i);
    CHECK(check_c(&p, c->virt_addr, "dynamic") == 0, "dynamic: shape %d", i);
    free_problem(&p);
  }
  rknn_matmul_shape other = {2, 64, 32};
  CHECK(rknn_matmul_set_dynamic_shape(ctx, &other) == RKNN_ERR_PARAM_INVALID, "dynamic: a shape not given refused");
  rknn_destroy_mem(ctx, a);
  rknn_destroy_mem(ctx, b);
  rknn_destroy_mem(ctx, c);
  rknn_matmul_destroy(ctx);
  printf("dynamic shapes: 3 shapes on one context\n");
}

/* B as views into one large buffer through its fd (the GGML backends' pattern), A swapped
 * between two buffers on one context, and B from a dma-heap allocation. */
static void test_memory(void) {
  const struct type_case* t = case_of(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32);
  struct problem p[2] = {{t, 2, 64, 32, RKNN_MM_LAYOUT_NATIVE, 0, NULL, NULL, NULL, 0},
                         {t, 2, 64, 32, RKNN_MM_LAYOUT_NATIVE, 0, NULL, NULL, NULL, 0}};
  rknn_matmul_ctx ctx;
  rknn_matmul_io_attr io;
  fill_problem(&p[0]);
  fill_problem(&p[1]);
  CHECK(create_context(&p[0], &ctx, &io, 0) == RKNN_SUCC, "memory: create");
  rknn_tensor_mem* weights = rknn_create_mem(ctx, 3 * io.B.size);
  rknn_tensor_mem *a0 = rknn_create_mem(ctx, io.A.size), *a1 = rknn_create_mem(ctx, io.A.size), *c = rknn_create_mem(ctx, io.C.size);
  for (int i = 0; i < 2; ++i) write_b(&p[i], RKNN_MM_LAYOUT_NATIVE, (uint8_t*)weights->virt_addr + (2 * i + 0) * io.B.size);
  write_a(&p[0], a0->virt_addr);
  write_a(&p[1], a1->virt_addr);
  for (int i = 0; i < 2; ++i) {
    rknn_tensor_mem* view = rknn_create_mem_from_fd(ctx, weights->fd, weights->virt_addr, io.B.size, (int32_t)(2 * i * io.B.size));
    CHECK(view && view->offset == (int32_t)(2 * i * io.B.size) && view->flags == RKNN_TENSOR_MEMORY_FLAGS_FROM_FD, "memory: view %d", i);
    if (!view) continue;
    CHECK(rknn_matmul_set_io_mem(ctx, i ? a1 : a0, &io.A) == RKNN_SUCC && rknn_matmul_set_io_mem(ctx, view, &io.B) == RKNN_SUCC &&
              rknn_matmul_set_io_mem(ctx, c, &io.C) == RKNN_SUCC,
          "memory: set io %d", i);
    CHECK(rknn_matmul_run(ctx) == RKNN_SUCC, "memory: run %d", i);
    CHECK(rknn_mem_sync(ctx, c, RKNN_MEMORY_SYNC_FROM_DEVICE) == RKNN_SUCC, "memory: sync C");
    CHECK(check_c(&p[i], c->virt_addr, "view") == 0, "memory: B view %d with A buffer %d", i, i);
    rknn_destroy_mem(ctx, view);
  }
  CHECK(rknn_create_mem_from_fd(ctx, weights->fd, weights->virt_addr, io.B.size, (int32_t)(3 * io.B.size)) == NULL,
        "memory: a view past the buffer refused");
  /* a dma-heap buffer (a foreign dma-buf): copied in at each run */
  struct { uint64_t len; uint32_t fd, fd_flags; uint64_t heap_flags; } alloc = {io.B.size, 0, O_RDWR | O_CLOEXEC, 0};
  int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
  CHECK(heap >= 0, "memory: open /dev/dma_heap/system: %s", strerror(errno));
  if (heap >= 0) {
    CHECK(ioctl(heap, 0xC0184800 /* DMA_HEAP_IOCTL_ALLOC */, &alloc) == 0, "memory: DMA_HEAP_IOCTL_ALLOC: %s", strerror(errno));
    void* host = mmap(NULL, io.B.size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)alloc.fd, 0);
    CHECK(host != MAP_FAILED, "memory: mmap the heap buffer");
    if (host != MAP_FAILED) {
      write_b(&p[1], RKNN_MM_LAYOUT_NATIVE, host);
      rknn_tensor_mem* foreign = rknn_create_mem_from_fd(ctx, (int32_t)alloc.fd, host, io.B.size, 0);
      CHECK(foreign != NULL, "memory: a dma-heap fd");
      if (foreign) {
        /* another device's buffer: the library reads B between DMA_BUF_IOCTL_SYNC START|READ
         * and END|READ, and writes a dma-heap C between START|WRITE and END|WRITE */
        regcmd_emu_stats before, after;
        const int counted = emu_stats(&before) == 0;
        struct { uint64_t len; uint32_t fd, fd_flags; uint64_t heap_flags; } c_alloc = {io.C.size, 0, O_RDWR | O_CLOEXEC, 0};
        CHECK(ioctl(heap, 0xC0184800 /* DMA_HEAP_IOCTL_ALLOC */, &c_alloc) == 0, "memory: a dma-heap C");
        rknn_tensor_mem* heap_c = rknn_create_mem_from_fd(ctx, (int32_t)c_alloc.fd, NULL, io.C.size, 0);
        CHECK(heap_c != NULL, "memory: a dma-heap C mem");
        CHECK(rknn_matmul_set_io_mem(ctx, foreign, &io.B) == RKNN_SUCC && rknn_matmul_run(ctx) == RKNN_SUCC, "memory: run heap B");
        CHECK(check_c(&p[1], c->virt_addr, "heap") == 0, "memory: B from a dma-heap");
        if (heap_c) {
          CHECK(rknn_matmul_set_io_mem(ctx, heap_c, &io.C) == RKNN_SUCC && rknn_matmul_run(ctx) == RKNN_SUCC, "memory: run heap C");
          CHECK(check_c(&p[1], (uint8_t*)heap_c->virt_addr + heap_c->offset, "heap C") == 0, "memory: C into a dma-heap");
        }
        if (counted && emu_stats(&after) == 0)
          CHECK(after.dma_buf_sync_starts - before.dma_buf_sync_starts == 3 && after.dma_buf_sync_ends - before.dma_buf_sync_ends == 3,
                "memory: %llu START and %llu END dma-buf syncs for a heap B read twice and a heap C written once, not 3 and 3",
                (unsigned long long)(after.dma_buf_sync_starts - before.dma_buf_sync_starts),
                (unsigned long long)(after.dma_buf_sync_ends - before.dma_buf_sync_ends));
        if (heap_c) rknn_destroy_mem(ctx, heap_c);
        close((int)c_alloc.fd);
        rknn_destroy_mem(ctx, foreign);
      }
      munmap(host, io.B.size);
    }
    close((int)alloc.fd);
    close(heap);
  }
  rknn_matmul_destroy(ctx);
  /* memory outlives its context, and any context (or none) frees it */
  CHECK(rknn_destroy_mem(12345, weights) == RKNN_SUCC && rknn_destroy_mem(0, a0) == RKNN_SUCC &&
            rknn_destroy_mem(0, a1) == RKNN_SUCC && rknn_destroy_mem(0, c) == RKNN_SUCC,
        "memory: destroyed after the context");
  rknn_tensor_mem* loose = rknn_create_mem2(0, 4096, RKNN_MEM_FLAG_ALLOC_NO_CONTEXT);
  CHECK(loose && loose->size == 4096, "memory: create_mem2 without a context");
  CHECK(rknn_mem_sync(0, loose, RKNN_MEMORY_SYNC_BIDIRECTIONAL) == RKNN_SUCC, "memory: sync both ways");
  CHECK(rknn_destroy_mem(0, loose) == RKNN_SUCC, "memory: destroy create_mem2");
  free_problem(&p[0]);
  free_problem(&p[1]);
  printf("memory: views of one buffer by fd, A swapped, a dma-heap B, lifetimes\n");
}

/* The sequence a GGML backend runs (issue: host-written C lost on sync): fp16 -> fp32, A = B
 * = 1.0, M = 1, N = 32, with K = 8448 (two K segments, summed on the host) and normal C, and
 * K = 4096 with native C (converted on the host); after the run C is synced FROM_DEVICE and
 * every element must be K. A and B, written by the client and never synced by it, must read
 * back unchanged after a FROM_DEVICE sync too: the run synced them to the device. */
static void test_coherence(void) {
  static const struct { int K, ac_layout; } cases[] = {{8448, RKNN_MM_LAYOUT_NORM}, {4096, RKNN_MM_LAYOUT_NATIVE},
                                                       {4096, RKNN_MM_LAYOUT_NORM}, {8448, RKNN_MM_LAYOUT_NATIVE}};
  const struct type_case* t = case_of(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const int M = 1, N = 32, K = cases[i].K;
    struct problem p = {t, M, K, N, RKNN_MM_LAYOUT_NORM, cases[i].ac_layout, NULL, NULL, NULL, 0};
    rknn_matmul_ctx ctx;
    rknn_matmul_io_attr io;
    CHECK(create_context(&p, &ctx, &io, 0) == RKNN_SUCC, "coherence K %d: create", K);
    struct operands o = {rknn_create_mem(ctx, io.A.size), rknn_create_mem(ctx, io.B.size), rknn_create_mem(ctx, io.C.size)};
    CHECK(o.a && o.b && o.c, "coherence K %d: create_mem", K);
    if (!o.a || !o.b || !o.c) continue;
    for (uint32_t j = 0; j < io.A.size / 2; ++j) put(o.a->virt_addr, FP16, j, 0x3c00); /* 1.0 in any layout */
    for (uint32_t j = 0; j < io.B.size / 2; ++j) put(o.b->virt_addr, FP16, j, 0x3c00);
    CHECK(rknn_matmul_set_io_mem(ctx, o.a, &io.A) == RKNN_SUCC && rknn_matmul_set_io_mem(ctx, o.b, &io.B) == RKNN_SUCC &&
              rknn_matmul_set_io_mem(ctx, o.c, &io.C) == RKNN_SUCC,
          "coherence K %d: set io", K);
    CHECK(rknn_matmul_run(ctx) == RKNN_SUCC, "coherence K %d: run", K);
    for (int sync = 0; sync < 2; ++sync) { /* read as the run left it, then after the client's sync */
      if (sync) CHECK(rknn_mem_sync(ctx, o.c, RKNN_MEMORY_SYNC_FROM_DEVICE) == RKNN_SUCC, "coherence K %d: sync C", K);
      int wrong = 0;
      for (int n = 0; n < N; ++n) {
        size_t at = cases[i].ac_layout == RKNN_MM_LAYOUT_NATIVE ? native_ac(FP32, M, 0, n) : (size_t)n;
        double got = decode_output(FP32, get(o.c->virt_addr, FP32, at));
        if (got != K && wrong++ == 0) printf("  coherence K %d %s: C[0][%d] = %g\n", K, sync ? "synced" : "as run", n, got);
      }
      CHECK(wrong == 0, "coherence K %d AC_layout %d: %d of %d elements of C are not K %s", K, cases[i].ac_layout, wrong, N,
            sync ? "after rknn_mem_sync FROM_DEVICE" : "after the run");
    }
    CHECK(rknn_mem_sync(ctx, o.a, RKNN_MEMORY_SYNC_FROM_DEVICE) == RKNN_SUCC &&
              rknn_mem_sync(ctx, o.b, RKNN_MEMORY_SYNC_FROM_DEVICE) == RKNN_SUCC,
          "coherence K %d: sync A and B", K);
    int changed = 0;
    for (uint32_t j = 0; j < io.A.size / 2; ++j) changed += get(o.a->virt_addr, FP16, j) != 0x3c00;
    for (uint32_t j = 0; j < io.B.size / 2; ++j) changed += get(o.b->virt_addr, FP16, j) != 0x3c00;
    CHECK(changed == 0, "coherence K %d: %d elements of A and B changed by a FROM_DEVICE sync after the run", K, changed);
    rknn_matmul_destroy(ctx);
    rknn_destroy_mem(0, o.a);
    rknn_destroy_mem(0, o.b);
    rknn_destroy_mem(0, o.c);
  }
  /* Two views of one mem: a FROM_DEVICE sync of one keeps what the client wrote to the other
   * (rocket's PREP_BO covers the whole BO: it dropped them). */
  struct problem small = {t, 1, 32, 16, RKNN_MM_LAYOUT_NORM, RKNN_MM_LAYOUT_NORM, NULL, NULL, NULL, 0};
  rknn_matmul_ctx ctx;
  rknn_matmul_io_attr io;
  CHECK(create_context(&small, &ctx, &io, 0) == RKNN_SUCC, "coherence: a context for the views");
  rknn_tensor_mem* whole = rknn_create_mem(ctx, 8192);
  CHECK(whole != NULL, "coherence: a mem for two views");
  if (whole) {
    rknn_tensor_mem* first = rknn_create_mem_from_fd(ctx, whole->fd, whole->virt_addr, 4096, 0);
    rknn_tensor_mem* second = rknn_create_mem_from_fd(ctx, whole->fd, whole->virt_addr, 4096, 4096);
    CHECK(first && second, "coherence: two views");
    if (first && second) {
      memset(first->virt_addr, 0x5a, 4096);
      CHECK(rknn_mem_sync(ctx, second, RKNN_MEMORY_SYNC_FROM_DEVICE) == RKNN_SUCC, "coherence: sync the second view");
      int lost = 0;
      for (int i = 0; i < 4096; ++i) lost += ((uint8_t*)first->virt_addr)[i] != 0x5a;
      CHECK(lost == 0, "coherence: %d of 4096 bytes the client wrote to one view lost by a sync of the other", lost);
    }
    if (first) rknn_destroy_mem(0, first);
    if (second) rknn_destroy_mem(0, second);
    rknn_destroy_mem(0, whole);
  }
  rknn_matmul_destroy(ctx);
  printf("coherence: C, A and B read back after FROM_DEVICE syncs (K = 8448 and 4096, normal and native C), two views\n");
}

/* IOMMU domains: each its own address space (the same IOVAs hold other bytes in each), the
 * memory of one refused by a context of another (§1.10). */
static void test_domains(void) {
  const struct type_case* t = case_of(RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32);
  struct problem p[2] = {{t, 4, 64, 32, RKNN_MM_LAYOUT_NATIVE, 0, NULL, NULL, NULL, 0},
                         {t, 4, 64, 32, RKNN_MM_LAYOUT_NATIVE, 0, NULL, NULL, NULL, 0}};
  rknn_matmul_ctx ctx[2];
  rknn_matmul_io_attr io[2];
  struct operands o[2];
  for (int d = 0; d < 2; ++d) {
    fill_problem(&p[d]);
    CHECK(create_context(&p[d], &ctx[d], &io[d], 3 * d) == RKNN_SUCC, "domains: create in domain %d", 3 * d);
    o[d].a = rknn_create_mem(ctx[d], io[d].A.size);
    o[d].b = rknn_create_mem(ctx[d], io[d].B.size);
    o[d].c = rknn_create_mem(ctx[d], io[d].C.size);
    write_a(&p[d], o[d].a->virt_addr);
    write_b(&p[d], RKNN_MM_LAYOUT_NATIVE, o[d].b->virt_addr);
  }
  CHECK(o[0].a->phys_addr == o[1].a->phys_addr, "domains: each domain's IOVAs start alike");
  CHECK(rknn_matmul_set_io_mem(ctx[0], o[1].a, &io[0].A) == RKNN_ERR_PARAM_INVALID, "domains: memory of domain 3 refused");
  for (int d = 0; d < 2; ++d)
    CHECK(rknn_matmul_set_io_mem(ctx[d], o[d].a, &io[d].A) == RKNN_SUCC && rknn_matmul_set_io_mem(ctx[d], o[d].b, &io[d].B) == RKNN_SUCC &&
              rknn_matmul_set_io_mem(ctx[d], o[d].c, &io[d].C) == RKNN_SUCC,
          "domains: set io %d", d);
  for (int d = 0; d < 2; ++d) CHECK(rknn_matmul_run(ctx[d]) == RKNN_SUCC, "domains: run %d", d);
  for (int d = 0; d < 2; ++d) CHECK(check_c(&p[d], o[d].c->virt_addr, "domain") == 0, "domains: the result in domain %d", 3 * d);
  rknn_matmul_info info;
  memset(&info, 0, sizeof info);
  info.M = 1, info.K = 32, info.N = 16, info.type = RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, info.iommu_domain_id = 16;
  rknn_matmul_ctx bad;
  CHECK(rknn_matmul_create(&bad, &info, &io[0]) == RKNN_ERR_PARAM_INVALID, "domains: 16 refused");
  for (int d = 0; d < 2; ++d) {
    rknn_destroy_mem(ctx[d], o[d].a);
    rknn_destroy_mem(ctx[d], o[d].b);
    rknn_destroy_mem(ctx[d], o[d].c);
    rknn_matmul_destroy(ctx[d]);
    free_problem(&p[d]);
  }
  printf("domains: two contexts in domains 0 and 3\n");
}

/* Three contexts pinned to three cores, run at once from three threads (§3.2). */
struct worker { struct problem p; rknn_core_mask mask; int wrong; };
static void* work(void* arg) {
  struct worker* w = arg;
  for (int i = 0; i < 3 && w->wrong == 0; ++i) w->wrong += run_problem(&w->p, w->mask);
  return NULL;
}
static void test_threads(void) {
  struct worker w[3];
  pthread_t th[3];
  const rknn_core_mask masks[3] = {RKNN_NPU_CORE_0, RKNN_NPU_CORE_1, RKNN_NPU_CORE_2};
  const rknn_matmul_type tt[3] = {RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, RKNN_INT8_MM_INT8_TO_INT32, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16};
  for (int i = 0; i < 3; ++i) {
    struct problem p = {case_of(tt[i]), 8, 128, 64, RKNN_MM_LAYOUT_NATIVE, 0, NULL, NULL, NULL, 0};
    w[i].p = p;
    fill_problem(&w[i].p);
    w[i].mask = masks[i];
    w[i].wrong = 0;
  }
  for (int i = 0; i < 3; ++i) pthread_create(&th[i], NULL, work, &w[i]);
  for (int i = 0; i < 3; ++i) {
    pthread_join(th[i], NULL);
    CHECK(w[i].wrong == 0, "threads: context %d", i);
    free_problem(&w[i].p);
  }
  printf("threads: 3 contexts on 3 cores, 3 runs each, at once\n");
}

/* Bad input: the documented codes, never a crash. */
static void test_bad_input(void) {
  rknn_matmul_info info;
  rknn_matmul_io_attr io;
  rknn_matmul_ctx ctx = 0;
  memset(&info, 0, sizeof info);
  info.M = 4, info.K = 64, info.N = 64, info.type = RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
  CHECK(rknn_matmul_create(NULL, &info, &io) == RKNN_ERR_PARAM_INVALID, "null ctx");
  CHECK(rknn_matmul_create(&ctx, NULL, &io) == RKNN_ERR_PARAM_INVALID, "null info");
  CHECK(rknn_matmul_create(&ctx, &info, NULL) == RKNN_ERR_PARAM_INVALID, "null io_attr");
  static const int unsupported[] = {0, 3, 5, 6, 8, 9, 12, 13, 15, 99, -1};
  for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; ++i) {
    info.type = (rknn_matmul_type)unsupported[i];
    CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "type %d refused", unsupported[i]);
  }
  info.type = RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
  info.K = 48;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "K %% 32 refused");
  info.K = 64, info.N = 24;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "fp16 N %% 16 refused");
  info.type = RKNN_INT4_MM_INT4_TO_INT16, info.N = 32;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "int4 N %% 64 refused");
  info.type = RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32, info.N = 64, info.M = 0;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "M = 0 refused");
  info.M = 4, info.B_layout = 3;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "B_layout 3 refused");
  info.B_layout = 0, info.AC_layout = 2;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "AC_layout TP_NORM refused");
  info.AC_layout = 0, info.B_quant_type = RKNN_QUANT_TYPE_PER_GROUP_SYM;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "per group without group_size refused");
  info.B_quant_type = 0;
  CHECK(rknn_matmul_create_dynamic_shape(&ctx, &info, 0, NULL, &io) == RKNN_ERR_PARAM_INVALID, "no shapes refused");
  /* an operand of 4 GiB or more: its size would not fit io_attr's 32 bits (it read 0) */
  info.M = 131072, info.K = 16384, info.N = 16;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "A of 4 GiB refused at create");
  /* operands under 4 GiB (C 2.6 GB) whose K-segment partials are not: 2 x 20000 x 32768 int32,
   * 5.2 GB; every run failed */
  info.type = RKNN_INT8_MM_INT8_TO_INT32, info.M = 20000, info.K = 8224, info.N = 32768;
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_ERR_PARAM_INVALID, "partials of 5.2 GB refused at create");
  info.type = RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
  info.M = 4, info.K = 64, info.N = 64;

  CHECK(rknn_matmul_run(0) == RKNN_ERR_CTX_INVALID && rknn_matmul_run(987654) == RKNN_ERR_CTX_INVALID, "unknown ctx");
  CHECK(rknn_matmul_destroy(987654) == RKNN_ERR_CTX_INVALID, "destroy unknown ctx");
  CHECK(rknn_create_mem(987654, 64) == NULL, "create_mem on an unknown ctx");
  CHECK(rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC, "bad input: create");
  CHECK(rknn_matmul_run(ctx) == RKNN_ERR_INPUT_INVALID, "run without memory");
  CHECK(rknn_create_mem(ctx, 0) == NULL, "create_mem of 0 bytes");
  rknn_tensor_mem* small = rknn_create_mem(ctx, io.A.size - 2);
  rknn_tensor_mem* a = rknn_create_mem(ctx, io.A.size);
  CHECK(rknn_matmul_set_io_mem(ctx, small, &io.A) == RKNN_ERR_PARAM_INVALID, "a mem smaller than A refused");
  CHECK(rknn_matmul_set_io_mem(ctx, NULL, &io.A) == RKNN_ERR_PARAM_INVALID, "null mem");
  CHECK(rknn_matmul_set_io_mem(ctx, a, NULL) == RKNN_ERR_PARAM_INVALID, "null attr");
  rknn_tensor_mem forged = *a;
  CHECK(rknn_matmul_set_io_mem(ctx, &forged, &io.A) == RKNN_ERR_PARAM_INVALID, "a mem the library did not make");
  CHECK(rknn_destroy_mem(ctx, &forged) == RKNN_ERR_PARAM_INVALID, "destroying a mem the library did not make");
  rknn_matmul_tensor_attr renamed = io.A;
  strcpy(renamed.name, "X");
  CHECK(rknn_matmul_set_io_mem(ctx, a, &renamed) == RKNN_ERR_PARAM_INVALID, "an attr named X");
  CHECK(rknn_matmul_set_core_mask(ctx, (rknn_core_mask)8) == RKNN_ERR_PARAM_INVALID, "core mask 8");
  CHECK(rknn_matmul_set_core_mask(ctx, (rknn_core_mask)0x7fffffff) == RKNN_ERR_PARAM_INVALID, "core mask 2^31 - 1");
  CHECK(rknn_matmul_set_quant_params(ctx, NULL) == RKNN_ERR_PARAM_INVALID, "null quant params");
  static const float bad_scales[] = {0.0f, -0.5f};
  for (int i = 0; i < 2; ++i) {
    rknn_quant_params q;
    memset(&q, 0, sizeof q);
    strcpy(q.name, "A");
    q.scale = (float*)&bad_scales[i];
    q.scale_len = 1;
    CHECK(rknn_matmul_set_quant_params(ctx, &q) == RKNN_ERR_PARAM_INVALID, "a scale of %g refused", bad_scales[i]);
  }
  CHECK(rknn_mem_sync(ctx, a, (rknn_mem_sync_mode)0) == RKNN_ERR_PARAM_INVALID, "sync mode 0");
  CHECK(rknn_mem_sync(ctx, a, (rknn_mem_sync_mode)99) == RKNN_ERR_PARAM_INVALID, "sync mode 99");
  CHECK(rknn_create_mem_from_fd(ctx, -1, NULL, 64, 0) == NULL, "fd -1");
  int not_a_buffer = open("/dev/null", O_RDONLY);
  CHECK(rknn_create_mem_from_fd(ctx, not_a_buffer, NULL, 64, 0) == NULL, "an fd that cannot be mapped");
  close(not_a_buffer);
  CHECK(rknn_B_normal_layout_to_native_layout(NULL, a->virt_addr, 64, 64, &info) == RKNN_ERR_PARAM_INVALID, "B to native: null");
  CHECK(rknn_B_normal_layout_to_native_layout(a->virt_addr, a->virt_addr, 64, 20, &info) == RKNN_ERR_PARAM_INVALID,
        "B to native: N %% 16");
  /* a dma-buf smaller than the size claimed: refused, never read past its end */
  int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
  CHECK(heap >= 0, "bad input: open /dev/dma_heap/system: %s", strerror(errno));
  if (heap >= 0) {
    struct { uint64_t len; uint32_t fd, fd_flags; uint64_t heap_flags; } alloc = {4096, 0, O_RDWR | O_CLOEXEC, 0};
    CHECK(ioctl(heap, 0xC0184800 /* DMA_HEAP_IOCTL_ALLOC */, &alloc) == 0, "bad input: DMA_HEAP_IOCTL_ALLOC");
    CHECK(rknn_create_mem_from_fd(ctx, (int32_t)alloc.fd, NULL, 16384, 0) == NULL, "a 4096-byte dma-buf as 16384 bytes");
    CHECK(rknn_create_mem_from_fd(ctx, (int32_t)alloc.fd, NULL, 4096, 64) == NULL, "a 4096-byte dma-buf from offset 64");
    rknn_tensor_mem* whole = rknn_create_mem_from_fd(ctx, (int32_t)alloc.fd, NULL, 4096, 0);
    CHECK(whole != NULL, "the 4096-byte dma-buf as 4096 bytes");
    if (whole) rknn_destroy_mem(ctx, whole);
    close((int)alloc.fd);
    close(heap);
  }
  /* every bound mem destroyed: the run refuses, it does not compute into freed memory */
  {
    rknn_tensor_mem *ba = rknn_create_mem(ctx, io.A.size), *bb = rknn_create_mem(ctx, io.B.size), *bc = rknn_create_mem(ctx, io.C.size);
    CHECK(ba && bb && bc && rknn_matmul_set_io_mem(ctx, ba, &io.A) == RKNN_SUCC && rknn_matmul_set_io_mem(ctx, bb, &io.B) == RKNN_SUCC &&
              rknn_matmul_set_io_mem(ctx, bc, &io.C) == RKNN_SUCC && rknn_matmul_run(ctx) == RKNN_SUCC,
          "bad input: a run before the mems are destroyed");
    rknn_destroy_mem(ctx, ba);
    rknn_destroy_mem(ctx, bb);
    rknn_destroy_mem(ctx, bc);
    CHECK(rknn_matmul_run(ctx) == RKNN_ERR_INPUT_INVALID, "a run after every bound mem was destroyed");
  }
  rknn_destroy_mem(ctx, small);
  rknn_destroy_mem(ctx, a);
  CHECK(rknn_destroy_mem(ctx, a) == RKNN_ERR_PARAM_INVALID, "a mem destroyed twice");
  CHECK(rknn_matmul_destroy(ctx) == RKNN_SUCC && rknn_matmul_destroy(ctx) == RKNN_ERR_CTX_INVALID, "destroyed twice");
  CHECK(strcmp(get_type_string(RKNN_TENSOR_INT4), "INT4") == 0 && strcmp(get_type_string((rknn_tensor_type)77), "UNKNOW") == 0,
        "get_type_string");
  CHECK(strcmp(get_matmul_type_string(RKNN_INT4_MM_INT4_TO_INT16), "INT4_MM_INT4_TO_INT16") == 0, "get_matmul_type_string");
  printf("bad input: every call refused with its code\n");
}

int main(int argc, char** argv) {
  const char* only = argc > 1 ? argv[1] : NULL;
  struct { const char* name; void (*run)(void); } groups[] = {
      {"grid", test_grid},     {"k_segments", test_k_segments}, {"quant", test_quant},      {"dynamic", test_dynamic_shapes},
      {"memory", test_memory}, {"coherence", test_coherence}, {"domains", test_domains}, {"threads", test_threads},       {"bad_input", test_bad_input},
  };
  int ran = 0;
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; ++i)
    if (!only || strcmp(only, groups[i].name) == 0) {
      groups[i].run();
      ++ran;
    }
  if (ran == 0) {
    fprintf(stderr, "rknn_client: no group '%s'\n", only);
    return 2;
  }
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
