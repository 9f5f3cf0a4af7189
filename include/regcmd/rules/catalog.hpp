#pragma once
// Every rule of regcmd — the reference's hardware rules and the rules of the API — with its
// id, the message that names the fix and the section it comes from. One X-list entry per rule
// gives both forms of the rule:
//   - `rules::NAME`, a constexpr `rule` that run-time checks return inside an `error`;
//   - `broken_rule<&rules::NAME, value>`, a static_assert with the same message, so a
//     compile-time violation reads exactly like the run-time error.
// The field and writer rules are listed where they are checked (core/field.hpp,
// regcmd/task/writer.hpp, below this layer) and joined here; every id is unique (checked below).
// The predicates: rules/cbuf.hpp, rules/limits.hpp, rules/precision_rules.hpp (one per
// hardware rule, shared by requests, plans and program rules), rules/program_rules.hpp (the
// rules on a program's entries), and each request's resolve in programs/.

#include <string_view>
#include <type_traits>

#include <regcmd/core/error.hpp>
#include <regcmd/core/field.hpp>
#include <regcmd/task/writer.hpp>

// Rules on a matmul request (matmul_spec), checked before anything is emitted.
#define REGCMD_MATMUL_RULES(X)                                                                       \
  X(shape_nonzero, "shape-nonzero", "M, K and N must each be at least 1", "regcmd")                  \
  X(precision_symmetric, "precision-symmetric",                                                      \
    "RK3588 multiplies symmetric precisions only (fp16 x fp16, int8 x int8, int4 x int4): give "     \
    "the weights the features' precision",                                                           \
    "regcmd-isa-reference \"Platform support matrix (RK3588)\"")                                     \
  X(int8_output_int32, "int8-output-int32",                                                          \
    "an int8 matmul must write its int32 accumulator: a requantized int8/int16 output never "       \
    "completes (ETIMEDOUT); write int32 and requantize on the host",                                 \
    "regcmd-isa-reference \"int16/narrow-output MATMUL does NOT self-complete\"")                    \
  X(precision_pair, "precision-pair",                                                                \
    "unsupported precision pair: RK3588 matmul computes fp16 -> fp32, fp16 -> fp16, "               \
    "int8 -> int32 and int4 -> int16",                                                               \
    "regcmd-isa-reference \"Platform support matrix (RK3588)\"")                                     \
  X(k_single_op_max, "k-single-op-max",                                                              \
    "K exceeds 10752, the raw single-op contraction cap (K = 10784 wedges the submit): split K "    \
    "with a plan (plan_request)",                                                                              \
    "regcmd-isa-reference \"Limits & tiling (RK3588)\"")                                             \
  X(n_max, "n-max",                                                                                  \
    "N exceeds 8192, the widest output one op writes correctly (wider is silently wrong): tile N "  \
    "with a plan (plan_request)",                                                                              \
    "regcmd-isa-reference \"Limits & tiling (RK3588)\"")                                             \
  X(k_alignment, "k-alignment",                                                                      \
    "K is not a multiple of the weight tile's 32: use tile_padding::zero (the default) so the packers "  \
    "pad it",                                                                                        \
    "regcmd-isa-reference \"Operand tile layouts\"")                                                 \
  X(n_alignment, "n-alignment",                                                                      \
    "N is not a multiple of the weight tile (16 for fp16, 32 for int8 and int4): use "              \
    "tile_padding::zero (the default) so the packers pad it",                                             \
    "regcmd-isa-reference \"Operand tile layouts\"")                                                 \
  X(small_k_bank_split, "small-k-bank-split",                                                        \
    "the bank-split schedule (sched=1) makes the MAC array emit zeros or garbage below K = 96 "     \
    "(fp16) / K = 256 (int8): use schedule::template_split (CBUF_CON0 = 0xb1)",                     \
    "regcmd-isa-reference \"Small-K validity of the 0x1040 schedule\"")                              \
  X(int4_bank_split, "int4-bank-split",                                                              \
    "no bank split has been measured for int4: use schedule::template_split",                       \
    "regcmd-isa-reference \"0x107c\" (int4 batch budget)")                                           \
  X(fp16_k128_cap, "fp16-k128-cap",                                                                  \
    "fp16 with K = 128 is correct only up to M = 256 (its split needs half-bank steps and the "     \
    "envelope is not monotonic above): tile M with a plan (plan_request)",                                     \
    "regcmd-isa-reference \"The M-tiling scheduler\"")                                               \
  X(m_ceiling_fp16, "m-ceiling-fp16",                                                                \
    "M exceeds the fp16 CBUF ceiling, 16384/K rows with the template split (1 data bank) or "       \
    "180224/K with the bank split (11 data banks): tile M with a plan (plan_request)",                        \
    "regcmd-isa-reference \"The M-tiling scheduler\"")                                               \
  X(m_ceiling_int8, "m-ceiling-int8",                                                                \
    "M exceeds the int8 ceiling, 64*floor(11/w) rows with w = K/512 for the bank split (measured "  \
    "704/320/128/64 at K = 512/1024/2048/4096: the weight stays CBUF-resident) or 32768/K with the " \
    "template split: tile M with a plan (plan_request)",                                                       \
    "regcmd-isa-reference \"The M-tiling scheduler\"")                                               \
  X(m_ceiling_int4, "m-ceiling-int4",                                                                \
    "M exceeds the int4 activation budget rows x K <= 16384: tile M with a plan (plan_request)",              \
    "regcmd-isa-reference \"0x107c\"")                                                               \
  X(m_register_limit, "m-register-limit",                                                            \
    "M does not fit CNA_DATA_SIZE0.DATAIN_HEIGHT (11 bits) or CNA_CONV_CON2.FEATURE_GRAINS (10 "     \
    "bits): tile M with a plan (plan_request)",                                                                \
    "fact sheet §4 (CNA)")                                                                           \
  X(surface_m, "surface-m",                                                                          \
    "the surface layout takes M = 1 or a multiple of 4 (implementation A's surface stride): pad M " \
    "or use layout::row_major",                                                                      \
    "matmul-recipe §1.2")                                                                            \
  X(int4_surface, "int4-surface",                                                                    \
    "no source gives an int4 surface (NC1HWC2) layout: use layout::row_major for int4",             \
    "matmul-recipe §1.3; regcmd-isa-reference \"0x107c\"")                                           \
  X(surface_schedule, "surface-schedule",                                                            \
    "the surface layout always uses implementation A's bank split (the banks the feature "          \
    "occupies): leave sched automatic",                                                              \
    "matmul-recipe §1.1 (#11 CNA_CBUF_CON0)")                                                        \
  X(pitch_row_major, "pitch-row-major",                                                              \
    "feature_pitch and output_pitch apply to layout::row_major only: leave them 0 for the surface " \
    "layout",                                                                                        \
    "regcmd-isa-reference \"0x107c CNA_DMA_CON1.LINE_STRIDE\"")                                      \
  X(feature_pitch, "feature-pitch",                                                                  \
    "the feature row pitch must be a multiple of 16 bytes and hold a whole row: LINE_STRIDE "       \
    "counts 16-byte units",                                                                          \
    "regcmd-isa-reference \"0x107c CNA_DMA_CON1.LINE_STRIDE\"")                                      \
  X(output_pitch, "output-pitch",                                                                    \
    "the output row pitch must be a multiple of 16 bytes, hold a whole row of N outputs and span "  \
    "at most 32768 outputs (NOTCH_ADDR_1 counts 4-output units in 13 bits)",                        \
    "regcmd-isa-reference \"Key registers\" (0x4038 notch)")                                       \
  X(operand_size, "operand-size",                                                                    \
    "an operand buffer of this shape spans 4 GiB or more, beyond the NPU's 32-bit address "          \
    "registers: split the operation into several programs",                                         \
    "fact sheet §1.5")                                                                               \
  X(matmul_activation_precision, "matmul-activation-precision",                                      \
    "a matmul's fused activation needs out = fp16: an int8 matmul writes only its raw int32 "       \
    "accumulator (narrow outputs never complete); chain an activation program after it instead",    \
    "regcmd-isa-reference \"int16/narrow-output MATMUL does NOT self-complete\"")

