#pragma once
// The convolution family: the spec, its task plan, the program and the packers.

#include <regcmd/programs/conv/spec.hpp>
#include <regcmd/programs/conv/plan.hpp>
#include <regcmd/programs/conv/emit.hpp>
#include <regcmd/programs/conv/packing.hpp>
