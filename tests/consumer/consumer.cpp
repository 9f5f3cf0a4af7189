// Uses an installed regcmd: typed write, decode, both from the installed headers.
#include <cstdio>

#include <regcmd/decode/decode.hpp>
#include <regcmd/registers/cna.hpp>

int main() {
  using namespace regcmd::reg;
  constexpr auto bank = regcmd::encode(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
  static_assert(bank.value().bits() == 0x0201'0000'00b1'1040);
  const regcmd::decoded_entry d = regcmd::decode(bank.value());
  if (d.name != "CNA_CBUF_CON0" || d.field("WEIGHT_BANK")->value != 11) return 1;
  std::puts("consumer: CNA_CBUF_CON0 0x0201000000b11040 round-trips through the installed package");
  return 0;
}
