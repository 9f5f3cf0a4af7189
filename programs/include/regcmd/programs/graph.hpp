#pragma once
// The graph: ops composed in one program, its packers, and the presets (FFN, MobileNet block, fused chains).

#include <regcmd/programs/graph/spec.hpp>
#include <regcmd/programs/graph/graph.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/graph/blocks.hpp>
#include <regcmd/programs/graph/fused.hpp>
#include <regcmd/programs/graph/chain.hpp>
