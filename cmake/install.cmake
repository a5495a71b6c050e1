# `cmake --install` puts headers, libraries and a package config in the prefix, so that a user
# project can `find_package(troupe)` and link `troupe::troupe`, or ask for some components
# (`find_package(troupe REQUIRED COMPONENTS pools)`) and pay only for what those need. Each
# component is a file, troupe-<component>.cmake, that loads the components it stands on, finds
# its own dependencies, then its targets; troupeConfig.cmake loads those asked for (all when none
# are named).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
set(TROUPE_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/troupe")
set(troupe_staging "${PROJECT_BINARY_DIR}/troupe-package")

get_property(troupe_components GLOBAL PROPERTY TROUPE_COMPONENTS)
foreach(component IN LISTS troupe_components)
  get_property(depends GLOBAL PROPERTY TROUPE_COMPONENT_${component}_DEPENDS)
  get_property(packages GLOBAL PROPERTY TROUPE_COMPONENT_${component}_PACKAGES)
  set(text "# The troupe component '${component}' (written by troupe's cmake/install.cmake).\n")
  foreach(dependency IN LISTS depends)
    string(APPEND text "troupe_load_component(${dependency})\n")
  endforeach()
  foreach(package IN LISTS packages)
    string(APPEND text "find_dependency(${package})\n")
  endforeach()
  string(APPEND text "include(\"\${CMAKE_CURRENT_LIST_DIR}/troupe_${component}_targets.cmake\")\n")
  file(WRITE "${troupe_staging}/troupe-${component}.cmake" "${text}")
  install(EXPORT troupe_${component}_targets NAMESPACE troupe:: DESTINATION ${TROUPE_CMAKE_DIR})
  install(FILES "${troupe_staging}/troupe-${component}.cmake" DESTINATION ${TROUPE_CMAKE_DIR})
endforeach()

configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/troupeConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/troupeConfig.cmake" INSTALL_DESTINATION ${TROUPE_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/troupeConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
    "${PROJECT_BINARY_DIR}/troupeConfig.cmake"
    "${PROJECT_BINARY_DIR}/troupeConfigVersion.cmake"
    "${PROJECT_SOURCE_DIR}/cmake/FindCAF.cmake"
    "${PROJECT_SOURCE_DIR}/cmake/Findtroupe_hdf5.cmake"
  DESTINATION ${TROUPE_CMAKE_DIR})
