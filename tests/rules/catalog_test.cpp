// The catalog's own rules: every rule has a compile-fail snippet under tests/fail/, named
// after it, so no rule exists only as a run-time error.
#include <regcmd/testing/doctest.hpp>

#include <filesystem>
#include <string>

#include <regcmd/rules/catalog.hpp>

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
