# Runs one compile-fail test: SOURCE must fail to compile with -DREGCMD_COMPILE_FAIL, with
# compiler output matching every "// EXPECT: <regex>" line of SOURCE, and must compile
# without it (the control), so the failure is the one the snippet is about.
#   cmake -DCXX=<compiler> -DSOURCE=<file> -DFLAGS=<flags> -P check_compile_fail.cmake
file(STRINGS "${SOURCE}" expectations REGEX "^// EXPECT: ")
if(NOT expectations)
  message(FATAL_ERROR "${SOURCE} has no '// EXPECT: <regex>' line")
endif()
separate_arguments(flags UNIX_COMMAND "${FLAGS}")

execute_process(COMMAND "${CXX}" ${flags} -fsyntax-only -DREGCMD_COMPILE_FAIL "${SOURCE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled with REGCMD_COMPILE_FAIL, but it must not")
endif()
foreach(line IN LISTS expectations)
  string(REGEX REPLACE "^// EXPECT: " "" regex "${line}")
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "${SOURCE} failed to compile, but its output does not match '${regex}':\n${out}")
  endif()
endforeach()

execute_process(COMMAND "${CXX}" ${flags} -fsyntax-only "${SOURCE}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the control build of ${SOURCE} (without REGCMD_COMPILE_FAIL) must compile:\n${out}")
endif()
message(STATUS "${SOURCE}: rejected with the expected message; control compiles")
