#include "matmul_context.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <tuple>

#include <regcmd/decode/format.hpp>

namespace regcmd::rknn {

int code_of(const error& e) {
  if (e.breaks(rules::submit_timeout)) return RKNN_ERR_TIMEOUT;
  if (e.breaks(rules::device_missing) || e.breaks(rules::device_open) || e.breaks(rules::device_permission) ||
      e.breaks(rules::wrong_driver))
    return RKNN_ERR_DEVICE_UNAVAILABLE;
  if (e.breaks(rules::bo_size) || e.breaks(rules::mmap_failed) || e.breaks(rules::iova_32bit) || e.os_errno == ENOMEM)
    return RKNN_ERR_MALLOC_FAIL;
  if (e.breaks(rules::ioctl_failed) || e.breaks(rules::wrong_device)) return RKNN_ERR_FAIL;
  return RKNN_ERR_PARAM_INVALID;  // a shape or layout regcmd's rules refuse
}

api_error from(const error& e, std::string_view where) {
  return {code_of(e), std::string(where) + ": " + to_string(e)};
}

namespace {

api_error invalid(std::string what) { return {RKNN_ERR_PARAM_INVALID, std::move(what)}; }

std::uint64_t elements(const rknn_matmul_shape& s, char operand) {
  const auto M = static_cast<std::uint64_t>(s.M), K = static_cast<std::uint64_t>(s.K),
             N = static_cast<std::uint64_t>(s.N);
  return operand == 'A' ? M * K : operand == 'B' ? K * N : M * N;
}

void set_attr(rknn_matmul_tensor_attr& a, const char* name, precision p, std::uint64_t count,
              std::initializer_list<std::uint32_t> dims) {
  std::memset(&a, 0, sizeof a);
  std::snprintf(a.name, sizeof a.name, "%s", name);
  a.n_dims = static_cast<std::uint32_t>(dims.size());
  std::copy(dims.begin(), dims.end(), a.dims);
  a.size = static_cast<std::uint32_t>(bytes_of(p, count));
  a.type = tensor_type(p);
}

// The program of K segment s of a shape: K in one op (M and N tiles only), writing C
// itself, or with several segments the accumulator's partials the host sums.
matmul_spec segment_spec(const matmul_types& t, const rknn_matmul_shape& shape, std::uint32_t s) {
  const auto K = static_cast<std::uint32_t>(shape.K);
  return {.dtype = t.npu,
          .out_dtype = segment_count(K) > 1 ? matmul::partial_precision(t.npu) : t.c,
          .M = static_cast<std::uint32_t>(shape.M),
          .K = segment_depth(K, s),
          .N = static_cast<std::uint32_t>(shape.N),
          .tile_pad = tile_padding::none};
}

}  // namespace

std::variant<std::shared_ptr<matmul_context>, api_error> matmul_context::create(
    const rknn_matmul_info& info, std::span<const rknn_matmul_shape> shapes) {
  const std::optional<matmul_types> types = types_of(raw_value(info.type));
  if (!types)
    return invalid("matmul type " + std::to_string(raw_value(info.type)) +
                   " is not supported: regcmd runs 1 (fp16 -> fp32), 2 (int8 -> int32), 4 (fp16 -> fp16), 10 (int4 -> "
                   "int16), and 7 (fp16 x int4 -> fp32) and 11 (int8 x int4 -> int32) with B widened on the host");
  if (info.B_layout < RKNN_MM_LAYOUT_NORM || info.B_layout > RKNN_MM_LAYOUT_TP_NORM)
    return invalid("B_layout " + std::to_string(info.B_layout) + " is not NORM (0), NATIVE (1) or TP_NORM (2)");
  if (info.AC_layout != RKNN_MM_LAYOUT_NORM && info.AC_layout != RKNN_MM_LAYOUT_NATIVE)
    return invalid("AC_layout " + std::to_string(info.AC_layout) + " is not NORM (0) or NATIVE (1)");
  if (info.B_quant_type < RKNN_QUANT_TYPE_PER_LAYER_SYM || info.B_quant_type > RKNN_QUANT_TYPE_PER_GROUP_ASYM)
    return invalid("B_quant_type " + std::to_string(info.B_quant_type) + " is not a rknn_matmul_quant_type");
  if (info.AC_quant_type != RKNN_QUANT_TYPE_PER_LAYER_SYM && info.AC_quant_type != RKNN_QUANT_TYPE_PER_LAYER_ASYM)
    return invalid("AC_quant_type must be per layer: A and C have one scale each");
  const bool grouped = info.B_quant_type >= RKNN_QUANT_TYPE_PER_GROUP_SYM;
  if (grouped && info.group_size <= 0) return invalid("per-group B quantisation needs group_size > 0");
  if (info.iommu_domain_id < 0 || info.iommu_domain_id >= rknpu::max_iommu_domains)
    return invalid("iommu_domain_id " + std::to_string(info.iommu_domain_id) + " is not in 0..15");
  if (shapes.empty()) return invalid("no shape");
  for (const rknn_matmul_shape& s : shapes) {
    const std::string shape = std::to_string(s.M) + "x" + std::to_string(s.K) + "x" + std::to_string(s.N);
    if (s.M <= 0 || s.K <= 0 || s.N <= 0) return invalid("shape " + shape + ": M, K and N must be at least 1");
    if (const std::string e = alignment_error(s.K, s.N, types->b); !e.empty())
      return invalid("shape " + shape + ": " + e);
    if (grouped && s.K % info.group_size != 0)
      return invalid("shape " + shape + ": K must be a multiple of group_size " + std::to_string(info.group_size));
    // An operand's size is a 32-bit field of its attributes, and every byte needs a 32-bit
    // NPU address (fact sheet §1.5): refused here, never reported as a wrapped size.
    for (const auto& [name, type, count] : {std::tuple{'A', types->a, elements(s, 'A')}, std::tuple{'B', types->b, elements(s, 'B')},
                                            std::tuple{'C', types->c, elements(s, 'C')}})
      if (bytes_of(type, count) > UINT32_MAX)
        return invalid("shape " + shape + ": " + name + " would be " + std::to_string(bytes_of(type, count)) +
                       " bytes; an operand holds at most 4 GiB - 1 (rknn_matmul_tensor_attr.size and the NPU's addresses are 32 bits)");
    // What a run may stage (build()): every A row segment by segment (a second A buffer
    // stages it too), B converted, C's K-segment partials or native C, each a buffer
    // within the 32-bit address space, or every run of the shape would fail.
    const auto M = static_cast<std::uint64_t>(s.M), N = static_cast<std::uint64_t>(s.N);
    std::uint64_t features = 0;
    for (std::uint32_t seg = 0; seg < segment_count(static_cast<std::uint32_t>(s.K)); ++seg)
      features += M * matmul_geometry::feature_row_bytes(types->npu, segment_depth(static_cast<std::uint32_t>(s.K), seg));
    const std::uint64_t partials = segment_count(static_cast<std::uint32_t>(s.K)) * bytes_of(segment_spec(*types, s, 0).out_dtype, M * N);
    for (const auto& [what, bytes] : {std::pair{"A staged", features}, std::pair{"B converted", bytes_of(types->npu, elements(s, 'B'))},
                                      std::pair{"C's partials", partials}})
      if (bytes > UINT32_MAX)
        return invalid("shape " + shape + ": " + what + " would be " + std::to_string(bytes) +
                       " bytes; a buffer the NPU reads or writes holds at most 4 GiB - 1");
    // Every segment must make a program: the same checks the build makes, before any run.
    for (std::uint32_t seg = 0; seg < segment_count(static_cast<std::uint32_t>(s.K)); ++seg)
      if (auto p = plan(segment_spec(*types, s, seg), {.whole_k = true}); !p) return from(p.err(), "shape " + shape);
  }
  auto dev = memory_registry::instance().device_of(info.iommu_domain_id);
  if (!dev) return from(dev.err(), "rknn_matmul_create");
  return std::shared_ptr<matmul_context>(new matmul_context(info, shapes, *types, dev.value()));
}

matmul_context::matmul_context(const rknn_matmul_info& info, std::span<const rknn_matmul_shape> shapes,
                               matmul_types types, runtime::device dev)
    : info_{info},
      shapes_(shapes.begin(), shapes.end()),
      states_(shapes.size()),
      types_{types},
      device_{dev},
      session_{dev} {
  for (const rknn_matmul_shape& s : shapes_) attrs_.push_back(attributes_of(s));
}

rknn_matmul_io_attr matmul_context::attributes_of(const rknn_matmul_shape& s) const {
  const auto M = static_cast<std::uint32_t>(s.M), K = static_cast<std::uint32_t>(s.K),
             N = static_cast<std::uint32_t>(s.N);
  rknn_matmul_io_attr io{};
  const bool native_ac = info_.AC_layout == RKNN_MM_LAYOUT_NATIVE;
  const std::uint32_t sub_k = atom_elements(types_.a), sub_n = atom_elements(types_.c),
                      tile_n = matmul::weight_tile_n(types_.b);
  if (native_ac) {
    set_attr(io.A, "A", types_.a, elements(s, 'A'), {K / sub_k, M, sub_k});
    set_attr(io.C, "C", types_.c, elements(s, 'C'), {N / sub_n, M, sub_n});
  } else {
    set_attr(io.A, "A", types_.a, elements(s, 'A'), {M, K});
    set_attr(io.C, "C", types_.c, elements(s, 'C'), {M, N});
  }
  if (info_.B_layout == RKNN_MM_LAYOUT_NATIVE)
    set_attr(io.B, "B", types_.b, elements(s, 'B'), {N / tile_n, K / 32, tile_n, 32});
  else if (info_.B_layout == RKNN_MM_LAYOUT_TP_NORM)
    set_attr(io.B, "B", types_.b, elements(s, 'B'), {N, K});
  else
    set_attr(io.B, "B", types_.b, elements(s, 'B'), {K, N});
  return io;
}

api_status matmul_context::set_io_mem(rknn_tensor_mem* mem, const rknn_matmul_tensor_attr& attr) {
  const std::lock_guard g{lock_};
  const std::string_view name(attr.name, strnlen(attr.name, sizeof attr.name));
  if (name != "A" && name != "B" && name != "C")
    return invalid("the tensor attribute names '" + std::string(name) + "': pass io_attr.A, .B or .C");
  const auto which = static_cast<std::size_t>(name[0] - 'A');
  std::shared_ptr<mem_record> r = record_of(mem);
  if (r->memory->domain != domain())
    return invalid("memory of IOMMU domain " + std::to_string(r->memory->domain) + " bound to a context of domain " +
                   std::to_string(domain()));
  const rknn_matmul_io_attr& io = io_attr(current_);
  const std::uint32_t need = operand_attr(io, which).size;
  if (r->size < need)
    return invalid(std::string(name) + ": the memory holds " + std::to_string(r->size) + " bytes, the operand " +
                   std::to_string(need));
  operands_[which] = std::move(r);
  return std::nullopt;
}

runtime::prepare_options matmul_context::prepare_options() const {
  const bool several =
      core_mask_ == RKNN_NPU_CORE_0_1 || core_mask_ == RKNN_NPU_CORE_0_1_2 || core_mask_ == RKNN_NPU_CORE_ALL;
  return {.use = several ? runtime::cores::all : runtime::cores::one};
}

runtime::run_options matmul_context::run_options() const {
  runtime::run_options o;
  switch (core_mask_) {
    case RKNN_NPU_CORE_AUTO:
      o.use = runtime::cores::round_robin;
      break;
    case RKNN_NPU_CORE_1:
      o.core = 1;
      break;
    case RKNN_NPU_CORE_2:
      o.core = 2;
      break;
    default:
      break;  // core 0, or the cores of a split program
  }
  return o;
}

api_status matmul_context::set_core_mask(std::int32_t mask) {
  switch (mask) {
    case RKNN_NPU_CORE_AUTO:
    case RKNN_NPU_CORE_0:
    case RKNN_NPU_CORE_1:
    case RKNN_NPU_CORE_2:
    case RKNN_NPU_CORE_0_1:
    case RKNN_NPU_CORE_0_1_2:
    case RKNN_NPU_CORE_ALL:
      break;
    default:
      return invalid("core mask " + std::to_string(mask) + " is not a rknn_core_mask of RK3588");
  }
  const std::lock_guard g{lock_};
  const runtime::cores before = prepare_options().use;
  core_mask_ = mask;
  if (prepare_options().use != before)  // programs are split over cores when prepared
    for (shape_state& st : states_)
      for (segment& seg : st.segments) {
        seg.prepared.reset();
        seg.bound.reset();
      }
  return std::nullopt;
}

api_status matmul_context::set_quant_params(const rknn_quant_params& params) {
  const std::lock_guard g{lock_};
  const std::string_view name(params.name, strnlen(params.name, sizeof params.name));
  const rknn_matmul_shape& s = shapes_[current_];
  std::int64_t expected = 1;
  if (name == "B") {
    expected = static_cast<std::int64_t>(b_quant_length(s));
  } else if (name != "A" && name != "C") {
    return invalid("quant params name '" + std::string(name) + "': give \"A\", \"B\" or \"C\"");
  }
  if (params.scale_len != expected)
    return invalid(std::string(name) + ": scale_len " + std::to_string(params.scale_len) +
                   ", the quantisation type needs " + std::to_string(expected));
  if (params.zp_len != 0 && params.zp_len != expected)
    return invalid(std::string(name) + ": zp_len " + std::to_string(params.zp_len) + " is neither 0 nor " +
                   std::to_string(expected));
  if (!params.scale || (params.zp_len > 0 && !params.zp))
    return invalid(std::string(name) + ": a null scale or zp array");
  quant_params q;
  q.scale.assign(params.scale, params.scale + params.scale_len);
  if (params.zp_len > 0) q.zp.assign(params.zp, params.zp + params.zp_len);
  for (float f : q.scale)
    if (!std::isfinite(f) || f <= 0)
      return invalid(std::string(name) + ": scale " + std::to_string(f) + " is not a positive finite number");
  (name == "A" ? quant_a_ : name == "B" ? quant_b_ : quant_c_) = std::move(q);
  return std::nullopt;
}

api_status matmul_context::get_quant_params(rknn_quant_params& params, float* scale) {
  const std::lock_guard g{lock_};
  const bool per_channel =
      info_.B_quant_type == RKNN_QUANT_TYPE_PER_CHANNEL_SYM || info_.B_quant_type == RKNN_QUANT_TYPE_PER_CHANNEL_ASYM;
  if (raw_value(info_.type) != RKNN_INT8_MM_INT8_TO_INT32 || !per_channel)
    return invalid("rknn_matmul_get_quant_params answers only INT8 x INT8 -> INT32 with per-channel B");
  if (quant_b_.scale.empty()) return invalid("B has no quant params: set them with rknn_matmul_set_quant_params first");
  if (!scale) return invalid("a null scale array");
  std::copy(quant_b_.scale.begin(), quant_b_.scale.end(), scale);
  std::memset(params.name, 0, sizeof params.name);
  params.name[0] = 'B';
  params.scale_len = static_cast<std::int32_t>(quant_b_.scale.size());
  params.zp_len = static_cast<std::int32_t>(quant_b_.zp.size());
  return std::nullopt;
}

api_status matmul_context::set_dynamic_shape(const rknn_matmul_shape& shape) {
  const std::lock_guard g{lock_};
  for (std::size_t i = 0; i < shapes_.size(); ++i)
    if (shapes_[i].M == shape.M && shapes_[i].K == shape.K && shapes_[i].N == shape.N) {
      current_ = i;
      return std::nullopt;
    }
  return invalid("shape " + std::to_string(shape.M) + "x" + std::to_string(shape.K) + "x" + std::to_string(shape.N) +
                 " is not one the context was created with");
}

api_status matmul_context::build(shape_state& st, const rknn_matmul_shape& shape) {
  const auto K = static_cast<std::uint32_t>(shape.K);
  const std::uint32_t segments = segment_count(K);
  const bool native_ac = info_.AC_layout == RKNN_MM_LAYOUT_NATIVE;
  st.stage_features = st.stage_features || native_ac || types_.a == precision::int4;
  st.stage_weights = info_.B_layout != RKNN_MM_LAYOUT_NATIVE || types_.b != types_.npu;
  st.stage_output = segments > 1 || native_ac;
  st.partial = segment_spec(types_, shape, 0).out_dtype;
  st.segments.clear();
  std::uint64_t feature_bytes = 0;
  for (std::uint32_t s = 0; s < segments; ++s) {
    const std::uint32_t depth = segment_depth(K, s);
    const std::uint32_t pitch = st.stage_features ? matmul_geometry::feature_row_bytes(types_.npu, depth)
                                                  : static_cast<std::uint32_t>(bytes_of(types_.npu, K));
    matmul_spec spec = segment_spec(types_, shape, s);
    spec.feature_pitch = pitch;
    auto code = regcmd::build(plan_request{spec, {.whole_k = true}});
    if (!code) return from(code.err(), "rknn_matmul_run");
    st.segments.push_back({std::move(code).value(), std::nullopt, std::nullopt});
    feature_bytes += std::uint64_t{static_cast<std::uint32_t>(shape.M)} * pitch;
  }
  auto stage = [&](runtime::buffer& b, std::uint64_t bytes) -> api_status {
    auto made = runtime::buffer::create(device_, bytes);
    if (!made) return from(made.err(), "rknn_matmul_run: a staging buffer");
    b = std::move(made.value());
    return std::nullopt;
  };
  if (st.stage_features) {
    if (api_status e = stage(st.feature_stage, feature_bytes)) return e;
    std::memset(st.feature_stage.bytes().data(), 0,
                st.feature_stage.size());  // int4 rows' second halves stay zero (layouts.hpp)
  }
  if (st.stage_weights)
    if (api_status e = stage(st.weight_stage, bytes_of(types_.npu, elements(shape, 'B')))) return e;
  if (st.stage_output)
    if (api_status e = stage(st.output_stage, segments * bytes_of(st.partial, elements(shape, 'C')))) return e;
  st.built = true;
  return std::nullopt;
}

runtime::operands matmul_context::operands_of(const shape_state& st, const rknn_matmul_shape& shape,
                                              std::uint32_t s) const {
  const auto M = static_cast<std::uint64_t>(shape.M), N = static_cast<std::uint64_t>(shape.N);
  const std::uint64_t k0 = std::uint64_t{s} * k_segment;
  const mem_record& a = *operands_[op_a];
  const mem_record& b = *operands_[op_b];
  const mem_record& c = *operands_[op_c];
  runtime::operands ops;
  auto at = [&](operand_role r) -> std::uint64_t& { return ops.offsets[static_cast<std::size_t>(r)]; };
  if (st.stage_features) {
    ops.feature = &st.feature_stage;
    at(operand_role::feature) = M * matmul_geometry::feature_row_bytes(types_.npu, k_segment) * s;
  } else {
    ops.feature = &a.memory->buffer;
    at(operand_role::feature) = a.offset + bytes_of(types_.npu, k0);
  }
  if (st.stage_weights) {
    ops.weight = &st.weight_stage;
    at(operand_role::weight) = bytes_of(types_.npu, N * k0);
  } else {
    ops.weight = &b.memory->buffer;
    at(operand_role::weight) = b.offset + bytes_of(types_.b, N * k0);
  }
  if (st.stage_output) {
    ops.output = &st.output_stage;
    at(operand_role::output) = bytes_of(st.partial, M * N) * s;
  } else {
    ops.output = &c.memory->buffer;
    at(operand_role::output) = c.offset;
  }
  return ops;
}

std::size_t matmul_context::b_quant_length(const rknn_matmul_shape& shape) const {
  switch (info_.B_quant_type) {
    case RKNN_QUANT_TYPE_PER_LAYER_SYM:
    case RKNN_QUANT_TYPE_PER_LAYER_ASYM:
      return 1;
    case RKNN_QUANT_TYPE_PER_CHANNEL_SYM:
    case RKNN_QUANT_TYPE_PER_CHANNEL_ASYM:
      return static_cast<std::size_t>(shape.N);
    default:
      return static_cast<std::size_t>(shape.N) * static_cast<std::size_t>(shape.K / info_.group_size);
  }
}

std::size_t matmul_context::b_quant_index(std::uint32_t k, std::uint32_t n, const rknn_matmul_shape& shape) const {
  const std::size_t length = b_quant_length(shape);
  if (length == 1) return 0;
  if (length == static_cast<std::size_t>(shape.N)) return n;
  // per group, [n][k / group_size] (rknn-matmul-api §1.9: the vendor's order is not documented)
  const auto group = static_cast<std::uint32_t>(info_.group_size);
  return std::size_t{n} * (static_cast<std::uint32_t>(shape.K) / group) + k / group;
}

api_status matmul_context::stage_inputs(shape_state& st, const rknn_matmul_shape& shape) {
  const auto M = static_cast<std::uint32_t>(shape.M), K = static_cast<std::uint32_t>(shape.K),
             N = static_cast<std::uint32_t>(shape.N);
  for (const auto& r : {operands_[op_a], operands_[op_b]})
    if (r->foreign) std::memcpy(r->memory->buffer.bytes().data(), r->host, r->size);
  const auto from_b = static_cast<layout>(info_.B_layout);
  if (st.stage_features) {
    const auto from_a = info_.AC_layout == RKNN_MM_LAYOUT_NATIVE ? layout::native : layout::normal;
    std::uint8_t* out = st.feature_stage.bytes().data();
    for (std::uint32_t s = 0; s < segment_count(K); ++s) {
      const std::uint32_t depth = segment_depth(K, s);
      a_to_features(operands_[op_a]->host, from_a, types_.a, M, K, s * k_segment, depth, out);
      out += std::size_t{M} * matmul_geometry::feature_row_bytes(types_.npu, depth);
    }
  }
  if (!st.stage_weights) return std::nullopt;
  const std::uint8_t* in = operands_[op_b]->host;
  std::uint8_t* out = st.weight_stage.bytes().data();
  if (types_.b == types_.npu) {
    b_to_native(in, from_b, types_.b, K, N, out);
    return std::nullopt;
  }
  // B widened from int4: to fp16 as (b - zp) * scale_B * scale_A (type 7), to int8 as it is (type 11).
  const std::size_t length = b_quant_length(shape);
  if ((!quant_b_.scale.empty() && quant_b_.scale.size() != length) ||
      (!quant_b_.zp.empty() && quant_b_.zp.size() != length))
    return invalid("B's quant params were set for another shape: set them again after rknn_matmul_set_dynamic_shape");
  const float scale_a = quant_a_.scale.empty() ? 1.0f : quant_a_.scale[0];
  for (std::uint32_t n = 0; n < N; ++n)
    for (std::uint32_t k = 0; k < K; ++k) {
      const std::int32_t v = get_int(in, types_.b, b_index(from_b, types_.b, K, N, k, n));
      const std::size_t q = b_quant_index(k, n, shape);
      const float scale = scale_a * (quant_b_.scale.empty() ? 1.0f : quant_b_.scale[q]);
      const std::int32_t zp = quant_b_.zp.empty() ? 0 : quant_b_.zp[q];
      const std::uint32_t bits = types_.npu == precision::fp16 ? float_to_half(static_cast<float>(v - zp) * scale)
                                                               : static_cast<std::uint32_t>(v) & 0xffu;
      put_bits(out, types_.npu, native_b_index(types_.npu, K, N, k, n), bits);
    }
  return std::nullopt;
}

void matmul_context::finish_output(const shape_state& st, const rknn_matmul_shape& shape) {
  const auto M = static_cast<std::uint32_t>(shape.M), N = static_cast<std::uint32_t>(shape.N);
  const std::uint32_t segments = segment_count(static_cast<std::uint32_t>(shape.K));
  const std::uint8_t* partials = st.output_stage.bytes().data();
  const std::size_t per_segment = std::size_t{M} * N;
  const bool native = info_.AC_layout == RKNN_MM_LAYOUT_NATIVE;
  std::uint8_t* out = operands_[op_c]->host;
  for (std::uint32_t m = 0; m < M; ++m)
    for (std::uint32_t n = 0; n < N; ++n) {
      const std::size_t i = std::size_t{m} * N + n;
      const std::size_t o = native ? native_ac_index(types_.c, M, m, n) : i;
      if (st.partial == precision::fp32) {
        float sum = 0;  // the accumulator's precision
        for (std::uint32_t s = 0; s < segments; ++s)
          sum += static_cast<float>(get_value(partials, st.partial, s * per_segment + i));
        put_bits(out, types_.c, o,
                 types_.c == precision::fp16 ? float_to_half(sum) : std::bit_cast<std::uint32_t>(sum));
      } else if (st.partial == precision::fp16) {  // one segment, native C
        put_bits(out, types_.c, o, get_bits(partials, st.partial, i));
      } else {
        std::int64_t sum = 0;
        for (std::uint32_t s = 0; s < segments; ++s) sum += get_int(partials, st.partial, s * per_segment + i);
        if (types_.c == precision::int16)  // int4's accumulator saturates at 16 bits
          sum = std::clamp<std::int64_t>(sum, std::numeric_limits<std::int16_t>::min(),
                                         std::numeric_limits<std::int16_t>::max());
        put_bits(out, types_.c, o, static_cast<std::uint32_t>(sum));
      }
    }
}

api_status matmul_context::check_operand_sizes() const {
  const rknn_matmul_io_attr& io = io_attr(current_);
  for (std::size_t i = 0; i < 3; ++i) {
    const char name[2] = {static_cast<char>('A' + i), 0};
    if (!operands_[i])
      return api_error{i == op_c ? RKNN_ERR_OUTPUT_INVALID : RKNN_ERR_INPUT_INVALID,
                       std::string(name) + " has no memory: bind it with rknn_matmul_set_io_mem"};
    if (operands_[i]->destroyed)
      return api_error{i == op_c ? RKNN_ERR_OUTPUT_INVALID : RKNN_ERR_INPUT_INVALID,
                       std::string(name) + "'s memory was destroyed (rknn_destroy_mem): bind another with rknn_matmul_set_io_mem"};
    if (operands_[i]->size < operand_attr(io, i).size)
      return invalid(std::string(name) + ": the memory holds " + std::to_string(operands_[i]->size) +
                     " bytes, this shape's operand " + std::to_string(operand_attr(io, i).size));
  }
  return std::nullopt;
}

api_status matmul_context::run() {
  const std::lock_guard g{lock_};
  const rknn_matmul_shape& shape = shapes_[current_];
  shape_state& st = states_[current_];
  if (api_status e = check_operand_sizes()) return e;
  if (!st.built)
    if (api_status e = build(st, shape)) return e;
  // A second A buffer: the programs keep reading their own copy from now on.
  if (!st.stage_features) {
    const runtime::feature_binding key{operands_[op_a]->memory->buffer.id(), operands_[op_a]->offset};
    if (st.first_feature && *st.first_feature != key) {
      st.stage_features = true;
      if (api_status e = build(st, shape)) return e;
    } else {
      st.first_feature = key;
    }
  }
  // A foreign dma-buf is read between its CPU-access brackets (another device may write it).
  for (const auto& r : {operands_[op_a], operands_[op_b]})
    if (status s = cpu_access(*r, dma_buf_sync_read, false); !s) return from(s.err(), "rknn_matmul_run: A or B");
  const api_status staged = stage_inputs(st, shape);
  for (const auto& r : {operands_[op_a], operands_[op_b]})
    if (status s = cpu_access(*r, dma_buf_sync_read, true); !s) return from(s.err(), "rknn_matmul_run: A or B");
  if (staged) return staged;
  // A staged input is read here, not by the NPU: it is synced to the device all the same, so
  // the client may sync it FROM_DEVICE after the run (as it may a bound one) without losing
  // what it wrote.
  for (const auto& [staged, which] : {std::pair{st.stage_features, op_a}, std::pair{st.stage_weights, op_b}})
    if (staged)
      if (status s = to_device(*operands_[which]); !s) return from(s.err(), "rknn_matmul_run: an input to the device");
  for (std::uint32_t s = 0; s < st.segments.size(); ++s) {
    segment& seg = st.segments[s];
    if (!seg.prepared) {
      auto p = session_.prepare(seg.code.view(), prepare_options());
      if (!p) return from(p.err(), "rknn_matmul_run");
      seg.prepared = std::move(p.value());
      seg.bound.reset();
    }
    const runtime::operands ops = operands_of(st, shape, s);
    const binding now{{ops.feature->id(), ops.weight->id(), ops.output->id()}, ops.offsets};
    if (seg.bound != now) {
      if (status b = session_.bind(*seg.prepared, ops); !b) return from(b.err(), "rknn_matmul_run");
      seg.bound = now;
    }
    if (auto r = session_.run(*seg.prepared, run_options()); !r) return from(r.err(), "rknn_matmul_run");
  }
  // Every buffer handed out is left coherent: the session synced what the NPU wrote to the
  // CPU; what is written here on the host reaches the device's view too, or a client's
  // FROM_DEVICE sync (the API's documented step before reading C) would bring back the
  // device's stale bytes over it.
  // A foreign C is written between its CPU-access brackets.
  const mem_record& c = *operands_[op_c];
  if (status s = cpu_access(c, dma_buf_sync_write, false); !s) return from(s.err(), "rknn_matmul_run: C");
  if (st.stage_output) {
    finish_output(st, shape);
    if (status s = to_device(c); !s) return from(s.err(), "rknn_matmul_run: C to the device");
  } else if (c.foreign) {
    std::memcpy(c.host, c.memory->buffer.bytes().data(), c.size);
  }
  if (status s = cpu_access(c, dma_buf_sync_write, true); !s) return from(s.err(), "rknn_matmul_run: C");
  return std::nullopt;
}

}  // namespace regcmd::rknn
