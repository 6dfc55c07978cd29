# Finds libpfm4 (Debian: libpfm4-dev), which ships neither pkg-config nor CMake files.
# Defines Libpfm4_FOUND and the imported target Libpfm4::Libpfm4.
find_path(Libpfm4_INCLUDE_DIR perfmon/pfmlib_perf_event.h)
find_library(Libpfm4_LIBRARY NAMES pfm)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Libpfm4 REQUIRED_VARS Libpfm4_LIBRARY Libpfm4_INCLUDE_DIR)
if(Libpfm4_FOUND AND NOT TARGET Libpfm4::Libpfm4)
  add_library(Libpfm4::Libpfm4 UNKNOWN IMPORTED)
  set_target_properties(Libpfm4::Libpfm4 PROPERTIES
    IMPORTED_LOCATION "${Libpfm4_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${Libpfm4_INCLUDE_DIR}")
endif()
mark_as_advanced(Libpfm4_INCLUDE_DIR Libpfm4_LIBRARY)
