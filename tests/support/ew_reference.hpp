#pragma once
// The host's element-wise op, the reference SDP results are checked against.
#include <algorithm>

#include <regcmd/programs/sdp/elementwise.hpp>

namespace regcmd::testing {

template <class T>
constexpr T ew_reference(ew_op op, T x, T y) {
  switch (op) {
    case ew_op::add: return x + y;
    case ew_op::mul: return x * y;
    case ew_op::max: return std::max(x, y);
    case ew_op::min: return std::min(x, y);
    case ew_op::prelu: return x < T{} ? x * y : x;
  }
  return T{};
}

}  // namespace regcmd::testing
