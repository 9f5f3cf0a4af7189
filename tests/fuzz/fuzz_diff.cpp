// libFuzzer target: two dumps (the input split by its first byte) compared with every
// option; the comparison of a dump with itself is always equal.
#include <cstddef>
#include <cstdint>
#include <span>

#include <regcmd/decode/diff.hpp>
#include <regcmd/decode/dump.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t split = 1 + (data[0] * (size - 1)) / 256;
  const regcmd::dump a = regcmd::parse_dump(std::span(data + 1, split - 1));
  const regcmd::dump b = regcmd::parse_dump(std::span(data + split, size - split));
  if (!a.ok() || !b.ok()) return 0;
  regcmd::diff_options options;
  options.ignore_addresses = data[0] & 1;
  if (!b.entries.empty()) options.ignored.insert({b.entries[0].target(), b.entries[0].offset()});
  const regcmd::dump_diff d = regcmd::diff_dumps(a.entries, b.entries, options);
  (void)regcmd::format_diff_text(d);
  (void)regcmd::format_diff_json(d);
  if (!regcmd::diff_dumps(a.entries, a.entries, options).equal()) __builtin_trap();
  if (d.differences.size() + d.only_a.size() > a.entries.size()) __builtin_trap();
  return 0;
}
