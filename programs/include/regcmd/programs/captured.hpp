#pragma once
// Captured programs: a dump replayed as a constexpr template, and patched to other shapes.

#include <regcmd/programs/captured/program.hpp>
#include <regcmd/programs/captured/patch.hpp>
