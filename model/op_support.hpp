#pragma once
// What the model's op implementations share (model/*.cpp).

#include <string>
#include <utility>

#include <regcmd/core/layout.hpp>
#include <regcmd/model/npu.hpp>

namespace regcmd::model {

// A register of the group an op runs with, as its type.
template <class R, class Group>
R read(const Group& r) {
  return unpack<R>(r.get(R::offset));
}

// Adds a fault of the running task to the result.
struct op_report {
  run_result& out;
  std::uint32_t task;
  void operator()(fault_kind k, std::string what) const { out.faults.push_back({k, task, std::move(what)}); }
  // A wild access of the `bytes` from `address`.
  void wild(std::uint64_t address, std::uint64_t bytes, std::string what) const {
    out.faults.push_back({fault_kind::wild_access, task, std::move(what), address, bytes});
  }
};

}  // namespace regcmd::model
