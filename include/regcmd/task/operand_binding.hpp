#pragma once
// Where an op's operands live when it is written into a larger program: each role the op's
// emitter writes a slot for (feature, weight, output, ...) bound to the buffer role and the
// byte offset of the tensor behind it. A graph binds every op to its tensors before the op
// writes its tasks (program_writer::bind), so the slots are written where they belong; an op
// written on its own keeps the identity (each role its own buffer, offset 0).

#include <array>
#include <cstddef>
#include <cstdint>

#include <regcmd/task/program.hpp>

namespace regcmd {

class operand_binding {
 public:
  constexpr operand_binding() {
    for (std::size_t r = 0; r < operand_role_count; ++r) to_[r] = static_cast<operand_role>(r);
  }

  // Role `from`'s slots go to buffer `to`, `offset` bytes further in.
  constexpr operand_binding& operator()(operand_role from, operand_role to, std::uint32_t offset = 0) {
    to_[index(from)] = to;
    plus_[index(from)] = offset;
    bound_ = true;
    return *this;
  }

  // Whether any role is moved (the identity binding writes slots as they are).
  constexpr bool moves() const { return bound_; }

  constexpr slot apply(slot s) const {
    s.offset += plus_[index(s.role)];
    s.role = to_[index(s.role)];
    return s;
  }

 private:
  static constexpr std::size_t index(operand_role r) { return static_cast<std::size_t>(r); }
  std::array<operand_role, operand_role_count> to_{};
  std::array<std::uint32_t, operand_role_count> plus_{};
  bool bound_ = false;
};

}  // namespace regcmd
