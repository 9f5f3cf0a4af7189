#pragma once
// doctest for tests of encoded bytes: failures said in registers and fields, not in hex.
// Include it from test files only (it includes <doctest/doctest.h>; nothing else of regcmd
// does).
//
//   CHECK_REGCMD_EQ(prog, golden);      // golden: a program, entries, or hex text
//   CHECK_REGISTER(prog, CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11});
//   CHECK_REGISTER(prog, CNA_CBUF_CON0{...}, regcmd::testing::in_task{2});
//   CHECK_FIELD(prog, CNA_DATA_SIZE1::DATAIN_CHANNEL, 512);
//   CHECK_FIELD(prog, CNA_DATA_SIZE1::DATAIN_CHANNEL, 512, regcmd::testing::in_task{1});
//   CHECK_REGISTER(prog, DPU_EW_OP_VALUE{.EW_OPERAND = 0x3c00}, regcmd::testing::element{2});
//   CHECK_BREAKS(build(spec), rules::m_ceiling_fp16);  // an error of that rule
//
// and REQUIRE_ forms that end the test case. A failure prints the macro as written and the
// report of regcmd/testing/compare.hpp or checks.hpp; a pass prints nothing and counts as a
// passing assertion. Entries,
// programs and errors print decoded wherever doctest shows a value (CHECK(a == b) on them).

#include <cstddef>
#include <string>

#include <doctest/doctest.h>

#include <regcmd/core/error.hpp>
#include <regcmd/decode/format.hpp>
#include <regcmd/rules/catalog.hpp>
#include <regcmd/task/heap_program.hpp>
#include <regcmd/task/program.hpp>
#include <regcmd/testing/checks.hpp>
#include <regcmd/testing/compare.hpp>

namespace regcmd::testing {

// One entry as regcmd-dis lists it, with its 64 bits: "CNA CNA_CBUF_CON0 0x000000b1
// DATA_BANK=1 ... (0x0201000000b11040)".
inline std::string entry_text(entry e) {
  std::string line = format_text(decode(e), 0);
  line.erase(0, 2);  // the index regcmd-dis puts first
  append(line, " (", hex(e.bits(), 16), ")");
  return line;
}

// A program as its decoded entries, one per line, each task's first entry marked.
inline std::string program_text(const program_ref& p) {
  const std::size_t tasks = task_count(p);
  std::string out;
  append(out, std::to_string(p.entries.size()), " entries, ", std::to_string(tasks), tasks == 1 ? " task" : " tasks");
  std::size_t shown = static_cast<std::size_t>(-1);
  each_entry(p, [&](std::size_t i, std::size_t task, entry e) {
    out += '\n';
    if (task != shown && task < tasks) {
      shown = task;
      append(out, "task ", std::to_string(task), ":\n");
    }
    append(out, "  ", format_text(decode(e), i));
  });
  return out;
}

}  // namespace regcmd::testing

// Reports a failed check at the macro's file and line: the macro as written, then the report.
// A check that passes is counted as a passing assertion, as doctest's own CHECK is.
#define REGCMD_TESTING_REPORT(fail_at, macro_text, report_expression)                                    \
  do {                                                                                                   \
    const auto regcmd_testing_report_ = (report_expression);                                             \
    if (!regcmd_testing_report_.ok) {                                                                    \
      fail_at(__FILE__, __LINE__, macro_text << "\n" << regcmd_testing_report_.message);                 \
    } else {                                                                                             \
      ::doctest::detail::ResultBuilder regcmd_testing_pass_(::doctest::assertType::DT_CHECK, __FILE__,  \
                                                            __LINE__, macro_text);                       \
      regcmd_testing_pass_.setResult(::doctest::detail::Result{true});                                   \
      static_cast<void>(regcmd_testing_pass_.log());                                                     \
    }                                                                                                    \
  } while (false)

namespace doctest {
template <>
struct StringMaker<regcmd::entry> {
  static String convert(const regcmd::entry& e) { return regcmd::testing::entry_text(e).c_str(); }
};
template <>
struct StringMaker<regcmd::program_view> {
  static String convert(const regcmd::program_view& p) {
    return regcmd::testing::program_text(regcmd::testing::program_of(p)).c_str();
  }
};
template <std::size_t E, std::size_t T, std::size_t S>
struct StringMaker<regcmd::program<E, T, S>> {
  static String convert(const regcmd::program<E, T, S>& p) {
    return regcmd::testing::program_text(regcmd::testing::program_of(p)).c_str();
  }
};
template <>
struct StringMaker<regcmd::heap_code> {
  static String convert(const regcmd::heap_code& p) {
    return regcmd::testing::program_text(regcmd::testing::program_of(p)).c_str();
  }
};
template <>
struct StringMaker<regcmd::error> {
  static String convert(const regcmd::error& e) { return regcmd::to_string(e).c_str(); }
};
}  // namespace doctest

