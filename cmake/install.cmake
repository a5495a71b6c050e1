# `cmake --install` puts headers, libraries and a package config in the prefix, so that a user
# project can `find_package(troupe)` and link `troupe::troupe`.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TROUPE_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/troupe")

install(TARGETS troupe_actors troupe_actors_internal troupe_queues troupe_pools troupe_distributed
  troupe_assigner troupe_graph troupe_staged troupe
  EXPORT troupeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY
    "${PROJECT_SOURCE_DIR}/actors/include/"
    "${PROJECT_SOURCE_DIR}/queues/include/"
    "${PROJECT_SOURCE_DIR}/pools/include/"
    "${PROJECT_SOURCE_DIR}/distributed/include/"
    "${PROJECT_SOURCE_DIR}/assigner/include/"
    "${PROJECT_SOURCE_DIR}/graph/include/"
    "${PROJECT_SOURCE_DIR}/staged/include/"
    "${PROJECT_SOURCE_DIR}/include/"
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT troupeTargets NAMESPACE troupe:: DESTINATION ${TROUPE_CMAKE_DIR})

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/troupeConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/troupeConfig.cmake" INSTALL_DESTINATION ${TROUPE_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/troupeConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
    "${PROJECT_BINARY_DIR}/troupeConfig.cmake"
    "${PROJECT_BINARY_DIR}/troupeConfigVersion.cmake"
    "${PROJECT_SOURCE_DIR}/cmake/FindCAF.cmake"
  DESTINATION ${TROUPE_CMAKE_DIR})
