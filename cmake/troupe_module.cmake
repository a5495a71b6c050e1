# troupe_module(<name> SOURCES <src>... DEPENDS <module target>...)
#
# One library per module folder: public headers in <name>/include (installed), sources in
# <name>/src, exported as troupe::<name>. Modules reach CAF only privately, through
# troupe::actors_internal, so no public header needs it.
function(troupe_module name)
  cmake_parse_arguments(arg "" "" "SOURCES;DEPENDS" ${ARGN})
  set(target troupe_${name})
  add_library(${target} ${arg_SOURCES})
  add_library(troupe::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target}
    PUBLIC ${arg_DEPENDS}
    PRIVATE troupe::actors_internal $<BUILD_INTERFACE:troupe_warnings>)
endfunction()
