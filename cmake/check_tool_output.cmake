# Runs a command-line tool and checks its exit status, and optionally that its standard
# output equals a file and that its standard error matches a regex.
#   cmake "-DCOMMAND=<tool|arg|...>" -DEXPECT_EXIT=<n> [-DEXPECT_STDOUT=<file>]
#         [-DEXPECT_STDOUT_REGEX=<regex>] [-DEXPECT_STDERR=<regex>] [-DSTDIN=<file>]
#         -P check_tool_output.cmake
string(REPLACE "|" ";" COMMAND "${COMMAND}")
set(input_args)
if(DEFINED STDIN)
  set(input_args INPUT_FILE "${STDIN}")
endif()
execute_process(COMMAND ${COMMAND} ${input_args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "'${COMMAND}' exited with ${rc}, expected ${EXPECT_EXIT}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(DEFINED EXPECT_STDOUT)
  file(READ "${EXPECT_STDOUT}" expected)
  if(NOT out STREQUAL expected)
    get_filename_component(name "${EXPECT_STDOUT}" NAME)
    file(WRITE "${name}.actual" "${out}")
    message(FATAL_ERROR "'${COMMAND}' printed something else than ${EXPECT_STDOUT} (see ${name}.actual in the build folder):\n${out}")
  endif()
endif()
if(DEFINED EXPECT_STDOUT_REGEX AND NOT out MATCHES "${EXPECT_STDOUT_REGEX}")
  message(FATAL_ERROR "'${COMMAND}' stdout does not match '${EXPECT_STDOUT_REGEX}':\n${out}")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "'${COMMAND}' stderr does not match '${EXPECT_STDERR}':\n${err}")
endif()
