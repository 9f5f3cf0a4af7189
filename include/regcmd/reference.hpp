#pragma once
// The host reference, every op (regcmd/reference/values.hpp says what it is).
#include <regcmd/reference/activation.hpp>
#include <regcmd/reference/conv.hpp>
#include <regcmd/reference/elementwise.hpp>
#include <regcmd/reference/matmul.hpp>
#include <regcmd/reference/pooling.hpp>
#include <regcmd/reference/values.hpp>