// Rules on plans (plan_request).
#define REGCMD_PLAN_RULES(X)                                                                         \
  X(k_slice_max, "k-slice-max",                                                                      \
    "a K-split slice exceeds 2048: cross-submit accumulation is impossible, so slices are summed "  \
    "on the host and each must be at most 2048",                                                     \
    "regcmd-isa-reference \"Limits & tiling (RK3588)\", \"Ruled out\"")                              \
  X(surface_m_tiling, "surface-m-tiling",                                                            \
    "an M-tile of a surface (NC1HWC2) tensor is not contiguous: use layout::row_major to tile M",   \
    "matmul-recipe §1.3")                                                                            \
  X(plan_activation_k_split, "plan-activation-k-split",                                              \
    "a plan that splits K writes partial sums the host adds: a fused activation would apply to "    \
    "each partial, not to their sum; keep K within one op or apply the activation after the sum",   \
    "regcmd-isa-reference \"Limits & tiling (RK3588)\"")

// Rules on element-wise (SDP) requests (regcmd/programs/sdp/elementwise.hpp) and fused chains.
// Convolution requests (regcmd/programs/conv/spec.hpp): the shape against the register fields it
// fills, the precisions, the quantization (docs/conv-values.md).
#define REGCMD_CONV_RULES(X)                                                                         \
  X(conv_shape_nonzero, "conv-shape-nonzero",                                                        \
    "H, W, C, the output channels, the kernel, the strides and the dilations must each be at least 1", \
    "regcmd")                                                                                        \
  X(conv_precision, "conv-precision",                                                                \
    "a quantized conv (uint8, int8) writes int8 through the DPU's requantization; an fp16 conv "     \
    "writes fp16 or fp32",                                                                           \
    "ops-reference §2.1 (Mesa, int8), §4 (fp16 conv)")                                              \
  X(conv_depthwise, "conv-depthwise",                                                                \
    "a depthwise conv has channel multiplier 1: out_channels must equal C",                          \
    "ops-reference §3")                                                                              \
  X(conv_input_size, "conv-input-size",                                                              \
    "H and W must each fit CNA_DATA_SIZE0's 11-bit fields (at most 2047): split the image",          \
    "rknpu-uapi-and-register-map §4 (CNA_DATA_SIZE0)")                                              \
  X(conv_channels, "conv-channels",                                                                  \
    "C must fit CNA_DATA_SIZE1.DATAIN_CHANNEL_REAL (C − 1 in 14 bits) and out_channels "             \
    "CNA_WEIGHT_SIZE2.WEIGHT_KERNELS (14 bits): split the channels",                                 \
    "rknpu-uapi-and-register-map §4 (CNA_DATA_SIZE1, CNA_WEIGHT_SIZE2)")                            \
  X(conv_kernel_size, "conv-kernel-size",                                                            \
    "the kernel's height and width must each fit CNA_WEIGHT_SIZE2's 5-bit fields (at most 31)",      \
    "rknpu-uapi-and-register-map §4 (CNA_WEIGHT_SIZE2)")                                            \
  X(conv_stride, "conv-stride",                                                                      \
    "each stride must fit CNA_CONV_CON3's 3-bit fields (at most 7)",                                 \
    "rknpu-uapi-and-register-map §4 (CNA_CONV_CON3)")                                               \
  X(conv_dilation, "conv-dilation",                                                                  \
    "each dilation must fit CNA_CONV_CON3's 5-bit ATROUS fields, which hold dilation − 1 (at most "  \
    "32)",                                                                                           \
    "rknpu-uapi-and-register-map §4 (CNA_CONV_CON3)")                                               \
  X(conv_padding, "conv-padding",                                                                    \
    "top and left padding must fit CNA_PAD_CON0's 4-bit fields (at most 15), and no side may "       \
    "reach the dilated kernel's extent (an output of padding alone)",                                \
    "rknpu-uapi-and-register-map §4 (CNA_PAD_CON0); ops-reference §2.2")                           \
  X(conv_kernel_larger, "conv-kernel-larger",                                                        \
    "the dilated kernel is larger than the padded input: there is no output; pad the input or use "  \
    "a smaller kernel",                                                                              \
    "regcmd")                                                                                        \
  X(conv_output_size, "conv-output-size",                                                            \
    "the output width must fit CNA_DATA_SIZE2 (11 bits) and its pixels CNA_DATA_SIZE3.DATAOUT_ATOMICS " \
    "(22 bits)",                                                                                     \
    "rknpu-uapi-and-register-map §4 (CNA_DATA_SIZE2, CNA_DATA_SIZE3)")                              \
  X(conv_scale, "conv-scale",                                                                        \
    "a quantization scale must be a finite number above 0",                                          \
    "regcmd")                                                                                        \
  X(conv_zero_point, "conv-zero-point",                                                              \
    "a zero point must be a value of its type: 0..255 for uint8, -128..127 for int8",                \
    "TFLite quantization")                                                                           \
  X(conv_requant_range, "conv-requant-range",                                                        \
    "the requantization multiplier input.scale * weights.scale / output.scale must be below 32767.5: " \
    "DPU_OUT_CVT_SCALE holds it as 15 bits over a right shift",                                      \
    "ops-reference §2.1 (DPU_OUT_CVT_SCALE/SHIFT)")                                                 \
  X(conv_residual_scale, "conv-residual-scale",                                                      \
    "the residual's multiplier residual.scale / (input.scale * weights.scale) must be below 32767.5 " \
    "and at least 2^-64: DPU_EW_CVT_SCALE_VALUE holds it as 15 bits over a 6-bit right shift",        \
    "ops-reference §2.1 (Mesa's fused add: DPU_EW_CVT_SCALE_VALUE)")                                 \
  X(conv_activation_range, "conv-activation-range",                                                  \
    "ReLU6's bound, 6 / (input.scale * weights.scale) in accumulator units, must fit the int32 "     \
    "DPU_BN_RELUX_CMP_VALUE: the scales are too small for a clamp at 6",                             \
    "rknpu-uapi-and-register-map §4 (DPU_*_RELUX_CMP_VALUE); docs/conv-values.md")                  \
  X(conv_leaky_residual, "conv-leaky-residual",                                                      \
    "a leaky ReLU cannot follow the residual add: the EW stage's multiplier reads the residual, "    \
    "not a slope; apply it before the add (no residual), or run it as an activation program "        \
    "after the conv",                                                                                \
    "rknpu-uapi-and-register-map §4 (DPU_EW_CFG EW_MUL_PRELU, DPU_BN_MUL_CFG)")                      \
  X(conv_fp16_bias, "conv-fp16-bias",                                                                \
    "an fp16 conv's bias is the EW stage's per-channel operand (no source gives the BS operand's "   \
    "fp16 format): it cannot also add a residual or follow a leaky ReLU; add the bias in the "       \
    "residual's producer, or run the add or the activation as its own op",                           \
    "ops-reference §4.2, §8; regcmd-isa-reference (per-channel ERDMA operand); docs/conv-values.md") \
  X(conv_cbuf_row, "conv-cbuf-row",                                                                  \
    "the input rows one output row needs (the dilated kernel height x W x C, in CBUF entries) "      \
    "exceed the 11 data banks a task can have: narrow the image or split the input channels",        \
    "ops-reference §2.2 (Mesa's bank arithmetic); rknpu-uapi-and-register-map §5.3")                 \
  X(conv_cbuf_weights, "conv-cbuf-weights",                                                          \
    "one group of 32 kernels (16 for fp16) does not fit the CBUF beside the input rows of one "      \
    "output row: split the input channels or use a smaller kernel",                                  \
    "ops-reference §2.2; rknpu-uapi-and-register-map §5.3")

