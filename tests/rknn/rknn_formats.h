/* The matmul API's element encodings and operand layouts, from the fact sheet's formulas
 * (rknn-matmul-api §1.6), for the test clients (rknn_client.c, fuzz_rknn.cpp): written here,
 * not taken from the library they check. C, so that both a C and a C++ client include it. */
#ifndef REGCMD_TESTS_RKNN_FORMATS_H
#define REGCMD_TESTS_RKNN_FORMATS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rknn/rknn_matmul_api.h>

/* ---- elements ---- */

enum kind { FP16, INT8, INT4, FP32, INT32, INT16 };

static inline int bits_of(enum kind k) { return k == INT4 ? 4 : k == INT8 ? 8 : k == FP16 || k == INT16 ? 16 : 32; }
static inline size_t bytes_for(enum kind k, size_t count) { return k == INT4 ? (count + 1) / 2 : count * (size_t)bits_of(k) / 8; }

static inline uint16_t to_half(float f) { /* exact for the values used here: small multiples of 1/64 */
  if (f == 0) return 0;
  uint16_t sign = f < 0 ? 0x8000 : 0;
  float a = fabsf(f);
  int e = 0;
  while (a >= 2) { a /= 2; ++e; }
  while (a < 1) { a *= 2; --e; }
  uint16_t mant = (uint16_t)lrintf((a - 1) * 1024);
  if (mant == 1024) { mant = 0; ++e; }
  return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | mant);
}
static inline float from_half(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? ldexpf((float)m, -24) : ldexpf((float)(m | 1024), e - 25);
  return h & 0x8000 ? -v : v;
}

static inline void put(uint8_t* buf, enum kind k, size_t i, uint32_t raw) {
  switch (bits_of(k)) {
    case 4: buf[i / 2] = (uint8_t)(i % 2 ? (buf[i / 2] & 0x0f) | (raw & 0xf) << 4 : (buf[i / 2] & 0xf0) | (raw & 0xf)); break;
    case 8: buf[i] = (uint8_t)raw; break;
    case 16: { const uint16_t h = (uint16_t)raw; memcpy(buf + 2 * i, &h, 2); break; }
    default: memcpy(buf + 4 * i, &raw, 4);
  }
}
static inline uint32_t get(const uint8_t* buf, enum kind k, size_t i) {
  uint16_t h;
  uint32_t w;
  switch (bits_of(k)) {
    case 4: return (buf[i / 2] >> (i % 2 ? 4 : 0)) & 0xf;
    case 8: return buf[i];
    case 16: memcpy(&h, buf + 2 * i, 2); return h;
    default: memcpy(&w, buf + 4 * i, 4); return w;
  }
}
/* A host value as the stored bits of kind k. */
static inline uint32_t encode(enum kind k, double v) {
  if (k == FP16) return to_half((float)v);
  return (uint32_t)(int32_t)v & (k == INT4 ? 0xfu : 0xffu);
}
/* A stored input element as its value: fp16, int8, int4 (a signed nibble). */
static inline double decode_input(enum kind k, uint32_t raw) {
  if (k == FP16) return from_half((uint16_t)raw);
  if (k == INT4) return (int)(raw & 0xf) - ((raw & 0x8) ? 16 : 0);
  return (int8_t)(uint8_t)raw;
}
static inline double decode_output(enum kind k, uint32_t raw) {
  float f;
  switch (k) {
    case FP32: memcpy(&f, &raw, 4); return f;
    case FP16: return from_half((uint16_t)raw);
    case INT32: return (int32_t)raw;
    default: return (int16_t)(uint16_t)raw;
  }
}

/* ---- layouts (rknn-matmul-api §1.6) ---- */

static inline int sub_n_of(enum kind b) { return b == FP16 ? 16 : b == INT8 ? 32 : 64; }
static inline int atom_of(enum kind k) { return k == INT4 ? 32 : 16 * 8 / bits_of(k); }

/* Element index of B(k, n) in native B: segments of 8192, each tiled subN x 32, K fastest.
 * (Every term a size_t of non-negative ints: the header compiles without a sign warning in
 * C and in C++.) */
static inline size_t native_b(enum kind b, int K, int N, int k, int n) {
  const size_t s = (size_t)(k / 8192), rest = (size_t)K - s * 8192, ks = rest < 8192 ? rest : 8192;
  const size_t kk = (size_t)(k % 8192), sn = (size_t)sub_n_of(b), nn = (size_t)n;
  return (size_t)N * 8192 * s + ((nn / sn) * (ks / 32) + kk / 32) * (sn * 32) + (nn % sn) * 32 + kk % 32;
}
static inline size_t b_at(int layout, enum kind b, int K, int N, int k, int n) {
  return layout == RKNN_MM_LAYOUT_NORM      ? (size_t)k * (size_t)N + (size_t)n
         : layout == RKNN_MM_LAYOUT_TP_NORM ? (size_t)n * (size_t)K + (size_t)k
                                            : native_b(b, K, N, k, n);
}
/* Element (r, c) of a row-major [rows][cols] (normal A or C). */
static inline size_t row_major(int cols, int r, int c) { return (size_t)r * (size_t)cols + (size_t)c; }
/* (rows, cols) element (r, c) of native A or C: (cols/atom, rows, atom). */
static inline size_t native_ac(enum kind k, int rows, int r, int c) {
  const size_t a = (size_t)atom_of(k), cc = (size_t)c;
  return ((cc / a) * (size_t)rows + (size_t)r) * a + cc % a;
}

#endif
