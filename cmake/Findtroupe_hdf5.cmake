# HDF5 for an installed troupe's `staged` component: the imported target PkgConfig::hdf5 that
# troupe_staged links, found through pkg-config as troupe's own build finds it (CMake's FindHDF5
# needs the C language, which a C++ project may not enable).
include(FindPackageHandleStandardArgs)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(hdf5 QUIET IMPORTED_TARGET GLOBAL hdf5)
endif()
find_package_handle_standard_args(troupe_hdf5 REQUIRED_VARS hdf5_FOUND)
