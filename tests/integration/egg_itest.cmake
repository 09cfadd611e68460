# Integration test steps, run as `cmake -DSTEP=<step> ... -P egg_itest.cmake` (see CMakeLists.txt).
#
# Inputs: EGG_SOURCE_DIR, EGG_BUILD_DIR, WORK, CACHE, NINJA, NVCC, PYTHON, ARCH, STEP,
#         MODE (buildtree|prefix), CASE (bad input case).
# Exit: 0 pass, 77 skip, anything else fails (message(FATAL_ERROR)).
cmake_minimum_required(VERSION 3.25)

set(PREFIX "${WORK}/prefix")

function(fail)
  string(JOIN "" _m ${ARGN})
  message(FATAL_ERROR "FAIL: ${_m}")
endfunction()

# run(<outvar> <rcvar> <command>...): runs a command, echoes and captures stdout+stderr.
function(run outvar rcvar)
  list(JOIN ARGN " " _shown)
  message(STATUS "$ ${_shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  message("${_out}")
  message(STATUS "exit: ${_rc}")
  set(${outvar} "${_out}" PARENT_SCOPE)
  set(${rcvar} "${_rc}" PARENT_SCOPE)
endfunction()

# run_ok(<outvar> <command>...): like run() but fails the test on a non-zero exit.
function(run_ok outvar)
  run(_out _rc ${ARGN})
  if(NOT _rc EQUAL 0)
    list(JOIN ARGN " " _shown)
    fail("command failed (${_rc}): ${_shown}")
  endif()
  set(${outvar} "${_out}" PARENT_SCOPE)
endfunction()

function(expect_match text regex what)
  if(NOT text MATCHES "${regex}")
    fail("${what}: output does not match /${regex}/")
  endif()
endfunction()

function(expect_no_match text regex what)
  if(text MATCHES "${regex}")
    fail("${what}: output matches /${regex}/ (\"${CMAKE_MATCH_0}\")")
  endif()
endfunction()

# Files (recursively) under a folder; empty when the folder does not exist.
function(files_under dir outvar)
  set(_f "")
  if(IS_DIRECTORY "${dir}")
    file(GLOB_RECURSE _f LIST_DIRECTORIES false "${dir}/*")
  endif()
  set(${outvar} "${_f}" PARENT_SCOPE)
endfunction()

set(COMMON_ARGS -G Ninja "-DCMAKE_MAKE_PROGRAM=${NINJA}" -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CUDA_COMPILER=${NVCC}" "-DEGG_PYTHON=${PYTHON}"
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON)

if(MODE STREQUAL "buildtree")
  set(QS "${WORK}/qs-buildtree")
  set(EGG_ARGS "-DEGG_DIR=${EGG_BUILD_DIR}")
  set(EXPECT_EGG_DIR "${EGG_BUILD_DIR}")
elseif(MODE STREQUAL "prefix")
  set(QS "${WORK}/qs-prefix")
  set(EGG_ARGS "-DCMAKE_PREFIX_PATH=${PREFIX}")
  set(EXPECT_EGG_DIR "${PREFIX}/lib/cmake/EGG")
endif()

# ---------------------------------------------------------------------------------------------------
if(STEP STREQUAL "install")
  # Install into a staging prefix, then move it: the package must not remember where it was put.
  file(REMOVE_RECURSE "${PREFIX}" "${PREFIX}-stage")
  run_ok(_out "${CMAKE_COMMAND}" --install "${EGG_BUILD_DIR}" --prefix "${PREFIX}-stage")
  file(RENAME "${PREFIX}-stage" "${PREFIX}")
  foreach(_f bin/egg-gen lib/cmake/EGG/EGGConfig.cmake lib/cmake/EGG/EGGConfigVersion.cmake
          lib/cmake/EGG/EGGTargets.cmake lib/cmake/EGG/EGGKernel.cmake
          lib/cmake/EGG/EGGPython.cmake share/egg/templates share/egg/python/egg_frontend)
    if(NOT EXISTS "${PREFIX}/${_f}")
      fail("the install prefix lacks ${_f}")
    endif()
  endforeach()
  file(GLOB_RECURSE _cfg "${PREFIX}/lib/cmake/EGG/*.cmake")
  foreach(_f IN LISTS _cfg)
    file(READ "${_f}" _text)
    string(FIND "${_text}" "${PREFIX}-stage" _pos)
    if(NOT _pos EQUAL -1)
      fail("${_f} names the staging prefix: the package is not relocatable")
    endif()
  endforeach()
  run_ok(_out "${PREFIX}/bin/egg-gen" version)
  # An installed, moved egg-harness still finds LibTorch and CUDA (on the GPU machine it once did not).
  if(EXISTS "${PREFIX}/bin/egg-harness")
    run_ok(_out "${PREFIX}/bin/egg-harness" verify --help)
    find_program(_ldd ldd)
    if(_ldd)
      run_ok(_out "${_ldd}" "${PREFIX}/bin/egg-harness")
      if(_out MATCHES "not found")
        fail("the installed egg-harness misses shared libraries:\n${_out}")
      endif()
    endif()
  endif()

# ---------------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "configure")
  file(REMOVE_RECURSE "${QS}")
  file(MAKE_DIRECTORY "${QS}")
  # A private copy of the example, so the incremental test may edit its op files.
  file(COPY "${EGG_SOURCE_DIR}/examples/quickstart/" DESTINATION "${QS}/src"
       PATTERN "build*" EXCLUDE)
  run_ok(_out "${CMAKE_COMMAND}" -S "${QS}/src" -B "${QS}/build" ${COMMON_ARGS} ${EGG_ARGS}
         "-DQUICKSTART_ARCH=${ARCH}" "-DEGG_CACHE_DIR=${CACHE}")
  file(STRINGS "${QS}/build/CMakeCache.txt" _dir REGEX "^EGG_DIR:")
  string(REGEX REPLACE "^EGG_DIR:[A-Z]+=" "" _dir "${_dir}")
  file(REAL_PATH "${_dir}" _dir)
  file(REAL_PATH "${EXPECT_EGG_DIR}" _want)
  if(NOT _dir STREQUAL _want)
    fail("find_package(EGG) found '${_dir}', expected '${_want}'")
  endif()

# ---------------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "build")
  run_ok(_out "${NINJA}" -C "${QS}/build")
  expect_match("${_out}" "EGG: generating kernel gelu_bias from" "first build")
  expect_match("${_out}" "EGG: generating kernel swish_clamp from" "first build")
  foreach(_k gelu_bias swish_clamp)
    foreach(_f ${_k}.cu include/egg/${_k}.h manifest.json)
      if(NOT EXISTS "${QS}/build/egg/${_k}/${_f}")
        fail("build tree lacks egg/${_k}/${_f}")
      endif()
    endforeach()
  endforeach()
  if(NOT EXISTS "${QS}/build/quickstart")
    fail("the quickstart executable was not built")
  endif()
  # The generator ran with the data of the package it was found in.
  file(READ "${QS}/build/build.ninja" _ninja)
  if(MODE STREQUAL "prefix")
    expect_match("${_ninja}" "${PREFIX}/bin/egg-gen" "build.ninja uses the installed egg-gen")
    expect_match("${_ninja}" "--data-dir ${PREFIX}/share/egg" "build.ninja uses the installed data")
  else()
    expect_match("${_ninja}" "--data-dir ${EGG_SOURCE_DIR}" "build.ninja uses the source data")
  endif()

# ---------------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "noop")
  run_ok(_out "${NINJA}" -C "${QS}/build")
  expect_match("${_out}" "ninja: no work to do\\." "second build")

# ---------------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "run")
  run_ok(_out "${QS}/build/quickstart")
  if(_out MATCHES "no CUDA device")
    message("SKIP: no CUDA device on this machine (the test is labelled gpu)")
    return()
  endif()
  expect_match("${_out}" "max abs error" "quickstart run")

# ---------------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "incremental")
  set(_op "${QS}/src/ops/gelu_bias.py")
  # Make sure the tree is up to date first (another test may have run in between).
  run_ok(_out "${NINJA}" -C "${QS}/build")

  # 1. A comment: the generator runs again, but its outputs do not change, so nothing compiles.
  file(APPEND "${_op}" "# a comment added by the incremental test\n")
  run_ok(_out "${NINJA}" -C "${QS}/build" -v)
  expect_match("${_out}" "egg-gen[^\n]* generate [^\n]*gelu_bias\\.py" "comment edit re-runs the generator")
  expect_no_match("${_out}" "egg-gen[^\n]* generate [^\n]*swish_clamp\\.py" "comment edit of gelu_bias.py")
  expect_no_match("${_out}" "[^\n]*\\.(cu|cpp)\\.o[^\n]*" "comment edit must compile and link nothing")
  run_ok(_out "${NINJA}" -C "${QS}/build")
  expect_match("${_out}" "ninja: no work to do\\." "build after the comment edit")

  # 2. A changed constant: the kernel is regenerated and recompiled; the other one is not.
  file(READ "${_op}" _text)
  string(REPLACE "scale = 0.5" "scale = 0.25" _new "${_text}")
  if(_new STREQUAL _text)
    fail("could not find `scale = 0.5` in ${_op}")
  endif()
  file(WRITE "${_op}" "${_new}")
  run_ok(_out "${NINJA}" -C "${QS}/build" -v)
  expect_match("${_out}" "egg-gen[^\n]* generate [^\n]*gelu_bias\\.py" "changed constant regenerates")
  expect_match("${_out}" "[^\n]*-c [^\n]*gelu_bias\\.cu[^\n]*" "changed constant recompiles gelu_bias.cu")
  expect_no_match("${_out}" "[^\n]*-c [^\n]*swish_clamp\\.cu[^\n]*" "changed constant in gelu_bias.py")
  file(READ "${QS}/build/egg/gelu_bias/gelu_bias.cu" _cu)
  expect_match("${_cu}" "0\\.25" "the regenerated kernel carries the new constant")
  run_ok(_out "${NINJA}" -C "${QS}/build")
  expect_match("${_out}" "ninja: no work to do\\." "build after the constant change")

# ---------------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "configure_errors")
  # egg_kernel() argument errors, caught at configure time in a CXX-only project.
  set(_d "${WORK}/config-errors")
  file(REMOVE_RECURSE "${_d}")
  file(MAKE_DIRECTORY "${_d}/src/ops")
  file(WRITE "${_d}/src/ops/relu.py" [=[
import torch
import torch.nn as nn
class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)
def get_inputs():
    return [torch.randn(64, 64)]
def get_init_inputs():
    return []
]=])
  file(WRITE "${_d}/src/main.cpp" "int main() { return 0; }\n")
  file(WRITE "${_d}/src/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.25)
project(config_errors LANGUAGES CXX)
find_package(EGG REQUIRED)
add_executable(app main.cpp)
if(CASE STREQUAL "no_arch")
  egg_kernel(app ops/relu.py)
elseif(CASE STREQUAL "bad_arch")
  egg_kernel(app ops/relu.py ARCH 90)
elseif(CASE STREQUAL "missing_op")
  egg_kernel(app ops/nope.py ARCH sm_90)
elseif(CASE STREQUAL "duplicate_name")
  enable_language(CUDA)
  egg_kernel(app ops/relu.py ARCH sm_90 NAME k)
  egg_kernel(app ops/relu.py ARCH sm_90 NAME k)
elseif(CASE STREQUAL "no_cuda")
  egg_kernel(app ops/relu.py ARCH sm_90)
endif()
]=])
  set(_expect_no_arch "ARCH is missing")
  set(_expect_bad_arch "ARCH value '90' is malformed")
  set(_expect_missing_op "op file '[^']*/ops/nope\\.py' does not exist")
  set(_expect_duplicate_name "kernel NAME 'k' is already used")
  set(_expect_no_cuda "CUDA is not an enabled language.*LANGUAGES CXX CUDA")
  set(_cases no_arch bad_arch missing_op no_cuda)
  if(NVCC)
    list(APPEND _cases duplicate_name)  # the first of its two calls needs CUDA enabled
  endif()
  foreach(_case IN LISTS _cases)
    run(_out _rc "${CMAKE_COMMAND}" -S "${_d}/src" -B "${_d}/build" -G Ninja
        "-DCMAKE_MAKE_PROGRAM=${NINJA}" "-DEGG_DIR=${EGG_BUILD_DIR}" "-DEGG_PYTHON=${PYTHON}"
        "-DCMAKE_CUDA_COMPILER=${NVCC}" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "-DCASE=${_case}")
    if(_rc EQUAL 0)
      fail("case ${_case}: configure succeeded, expected an egg_kernel() error")
    endif()
    string(REGEX REPLACE "[ \t]*\n[ \t]*" " " _flat "${_out}")
    expect_match("${_flat}" "egg_kernel\\(\\)" "case ${_case}")
    expect_match("${_flat}" "${_expect_${_case}}" "case ${_case}")
  endforeach()

