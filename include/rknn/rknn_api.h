/* The part of Rockchip's RKNN runtime C API that the matmul API builds on: contexts, error
 * codes, tensor types and the NPU memory calls, with the 2.1+ ABI of 64-bit Linux (struct
 * sizes and offsets as the vendor library reads them: rknn-matmul-api §1.3, §1.4).
 *
 * Written for regcmd's own librknnrt.so (rknnrt/), which runs the matmul API on regcmd's
 * runtime, on the vendor rknpu driver and on the mainline rocket driver. Only what that
 * library implements is declared; the model API (rknn_init, rknn_run, ...) is not. */
#ifndef REGCMD_RKNN_API_H
#define REGCMD_RKNN_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A context: the handle the matmul API and the memory calls take (the same type). */
#if defined(__arm__) && !defined(__aarch64__)
#error "regcmd's rknn API is for 64-bit builds only: the 32-bit ABI differs (rknn-matmul-api §1.4)"
#endif
typedef uint64_t rknn_context;

#define RKNN_MAX_DIMS 16
#define RKNN_MAX_NAME_LEN 256

/* Return codes: 0 on success, a negative code otherwise. */
#define RKNN_SUCC 0
#define RKNN_ERR_FAIL -1
#define RKNN_ERR_TIMEOUT -2
#define RKNN_ERR_DEVICE_UNAVAILABLE -3
#define RKNN_ERR_MALLOC_FAIL -4
#define RKNN_ERR_PARAM_INVALID -5
#define RKNN_ERR_MODEL_INVALID -6
#define RKNN_ERR_CTX_INVALID -7
#define RKNN_ERR_INPUT_INVALID -8
#define RKNN_ERR_OUTPUT_INVALID -9
#define RKNN_ERR_DEVICE_UNMATCH -10
#define RKNN_ERR_INCOMPATILE_PRE_COMPILE_MODEL -11
#define RKNN_ERR_INCOMPATILE_OPTIMIZATION_LEVEL_VERSION -12
#define RKNN_ERR_TARGET_PLATFORM_UNMATCH -13

typedef enum _rknn_tensor_type {
  RKNN_TENSOR_FLOAT32 = 0,
  RKNN_TENSOR_FLOAT16 = 1,
  RKNN_TENSOR_INT8 = 2,
  RKNN_TENSOR_UINT8 = 3,
  RKNN_TENSOR_INT16 = 4,
  RKNN_TENSOR_UINT16 = 5,
  RKNN_TENSOR_INT32 = 6,
  RKNN_TENSOR_UINT32 = 7,
  RKNN_TENSOR_INT64 = 8,
  RKNN_TENSOR_BOOL = 9,
  RKNN_TENSOR_INT4 = 10,
  RKNN_TENSOR_BFLOAT16 = 11,
  RKNN_TENSOR_TYPE_MAX
} rknn_tensor_type;

/* Which NPU cores a context runs on (RK3588: three). */
typedef enum _rknn_core_mask {
  RKNN_NPU_CORE_AUTO = 0,
  RKNN_NPU_CORE_0 = 1,
  RKNN_NPU_CORE_1 = 2,
  RKNN_NPU_CORE_2 = 4,
  RKNN_NPU_CORE_0_1 = 3,
  RKNN_NPU_CORE_0_1_2 = 7,
  RKNN_NPU_CORE_ALL = 0xffff,
  RKNN_NPU_CORE_UNDEFINED = 0x10000
} rknn_core_mask;

/* How a rknn_tensor_mem came to be (its `flags`). */
typedef enum _rknn_tensor_mem_flags {
  RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE = 1,
  RKNN_TENSOR_MEMORY_FLAGS_FROM_FD = 2,
  RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS = 3,
  RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN = 4
} rknn_tensor_mem_flags;

/* rknn_create_mem2's allocation flags. */
typedef enum _rknn_mem_alloc_flags {
  RKNN_FLAG_MEMORY_FLAGS_DEFAULT = 0,
  RKNN_FLAG_MEMORY_CACHEABLE = 1,
  RKNN_FLAG_MEMORY_NON_CACHEABLE = 2,
  RKNN_FLAG_MEMORY_TRY_ALLOC_SRAM = 4
} rknn_mem_alloc_flags;

/* rknn_create_mem2 with this flag needs no context (ctx may be 0). */
#define RKNN_MEM_FLAG_ALLOC_NO_CONTEXT 0x20000

typedef enum _rknn_mem_sync_mode {
  RKNN_MEMORY_SYNC_TO_DEVICE = 1,
  RKNN_MEMORY_SYNC_FROM_DEVICE = 2,
  RKNN_MEMORY_SYNC_BIDIRECTIONAL = 3
} rknn_mem_sync_mode;

/* A block of memory the NPU can read and write. The data is at virt_addr + offset; the NPU
 * sees it at phys_addr (its IOVA) + offset. fd is a dma-buf of the whole allocation. */
typedef struct _rknn_tensor_mem {
  void* virt_addr;
  uint64_t phys_addr;
  int32_t fd;
  int32_t offset;
  uint32_t size;
  uint32_t flags;
  void* priv_data;
} rknn_tensor_mem;

/* Allocates `size` bytes of NPU memory (cacheable). */
rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size);
/* As rknn_create_mem, with allocation flags (RKNN_MEM_FLAG_ALLOC_NO_CONTEXT: ctx may be 0). */
rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags);
/* A view of `size` bytes at `offset` into the dma-buf `fd` mapped at `virt_addr`. */
rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void* virt_addr, uint32_t size, int32_t offset);
/* Frees what rknn_create_mem* returned (the memory, or the view). */
int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem* mem);
/* Makes the CPU's writes visible to the NPU (TO_DEVICE) or the NPU's to the CPU. */
int rknn_mem_sync(rknn_context ctx, rknn_tensor_mem* mem, rknn_mem_sync_mode mode);

/* The name of a tensor type, e.g. "FP16"; "UNKNOW" for a value not listed. */
static inline const char* get_type_string(rknn_tensor_type type) {
  switch (type) {
    case RKNN_TENSOR_FLOAT32: return "FP32";
    case RKNN_TENSOR_FLOAT16: return "FP16";
    case RKNN_TENSOR_INT8: return "INT8";
    case RKNN_TENSOR_UINT8: return "UINT8";
    case RKNN_TENSOR_INT16: return "INT16";
    case RKNN_TENSOR_UINT16: return "UINT16";
    case RKNN_TENSOR_INT32: return "INT32";
    case RKNN_TENSOR_UINT32: return "UINT32";
    case RKNN_TENSOR_INT64: return "INT64";
    case RKNN_TENSOR_BOOL: return "BOOL";
    case RKNN_TENSOR_INT4: return "INT4";
    case RKNN_TENSOR_BFLOAT16: return "BF16";
    default: return "UNKNOW";
  }
}

#ifdef __cplusplus
}
#endif

#endif /* REGCMD_RKNN_API_H */
