# Cross build for an RK3588 board (aarch64 Linux) from a PC: Debian's cross compiler
# (g++-aarch64-linux-gnu) with the board's libraries from multiarch (libdrm-dev:arm64,
# libboost-dev:arm64), tests run under qemu-user. scripts/run-tests.sh --full installs them.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Multiarch: the target's libraries and CMake packages live under /usr/lib/aarch64-linux-gnu
# next to the host's; the library architecture makes find_* look there, programs stay the host's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# pkg-config answers for the target (libdrm's arm64 .pc), never the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")

# ctest runs the target's programs under qemu-user with the multiarch loader and libraries
# (-L /). Not the cross toolchain's sysroot (/usr/aarch64-linux-gnu): its libc differs from
# the multiarch one the programs were linked against, and threaded programs hang under it.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /)
