# Builds the Debian packages of BUILD_DIR with cpack, checks their control fields, extracts
# them into a scratch root under WORK_DIR, runs the extracted regcmd-dis, and builds and runs
# the consumer against the root: with find_package (CMAKE_PREFIX_PATH=<root>/usr), and with
# pkg-config treating the root as the sysroot (PKG_CONFIG_SYSROOT_DIR, PKG_CONFIG_LIBDIR).
# Variables: BUILD_DIR, WORK_DIR, CPACK, DPKG_DEB, DEB_ARCH (amd64, arm64), SYSROOT_PACKAGES
# (installed packages, '|'-separated, copied into the root: what libregcmd-dev's Depends
# bring that pkg-config resolves in the sysroot), and those of consumer_checks.cmake.
include("${CMAKE_CURRENT_LIST_DIR}/consumer_checks.cmake")
file(REMOVE_RECURSE "${WORK_DIR}")
set(root "${WORK_DIR}/root")
run("${CMAKE_COMMAND}" -E chdir "${BUILD_DIR}" "${CPACK}" -G DEB -B "${WORK_DIR}/packages")
regex_of("${VERSION}" version)
set(packages libregcmd-dev regcmd-tools)
if(PYTHON)  # the Python package's, where it is built
  list(APPEND packages python3-regcmd)
endif()
foreach(package IN LISTS packages)
  set(deb "${WORK_DIR}/packages/${package}_${VERSION}_${DEB_ARCH}.deb")
  if(NOT EXISTS "${deb}")
    file(GLOB made "${WORK_DIR}/packages/*.deb")
    message(FATAL_ERROR "cpack made no ${deb}, but: ${made}")
  endif()
  run("${DPKG_DEB}" -f "${deb}" Package Version Architecture Depends)
  expect("${run_stdout}" "^Package: ${package}\nVersion: ${version}\nArchitecture: ${DEB_ARCH}\nDepends: [^\n]+\n$"
         "${deb}'s fields")
  run("${DPKG_DEB}" -x "${deb}" "${root}")
endforeach()

string(REPLACE "|" ";" SYSROOT_PACKAGES "${SYSROOT_PACKAGES}")
run(dpkg-query -L ${SYSROOT_PACKAGES})
string(REPLACE "\n" ";" files "${run_stdout}")
foreach(file IN LISTS files)
  if(file MATCHES "^/" AND NOT IS_DIRECTORY "${file}")  # dpkg-query also lists folders and notes
    get_filename_component(dir "${root}${file}" DIRECTORY)
    file(COPY "${file}" DESTINATION "${dir}")  # a link stays a link
  endif()
endforeach()

run(${EMULATOR} "${root}/usr/bin/regcmd-dis" --version)
expect("${run_stdout}" "^regcmd-dis ${version}\n$" "the extracted regcmd-dis --version")
build_consumer_with_cmake("${WORK_DIR}/build" "${root}/usr")
build_consumer_with_pkg_config("${WORK_DIR}/consumer-pkg-config" "${root}/usr/include"
                               "PKG_CONFIG_SYSROOT_DIR=${root};PKG_CONFIG_LIBDIR=${root}/usr/lib/${TRIPLET}/pkgconfig:${root}/usr/share/pkgconfig")
if(PYTHON)
  # the extracted package imported by the interpreter it is built for, and regcmd-onnx, which
  # finds it beside itself
  run("${CMAKE_COMMAND}" -E env "PYTHONPATH=${root}/usr/${PYTHON_DIR}" "${PYTHON_EXECUTABLE}" -c
      "import regcmd\nprint(regcmd.build('ew', op='add', M=8, N=40))")
  expect("${run_stdout}" "^<regcmd.Program ew: 1 tasks, [0-9]+ entries>\n$" "the extracted package")
  run("${root}/usr/bin/regcmd-onnx" --help)
  expect("${run_stdout}" "^usage: regcmd-onnx " "the extracted regcmd-onnx --help")
endif()