#define REGCMD_EW_RULES(X)                                                                           \
  X(ew_precision, "ew-precision",                                                                    \
    "the SDP computes fp16, int8 and int16: its main read DMA does not take int32 features (it "     \
    "fetches half the bytes and stalls, errno 110); requantize an int32 result on the host",         \
    "regcmd-isa-reference \"Shape-INVARIANT ... the SDP loopback mirror\"")                          \
  X(ew_line_stride, "ew-line-stride",                                                                \
    "the DPU_RDMA has no source line stride: an SDP reads packed tensors only; read a strided "      \
    "view with a matmul's feature_pitch (CNA LINE_STRIDE) or pack it first",                         \
    "regcmd-isa-reference \"0x107c CNA_DMA_CON1.LINE_STRIDE\"")                                      \
  X(ew_n_alignment, "ew-n-alignment",                                                                \
    "with tile_padding::none the SDP's channels must fill whole 16-byte atoms: N a multiple of 8 (fp16, " \
    "int16) or 16 (int8), or, in the flat layout, M*N one of those",                                 \
    "regcmd-isa-reference \"SDP element-wise\" (NC1HWC2, C2 = 16 bytes)")                            \
  X(ew_width, "ew-width",                                                                            \
    "an SDP task takes at most 8192 rows (DATA_CUBE_WIDTH) and 8192 channels (DATA_CUBE_CHANNEL, "   \
    "13 bits each): split the rows, or use the flat layout for a per-element op",                    \
    "fact sheet §4 (DPU_RDMA_RDMA_DATA_CUBE_WIDTH / CHANNEL)")                                       \
  X(ew_per_channel_layout, "ew-per-channel-layout",                                                  \
    "a per-channel vector is broadcast along the rows of NC1HWC2 surfaces: it needs "                \
    "operand_layout::surface (the flat layout sees 8 or 16 channels, not N)",                             \
    "regcmd-isa-reference \"0x5034 DPU_RDMA_RDMA_ERDMA_CFG\"")                                       \
  X(ew_prelu_precision, "ew-prelu-precision",                                                        \
    "PReLU runs on fp16 only: its slopes are fractions, and an int8/int16 EW multiplier has no "     \
    "shift to scale them (a single slope for all channels is leaky ReLU, which has one)",            \
    "rknpu-uapi-and-register-map §4 (DPU_EW_CFG EW_MUL_PRELU)")                                      \
  X(ew_immediate, "ew-immediate",                                                                    \
    "a register-immediate second operand is known for the fp16 ALU ops (add, max, min) only: "       \
    "give mul, prelu, or an integer op, its operand in memory",                                      \
    "regcmd-isa-reference \"0x4070 DPU_EW_CFG\" (EW_OP_SRC)")                                        \
  X(ew_vector_size, "ew-vector-size",                                                                \
    "the per-channel operand must have exactly N values (one per output channel)", "regcmd")        \
  X(fused_precision_path, "fused-precision-path",                                                    \
    "a 2-input SDP chained after a matmul must read the matmul's output precision, and the SDP "     \
    "computes fp16: write the matmul out as fp16 (a mismatched path stalls the chained DMA, errno "  \
    "110)",                                                                                          \
    "regcmd-isa-reference \"Chained 2-input SDP\"")                                                  \
  X(fused_layout, "fused-layout",                                                                    \
    "a fused chain's matmul writes its fp16 result row-major (a fp16 matmul cannot write surfaces: " \
    "the atom-8 write-out hangs): use layout::row_major",                                            \
    "regcmd-isa-reference \"fp16 matmul -> fp16 output stage\"")

