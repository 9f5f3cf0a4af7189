#pragma once
// The SDP element-wise family: add, mul, max, min and PReLU over a tensor, and its packers.

#include <regcmd/programs/sdp/elementwise.hpp>
#include <regcmd/programs/sdp/packing.hpp>
