#pragma once
// The precision rules of the MAC array and the SDP, one predicate each, called by the
// requests and the program rules alike.

#include <regcmd/core/precision.hpp>

namespace regcmd {

// precision-pair: each SoC's matmul_pair (core/soc.hpp).

// int8-output-int32: an int8 matmul with a narrow output never completes
// (regcmd-isa-reference "int16/narrow-output MATMUL does NOT self-complete").
constexpr bool int8_writes_int32(precision in, precision out) {
  return in != precision::int8 || out == precision::int32;
}

// ew-precision (a request) and sdp-feature-precision (a program): the SDP's main read DMA
// reads fp16, int8 and int16; int32 and fp32 features stall it (regcmd-isa-reference
// "Shape-INVARIANT ... the SDP loopback mirror").
constexpr bool sdp_reads(precision p) {
  return p == precision::fp16 || p == precision::int8 || p == precision::int16;
}

}  // namespace regcmd
