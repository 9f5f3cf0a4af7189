/* Rockchip's matmul API (2.1+ ABI, 64-bit Linux), as regcmd's librknnrt.so implements it:
 * C = A x B on the NPU, with A (M x K), B (K x N) and C (M x N) in NPU memory
 * (rknn_create_mem). Enum values and struct layouts are the vendor library's
 * (rknn-matmul-api §1.2-§1.4), so clients built against it run unchanged.
 *
 * What regcmd's library does with each type, layout and call: docs/rknn.md. */
#ifndef REGCMD_RKNN_MATMUL_API_H
#define REGCMD_RKNN_MATMUL_API_H

#include "rknn_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef rknn_context rknn_matmul_ctx;

/* A x B -> C precisions. */
typedef enum _rknn_matmul_type {
  RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 = 1,
  RKNN_INT8_MM_INT8_TO_INT32 = 2,
  RKNN_INT8_MM_INT8_TO_INT8 = 3,
  RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16 = 4,
  RKNN_FLOAT16_MM_INT8_TO_FLOAT32 = 5,
  RKNN_FLOAT16_MM_INT8_TO_FLOAT16 = 6,
  RKNN_FLOAT16_MM_INT4_TO_FLOAT32 = 7,
  RKNN_FLOAT16_MM_INT4_TO_FLOAT16 = 8,
  RKNN_INT8_MM_INT8_TO_FLOAT32 = 9,
  RKNN_INT4_MM_INT4_TO_INT16 = 10,
  RKNN_INT8_MM_INT4_TO_INT32 = 11,
  RKNN_FLOAT16_MM_INT4_TO_BFLOAT16 = 12,
  RKNN_INT8_MM_INT4_TO_FLOAT16 = 15
} rknn_matmul_type;

/* Operand layouts (rknn_matmul_info.B_layout, .AC_layout):
 *   NORM     row-major: A [M][K], B [K][N], C [M][N]
 *   NATIVE   B: tiles of subN x subK, dims (N/subN, K/subK, subN, subK);
 *            A: (K/subK, M, subK); C: (N/subN, M, subN)
 *   TP_NORM  B only: row-major [N][K] (B transposed) */
enum {
  RKNN_MM_LAYOUT_NORM = 0,
  RKNN_MM_LAYOUT_NATIVE = 1,
  RKNN_MM_LAYOUT_TP_NORM = 2
};

typedef enum _rknn_matmul_quant_type {
  RKNN_QUANT_TYPE_PER_LAYER_SYM = 0,
  RKNN_QUANT_TYPE_PER_LAYER_ASYM = 1,
  RKNN_QUANT_TYPE_PER_CHANNEL_SYM = 2,
  RKNN_QUANT_TYPE_PER_CHANNEL_ASYM = 3,
  RKNN_QUANT_TYPE_PER_GROUP_SYM = 4,
  RKNN_QUANT_TYPE_PER_GROUP_ASYM = 5
} rknn_matmul_quant_type;

/* One operand as rknn_matmul_create reports it; pass it back to rknn_matmul_set_io_mem. */
typedef struct _rknn_matmul_tensor_attr {
  char name[RKNN_MAX_NAME_LEN]; /* "A", "B" or "C" */
  uint32_t n_dims;
  uint32_t dims[RKNN_MAX_DIMS];
  uint32_t size; /* bytes (int4: two elements a byte) */
  rknn_tensor_type type;
} rknn_matmul_tensor_attr;

typedef struct _rknn_matmul_io_attr {
  rknn_matmul_tensor_attr A;
  rknn_matmul_tensor_attr B;
  rknn_matmul_tensor_attr C;
} rknn_matmul_io_attr;