// Rules on host operands (regcmd/programs/matmul/packing.hpp).
// Rules on an activation request (regcmd/programs/activation/activation.hpp) and on a lookup table
// (regcmd/programs/activation/lut_table.hpp).
#define REGCMD_ACT_RULES(X)                                                                          \
  X(lut_range, "lut-range",                                                                          \
    "a lookup table's range needs lo < hi, both finite, and its larger bound within [0.2502, "      \
    "65504]: the index scale 16384 / bound is a fp16 multiplier (DPU_BN_MUL_CFG)",                  \
    "ops-reference §6.2 (BN_MUL_CFG, LUT_LE_START / LUT_LO_END)")                                     \
  X(lut_not_finite, "lut-not-finite",                                                                \
    "the function is NaN or infinite at a point of its table (or of a linear tail's secant): "      \
    "narrow the range to where it is finite, or hold the tail",                                      \
    "ops-reference §6.3")                                                                            \
  X(lut_entry_range, "lut-entry-range",                                                              \
    "the function's values do not fit the table's signed 16-bit entries (|f| > 32767 on the "       \
    "range): narrow the range or scale the function",                                                \
    "ops-reference §6.2 (LUT_ACCESS_DATA 15:0)")                                                     \
  X(lut_slope_range, "lut-slope-range",                                                              \
    "a linear tail's slope does not fit the LUT slope registers (a signed 16-bit scale): hold the "  \
    "tail (lut_tail::hold) or narrow the range",                                                     \
    "ops-reference §6.2 (LUT_*_SLOPE_SCALE / SHIFT)")                                                 \
  X(act_lut_precision, "act-lut-precision",                                                          \
    "lookup-table activations run on fp16 data (every public LUT program is fp16; the index "       \
    "scaling of an integer input is unknown): convert the tensor to fp16 first",                    \
    "ops-reference §9 (no int8 LUT activations)")                                                    \
  X(act_clip_bounds, "act-clip-bounds",                                                              \
    "clip needs finite bounds lo < hi, integers within the dtype's range for int8 / int16 "         \
    "(ReLUX compares with an integer there)",                                                        \
    "rknpu-uapi-and-register-map §4 (DPU_BN_RELUX_CMP_VALUE)")                                       \
  X(act_leaky_slope, "act-leaky-slope",                                                              \
    "the leaky ReLU slope must lie in [0, 1): it multiplies the negatives as a fp16 operand, or as " \
    "a signed 16-bit multiplier and a shift for int8 / int16",                                       \
    "rknpu-uapi-and-register-map §4 (DPU_BN_MUL_CFG, BN_MUL_PRELU)")

// Rules on a pooling request (regcmd/programs/pooling/pooling.hpp).
#define REGCMD_POOL_RULES(X)                                                                         \
  X(pool_precision, "pool-precision", "the PPU pools fp16 or int8 data: give dtype fp16 or int8",   \
    "ops-reference §5.1 (PPU_DATA_FORMAT, PPU_RDMA_RDMA_DATA_FORMAT)")                              \
  X(pool_int8_average, "pool-int8-average",                                                          \
    "no source states how the PPU averages int8 (the reciprocal's format differs between "          \
    "sources): average fp16 data, or use max pooling",                                              \
    "ops-reference §8 (RECIP_KERNEL), §9")                                                           \
  X(pool_size, "pool-size",                                                                          \
    "the PPU's cube registers hold W, a row task's H and the padded C minus 1 in 13 bits, and a "   \
    "row task writes 8191 / W output rows (W at most 8191, C at most 8192): make the image narrower", \
    "ops-reference §5.1, §5.2 (row tiling)")                                                         \
  X(pool_kernel, "pool-kernel",                                                                      \
    "the kernel and the stride are 1 to 16 (POOLING_KERNEL_CFG's 4-bit fields; a global pool's "    \
    "kernel is the whole image, so H and W are at most 16), and the kernel fits the padded input: " \
    "pool in two steps for a larger window",                                                         \
    "ops-reference §5.1 (POOLING_KERNEL_CFG)")                                                       \
  X(pool_average_kernel, "pool-average-kernel",                                                      \
    "an average needs a window of at least 2 along each axis: its reciprocal registers hold "        \
    "fp16(2^16 / k), which has no value for k = 1 (65536 overflows fp16); average 1-wide windows "   \
    "on the host, or pool the other axis with an SDP scale",                                         \
    "ops-reference §5.1, §8 (RECIP_KERNEL)")                                                         \
  X(pool_padding, "pool-padding",                                                                    \
    "each padding side is 0 to 7 (POOLING_PADDING_CFG's 3-bit fields) and narrower than the kernel " \
    "(a wider one makes outputs of padding alone)",                                                  \
    "ops-reference §5.1 (POOLING_PADDING_CFG)")

