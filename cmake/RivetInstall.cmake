# `cmake --install build --prefix P` lays out:
#   P/include/rivet/*.hpp                     the public headers
#   P/lib/librivet.a (or .so with BUILD_SHARED_LIBS=ON)
#   P/lib/cmake/rivet/rivetConfig.cmake       find_package(rivet) -> rivet::rivet
#   P/lib/cmake/rivet/rivetConfigVersion.cmake
#   P/lib/cmake/rivet/rivetTargets*.cmake
#   P/lib/pkgconfig/rivet.pc                  pkg-config --cflags --libs rivet
# and, when rivet_pg (PostgreSQL) is built:
#   P/lib/librivet-pg.a (or .so)
#   P/lib/cmake/rivet/rivetPgTargets*.cmake   find_package(rivet COMPONENTS pg) -> rivet::pg
#   P/lib/pkgconfig/rivet-pg.pc               pkg-config --cflags --libs rivet-pg
# (lib is CMAKE_INSTALL_LIBDIR: lib/<multiarch> when the prefix is /usr on Debian.)
include(CMakePackageConfigHelpers)

set(rivet_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/rivet)

install(TARGETS rivet EXPORT rivetTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# rivet/pg*.hpp belong to rivet_pg: installed only with it.
if(TARGET rivet_pg)
  set(rivet_pg_headers_exclude "")
else()
  set(rivet_pg_headers_exclude PATTERN "pg*.hpp" EXCLUDE)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/rivet
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp" ${rivet_pg_headers_exclude})
install(EXPORT rivetTargets
  NAMESPACE rivet::
  DESTINATION ${rivet_cmake_dir})

# What a static librivet.a needs from its users' link (rivetConfig.cmake, rivet.pc): its
# PRIVATE libraries. A shared librivet.so brings them itself.
if(BUILD_SHARED_LIBS)
  set(BUILD_SHARED_LIBS_BOOL TRUE)
  set(rivet_pc_requires "")
  set(rivet_pc_requires_private "zlib, libbrotlienc, libzstd, libnghttp2, libcares, hiredis, libssl, libcrypto")
else()
  set(BUILD_SHARED_LIBS_BOOL FALSE)
  set(rivet_pc_requires ", zlib, libbrotlienc, libzstd, libnghttp2, libcares, hiredis, libssl, libcrypto")
  set(rivet_pc_requires_private "")
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/rivetConfig.cmake.in
  ${PROJECT_BINARY_DIR}/rivetConfig.cmake
  INSTALL_DESTINATION ${rivet_cmake_dir})
# Before 1.0 a new minor version may break what the previous one offered.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/rivetConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/rivetConfig.cmake
  ${PROJECT_BINARY_DIR}/rivetConfigVersion.cmake
  DESTINATION ${rivet_cmake_dir})

# rivet.pc finds the prefix from its own place (${pcfiledir}), so that it stays right under
# `cmake --install --prefix P`, which chooses the prefix after configuration.
file(RELATIVE_PATH rivet_pc_to_prefix
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/rivet.pc.in ${PROJECT_BINARY_DIR}/rivet.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/rivet.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# rivet::pg, a component of the package (find_package(rivet COMPONENTS pg)) with an export of
# its own, so that rivetConfig.cmake looks for libpq only when it is installed.
if(TARGET rivet_pg)
  install(TARGETS rivet_pg EXPORT rivetPgTargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(EXPORT rivetPgTargets
    NAMESPACE rivet::
    DESTINATION ${rivet_cmake_dir})
  if(BUILD_SHARED_LIBS)
    set(rivet_pg_pc_requires "rivet = ${PROJECT_VERSION}")
    set(rivet_pg_pc_requires_private "libpq")
  else()
    set(rivet_pg_pc_requires "rivet = ${PROJECT_VERSION}, libpq")
    set(rivet_pg_pc_requires_private "")
  endif()
  configure_file(${CMAKE_CURRENT_LIST_DIR}/rivet-pg.pc.in ${PROJECT_BINARY_DIR}/rivet-pg.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/rivet-pg.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