# ---------------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "require_verified")
  # EGG_REQUIRE_VERIFIED=ON: without a GPU the build must stop, saying why and what to do.
  # EGG_REQUIRE_FASTER=ON reaches the generator as --require-faster (a fused two-op chain beats
  # eager's two kernels on a GPU; without one nothing is measured, so it is no error by itself).
  set(_d "${WORK}/require-verified")
  file(REMOVE_RECURSE "${_d}")
  file(MAKE_DIRECTORY "${_d}/src/ops")
  file(WRITE "${_d}/src/ops/hardswish_scale.py" [=[
import torch
import torch.nn as nn
import torch.nn.functional as F
class Model(nn.Module):
    def forward(self, x):
        return F.hardswish(x) * 0.75
def get_inputs():
    return [torch.randn(256, 256)]
def get_init_inputs():
    return []
]=])
  file(WRITE "${_d}/src/main.cpp" "int main() { return 0; }\n")
  file(WRITE "${_d}/src/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.25)
project(require_verified LANGUAGES CXX CUDA)
find_package(EGG REQUIRED)
add_executable(app main.cpp)
egg_kernel(app ops/hardswish_scale.py ARCH ${ARCH})
]=])
  run_ok(_out "${CMAKE_COMMAND}" -S "${_d}/src" -B "${_d}/build" ${COMMON_ARGS}
         "-DEGG_DIR=${EGG_BUILD_DIR}" "-DARCH=${ARCH}" -DEGG_REQUIRE_VERIFIED=ON
         -DEGG_REQUIRE_FASTER=ON "-DEGG_CACHE_DIR=${_d}/cache")
  execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE _smi OUTPUT_VARIABLE _gpus ERROR_QUIET)
  run(_out _rc "${NINJA}" -C "${_d}/build")
  if(_smi EQUAL 0 AND _gpus MATCHES "GPU [0-9]")
    if(NOT _rc EQUAL 0)
      fail("EGG_REQUIRE_VERIFIED=ON on a GPU machine: the build failed")
    endif()
  else()
    if(_rc EQUAL 0)
      fail("EGG_REQUIRE_VERIFIED=ON without a GPU: the build succeeded; it must stop")
    endif()
    expect_match("${_out}" "--require-verified" "the generator is asked to require verification")
    expect_match("${_out}" "--require-faster" "the generator is asked to require a faster kernel")
    expect_match("${_out}" "egg: error: [^\n]*hardswish_scale\\.py[^\n]*not verified" "the message")
    expect_match("${_out}" "EGG_REQUIRE_VERIFIED" "the message says how to turn it off")
    files_under("${_d}/build/egg/hardswish_scale" _left)
    if(_left)
      fail("files left in the build tree after a refused generation: ${_left}")
    endif()
  endif()
  # EGG_LIVE_PROGRESS: off, the generation runs beside other jobs (Ninja prints its lines when it
  # ends); on, in Ninja's console pool, so its progress lines reach the build log as they come.
  set(_gen_rule "DESC = EGG: generating kernel hardswish_scale[^\n]*\n([^\n]*\n)*  restat")
  file(READ "${_d}/build/build.ninja" _ninja)
  string(REGEX MATCH "${_gen_rule}" _rule "${_ninja}")
  if(NOT _rule)
    fail("build.ninja has no generation rule for hardswish_scale")
  endif()
  expect_no_match("${_rule}" "pool = console" "EGG_LIVE_PROGRESS=OFF keeps generations parallel")
  run_ok(_out "${CMAKE_COMMAND}" -S "${_d}/src" -B "${_d}/build" -DEGG_LIVE_PROGRESS=ON)
  file(READ "${_d}/build/build.ninja" _ninja)
  string(REGEX MATCH "${_gen_rule}" _rule "${_ninja}")
  expect_match("${_rule}" "pool = console" "EGG_LIVE_PROGRESS=ON puts the generation in the console pool")