// Rules on a graph (regcmd/programs/graph/graph.hpp): its wiring and every boundary between its ops.
#define REGCMD_GRAPH_RULES(X)                                                                        \
  X(graph_capacity, "graph-capacity",                                                                \
    "a graph holds 1 to 16 ops and 64 tensors (built at run time: 128 ops, 512): split it",          \
    "regcmd")                                                                                        \
  X(graph_operands, "graph-operands",                                                                \
    "an op names the tensors it uses: every op its output and first operand, a matmul its weights, " \
    "an element-wise op its second operand unless that is an immediate (and then none)",             \
    "regcmd")                                                                                        \
  X(graph_written_twice, "graph-written-twice",                                                      \
    "two ops write the same tensor: give each result its own name",                                  \
    "regcmd")                                                                                        \
  X(norm_shape, "norm-shape",                                                                \
    "an RMSNorm or a LayerNorm normalizes rows of a multiple of 32 fp16 elements, at most 16384 "   \
    "(the row sums' K, their weights fp16 powers of two), with an epsilon of 0 to 65504: pad or "   \
    "split the row, or clamp epsilon",                                                             \
    "regcmd/programs/norm/rms_norm.hpp")                                                             \
  X(softmax_shape, "softmax-shape",                                                                  \
    "a softmax's rows hold a multiple of 32 elements, at most 8192, whose N / 32 pooling windows "  \
    "fit two passes of 16: hold the row in softmax_row_length(n) elements and mask the rest",      \
    "regcmd/programs/norm/softmax.hpp")                                                              \
  X(reduce_shape, "reduce-shape",                                                                    \
    "a row reduction reads rows of a multiple of 32 elements, counts at most all of them, and a "  \
    "maximum pools them as softmax does, its padding hidden by a mask: hold the row padded and "   \
    "give count (and the mask)",                                                                   \
    "regcmd/programs/norm/reduce.hpp")                                                               \
  X(rope_shape, "rope-shape",                                                                        \
    "a rotary embedding rotates heads of an even dimension whose row (heads x dimension) is a "    \
    "multiple of 32, with a base above 1; heads not a multiple of 32 wide take a block-diagonal "   \
    "rotation of the whole row, at most 4096: rotate a wider row in parts",                          \
    "regcmd/programs/norm/rope.hpp")                                                                 \
  X(attention_shape, "attention-shape",                                                              \
    "attention's query heads are a multiple of its key/value heads, heads of a multiple of 32 "     \
    "elements (the scores' K), a cache of a multiple of 32 positions whose rows (key/value heads x " \
    "positions) softmax takes whole (softmax-shape): round the context up",                          \
    "regcmd/programs/llm/attention.hpp")                                                             \
  X(llama_shape, "llama-shape",                                                                      \
    "a LLaMA decoder layer splits its dimension evenly over its query heads (its attention, norms " \
    "and rotary embeddings follow their own rules); a whole token in one submit is decode's (M = 1), " \
    "of 1 to 8 layers (each reads back its key and value): give dim a multiple of heads",           \
    "regcmd/programs/llm/decoder_layer.hpp")                                                         \
  X(concat_shape, "concat-shape",                                                                    \
    "a concatenation joins two fp16 or int8 surfaces of some pixels and channels: give the dtype, "  \
    "the pixels and both parts' channels",                                                           \
    "regcmd")                                                                                        \
  X(concat_atoms, "concat-atoms",                                                                    \
    "a concatenation's first part fills whole 16-byte atoms (8 fp16 or 16 int8 channels), so the "   \
    "second's atom planes follow its last: pad its channels, or put the other part first",           \
    "regcmd-isa-reference \"SDP element-wise\" (NC1HWC2, C2 = 16 bytes)")                            \
  X(graph_concat_source, "graph-concat-source",                                                      \
    "a concatenation's parts are written in place by earlier ops of the graph, each part into one "  \
    "concatenation, of the surface the part reads: an input or a weight, a part taken twice or "     \
    "written in another format has no op to write it there; copy it with an op first",               \
    "regcmd")                                                                                        \
  X(graph_read_before_write, "graph-read-before-write",                                              \
    "an op reads a tensor that a later op writes (or its own output): order the ops so that every "  \
    "intermediate is written before it is read",                                                     \
    "regcmd")                                                                                        \
  X(graph_tensor_format, "graph-tensor-format",                                                      \
    "an op reads a tensor in another format than it was written (or than another op reads it): "     \
    "precision, layout (row-major rows, NC1HWC2 surface, weight tiles) and row length and pitch "    \
    "must agree; match the reader's spec to the writer's (a flat SDP over a matmul's M x padded N, " \
    "the matmul's fp16 out for an SDP) or put a conversion op between them",                         \
    "regcmd-isa-reference \"Chained 2-input SDP\"; docs/graph.md")                                  \
  X(graph_weight_source, "graph-weight-source",                                                      \
    "a matmul reads its weights through CNA_DCOMP_ADDR0 from the weight buffer in tiles the host "   \
    "packs: they must be a graph input, not another op's result",                                    \
    "regcmd-isa-reference \"Operand tile layouts\"")                                                 \
  X(graph_read_back, "graph-read-back",                                                              \
    "a tensor the host reads back after the run is one an op of the graph writes, whole (not a "    \
    "concatenation's part): name an op's result",                                                    \
    "docs/graph.md")                                                                                 \
  X(graph_conv_operands, "graph-conv-operands",                                                      \
    "a conv in a graph names a residual tensor exactly when its spec adds one (residual_add): "      \
    "give it as graph_conv's fifth argument, or drop residual_add",                                  \
    "docs/graph.md")                                                                                 \
  X(graph_k_split, "graph-k-split",                                                                  \
    "a graph sums a split K's slices on the device with fp16 SDP adds: a matmul whose K exceeds "    \
    "one op (10752) must write fp16 in packed rows (out = fp16, row_major, no output_pitch)",        \
    "regcmd-isa-reference \"Limits & tiling (RK3588)\"")

#define REGCMD_PACKING_RULES(X)                                                                      \
  X(buffer_size, "buffer-size",                                                                      \
    "the buffer is smaller than the operand's layout needs: size it with the *_bytes() of the "     \
    "geometry or plan",                                                                              \
    "regcmd")                                                                                        \
  X(host_size, "host-size",                                                                          \
    "the host array does not have the operand's elements (a matmul's M*K, K*N or M*N; a conv's "     \
    "H*W*C or out_h*out_w*out_channels) or not the element type of its precision",                   \
    "regcmd")                                                                                        \
  X(int4_range, "int4-range", "an int4 value lies outside [-8, 7]", "regcmd")                        \
  X(conv_bias_range, "conv-bias-range",                                                              \
    "a kernel's bias, less the correction the input's zero point makes, does not fit the int32 the " \
    "DPU adds",                                                                                      \
    "ops-reference §2.3 (bias)")

// Rules of binding addresses into a program (rules/program_rules.hpp: patch_slots).
#define REGCMD_BIND_RULES(X)                                                                         \
  X(iova_32bit, "iova-32bit",                                                                        \
    "an operand address does not fit 32 bits: every address register and PC_BASE_ADDRESS are "     \
    "32 bits wide; allocate the buffer below 4 GiB (RKNPU_MEM_DMA32 / the IOMMU)",                  \
    "fact sheet §1.5")

