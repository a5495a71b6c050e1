# Finds the C++ Actor Framework. Debian's libcaf-dev (0.17.x) ships headers and
# shared libraries but no CMake package, so troupe locates them itself.
#
#   find_package(CAF 0.17 REQUIRED COMPONENTS core io [openssl])
#
# Defines CAF_VERSION and the imported targets CAF::core, CAF::io and CAF::openssl.
include(FindPackageHandleStandardArgs)
find_package(Threads REQUIRED)

find_path(CAF_INCLUDE_DIR NAMES caf/config.hpp)
if(CAF_INCLUDE_DIR)
  # CAF_VERSION in config.hpp is encoded as major * 10000 + minor * 100 + patch.
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_line REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" _caf_num "${_caf_line}")
  math(EXPR _caf_major "${_caf_num} / 10000")
  math(EXPR _caf_minor "(${_caf_num} / 100) % 100")
  math(EXPR _caf_patch "${_caf_num} % 100")
  set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
endif()

if(NOT CAF_FIND_COMPONENTS)
  set(CAF_FIND_COMPONENTS core)
endif()
foreach(_comp IN LISTS CAF_FIND_COMPONENTS)
  find_library(CAF_${_comp}_LIBRARY NAMES caf_${_comp})
  if(CAF_${_comp}_LIBRARY)
    set(CAF_${_comp}_FOUND TRUE)
  endif()
endforeach()

find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_INCLUDE_DIR
  VERSION_VAR CAF_VERSION
  HANDLE_COMPONENTS)

if(CAF_core_FOUND AND NOT TARGET CAF::core)
  add_library(CAF::core SHARED IMPORTED)
  set_target_properties(CAF::core PROPERTIES
    IMPORTED_LOCATION "${CAF_core_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
if(CAF_io_FOUND AND NOT TARGET CAF::io)
  add_library(CAF::io SHARED IMPORTED)
  set_target_properties(CAF::io PROPERTIES
    IMPORTED_LOCATION "${CAF_io_LIBRARY}"
    INTERFACE_LINK_LIBRARIES CAF::core)
endif()
if(CAF_openssl_FOUND AND NOT TARGET CAF::openssl)
  find_package(OpenSSL REQUIRED)
  add_library(CAF::openssl SHARED IMPORTED)
  set_target_properties(CAF::openssl PROPERTIES
    IMPORTED_LOCATION "${CAF_openssl_LIBRARY}"
    INTERFACE_LINK_LIBRARIES "CAF::io;OpenSSL::SSL")
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_core_LIBRARY CAF_io_LIBRARY CAF_openssl_LIBRARY)