namespace regcmd::testing::detail {
// A comparison as a check report.
inline check_report report_of(const comparison& c) { return {c.equal, c.report}; }

// Whether an outcome (a status, or a result of anything) is the error of rule `r`: what it
// did instead, when it is not.
// (Appended piece by piece: g++ 12 at -O3 warns, wrongly, of overlapping copies in a chain
// of operator+ on temporaries.)
template <class Outcome>
check_report breaks_report(const Outcome& outcome, const rule& r) {
  if (!outcome.ok() && outcome.err().breaks(r)) return {};
  check_report report{false, {}};
  if (outcome.ok()) {
    report.message += "it succeeded; it should break ";
  } else {
    report.message += "it broke ";
    report.message += to_string(outcome.err());
    report.message += "\nit should break ";
  }
  report.message += r.id;
  return report;
}
}  // namespace regcmd::testing::detail

#define CHECK_REGCMD_EQ(actual, expected)                                                         \
  REGCMD_TESTING_REPORT(DOCTEST_ADD_FAIL_CHECK_AT, "CHECK_REGCMD_EQ(" #actual ", " #expected ")", \
                        ::regcmd::testing::detail::report_of(::regcmd::testing::compare((actual), (expected))))
#define REQUIRE_REGCMD_EQ(actual, expected)                                                   \
  REGCMD_TESTING_REPORT(DOCTEST_ADD_FAIL_AT, "REQUIRE_REGCMD_EQ(" #actual ", " #expected ")", \
                        ::regcmd::testing::detail::report_of(::regcmd::testing::compare((actual), (expected))))
// The idiom for "this breaks rule X": the outcome (a status or a result) is an error of that
// rule (a regcmd::rule: rules::X from the catalog).
//   CHECK_BREAKS(build(ew_spec{.M = 8, .N = 9, .tile_pad = tile_padding::none}), rules::ew_n_alignment);
#define CHECK_BREAKS(outcome, ...)                                                                  \
  REGCMD_TESTING_REPORT(DOCTEST_ADD_FAIL_CHECK_AT, "CHECK_BREAKS(" #outcome ", " #__VA_ARGS__ ")", \
                        ::regcmd::testing::detail::breaks_report((outcome), (__VA_ARGS__)))
#define REQUIRE_BREAKS(outcome, ...)                                                            \
  REGCMD_TESTING_REPORT(DOCTEST_ADD_FAIL_AT, "REQUIRE_BREAKS(" #outcome ", " #__VA_ARGS__ ")", \
                        ::regcmd::testing::detail::breaks_report((outcome), (__VA_ARGS__)))
#define CHECK_REGISTER(program, ...)                                                                 \
  REGCMD_TESTING_REPORT(DOCTEST_ADD_FAIL_CHECK_AT, "CHECK_REGISTER(" #program ", " #__VA_ARGS__ ")", \
                        ::regcmd::testing::register_report((program), __VA_ARGS__))
#define REQUIRE_REGISTER(program, ...)                                                           \
  REGCMD_TESTING_REPORT(DOCTEST_ADD_FAIL_AT, "REQUIRE_REGISTER(" #program ", " #__VA_ARGS__ ")", \
                        ::regcmd::testing::register_report((program), __VA_ARGS__))
#define CHECK_FIELD(program, field, ...)                                                                      \
  REGCMD_TESTING_REPORT(DOCTEST_ADD_FAIL_CHECK_AT, "CHECK_FIELD(" #program ", " #field ", " #__VA_ARGS__ ")", \
                        ::regcmd::testing::field_report((program), &field, __VA_ARGS__))
#define REQUIRE_FIELD(program, field, ...)                                                                \
  REGCMD_TESTING_REPORT(DOCTEST_ADD_FAIL_AT, "REQUIRE_FIELD(" #program ", " #field ", " #__VA_ARGS__ ")", \
                        ::regcmd::testing::field_report((program), &field, __VA_ARGS__))