// Rules on the SoC a program is built or run for (core/soc.hpp).
#define REGCMD_SOC_RULES(X)                                                                          \
  X(soc_value_unknown, "soc-value-unknown",                                                          \
    "no source gives a number this program needs on this SoC (its CBUF, contraction or output "     \
    "limits, M-tile sizes), and regcmd does not guess one: build for RK3588, or add the value with " \
    "its source to the SoC's traits (core/soc.hpp)",                                                 \
    "regcmd-isa-reference: the ISA is shared across the family, the numeric limits are per-SoC")

// Rules on patching a program's registers (regcmd/programs/captured/patch.hpp).
#define REGCMD_PATCH_RULES(X)                                                                        \
  X(patch_absent, "patch-absent",                                                                    \
    "the program writes no copy of this register, so patching it would change nothing: patch a "    \
    "register the program writes (regcmd-dis lists them), or build the program with the writer",     \
    "regcmd")                                                                                        \
  X(patch_address, "patch-address",                                                                  \
    "an address register is a slot: bind() writes it from the operand buffers, so a patched value " \
    "would be overwritten; change the slot's role or offset instead",                                \
    "regcmd (program.hpp: slots)")                                                                   \
  X(patch_task_tail, "patch-task-tail",                                                              \
    "PC registers and the op-enable are the task tails that link and start the tasks: the writer "  \
    "writes them from the task structure; patch the registers of a task's body",                     \
    "fact sheet §2.3")

// Rules on an assembled program, checked on its entries (rules/program_rules.hpp).
#define REGCMD_PROGRAM_RULES(X)                                                                      \
  X(bank_split, "bank-split",                                                                        \
    "CNA_CBUF_CON0 must split the 12 CBUF banks: DATA_BANK + WEIGHT_BANK = 12 with DATA_BANK <= 11 " \
    "and WEIGHT_BANK >= 1 (a split below 0x1b hangs the submit)",                                    \
    "regcmd-isa-reference \"The M-tiling scheduler\"")                                               \
  X(tail_complete, "tail-complete",                                                                  \
    "every task must end with its tail: PC_BASE_ADDRESS, PC_REGISTER_AMOUNTS, the 0x0041 preamble " \
    "and then the 0x0081 op-enable (TRM: 0x0041 must be set before op_en)",                          \
    "fact sheet §2.3")                                                                               \
  X(address_slots, "address-slots",                                                                  \
    "address registers hold IOVAs patched at bind time and nothing else: every address register "   \
    "must be an operand slot holding 0, and every slot an address register of a role it can "      \
    "address (the DPU writes only the output or an intermediate, the CNA reads weights from the "   \
    "weight buffer, the PC fetches only regcmd)",                                                    \
    "regcmd-isa-reference \"Addressing model (rocket_job.c)\"")                                      \
  X(precision_consistent, "precision-consistent",                                                    \
    "the precision fields of CNA_CONV_CON1, CORE_MISC_CFG and DPU_DATA_FORMAT disagree: RK3588 "    \
    "multiplies symmetric precisions only",                                                          \
    "regcmd-isa-reference \"The precision enum\"")                                                   \
  X(fp16_output_stage, "fp16-output-stage",                                                          \
    "a fp16-output matmul needs DPU_BS_CFG fully bypassed (0x53; the conv's 0x20150 hangs) and "    \
    "DPU_OUT_CVT_SCALE.FP32TOFP16_EN (without it the output is all zeros)",                          \
    "regcmd-isa-reference \"fp16 matmul -> fp16 output stage\"")                                     \
  X(fp16_output_atom8, "fp16-output-atom8",                                                          \
    "a fp16-output matmul must write with BS_OW_CFG SIZE_E = 1 (0x126): the atom-8 write-out "      \
    "(BS_OW_CFG 0x2) hangs the CNA->DPU path",                                                       \
    "regcmd-isa-reference \"fp16 matmul -> fp16 output stage\"")                                     \
  X(chain_link, "chain-link",                                                                        \
    "a task's PC_BASE_ADDRESS must point at the next task of the program (its first entry, its "    \
    "length): a link elsewhere runs another task, or none, in its place",                            \
    "fact sheet §2.3")                                                                               \
  X(slot_extent, "slot-extent",                                                                      \
    "an address slot's extent must cover the bytes its task's registers make the DMA touch (the "   \
    "output cube and surface stride, the feature sizes and strides, the weight bytes, the EW "      \
    "operand): a smaller extent lets a smaller buffer be bound, and the NPU then writes past it",    \
    "regcmd-isa-reference \"Key registers\"")                                                       \
  X(task_alignment, "task-alignment",                                                                \
    "every task must start on a 16-byte boundary (an even entry): the PC fetches from "            \
    "PC_SOURCE_ADDR, bits 31:4, so a task at an odd entry is fetched from the entry before it",      \
    "fact sheet §2.3")                                                                               \
  X(program_empty, "program-empty",                                                                  \
    "a program has at least one task: a submit of none starts nothing (rknpu waits for an "          \
    "interrupt that never comes; rocket lists no job and reports nothing)",                         \
    "fact sheet §1.6, §3.3")                                                                         \
  X(task_length, "task-length",                                                                      \
    "a task is fetched in 128-bit words counted in PC_REGISTER_AMOUNTS' 16 bits: at most 131072 "   \
    "entries per task; split the work into more tasks",                                              \
    "fact sheet §2.3")                                                                               \
  X(task_interrupts, "task-interrupts",                                                              \
    "a task's interrupt mask must be pair-complete (both bits of each pair, e.g. 0x300) and, for "  \
    "a task ending on the DPU or the PPU, that block's pair (0x300, 0xc00): otherwise the kernel "   \
    "never sees it complete",                                                                        \
    "fact sheet §1.6")                                                                               \
  X(sdp_pingpong, "sdp-pingpong",                                                                    \
    "a program with an SDP task (DPU_RDMA enabled) runs with ping-pong off: give its view "          \
    "pingpong = false",                                                                              \
    "regcmd-isa-reference \"Chained 2-input SDP\"")                                                  \
  X(sdp_feature_precision, "sdp-feature-precision",                                                  \
    "DPU_RDMA_RDMA_FEATURE_MODE_CFG names a feature precision the SDP cannot read: int32 (and "      \
    "fp32) features stall the main read DMA (errno 110)",                                            \
    "regcmd-isa-reference \"Shape-INVARIANT ... the SDP loopback mirror\"")                          \
  X(sdp_precision_path, "sdp-precision-path",                                                        \
    "a chained 2-input SDP reads a precision other than the previous matmul's output: the chained "  \
    "DMA stalls (errno 110); make the matmul write the SDP's precision",                             \
    "regcmd-isa-reference \"Chained 2-input SDP\"")

