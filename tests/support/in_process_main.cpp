// The runtime tests' main for a binary that links the emulated device: every device the
// tests open without naming its calls opens on the emulated device in this process, with
// no LD_PRELOAD (emulator/in_process.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "in_process.hpp"

int main(int argc, char** argv) {
  regcmd::runtime::use_by_default(regcmd::emulator::calls());
  return doctest::Context(argc, argv).run();
}