# ---------------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "bad_configure")
  # One project, one target per bad op; each test builds one target with its own EGG cache.
  set(_d "${WORK}/bad")
  file(REMOVE_RECURSE "${_d}")
  file(MAKE_DIRECTORY "${_d}/src/ops")
  file(WRITE "${_d}/src/main.cpp" "int main() { return 0; }\n")
  # Line 6 has the error in each op.
  file(WRITE "${_d}/src/ops/syntax_error.py" [=[
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) +* 2

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
]=])
  file(WRITE "${_d}/src/ops/missing_get_inputs.py" [=[
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)

def get_init_inputs():
    return []
]=])
  file(WRITE "${_d}/src/ops/unsupported_op.py" [=[
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.lgamma(torch.relu(x))

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
]=])
  file(WRITE "${_d}/src/ops/non_tensor_output.py" [=[
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x), 3

def get_inputs():
    return [torch.randn(64, 64)]

def get_init_inputs():
    return []
]=])
  set(_cmake "cmake_minimum_required(VERSION 3.25)\nproject(bad_inputs LANGUAGES CXX CUDA)\n")
  string(APPEND _cmake "find_package(EGG REQUIRED)\n")
  foreach(_case syntax_error missing_get_inputs unsupported_op non_tensor_output)
    string(APPEND _cmake "add_executable(${_case} main.cpp)\n")
    string(APPEND _cmake "egg_kernel(${_case} ops/${_case}.py ARCH ${ARCH})\n")
  endforeach()
  file(WRITE "${_d}/src/CMakeLists.txt" "${_cmake}")
  # No EGG_CACHE_DIR here: each test sets its own through the environment.
  run_ok(_out "${CMAKE_COMMAND}" -S "${_d}/src" -B "${_d}/build" ${COMMON_ARGS}
         "-DEGG_DIR=${EGG_BUILD_DIR}")