// Rules of writing a register by name at run time (decode/lookup.hpp: encode_by_name).
#define REGCMD_LOOKUP_RULES(X)                                                                       \
  X(unknown_register, "unknown-register",                                                           \
    "no register of the map has this name: use a rocket_registers.h name such as CNA_CBUF_CON0",    \
    "fact sheet §4")                                                                                 \
  X(unknown_field, "unknown-field",                                                                  \
    "the register has no field of this name: see its declaration under registers/", "fact sheet §4") \
  X(field_of_another_register, "field-of-another-register",                                          \
    "this field belongs to another register: write it there", "fact sheet §4")                      \
  X(duplicate_field, "duplicate-field",                                                              \
    "the field is given twice in one register write: give it once (an entry writes the whole "      \
    "register, values are never OR-ed)",                                                             \
    "DESIGN: whole-register writes")                                                                 \
  X(unknown_tensor, "unknown-tensor",                                                                \
    "the graph has no tensor of this name: its tensors are the names its ops write and read",       \
    "docs/graph.md")                                                                                 \
  X(tensor_direction, "tensor-direction",                                                            \
    "the host packs a graph's inputs and weights and unpacks its outputs; an intermediate is read "  \
    "back only when the graph keeps it (keep_intermediates, or named in read_back): else a later "  \
    "tensor may reuse its bytes",                                                                    \
    "docs/graph.md")                                                                                 \
  X(conv_weights_with_bias, "conv-weights-with-bias",                                                \
    "a quantized conv's weights pack together with its bias operand, which carries the input "       \
    "zero point's correction from the weights: pack them with pack_conv(geometry, the conv's "       \
    "output name, weights, bias, ...)",                                                              \
    "docs/graph.md")

// Rules of running programs on a device (runtime/: device, buffers, session).
#define REGCMD_RUNTIME_RULES(X)                                                                      \
  X(device_missing, "device-missing",                                                                \
    "no NPU device node: vendor kernels have the rknpu card node (/dev/dri/card1), mainline 6.18+ " \
    "kernels the rocket accel node (/dev/accel/accel0); give another with --device / REGCMD_DEVICE", \
    "fact sheet §1.1, §3.2")                                                                         \
  X(device_permission, "device-permission",                                                          \
    "permission denied opening the NPU node: run as root or join the group that owns it "           \
    "(ls -l /dev/dri /dev/accel)",                                                                   \
    "fact sheet §1.1, §3.2")                                                                         \
  X(device_open, "device-open", "the NPU node could not be opened", "fact sheet §1.1")              \
  X(wrong_driver, "wrong-driver",                                                                    \
    "the node is served by neither rknpu nor rocket: pick the rknpu card node (the primary node, "  \
    "usually /dev/dri/card1; raw RKNPU_SUBMIT does not work on the render node) or the rocket "      \
    "accel node (/dev/accel/accelN)",                                                                \
    "fact sheet §1.1, §3.2; regcmd-isa-reference \"Submission model\"")                              \
  X(ioctl_failed, "ioctl-failed", "an NPU driver ioctl failed", "fact sheet §1, §3")                         \
  X(mmap_failed, "mmap-failed", "mapping an NPU buffer into the process failed", "fact sheet §1.5") \
  X(submit_timeout, "submit-timeout",                                                                \
    "the job did not complete in time: the NPU is reset before the next job (rknpu: by the "        \
    "runtime; rocket: its kernel already did after 500 ms); a program that keeps timing out breaks " \
    "a rule the checks do not know yet",                                                             \
    "regcmd-isa-reference \"State gotchas\"")                                                        \
  X(operand_missing, "operand-missing",                                                              \
    "the program has an address slot for an operand no buffer was given for: bind that buffer",    \
    "regcmd")                                                                                        \
  X(operand_extent, "operand-extent",                                                                \
    "an operand's DMA reaches past the end of its buffer: allocate at least offset + extent "       \
    "bytes (the slot table says how many)",                                                          \
    "regcmd")                                                                                        \
  X(operand_aliased, "operand-aliased",                                                              \
    "a buffer the NPU writes (output, intermediate) is also bound to another role: the NPU would "  \
    "overwrite what it is still reading; give the written role a buffer of its own",                 \
    "regcmd")                                                                                        \
  X(wrong_device, "wrong-device",                                                                    \
    "a buffer or prepared program made on another open device: handles and (rocket) IOVAs mean "    \
    "something only to the file that made them; make them on the device the session runs on",       \
    "fact sheet §1.4, §3.1")                                                                         \
  X(run_options_range, "run-options",                                                                \
    "a run option out of range: core 0..2 (with cores::one), timeout_ms 1..60000, cores::all "      \
    "chosen at prepare (prepare_options), and a program split over cores takes neither a core nor " \
    "round-robin",                                                                                   \
    "regcmd-isa-reference \"Multi-core submit\"")                                                   \
  X(feature_rotation, "feature-rotation",                                                            \
    "a prepared program keeps one feature buffer: write new features into it instead of binding "   \
    "another (the NPU caches feature state by address; rotating buffers corrupts results)",         \
    "regcmd-isa-reference \"State gotchas\"")                                                        \
  X(core_split, "core-split",                                                                        \
    "a program with delta tasks or an intermediate cannot be split over cores (later tasks rely "   \
    "on earlier ones' registers or results, and the cores of one submit run together): run it on "  \
    "one core or round-robin",                                                                       \
    "rknpu-uapi §1.6 (SUBMIT starts every core of the mask)")                                       \
  X(bo_size, "bo-size",                                                                              \
    "a rocket buffer holds 1 byte to 4 GiB - 1 page (CREATE_BO takes a 32-bit size): split the "    \
    "operand",                                                                                       \
    "fact sheet §3.1")                                                                               \
  X(reset_unsupported, "reset-unsupported",                                                          \
    "the rocket driver has no reset request: its kernel resets a core itself when a job times out", \
    "fact sheet §3.2")                                                                               \
  X(rocket_pingpong, "rocket-pingpong",                                                              \
    "the program needs ping-pong off (an SDP task), but the rocket kernel turns it on for every "   \
    "task (PC_TASK_CON TASK_PP_EN): run it on the rknpu node",                                       \
    "fact sheet §3.3; regcmd-isa-reference \"Chained 2-input SDP\"")                                 \
  X(rocket_delta_tasks, "rocket-delta-tasks",                                                        \
    "delta tasks rely on registers the task before left, but the rocket kernel kicks every task "   \
    "on its own and rewrites CNA/CORE S_POINTER first: build the plan with full tasks (no .delta)", \
    "fact sheet §3.3")                                                                               \
  X(rocket_interrupt, "rocket-interrupt",                                                            \
    "the rocket kernel ends a task only on a DPU interrupt (mask 0x300): a task ending on another " \
    "block's interrupt would time out; run it on the rknpu node",                                    \
    "fact sheet §3.3")

