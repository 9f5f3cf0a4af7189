#pragma once
// The matmul family: the spec, one-task programs, plans of tiles and the operand packers.

#include <regcmd/programs/matmul/spec.hpp>
#include <regcmd/programs/matmul/schedule.hpp>
#include <regcmd/programs/matmul/emit.hpp>
#include <regcmd/programs/matmul/plan.hpp>
#include <regcmd/programs/matmul/packing.hpp>
