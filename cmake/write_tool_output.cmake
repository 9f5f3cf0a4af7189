# Runs a command-line tool at build time and writes its standard output to a file; a
# failing tool fails the build with its standard error.
#   cmake "-DCOMMAND=<tool|arg|...>" -DOUTPUT=<file> -P write_tool_output.cmake
string(REPLACE "|" ";" COMMAND "${COMMAND}")
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_FILE "${OUTPUT}.part" ERROR_VARIABLE err)
if(NOT rc STREQUAL "0")
  file(REMOVE "${OUTPUT}.part")
  message(FATAL_ERROR "'${COMMAND}' exited with ${rc}:\n${err}")
endif()
file(RENAME "${OUTPUT}.part" "${OUTPUT}")
