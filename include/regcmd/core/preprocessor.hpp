#pragma once
// A small preprocessor FOR_EACH for the declaration macros (REGCMD_REGISTER, REGCMD_ENUM):
// plain argument counting, much cheaper to expand than a general preprocessor library.
//
//   REGCMD_PP_FOR_EACH(M, data, a, b, c)  ->  M(data, a) M(data, b) M(data, c)
//
// Up to 24 arguments; each argument is usually a parenthesized tuple such as
// (DATA_BANK, uint_field<3, 0>), taken apart with REGCMD_PP_HEAD / REGCMD_PP_TAIL.

#define REGCMD_PP_CAT_(a, b) a##b
#define REGCMD_PP_CAT(a, b) REGCMD_PP_CAT_(a, b)
#define REGCMD_PP_STRINGIZE_(x) #x
#define REGCMD_PP_STRINGIZE(x) REGCMD_PP_STRINGIZE_(x)
// A string literal as a std::string_view of known size: the constructor from a pointer
// counts the characters one constant-evaluation step at a time, in every translation unit
// (a third of the rule catalog's compile).
#define REGCMD_PP_VIEW(literal) ::std::string_view{literal, sizeof(literal) - 1}

// First element of a tuple, and the rest (which may itself contain commas).
#define REGCMD_PP_HEAD_(first, ...) first
#define REGCMD_PP_HEAD(tuple) REGCMD_PP_HEAD_ tuple
#define REGCMD_PP_TAIL_(first, ...) __VA_ARGS__
#define REGCMD_PP_TAIL(tuple) REGCMD_PP_TAIL_ tuple

#define REGCMD_PP_COUNT_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, count, ...) count
#define REGCMD_PP_COUNT(...) REGCMD_PP_COUNT_(__VA_ARGS__, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)

#define REGCMD_PP_FOR_EACH(macro, data, ...) \
  REGCMD_PP_CAT(REGCMD_PP_FOR_EACH_, REGCMD_PP_COUNT(__VA_ARGS__))(macro, data, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_1(m, d, x) m(d, x)
#define REGCMD_PP_FOR_EACH_2(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_1(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_3(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_2(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_4(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_3(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_5(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_4(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_6(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_5(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_7(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_6(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_8(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_7(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_9(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_8(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_10(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_9(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_11(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_10(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_12(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_11(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_13(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_12(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_14(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_13(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_15(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_14(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_16(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_15(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_17(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_16(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_18(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_17(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_19(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_18(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_20(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_19(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_21(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_20(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_22(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_21(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_23(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_22(m, d, __VA_ARGS__)
#define REGCMD_PP_FOR_EACH_24(m, d, x, ...) m(d, x) REGCMD_PP_FOR_EACH_23(m, d, __VA_ARGS__)
