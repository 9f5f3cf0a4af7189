// The request's option tables: an option sets its own program's field, an option of another
// program is taken unread and refused with the programs that have it, and no table holds an
// option twice.
#include <regcmd/testing/doctest.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <regcmd/cli/request.hpp>

using namespace regcmd;
using namespace regcmd::cli;

namespace {
// The request `options` make for `program` (matmul, ew, act, conv, pool), and what
// check_request says of them.
problem check(std::string_view program, std::initializer_list<std::string_view> options, request* out = nullptr) {
  request r{.elementwise = program == "ew", .convolution = program == "conv", .activation = program == "act",
            .pooling = program == "pool"};
  given_options given;
  const std::vector<std::string_view> words(options);
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (problem twice = given.add(words[i]); !twice.empty()) return twice;
    if (apply_flag(r, words[i])) continue;
    REQUIRE(is_request_option(words[i]));
    REQUIRE(i + 1 < words.size());
    if (const auto bad = apply(r, words[i], words[i + 1]); bad && !bad->empty()) return *bad;
    ++i;
  }
  if (out) *out = r;
  return check_request(r, given);
}
}  // namespace

TEST_CASE("request: -M and -N set the shape of the program asked for, not the matmul's") {
  request r;
  CHECK(check("ew", {"-M", "7", "-N", "48"}, &r).empty());
  CHECK(r.ew.M == 7);
  CHECK(r.ew.N == 48);
  CHECK(r.spec.M == matmul_spec{}.M);
  CHECK(check("act", {"--fn", "relu", "-M", "3", "-N", "32"}, &r).empty());
  CHECK(r.act.M == 3);
  CHECK(r.ew.M == ew_spec{}.M);
  CHECK(check("pool", {"--op", "max", "-H", "6", "-W", "4", "-C", "16", "--kernel", "3"}, &r).empty());
  CHECK(r.pool.H == 6);
  CHECK(r.pool.kernel_h == 3);
  CHECK(r.conv.kernel_h == conv_spec{}.kernel_h);
}

TEST_CASE("request: another program's option is refused by name with the programs that take it") {
  CHECK(check("conv", {"-H", "8", "-W", "8", "-C", "16", "--out-channels", "16", "-M", "4"}) ==
        "-M does not apply to conv (a matmul, ew and act option)");
  CHECK(check("act", {"--fn", "relu", "-M", "4", "-N", "16", "--kernel", "3"}) ==
        "--kernel does not apply to act (a conv and pool option)");
  CHECK(check("ew", {"-M", "4", "-N", "16", "--fn", "relu"}) == "--fn does not apply to ew (an act option)");
  CHECK(check("pool", {"--op", "max", "-H", "8", "-W", "8", "-C", "16", "--depthwise"}) ==
        "--depthwise does not apply to pool (a conv option)");
  // its value is not read: the refusal, not a parse error
  CHECK(check("pool", {"--op", "max", "-H", "8", "-W", "8", "-C", "16", "--out-channels", "many"}) ==
        "--out-channels does not apply to pool (a conv option)");
  // a matmul takes the SDP op's options only as a fused chain
  CHECK(check("matmul", {"-M", "4", "-K", "64", "-N", "64", "--op", "add"}) ==
        "--op does not apply to a matmul without --then ew");
  CHECK(check("matmul", {"-M", "4", "-K", "64", "-N", "64", "--out", "fp16", "--then", "ew", "--op", "add"}).empty());
}

TEST_CASE("request: each program's table names an option once, a flag or a valued option in every table alike") {
  for (request_program p : {request_program::matmul, request_program::ew, request_program::act, request_program::conv,
                            request_program::pool}) {
    const auto table = options_of(p);
    CHECK(!table.empty());
    for (std::size_t i = 0; i < table.size(); ++i) {
      CAPTURE(table[i].name);
      for (std::size_t j = i + 1; j < table.size(); ++j) CHECK(table[i].name != table[j].name);
      CHECK(any_program_option(table[i].name)->valued == table[i].valued);
    }
  }
}
