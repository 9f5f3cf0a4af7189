// Uses an installed regcmd: typed write, decode, the version header and (with
// REGCMD_CONSUMER_RUNTIME) the runtime, all from the installed headers. Built by CMake
// (tests/consumer/CMakeLists.txt) and, in the package tests, by hand with pkg-config's flags:
//   c++ -std=c++20 consumer.cpp -DREGCMD_CONSUMER_RUNTIME -DREGCMD_CONSUMER_VERSION="\"$(pkg-config
//       --modversion regcmd)\"" $(pkg-config --cflags --libs regcmd-runtime)
#include <cstdio>
#include <string_view>

#include <regcmd/decode/decode.hpp>
#include <regcmd/registers/cna.hpp>
#include <regcmd/version.hpp>
#ifdef REGCMD_CONSUMER_RUNTIME
#include <regcmd/runtime/device.hpp>
#endif

static_assert(std::string_view(regcmd::version_string) == REGCMD_CONSUMER_VERSION);
static_assert(REGCMD_VERSION == regcmd::version_major * 10000 + regcmd::version_minor * 100 + regcmd::version_patch);

int main() {
  using namespace regcmd::reg;
  constexpr auto bank = regcmd::encode(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  static_assert(bank.value().bits() == 0x0201'0000'00b1'1040);
  const regcmd::decoded_entry d = regcmd::decode(bank.value());
  if (d.name != "CNA_CBUF_CON0" || d.field("WEIGHT_BANK")->value != 11) return 1;
  std::printf("consumer: regcmd %s: CNA_CBUF_CON0 0x0201000000b11040 round-trips through the installed package\n",
              regcmd::version_string);
#ifdef REGCMD_CONSUMER_RUNTIME
  // A node that does not exist: refused before any ioctl, but device::open calls libdrm
  // (drmGetVersion), so linking this proves the runtime's flags bring -ldrm.
  const auto dev = regcmd::runtime::device::open("/nonexistent/regcmd-consumer-node");
  if (dev || dev.err().id() != "device-missing") return 1;
  std::printf("consumer: regcmd::runtime linked (device::open of a missing node: %.*s)\n",
              static_cast<int>(dev.err().id().size()), dev.err().id().data());
#endif
  return 0;
}
