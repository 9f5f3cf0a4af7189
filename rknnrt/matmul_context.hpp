#pragma once
// One rknn_matmul_ctx: its shapes, its operands, and the regcmd programs that compute it.
//
// A shape is cut into K segments of at most 8192 (layouts.hpp), each a regcmd plan that
// keeps K in one op (plan_options::whole_k: M and N tiles only), so native B is read where
// it lies and the client's row-major A and C are the programs' own operands: zero copies
// for fp16/int8 with native B and normal A/C. What the NPU cannot read where it lies goes
// through a staging buffer of the context's own, converted at each run (the client may
// change it between runs):
//   A  int4 rows (the NPU's rows are K bytes), native A, or a client that binds a second
//      A buffer: the NPU caches features by address, so a program keeps one feature
//      buffer (regcmd-isa-reference "State gotchas"); the context then copies every A
//      into its own
//   B  normal or transposed B (to native), and the types whose B is widened on the host:
//      7 (int4 -> fp16, times its scales) and 11 (int4 -> int8)
//   C  several K segments (partials summed on the host) or native C
// The runtime's session applies the reset, warm-up and sync rules at every run.

#include <cmath>
#include <cstring>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/runtime/session.hpp>

#include <rknn/rknn_matmul_api.h>

#include "layouts.hpp"
#include "memory.hpp"

namespace regcmd::rknn {

// What a matmul type computes and what the NPU runs for it (rknn-matmul-api §1.3).
struct matmul_types {
  precision a, b, c;  // the client's operands
  precision npu;      // the programs' input precision (B widened to it when b differs)
};

// An enum the client passed, as the int it wrote: read as the enum, a value outside its
// enumerators' range would be undefined behaviour.
template <class Enum>
std::int32_t raw_value(const Enum& e) {
  static_assert(sizeof(Enum) == sizeof(std::int32_t));
  std::int32_t raw;
  std::memcpy(&raw, &e, sizeof raw);
  return raw;
}

// One operand's attributes: A, B, C by index 0, 1, 2.
inline const rknn_matmul_tensor_attr& operand_attr(const rknn_matmul_io_attr& io, std::size_t which) {
  return which == 0 ? io.A : which == 1 ? io.B : io.C;
}

constexpr std::optional<matmul_types> types_of(std::int32_t type) {
  switch (type) {
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32:
      return matmul_types{precision::fp16, precision::fp16, precision::fp32, precision::fp16};
    case RKNN_INT8_MM_INT8_TO_INT32:
      return matmul_types{precision::int8, precision::int8, precision::int32, precision::int8};
    case RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16:
      return matmul_types{precision::fp16, precision::fp16, precision::fp16, precision::fp16};
    case RKNN_FLOAT16_MM_INT4_TO_FLOAT32:
      return matmul_types{precision::fp16, precision::int4, precision::fp32, precision::fp16};
    case RKNN_INT4_MM_INT4_TO_INT16:
      return matmul_types{precision::int4, precision::int4, precision::int16, precision::int4};
    case RKNN_INT8_MM_INT4_TO_INT32:
      return matmul_types{precision::int8, precision::int4, precision::int32, precision::int8};
    default:
      return std::nullopt;
  }
}

constexpr rknn_tensor_type tensor_type(precision p) {
  switch (p) {
    case precision::fp16:
      return RKNN_TENSOR_FLOAT16;
    case precision::int8:
      return RKNN_TENSOR_INT8;
    case precision::int4:
      return RKNN_TENSOR_INT4;
    case precision::int16:
      return RKNN_TENSOR_INT16;
    case precision::int32:
      return RKNN_TENSOR_INT32;
    default:
      return RKNN_TENSOR_FLOAT32;
  }
}

// The API's alignment of K and N for B of precision b (rknn-matmul-api §1.8): K a positive
// multiple of 32, N of B's native tile (16 fp16, 32 int8, 64 int4). Empty when they fit.
inline std::string alignment_error(std::int64_t K, std::int64_t N, precision b) {
  const std::int64_t n_tile = matmul::weight_tile_n(b);
  if (K <= 0 || K % 32 != 0)
    return "K = " + std::to_string(K) + " is not a positive multiple of 32 (rknn-matmul-api §1.8)";
  if (N <= 0 || N % n_tile != 0)
    return "N = " + std::to_string(N) + " is not a positive multiple of " + std::to_string(n_tile) +
           " for B of this type (rknn-matmul-api §1.8)";
  return {};
}

// An error of the API: its code and what to tell the user.
struct api_error {
  int code = RKNN_ERR_FAIL;
  std::string what;
};
using api_status = std::optional<api_error>;  // nullopt: success

// The RKNN code of a regcmd error.
int code_of(const error& e);
api_error from(const error& e, std::string_view where);

struct quant_params {
  std::vector<float> scale;
  std::vector<std::int32_t> zp;
};

class matmul_context {
 public:
  // Checks info (type, layouts, quantisation) and every shape (alignment) and opens the
  // device of info's IOMMU domain.
  static std::variant<std::shared_ptr<matmul_context>, api_error> create(const rknn_matmul_info& info,
                                                                         std::span<const rknn_matmul_shape> shapes);

