#pragma once
// The examples' NPU: the node REGCMD_DEVICE names, else the first found (runtime/device.hpp).
// Without one an example ends with exit status 3 (no NPU device here), or 2 for another
// error, after one line on stderr naming the example.

#include <cstdio>
#include <optional>
#include <string_view>

#include <regcmd/decode/format.hpp>
#include <regcmd/runtime/device.hpp>

namespace example {

// The device, or nullopt with `status` set to the exit status.
inline std::optional<regcmd::runtime::device> open_device(const char* example, int& status) {
  auto device = regcmd::runtime::device::open();
  if (!device) {
    std::fprintf(stderr, "%s: %s\n", example, regcmd::to_string(device.err()).c_str());
    const std::string_view id = device.err().id();
    status = id == "device-missing" || id == "wrong-driver" ? 3 : 2;
    return std::nullopt;
  }
  return std::move(device).value();
}

}  // namespace example
