#pragma once
// The activation family: ReLU, clip, leaky ReLU and lookup-table functions, their tables computed at compile time.

#include <regcmd/programs/activation/functions.hpp>
#include <regcmd/programs/activation/lut_table.hpp>
#include <regcmd/programs/activation/activation.hpp>
