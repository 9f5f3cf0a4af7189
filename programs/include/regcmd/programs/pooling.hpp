#pragma once
// The pooling family: max, average and global pooling on the PPU.

#include <regcmd/programs/pooling/pooling.hpp>
