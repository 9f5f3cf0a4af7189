# What check_install.cmake and check_package.cmake share: running a command, and building
# and running tests/consumer against an installed regcmd with CMake and with pkg-config.
# Their -D variables:
#   CONSUMER_SOURCE, CXX (the compiler, a cross one when cross compiling), VERSION (the
#   project's), RUNTIME (ON: regcmd::runtime / regcmd-runtime, else the headers only),
#   PKG_CONFIG (pkg-config for the target; empty: the pkg-config checks are skipped),
#   PKG_CONFIG_TARGET_LIBDIR (the target's .pc directories when PKG_CONFIG is the host's),
#   TRIPLET (the target's multiarch triplet), and when cross compiling TOOLCHAIN_FILE and
#   EMULATOR (CMAKE_CROSSCOMPILING_EMULATOR, its items joined with '|').
string(REPLACE "|" ";" EMULATOR "${EMULATOR}")

# Runs a command, failing with its output; its standard output in run_stdout.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}${err}")
  endif()
  message(STATUS "${ARGN}\n${out}${err}")
  set(run_stdout "${out}" PARENT_SCOPE)
endfunction()

# `text` as a regex matching itself.
function(regex_of text out)
  string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

function(expect text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: '${text}' does not match '${regex}'")
  endif()
endfunction()

# Runs the consumer built as `exe` (on the target) and checks what it printed.
function(run_consumer exe)
  run(${EMULATOR} "${exe}")
  regex_of("${VERSION}" version)
  expect("${run_stdout}" "^consumer: regcmd ${version}: " "${exe}")
  if(RUNTIME)
    expect("${run_stdout}" "\nconsumer: regcmd::runtime linked " "${exe}")
  endif()
endfunction()

# find_package(regcmd) from `prefix` (and nowhere else: the config found must be there).
function(build_consumer_with_cmake dir prefix)
  set(args "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  if(TOOLCHAIN_FILE)
    list(APPEND args "-DCMAKE_TOOLCHAIN_FILE=${TOOLCHAIN_FILE}")
  endif()
  if(NOT RUNTIME)
    list(APPEND args -DCONSUMER_RUNTIME=OFF)
  endif()
  run("${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE}" -B "${dir}" -G Ninja ${args})
  file(STRINGS "${dir}/CMakeCache.txt" found REGEX "^regcmd_DIR:")
  regex_of("${prefix}" prefix)
  expect("${found}" "^regcmd_DIR:PATH=${prefix}/" "the regcmd package found")
  run("${CMAKE_COMMAND}" --build "${dir}")
  run_consumer("${dir}/consumer")
endfunction()

# pkg-config with `env` (NAME=value items) set for it alone, its flags starting with
# -I<include_dir> for regcmd; the consumer compiled with them by hand as a Makefile would.
function(build_consumer_with_pkg_config exe include_dir env)
  if(NOT PKG_CONFIG)
    message(STATUS "no pkg-config: the pkg-config checks are skipped")
    return()
  endif()
  set(pkg_config "${CMAKE_COMMAND}" -E env --unset=PKG_CONFIG_PATH --unset=PKG_CONFIG_LIBDIR
      --unset=PKG_CONFIG_SYSROOT_DIR ${env} "${PKG_CONFIG}")
  regex_of("${VERSION}" version)
  regex_of("-I${include_dir}" include_flag)
  run(${pkg_config} --modversion regcmd)
  expect("${run_stdout}" "^${version}\n$" "pkg-config --modversion regcmd")
  run(${pkg_config} --cflags --libs regcmd)
  expect("${run_stdout}" "^${include_flag} *\n$" "pkg-config --cflags --libs regcmd")
  set(module regcmd)
  set(defines "-DREGCMD_CONSUMER_VERSION=\"${VERSION}\"")
  if(RUNTIME)
    set(module regcmd-runtime)
    list(APPEND defines -DREGCMD_CONSUMER_RUNTIME)
    run(${pkg_config} --cflags --libs regcmd-runtime)
    expect("${run_stdout}" "(^| )${include_flag} .*-ldrm" "pkg-config --cflags --libs regcmd-runtime")
  endif()
  separate_arguments(flags UNIX_COMMAND "${run_stdout}")
  run("${CXX}" -std=c++20 ${defines} "${CONSUMER_SOURCE}/consumer.cpp" ${flags} -o "${exe}")
  run_consumer("${exe}")
endfunction()
