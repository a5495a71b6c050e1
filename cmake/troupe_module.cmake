# troupe_module(<name> [NO_CAF] SOURCES <src>... [DEPENDS <troupe module>...]
#               [LINK <public target>...] [PACKAGES <find_dependency call>...])
#
# One library per module: public headers in include/ beside this CMakeLists (installed), sources
# in src/, exported as troupe::<name> and installed as the find_package component <name>.
# DEPENDS names the troupe modules it stands on (their components come with it); LINK the
# other targets its public interface needs; PACKAGES how an installed troupe finds what the
# module links, one find_dependency argument list each ("Gloo", "MPI COMPONENTS CXX"), looked up
# only when the component is asked for. Modules reach CAF only privately, through
# troupe::actors_internal, so no public header needs it; NO_CAF modules do not reach it at all.
function(troupe_module name)
  cmake_parse_arguments(arg "NO_CAF" "" "SOURCES;DEPENDS;LINK;PACKAGES" ${ARGN})
  set(target troupe_${name})
  add_library(${target} ${arg_SOURCES})
  add_library(troupe::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  list(TRANSFORM arg_DEPENDS PREPEND troupe:: OUTPUT_VARIABLE module_targets)
  target_link_libraries(${target}
    PUBLIC ${module_targets} ${arg_LINK}
    PRIVATE $<BUILD_INTERFACE:troupe_warnings>)
  if(NOT arg_NO_CAF)
    target_link_libraries(${target} PRIVATE troupe::actors_internal)
  endif()
  troupe_component(${name} TARGETS ${target} DEPENDS ${arg_DEPENDS} PACKAGES ${arg_PACKAGES})
  # A folder's headers are installed once, with its first module (graph/ has three).
  get_property(installed GLOBAL PROPERTY TROUPE_HEADERS_${CMAKE_CURRENT_SOURCE_DIR})
  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/include AND NOT installed)
    install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
    set_property(GLOBAL PROPERTY TROUPE_HEADERS_${CMAKE_CURRENT_SOURCE_DIR} TRUE)
  endif()
endfunction()

# troupe_component(<name> TARGETS <target>... [DEPENDS <component>...] [PACKAGES <call>...])
#
# Records a find_package component: its targets (installed in an export set of their own), the
# components it needs, and the packages it finds. cmake/install.cmake writes them out.
function(troupe_component name)
  cmake_parse_arguments(arg "" "" "TARGETS;DEPENDS;PACKAGES" ${ARGN})
  set_property(GLOBAL APPEND PROPERTY TROUPE_COMPONENTS ${name})
  set_property(GLOBAL PROPERTY TROUPE_COMPONENT_${name}_DEPENDS ${arg_DEPENDS})
  set_property(GLOBAL PROPERTY TROUPE_COMPONENT_${name}_PACKAGES "${arg_PACKAGES}")
  install(TARGETS ${arg_TARGETS} EXPORT troupe_${name}_targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# troupe_engine(<option> <package> <description> [<find_package argument>...])
#
# An optional engine: the option is on by default when the package is found; asked for and not
# found, the configure stops saying so. Sets <option> in the caller.
macro(troupe_engine option package description)
  find_package(${package} ${ARGN} QUIET)
  option(${option} "${description}" ${${package}_FOUND})
  if(${option} AND NOT ${package}_FOUND)
    message(FATAL_ERROR "${option} is ON but ${package} was not found (turn it OFF, or install "
                        "it: scripts/setup.sh)")
  endif()
  message(STATUS "troupe: ${option}=${${option}}")
endmacro()
