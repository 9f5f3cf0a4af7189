# Runs a command-line tool with its address space capped (ulimit -v) and checks its exit
# status and the end of what it prints. The output goes through tail, so the check holds
# none of it: a tool that streams passes with gigabytes of output.
#   cmake -DCAP_KIB=<n> "-DCOMMAND=<tool|arg|...>" -DEXPECT_EXIT=<n> "-DTAIL=<-n|lines or -c|bytes>"
#         "-DEXPECT_LAST=<regex>" ["-DEXPECT_STDERR=<regex>"] -P check_tool_memory.cmake
string(REPLACE "|" ";" COMMAND "${COMMAND}")
string(REPLACE "|" ";" TAIL "${TAIL}")
execute_process(COMMAND sh -c "ulimit -v ${CAP_KIB} && exec \"$@\"" sh ${COMMAND}
                COMMAND tail ${TAIL}
                RESULTS_VARIABLE results OUTPUT_VARIABLE last ERROR_VARIABLE err)
list(GET results 0 rc)
if(NOT rc STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "'${COMMAND}' under a ${CAP_KIB} KiB address-space cap exited with '${rc}', expected ${EXPECT_EXIT}\nstderr:\n${err}")
endif()
if(NOT last MATCHES "${EXPECT_LAST}")
  message(FATAL_ERROR "'${COMMAND}' ended its output with\n${last}\nnot matching '${EXPECT_LAST}'")
endif()
if(DEFINED EXPECT_STDERR AND NOT err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "'${COMMAND}' wrote on stderr\n${err}\nnot matching '${EXPECT_STDERR}'")
endif()
