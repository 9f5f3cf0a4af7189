# The README's quick start, so that it cannot rot: its CMakeLists.txt and main.cpp blocks are
# examples/quickstart's files, byte for byte; that project is built against the installed
# prefix (find_package only) and run on the installed emulated device, and what it prints is
# the README's output block. Included by check_install.cmake after the install; variables:
# README, QUICKSTART_SOURCE, QUICKSTART_CXX_FLAGS and QUICKSTART_LINK_FLAGS (the build's, so that
# a sanitizer build's instrumented emulated device gets an instrumented program), and those of
# consumer_checks.cmake.

# The fenced block that follows the line `<!-- marker -->` in the README.
function(readme_block marker out)
  file(READ "${README}" text)
  string(FIND "${text}" "<!-- ${marker} -->\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${README}: no '<!-- ${marker} -->' line")
  endif()
  string(SUBSTRING "${text}" ${at} -1 text)
  string(REGEX MATCH "\n```[a-z]*\n(.*)" _ "${text}")
  set(rest "${CMAKE_MATCH_1}")
  string(FIND "${rest}" "\n```" end)
  string(SUBSTRING "${rest}" 0 ${end} block)
  set(${out} "${block}\n" PARENT_SCOPE)
endfunction()

foreach(file IN ITEMS CMakeLists.txt main.cpp)
  readme_block("quickstart ${file}" shown)
  file(READ "${QUICKSTART_SOURCE}/${file}" actual)
  if(NOT shown STREQUAL actual)
    message(FATAL_ERROR "the README's quick start ${file} differs from examples/quickstart/${file}")
  endif()
endforeach()

set(dir "${WORK_DIR}/quickstart")
set(args "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
    "-DCMAKE_CXX_FLAGS=${QUICKSTART_CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${QUICKSTART_LINK_FLAGS}")
if(TOOLCHAIN_FILE)
  list(APPEND args "-DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN_FILE}")
endif()
run("${CMAKE_COMMAND}" -S "${QUICKSTART_SOURCE}" -B "${dir}" -G Ninja ${args})
run("${CMAKE_COMMAND}" --build "${dir}")
file(GLOB emulated "${prefix}/lib*/regcmd/libregcmd-emu.so" "${prefix}/lib/*/regcmd/libregcmd-emu.so")
if(NOT emulated)
  message(FATAL_ERROR "no libregcmd-emu.so installed under ${prefix}")
endif()
list(GET emulated 0 emulated)
# Under qemu-user the preload goes to the program, not to qemu.
if(EMULATOR)
  set(preload "QEMU_SET_ENV=LD_PRELOAD=${emulated}")
else()
  set(preload "LD_PRELOAD=${emulated}")
endif()
run("${CMAKE_COMMAND}" -E env --unset=REGCMD_DEVICE "${preload}" ${EMULATOR} "${dir}/quickstart")
readme_block("quickstart output" shown)
if(NOT run_stdout STREQUAL shown)
  message(FATAL_ERROR "the quick start printed\n${run_stdout}\nthe README shows\n${shown}")
endif()
