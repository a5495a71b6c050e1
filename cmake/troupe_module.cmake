# troupe_module(<name> [NO_CAF] SOURCES <src>... DEPENDS <module target>...)
#
# One library per module folder: public headers in <name>/include (installed), sources in
# <name>/src, exported as troupe::<name>. Modules reach CAF only privately, through
# troupe::actors_internal, so no public header needs it; NO_CAF modules do not reach it at all.
function(troupe_module name)
  cmake_parse_arguments(arg "NO_CAF" "" "SOURCES;DEPENDS" ${ARGN})
  set(target troupe_${name})
  add_library(${target} ${arg_SOURCES})
  add_library(troupe::${name} ALIAS ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name} OUTPUT_NAME ${target})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target}
    PUBLIC ${arg_DEPENDS}
    PRIVATE $<BUILD_INTERFACE:troupe_warnings>)
  if(NOT arg_NO_CAF)
    target_link_libraries(${target} PRIVATE troupe::actors_internal)
  endif()
endfunction()