# ---------------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "bad_build")
  set(_d "${WORK}/bad")
  set(_cache "${_d}/cache-${CASE}")
  file(REMOVE_RECURSE "${_cache}" "${_d}/build/egg/${CASE}")
  set(_op "${_d}/src/ops/${CASE}.py")
  if(CASE STREQUAL "syntax_error")
    set(_line 6)
    set(_what "syntax")
  elseif(CASE STREQUAL "missing_get_inputs")
    set(_line "")
    set(_what "get_inputs")
  elseif(CASE STREQUAL "unsupported_op")
    set(_line 6)
    set(_what "lgamma")
  elseif(CASE STREQUAL "non_tensor_output")
    set(_line 6)
    set(_what "output")
  else()
    fail("unknown CASE '${CASE}'")
  endif()
  run(_out _rc "${CMAKE_COMMAND}" -E env "EGG_CACHE_DIR=${_cache}" "${NINJA}" -C "${_d}/build" "${CASE}")
  if(_rc EQUAL 0)
    fail("building ${CASE} succeeded; expected egg-gen to stop the build")
  endif()
  expect_match("${_out}" "FAILED: [^\n]*egg/${CASE}/${CASE}\\.cu" "the generator step fails")
  expect_match("${_out}" "egg:" "egg-gen diagnostics have the egg: prefix")
  expect_match("${_out}" "${CASE}\\.py" "the message names the file")
  if(_line)
    expect_match("${_out}" "${CASE}\\.py[^\n]*[: ]${_line}([^0-9]|$)|line ${_line}([^0-9]|$)"
                 "the message names the line")
  endif()
  expect_match("${_out}" "${_what}" "the message names the op")
  files_under("${_d}/build/egg/${CASE}" _left)
  if(_left)
    fail("files left in the build tree after a failed generation: ${_left}")
  endif()
  files_under("${_cache}" _left)
  if(_left)
    fail("files left in the cache after a failed generation: ${_left}")
  endif()
  if(EXISTS "${_d}/build/${CASE}")
    fail("the target ${CASE} was linked despite the failed generation")
  endif()

else()
  fail("unknown STEP '${STEP}'")
endif()
