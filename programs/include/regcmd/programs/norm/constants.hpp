#pragma once
// A preset's constants (norm/): each a weight or an element-wise operand of the graph, by
// name, as host values; packed with the graph's packers, or handed to a host that packs by
// name (the Python package).

#include <cstdint>
#include <span>
#include <vector>

#include <regcmd/core/error.hpp>
#include <regcmd/programs/graph/packing.hpp>
#include <regcmd/programs/graph/spec.hpp>

namespace regcmd {

struct norm_constant {
  graph_name name;
  operand_role role = operand_role::weight;  // or ew_operand
  std::vector<float> values;                 // row-major, as pack_tensor<float> takes them
};

inline status pack_constants(const graph_view& g, const std::vector<norm_constant>& constants,
                             std::span<std::uint8_t> weight_buffer, std::span<std::uint8_t> ew_operand_buffer) {
  for (const norm_constant& c : constants)
    if (status s = pack_tensor<float>(g, c.name.view(), c.values, c.role == operand_role::weight ? weight_buffer : ew_operand_buffer); !s)
      return s;
  return {};
}

}  // namespace regcmd
