// The catalog's own rules: every id is unique (rules compare by id), and every rule has a
// compile-fail snippet under tests/fail/, named after it, so no rule exists only as a
// run-time error.
#include <regcmd/testing/doctest.hpp>

#include <algorithm>
#include <filesystem>
#include <string>

#include <regcmd/rules/catalog.hpp>

static_assert(regcmd::detail::rule_ids_unique(), "two rules share an id, and rules compare by id");

TEST_CASE("every rule's id and message fit the text an error_exception carries") {
  std::size_t longest = 0;
#define REGCMD_DETAIL_TEXT_SIZE(NAME, ID, MESSAGE, REFERENCE) \
  longest = std::max(longest, std::string_view(ID ": " MESSAGE).size());
  REGCMD_ALL_RULES(REGCMD_DETAIL_TEXT_SIZE)
#undef REGCMD_DETAIL_TEXT_SIZE
  CHECK(longest > 200);  // the lists expanded
  CHECK(longest <= regcmd::error_exception::capacity);
  const regcmd::error_exception e(regcmd::make_error(regcmd::rules::k_single_op_max));
  CHECK(std::string_view(e.what()).starts_with("k-single-op-max: K exceeds 10752"));
}

TEST_CASE("every rule of the catalog has a compile-fail snippet") {
  const std::filesystem::path dir = REGCMD_FAIL_DIR;
  REQUIRE(std::filesystem::is_directory(dir));
  int rules = 0;
#define REGCMD_DETAIL_HAS_SNIPPET(NAME, ID, MESSAGE, REFERENCE)                    \
  ++rules;                                                                         \
  CHECK_MESSAGE(std::filesystem::exists(dir / (std::string(#NAME) + ".cpp")), ID); \
  CHECK(std::string_view(MESSAGE).size() > 20);
  REGCMD_COMPILE_TIME_RULES(REGCMD_DETAIL_HAS_SNIPPET)
#undef REGCMD_DETAIL_HAS_SNIPPET
  CHECK(rules >= 50);  // the lists expanded
}
