#pragma once
// The LLM family: causal attention over a key/value cache, and LLaMA's decoder layer, each
// as graph ops over the norm family's (docs/graph.md, "The LLM family").

#include <regcmd/programs/llm/attention.hpp>
#include <regcmd/programs/llm/decoder_layer.hpp>