/* What a context computes. Zero it before filling it in: the reserved bytes are read. */
typedef struct _rknn_matmul_info_t {
  int32_t M;
  int32_t K;
  int32_t N;
  rknn_matmul_type type;
  int16_t B_layout;       /* RKNN_MM_LAYOUT_* */
  int16_t B_quant_type;   /* rknn_matmul_quant_type */
  int16_t AC_layout;      /* RKNN_MM_LAYOUT_NORM or _NATIVE */
  int16_t AC_quant_type;  /* per layer only */
  int32_t iommu_domain_id;
  int16_t group_size;     /* per-group quantisation: K elements per scale */
  int8_t reserved[34];
} rknn_matmul_info;

/* Quantisation of one operand, picked by name ("A", "B" or "C"): per layer one scale and
 * zero point, per channel N, per group N * K / group_size. */
typedef struct _rknn_quant_params {
  char name[RKNN_MAX_NAME_LEN];
  float* scale;
  int32_t scale_len;
  int32_t* zp;
  int32_t zp_len;
} rknn_quant_params;

/* One shape of a context created with rknn_matmul_create_dynamic_shape. */
typedef struct _rknn_matmul_shape {
  int32_t M;
  int32_t K;
  int32_t N;
} rknn_matmul_shape;

/* Creates a context for info's shape and type; fills io_attr with the operands. */
int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info, rknn_matmul_io_attr* io_attr);
/* As rknn_matmul_create for several shapes (info's M, K, N are not read); io_attrs gets one
 * entry per shape. Pick one with rknn_matmul_set_dynamic_shape. */
int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                     rknn_matmul_shape dynamic_shapes[], rknn_matmul_io_attr io_attrs[]);
/* Binds memory to the operand `attr` names (one of the io_attr entries). */
int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem, rknn_matmul_tensor_attr* attr);
int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask);
int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params* params);
/* B's per-channel scales (INT8 x INT8 -> INT32 with per-channel B only), into `scale`. */
int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params, float* scale);
/* Selects one of the shapes given to rknn_matmul_create_dynamic_shape; bind the operands
 * again after it. */
int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape);
/* Runs C = A x B and returns when C is written (and visible to the CPU). */
int rknn_matmul_run(rknn_matmul_ctx ctx);
int rknn_matmul_destroy(rknn_matmul_ctx ctx);
/* Converts a K x N row-major B into the native layout of info's type (K above the SoC's
 * segment is cut into segments, each tiled on its own, one after another). */
int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K, int N, rknn_matmul_info* info);

/* The name of a matmul type, e.g. "FLOAT16_MM_FLOAT16_TO_FLOAT32"; "UNKNOW" otherwise. */
static inline const char* get_matmul_type_string(rknn_matmul_type type) {
  switch (type) {
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32: return "FLOAT16_MM_FLOAT16_TO_FLOAT32";
    case RKNN_INT8_MM_INT8_TO_INT32: return "INT8_MM_INT8_TO_INT32";
    case RKNN_INT8_MM_INT8_TO_INT8: return "INT8_MM_INT8_TO_INT8";
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16: return "FLOAT16_MM_FLOAT16_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT32: return "FLOAT16_MM_INT8_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT8_TO_FLOAT16: return "FLOAT16_MM_INT8_TO_FLOAT16";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT32: return "FLOAT16_MM_INT4_TO_FLOAT32";
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT16: return "FLOAT16_MM_INT4_TO_FLOAT16";
    case RKNN_INT8_MM_INT8_TO_FLOAT32: return "INT8_MM_INT8_TO_FLOAT32";
    case RKNN_INT4_MM_INT4_TO_INT16: return "INT4_MM_INT4_TO_INT16";
    case RKNN_INT8_MM_INT4_TO_INT32: return "INT8_MM_INT4_TO_INT32";
    case RKNN_FLOAT16_MM_INT4_TO_BFLOAT16: return "FLOAT16_MM_INT4_TO_BFLOAT16";
    case RKNN_INT8_MM_INT4_TO_FLOAT16: return "INT8_MM_INT4_TO_FLOAT16";
    default: return "UNKNOW";
  }
}

#ifdef __cplusplus
}
#endif

#endif /* REGCMD_RKNN_MATMUL_API_H */
