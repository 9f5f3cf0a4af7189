#pragma once
// A board for tests on the functional model: operand buffers by role in one 32-bit IOVA
// space (regcmd 0x1000'0000, feature 0x2000'0000, weight 0x3000'0000, output 0x4000'0000,
// ew_operand 0x5000'0000, intermediate 0x6000'0000, next_program 0x7000'0000, bias
// 0x8000'0000, residual 0x9000'0000). run()
// patches a program's slots with those IOVAs, places it in the regcmd buffer and runs
// its tasks as the kernel kicks them.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <regcmd/model/npu.hpp>
#include <regcmd/rules/program_rules.hpp>

namespace regcmd::testing {

class model_board {
 public:
  model::iova_space memory;
  model::npu npu;
  operand_addresses base{};

  model_board() { npu.behaviour = {false, false}; }  // the quirks have their own tests

  // (Re)allocates the buffer of `role`: `bytes` long, every byte `fill`.
  std::vector<std::uint8_t>& allocate(operand_role role, std::size_t bytes, std::uint8_t fill = 0) {
    const std::size_t i = order(role);
    std::vector<std::uint8_t>& b = buffers_[i];
    b.assign(bytes, fill);
    base[static_cast<std::size_t>(role)] = 0x1000'0000u * (i + 1);
    memory.add(base[static_cast<std::size_t>(role)], b);
    return b;
  }
  std::vector<std::uint8_t>& operator[](operand_role role) { return buffers_[order(role)]; }
  // A buffer for every role of `bytes_by_role` (a graph's buffer_bytes) that has bytes.
  template <class Bytes>
  void allocate_each(const Bytes& bytes_by_role, std::uint8_t fill = 0) {
    for (std::size_t r = 0; r < operand_role_count; ++r)
      if (bytes_by_role[r] > 0) allocate(static_cast<operand_role>(r), bytes_by_role[r], fill);
  }

  model::run_result run(std::vector<entry> code, std::span<const slot> slots, std::span<const task> tasks,
                        bool pingpong = true) {
    if ((*this)[operand_role::regcmd].size() < code.size() * 8) allocate(operand_role::regcmd, code.size() * 8 + 64);
    REQUIRE(patch_slots(code, slots, base).ok());
    std::vector<std::uint8_t>& regcmd = (*this)[operand_role::regcmd];
    for (std::size_t i = 0; i < code.size(); ++i) {
      const auto bytes = code[i].to_bytes();
      std::copy(bytes.begin(), bytes.end(), regcmd.begin() + static_cast<std::ptrdiff_t>(i * 8));
    }
    return npu.run(memory, base[static_cast<std::size_t>(operand_role::regcmd)] + tasks[0].first * 8,
                   pc_fetch_amount(tasks[0].count), static_cast<std::uint32_t>(tasks.size()), pingpong);
  }
  model::run_result run(const program_view& p) {
    return run(std::vector<entry>(p.entries.begin(), p.entries.end()), p.slots, p.tasks, p.pingpong);
  }

 private:
  static constexpr std::size_t order(operand_role role) {
    switch (role) {
      case operand_role::regcmd: return 0;
      case operand_role::feature: return 1;
      case operand_role::weight: return 2;
      case operand_role::output: return 3;
      case operand_role::ew_operand: return 4;
      case operand_role::intermediate: return 5;
      case operand_role::next_program: return 6;
      case operand_role::bias: return 7;
      case operand_role::residual: return 8;
    }
    return 8;
  }
  std::array<std::vector<std::uint8_t>, operand_role_count> buffers_;
};

}  // namespace regcmd::testing
