# Install rules and the EGG CMake package, for an install prefix and for the build tree.
#
#   <prefix>/bin/egg-gen
#   <prefix>/share/egg/{templates,prompts,python/{egg_frontend,egg_bench,egg_report}}
#                                                                   (EGG_INSTALL_DATADIR)
#   <prefix>/lib/cmake/EGG/{EGGConfig,EGGConfigVersion,EGGTargets*,EGGKernel,EGGPython}.cmake
#
# The installed package is relocatable (every path is computed from EGGConfig.cmake's location).
# The build tree also serves find_package(EGG) with -DEGG_DIR=<EGG build dir>: its EGGConfig.cmake
# uses the built egg-gen and the source tree's templates, prompts and Python frontend.

include(CMakePackageConfigHelpers)

if(NOT DEFINED EGG_INSTALL_DATADIR)
  set(EGG_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/egg")
endif()
set(EGG_INSTALL_CMAKEDIR "lib/cmake/EGG" CACHE STRING
    "Where the EGG CMake package is installed, relative to the prefix")
mark_as_advanced(EGG_INSTALL_CMAKEDIR)

# Inside EGG's own build, EGG::egg-gen names the generator too.
if(TARGET egg-gen AND NOT TARGET EGG::egg-gen)
  add_executable(EGG::egg-gen ALIAS egg-gen)
endif()

# ---- install rules --------------------------------------------------------------------------------
install(TARGETS egg-gen EXPORT EGGTargets
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT egg)

foreach(_egg_data templates prompts)
  if(IS_DIRECTORY "${EGG_SOURCE_DATA_DIR}/${_egg_data}")
    install(DIRECTORY "${EGG_SOURCE_DATA_DIR}/${_egg_data}"
            DESTINATION "${EGG_INSTALL_DATADIR}" COMPONENT egg
            PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE PATTERN ".*" EXCLUDE)
  endif()
endforeach()
# The Python side: the op frontend, the baselines' timer and the report.
foreach(_egg_py egg_frontend egg_bench egg_report)
  if(IS_DIRECTORY "${EGG_SOURCE_DATA_DIR}/python/${_egg_py}")
    install(DIRECTORY "${EGG_SOURCE_DATA_DIR}/python/${_egg_py}"
            DESTINATION "${EGG_INSTALL_DATADIR}/python" COMPONENT egg
            PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE PATTERN ".*" EXCLUDE)
  endif()
endforeach()

install(EXPORT EGGTargets NAMESPACE EGG:: FILE EGGTargets.cmake
        DESTINATION "${EGG_INSTALL_CMAKEDIR}" COMPONENT egg)

set(_egg_pkg_dir "${PROJECT_BINARY_DIR}/egg-package")
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/EGGConfig.cmake.in" "${_egg_pkg_dir}/EGGConfig.cmake"
  INSTALL_DESTINATION "${EGG_INSTALL_CMAKEDIR}"
  PATH_VARS EGG_INSTALL_DATADIR)
write_basic_package_version_file("${_egg_pkg_dir}/EGGConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMajorVersion)
install(FILES
          "${_egg_pkg_dir}/EGGConfig.cmake"
          "${_egg_pkg_dir}/EGGConfigVersion.cmake"
          "${CMAKE_CURRENT_LIST_DIR}/EGGKernel.cmake"
          "${CMAKE_CURRENT_LIST_DIR}/EGGVendorCheck.cmake"
          "${CMAKE_CURRENT_LIST_DIR}/EGGPython.cmake"
        DESTINATION "${EGG_INSTALL_CMAKEDIR}" COMPONENT egg)

# ---- build-tree package (-DEGG_DIR=<this build dir>) ---------------------------------------------
export(EXPORT EGGTargets NAMESPACE EGG:: FILE "${PROJECT_BINARY_DIR}/EGGTargets.cmake")
set(EGG_BUILD_TREE_DATA_DIR "${EGG_SOURCE_DATA_DIR}")
set(EGG_BUILD_TREE_CMAKE_DIR "${CMAKE_CURRENT_LIST_DIR}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/EGGBuildTreeConfig.cmake.in"
               "${PROJECT_BINARY_DIR}/EGGConfig.cmake" @ONLY)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/EGGConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMajorVersion)

unset(_egg_pkg_dir)
unset(_egg_data)
unset(_egg_py)
