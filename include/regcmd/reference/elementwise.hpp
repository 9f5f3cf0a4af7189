#pragma once
// The host reference of the SDP element-wise ops: x op y, exact in T (double for a
// reference value; the caller rounds or saturates to the output type).
#include <algorithm>

#include <regcmd/programs/sdp_pass.hpp>

namespace regcmd::reference {

template <class T>
constexpr T apply(ew_op op, T x, T y) {
  switch (op) {
    case ew_op::add: return x + y;
    case ew_op::mul: return x * y;
    case ew_op::max: return std::max(x, y);
    case ew_op::min: return std::min(x, y);
    case ew_op::prelu: return x < T{} ? x * y : x;
  }
  return T{};
}

}  // namespace regcmd::reference
