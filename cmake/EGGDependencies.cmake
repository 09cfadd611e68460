# Third-party dependencies of egg-gen, found the same way on Debian 12 (CI) and Ubuntu 24.04 (GPU).
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(CURL REQUIRED)
find_package(Threads REQUIRED)

# Boost.Process is header-only, but before 1.80 it uses boost::filesystem, which is compiled.
# From 1.80 on, BOOST_PROCESS_USE_STD_FS makes it use std::filesystem (the GPU machine has headers only).
find_package(Boost 1.74 CONFIG REQUIRED)
add_library(egg_boost_process INTERFACE)
if(Boost_VERSION VERSION_LESS 1.80)
  find_package(Boost 1.74 CONFIG REQUIRED COMPONENTS filesystem)
  target_link_libraries(egg_boost_process INTERFACE Boost::headers Boost::filesystem)
else()
  target_link_libraries(egg_boost_process INTERFACE Boost::headers)
  target_compile_definitions(egg_boost_process INTERFACE BOOST_PROCESS_USE_STD_FS)
endif()

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  find_path(EGG_CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  target_include_directories(CLI11::CLI11 INTERFACE "${EGG_CLI11_INCLUDE_DIR}")
endif()

# The Python interpreter that runs the op frontend: EGG_PYTHON overrides; it must import torch.
include("${CMAKE_CURRENT_LIST_DIR}/EGGPython.cmake")
egg_find_python(EGG_PYTHON_EXECUTABLE)
