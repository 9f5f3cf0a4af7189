#pragma once
// A program against the one a test expects, as a report a test author reads: the diff
// regcmd-diff prints (first divergence, each differing register with its differing fields,
// the entries only one side has), never two walls of hex.
//
// The expected program is a program value (program<>, program_view, heap_code), entries (a
// span, a vector, an array), hex text (one entry per line, '#' comments: decode/dump.hpp's
// text format, as the dumps of tests/data), or a golden_file holding such a dump.
// A: the actual program, B: the expected.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <regcmd/core/entry.hpp>
#include <regcmd/decode/diff.hpp>
#include <regcmd/decode/dump.hpp>
#include <regcmd/testing/checks.hpp>

namespace regcmd::testing {

// A golden program on disk: a dump in decode/dump.hpp's formats (hex text with comments,
// or binary).
struct golden_file {
  std::string path;
};

struct comparison {
  bool equal = false;
  std::string report;  // the diff (A actual, B expected), or why the expected text is no program
};

// Hex text as entries, or the reason it is not a dump.
inline dump entries_of_text(std::string_view text) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  return parse_dump(std::span<const std::uint8_t>(bytes, text.size()), dump_format::text);
}

template <class E>
inline constexpr bool is_text =
    std::is_convertible_v<const E&, std::string_view> && !std::is_convertible_v<const E&, std::span<const entry>>;

inline comparison compare_entries(std::span<const entry> actual, std::span<const entry> expected) {
  const dump_diff d = diff_dumps(actual, expected);
  if (d.equal()) return {true, {}};
  std::string report = "A is the actual program, B the expected\n";
  report += format_diff_text(d);
  return {false, report};
}

template <class A, class E>
comparison compare(const A& actual, const E& expected) {
  const std::span<const entry> a = program_of(actual).entries;
  if constexpr (std::is_same_v<E, golden_file>) {
    const dump d = read_dump(expected.path);
    if (!d.error.empty()) return {false, std::string("the golden file: ").append(d.error)};
    return compare_entries(a, d.entries);
  } else if constexpr (is_text<E>) {
    const dump d = entries_of_text(std::string_view(expected));
    if (!d.error.empty()) return {false, std::string("the expected hex text is not a dump: ").append(d.error)};
    return compare_entries(a, d.entries);
  } else {
    return compare_entries(a, program_of(expected).entries);
  }
}

}  // namespace regcmd::testing
