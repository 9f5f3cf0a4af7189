# Debian packages (cpack -G DEB in the build directory), for the architecture built for:
#   libregcmd-dev  the headers, <regcmd/version.hpp>, the CMake package, the pkg-config files
#   regcmd-tools   regcmd-dis, -diff, -gen, -run; libregcmd-emu.so and libregcmd-capture.so
#                  in <libdir>/regcmd (for LD_PRELOAD); librknnrt.so in <libdir>/regcmd/rknn
#   python3-regcmd the Python package regcmd (regcmd.onnx among it) and regcmd-onnx, where the
#                  package is built (native builds: Debian's python3 is the build machine's)
# The arm64 packages come from a cross build, where dpkg-shlibdeps cannot run: Depends are
# written by hand, as the versions Debian 12 (bookworm) has, which the binaries are built
# against there.

# Debian's name for the target's architecture; the packages are not made for any other.
set(regcmd_deb_arch_aarch64 arm64)
set(regcmd_deb_arch_arm64 arm64)
set(regcmd_deb_arch_x86_64 amd64)
set(regcmd_deb_arch_AMD64 amd64)
set(REGCMD_DEB_ARCHITECTURE "${regcmd_deb_arch_${CMAKE_SYSTEM_PROCESSOR}}")
if(NOT REGCMD_DEB_ARCHITECTURE)
  message(STATUS "regcmd: no Debian packages for processor '${CMAKE_SYSTEM_PROCESSOR}'")
  return()
endif()

set(CPACK_PACKAGE_NAME regcmd)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(REGCMD_PACKAGE_CONTACT "regcmd maintainers" CACHE STRING "The Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT "${REGCMD_PACKAGE_CONTACT}")
set(CPACK_GENERATOR DEB)
# Staged with DESTDIR, so that CMAKE_INSTALL_PREFIX is /usr while installing: the pkg-config
# files are written with it (cmake/install.cmake). With DESTDIR, CPACK_INSTALL_PREFIX is
# the prefix used.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL dev)
if(REGCMD_BUILD_TOOLS)
  list(APPEND CPACK_COMPONENTS_ALL tools)
endif()
if(TARGET _regcmd)
  list(APPEND CPACK_COMPONENTS_ALL python)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <package>_<version>_<architecture>.deb
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE "${REGCMD_DEB_ARCHITECTURE}")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF)

# The dev package holds no binary, yet it is of the target's architecture rather than
# `all`: its Depends are architecture-specific -dev packages, and an arm64 libregcmd-dev
# (installed into an arm64 sysroot, or as a foreign package on a multiarch host) must pull
# in the arm64 libdrm-dev, which an `all` package's dependencies, resolved for the native
# architecture, would not. (CPack writes no Multi-Arch field, so the amd64 and arm64 ones
# do not install side by side.)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libregcmd-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libboost-dev (>= 1.74), libdrm-dev (>= 2.4.114)")
# Each description follows the summary line, CPACK_PACKAGE_DESCRIPTION_SUMMARY.
set(CPACK_DEBIAN_DEV_DESCRIPTION "Development files: the header-only C++20 library (programs whose \
hardware rules are checked at compile time, a decoder, and the runtime for the rknpu and rocket \
drivers through libdrm), its CMake package (find_package(regcmd), targets regcmd::regcmd and \
regcmd::runtime) and pkg-config files (regcmd, regcmd-runtime).")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME regcmd-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
# regcmd-run links libdrm; every tool libstdc++ (g++ 12's symbol versions) and libgcc_s.
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "libc6 (>= 2.36), libstdc++6 (>= 12), libgcc-s1 (>= 3.0), libdrm2 (>= 2.4.114)")
set(CPACK_DEBIAN_TOOLS_DESCRIPTION "Tools: regcmd-dis decodes regcmd dumps, regcmd-diff compares two, \
regcmd-gen writes programs from the library, regcmd-run runs them on the NPU and checks their \
results. In /usr/${CMAKE_INSTALL_LIBDIR}/regcmd, for LD_PRELOAD: libregcmd-emu.so, an emulated NPU \
device, and libregcmd-capture.so, which records every program submitted. In \
/usr/${CMAKE_INSTALL_LIBDIR}/regcmd/rknn, for LD_LIBRARY_PATH: librknnrt.so, Rockchip's matmul API on \
regcmd (on the vendor rknpu driver and the mainline rocket driver).")

set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-regcmd)
set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
# the module is built for Debian 12's python3 (3.11) and links libdrm and libstdc++
set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= 3.11), python3 (<< 3.12), python3-numpy, libc6 (>= 2.36), \
libstdc++6 (>= 12), libgcc-s1 (>= 3.0), libdrm2 (>= 2.4.114)")
set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "python3-onnx")
set(CPACK_DEBIAN_PYTHON_DESCRIPTION "Python package: regcmd programs built from keyword specs and graphs, \
run with numpy arrays on the NPU or on the emulated device inside the Python process; regcmd.onnx \
imports ONNX models into NPU partitions (an ONNX backend), and regcmd-onnx prints, runs and writes \
them (programs, weights, C++ headers).")

include(CPack)