namespace regcmd::rules {
REGCMD_MATMUL_RULES(REGCMD_DEFINE_RULE)
REGCMD_PLAN_RULES(REGCMD_DEFINE_RULE)
REGCMD_EW_RULES(REGCMD_DEFINE_RULE)
REGCMD_CONV_RULES(REGCMD_DEFINE_RULE)
REGCMD_ACT_RULES(REGCMD_DEFINE_RULE)
REGCMD_POOL_RULES(REGCMD_DEFINE_RULE)
REGCMD_GRAPH_RULES(REGCMD_DEFINE_RULE)
REGCMD_PACKING_RULES(REGCMD_DEFINE_RULE)
REGCMD_BIND_RULES(REGCMD_DEFINE_RULE)
REGCMD_PATCH_RULES(REGCMD_DEFINE_RULE)
REGCMD_SOC_RULES(REGCMD_DEFINE_RULE)
REGCMD_PROGRAM_RULES(REGCMD_DEFINE_RULE)
REGCMD_LOOKUP_RULES(REGCMD_DEFINE_RULE)
REGCMD_RUNTIME_RULES(REGCMD_DEFINE_RULE)
}  // namespace regcmd::rules

namespace regcmd {

#define REGCMD_DETAIL_IS_RULE(NAME, ID, MESSAGE, REFERENCE) || r == rules::NAME

// The rules a program or a request can break, each with a compile-time face (report<>) and
// a compile-fail snippet under tests/fail/; then the rules that only run time knows (names
// given as strings, devices, buffers); every id is unique across both.
#define REGCMD_COMPILE_TIME_RULES(X) \
  REGCMD_FIELD_RULES(X)              \
  REGCMD_WRITER_RULES(X)             \
  REGCMD_MATMUL_RULES(X)             \
  REGCMD_PLAN_RULES(X)               \
  REGCMD_EW_RULES(X)                 \
  REGCMD_CONV_RULES(X)               \
  REGCMD_ACT_RULES(X)                \
  REGCMD_POOL_RULES(X)               \
  REGCMD_GRAPH_RULES(X)              \
  REGCMD_PACKING_RULES(X)            \
  REGCMD_BIND_RULES(X)               \
  REGCMD_PATCH_RULES(X)              \
  REGCMD_SOC_RULES(X)                \
  REGCMD_PROGRAM_RULES(X)
#define REGCMD_RUN_TIME_RULES(X) \
  REGCMD_LOOKUP_RULES(X)         \
  REGCMD_RUNTIME_RULES(X)
#define REGCMD_ALL_RULES(X)     \
  REGCMD_COMPILE_TIME_RULES(X)  \
  REGCMD_RUN_TIME_RULES(X)

constexpr bool in_catalog(const rule& r) { return false REGCMD_ALL_RULES(REGCMD_DETAIL_IS_RULE); }

namespace detail {
// Asserted by the catalog's test (tests/rules/catalog_test.cpp), once when the catalog
// changes: in every translation unit it cost a tenth of an op header's compile.
#define REGCMD_DETAIL_RULE_ID(NAME, ID, MESSAGE, REFERENCE) , std::string_view{ID}
constexpr bool rule_ids_unique() {
  const std::string_view ids[] = {no_violation.id REGCMD_ALL_RULES(REGCMD_DETAIL_RULE_ID)};
  for (std::size_t i = 0; i < std::size(ids); ++i)
    for (std::size_t j = i + 1; j < std::size(ids); ++j)
      if (ids[i] == ids[j]) return false;
  return true;
}
#undef REGCMD_DETAIL_RULE_ID
}  // namespace detail


// Compile-time face of the rules: broken_rule<&rules::NAME, value> fails with that rule's
// message, and only the rule that failed is instantiated. Compilers print the instantiation
// first, so the first line after the includes names the rule and the offending value:
//   In instantiation of 'struct regcmd::broken_rule<(& regcmd::rules::m_ceiling_fp16), 2048, void>'
// &no_violation (the primary template) reports nothing.
template <const rule* Violated, std::uint64_t Value = 0, class Dummy = void>
struct broken_rule {
  static_assert(*Violated == no_violation || in_catalog(*Violated),
                "regcmd: a rule outside the catalog failed; see its error value");
  static constexpr bool reported = true;
};
#define REGCMD_DETAIL_BROKEN_RULE(NAME, ID, MESSAGE, REFERENCE)                                  \
  template <std::uint64_t Value, class Dummy>                                                   \
  struct broken_rule<&rules::NAME, Value, Dummy> {                                              \
    static_assert(!std::is_same_v<Dummy, Dummy>, "regcmd rule " ID ": " MESSAGE " [" REFERENCE "]"); \
    static constexpr bool reported = false;                                                     \
  };
REGCMD_COMPILE_TIME_RULES(REGCMD_DETAIL_BROKEN_RULE)
#undef REGCMD_DETAIL_BROKEN_RULE

// The rule a check returned (&no_violation when none) and its offending value, reported.
template <const rule* Violated, std::uint64_t Value = 0>
constexpr bool report() {
  return broken_rule<Violated, Value>::reported;
}

// The rule a status or result failed with, or &no_violation: usable as report<>'s argument.
constexpr const rule* violated_rule(const status& s) { return s.ok() ? &no_violation : s.err().violated; }
template <class T>
constexpr const rule* violated_rule(const result<T>& r) {
  return r.ok() ? &no_violation : r.err().violated;
}
// The offending value an error carries (0 when it names none): report<>'s second argument.
constexpr std::uint64_t violated_value(const status& s) { return s.ok() ? 0 : s.err().value; }
template <class T>
constexpr std::uint64_t violated_value(const result<T>& r) {
  return r.ok() ? 0 : r.err().value;
}

}  // namespace regcmd
