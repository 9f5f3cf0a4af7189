# What `cmake --install` (and the libregcmd-dev package) installs, all in the `dev` component:
# the headers with the generated <regcmd/version.hpp>, the CMake package and the pkg-config
# files. Included from the top-level CMakeLists.txt.

install(TARGETS regcmd EXPORT regcmdTargets COMPONENT dev)
foreach(dir IN LISTS REGCMD_INCLUDE_DIRS)
  install(DIRECTORY "${dir}/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT dev)
endforeach()
install(FILES "${REGCMD_BUILD_INCLUDE_DIR}/regcmd/version.hpp" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/regcmd"
        COMPONENT dev)

# The CMake package. regcmd::runtime is an export set of its own: the config includes it
# only when it finds libdrm, so that its link to PkgConfig::REGCMD_LIBDRM always names a
# target that exists. Everything here is architecture independent (interface targets, and
# libdrm found again by the consumer's pkg-config), hence the data directory.
set(REGCMD_CMAKE_DIR "${CMAKE_INSTALL_DATADIR}/cmake/regcmd")
install(EXPORT regcmdTargets NAMESPACE regcmd:: DESTINATION "${REGCMD_CMAKE_DIR}" COMPONENT dev)
if(TARGET regcmd_runtime)
  install(TARGETS regcmd_runtime EXPORT regcmdRuntimeTargets COMPONENT dev)
  install(EXPORT regcmdRuntimeTargets NAMESPACE regcmd:: DESTINATION "${REGCMD_CMAKE_DIR}" COMPONENT dev)
endif()
configure_package_config_file(cmake/regcmdConfig.cmake.in "${PROJECT_BINARY_DIR}/regcmdConfig.cmake"
                              INSTALL_DESTINATION "${REGCMD_CMAKE_DIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/regcmdConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES "${PROJECT_BINARY_DIR}/regcmdConfig.cmake" "${PROJECT_BINARY_DIR}/regcmdConfigVersion.cmake"
        DESTINATION "${REGCMD_CMAKE_DIR}" COMPONENT dev)

# pkg-config: regcmd (the headers) and regcmd-runtime (Requires: regcmd libdrm). Neither
# names a library of its own, so both go to the data directory, which the native and the
# cross (<triplet>-pkg-config) search paths of Debian's multiarch pkg-config both hold.
# Their prefix is the one installed to, written at install time: `cmake --install --prefix X`
# gives X, a package /usr. An absolute prefix is what PKG_CONFIG_SYSROOT_DIR expects; a
# ${pcfiledir}-relative one would get the sysroot prepended twice by pkg-config
# implementations that do not check for it. Each install writes its own copy (named by
# its destination), so that two installs at once do not swap prefixes.
set(REGCMD_PC_DIR "${PROJECT_BINARY_DIR}/pkgconfig")
set(REGCMD_PC_PREFIX "@REGCMD_PC_PREFIX@")  # left for the install-time pass
foreach(pc IN ITEMS regcmd regcmd-runtime)
  if(pc STREQUAL "regcmd-runtime" AND NOT TARGET regcmd_runtime)
    continue()
  endif()
  configure_file("cmake/${pc}.pc.in" "${REGCMD_PC_DIR}/${pc}.pc.in" @ONLY)
  install(CODE "set(REGCMD_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    string(MD5 regcmd_pc_copy \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
    set(regcmd_pc_copy \"${REGCMD_PC_DIR}/\${regcmd_pc_copy}/${pc}.pc\")
    configure_file(\"${REGCMD_PC_DIR}/${pc}.pc.in\" \"\${regcmd_pc_copy}\" @ONLY)
    file(INSTALL DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/pkgconfig\" TYPE FILE
         FILES \"\${regcmd_pc_copy}\")"
          COMPONENT dev)
endforeach()