  // The operands of a shape as rknn_matmul_create reports them.
  const rknn_matmul_io_attr& io_attr(std::size_t shape) const { return attrs_[shape]; }
  int domain() const { return info_.iommu_domain_id; }

  api_status set_io_mem(rknn_tensor_mem* mem, const rknn_matmul_tensor_attr& attr);
  api_status set_core_mask(std::int32_t mask);
  api_status set_quant_params(const rknn_quant_params& params);
  api_status get_quant_params(rknn_quant_params& params, float* scale);
  api_status set_dynamic_shape(const rknn_matmul_shape& shape);
  api_status run();

 private:
  // The buffers (ids) and offsets a program was bound to last.
  struct binding {
    std::array<std::uint64_t, 3> ids{};
    std::array<std::uint64_t, operand_role_count> offsets{};
    friend bool operator==(const binding&, const binding&) = default;
  };
  // The regcmd program of one K segment, prepared and bound once, rebound when an operand
  // moves.
  struct segment {
    runtime_program<plan_shape> code;
    std::optional<runtime::prepared_program> prepared;
    std::optional<binding> bound;
  };
  // Everything one shape needs: built on its first run.
  struct shape_state {
    bool built = false;
    bool stage_features = false;  // A is copied into feature_stage
    bool stage_weights = false;
    bool stage_output = false;
    precision partial{};  // what the programs write
    std::vector<segment> segments;
    runtime::buffer feature_stage, weight_stage, output_stage;
    std::optional<runtime::feature_binding> first_feature;  // the A buffer and offset bound first
  };
  enum operand_index { op_a, op_b, op_c };

  matmul_context(const rknn_matmul_info& info, std::span<const rknn_matmul_shape> shapes, matmul_types types,
                 runtime::device dev);

  rknn_matmul_io_attr attributes_of(const rknn_matmul_shape& s) const;
  api_status build(shape_state& st, const rknn_matmul_shape& shape);
  api_status stage_inputs(shape_state& st, const rknn_matmul_shape& shape);
  void finish_output(const shape_state& st, const rknn_matmul_shape& shape);
  runtime::operands operands_of(const shape_state& st, const rknn_matmul_shape& shape, std::uint32_t s) const;
  api_status check_operand_sizes() const;
  runtime::prepare_options prepare_options() const;
  runtime::run_options run_options() const;
  // B's quantisation arrays: their length for a shape, and the entry that applies to B(k, n).
  std::size_t b_quant_length(const rknn_matmul_shape& shape) const;
  std::size_t b_quant_index(std::uint32_t k, std::uint32_t n, const rknn_matmul_shape& shape) const;

  std::mutex lock_;  // one run or call at a time per context; contexts run in parallel
  rknn_matmul_info info_;
  std::vector<rknn_matmul_shape> shapes_;
  std::vector<shape_state> states_;
  std::size_t current_ = 0;
  matmul_types types_;
  std::vector<rknn_matmul_io_attr> attrs_;  // by shape
  runtime::device device_;
  runtime::session session_;
  std::array<std::shared_ptr<mem_record>, 3> operands_;
  std::int32_t core_mask_ = RKNN_NPU_CORE_AUTO;
  quant_params quant_a_, quant_b_, quant_c_;
};

}  // namespace regcmd::rknn
