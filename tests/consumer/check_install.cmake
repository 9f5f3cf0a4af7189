# Installs BUILD_DIR into a fresh prefix under WORK_DIR, then builds and runs the consumer
# project against that prefix only: with find_package, and by hand with pkg-config's flags.
# Variables: BUILD_DIR, WORK_DIR, and those of consumer_checks.cmake.
include("${CMAKE_CURRENT_LIST_DIR}/consumer_checks.cmake")
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
build_consumer_with_cmake("${WORK_DIR}/build" "${prefix}")
# The prefix's .pc files first, libdrm's from the target's usual directories.
set(env "PKG_CONFIG_PATH=${prefix}/share/pkgconfig")
if(PKG_CONFIG_TARGET_LIBDIR)
  list(APPEND env "PKG_CONFIG_LIBDIR=${PKG_CONFIG_TARGET_LIBDIR}")
endif()
build_consumer_with_pkg_config("${WORK_DIR}/consumer-pkg-config" "${prefix}/include" "${env}")
if(RUNTIME AND QUICKSTART_SOURCE)
  include("${CMAKE_CURRENT_LIST_DIR}/check_quickstart.cmake")
endif()
