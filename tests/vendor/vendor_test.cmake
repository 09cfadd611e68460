# Vendoring end to end (egg_kernel VENDOR_DIR): the update target writes the checked-in copy; "use"
# mode compiles it with no generation and no Python; "check" mode passes while the copy is current
# and fails with a diff and the update command once it is edited; an incomplete copy is a clear
# configure error. Variables: EGG_BUILD_DIR, NINJA, NVCC, PYTHON, WORK.
function(run outvar rcvar)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${outvar} "${out}${err}" PARENT_SCOPE)
  set(${rcvar} "${rc}" PARENT_SCOPE)
endfunction()
function(must_pass)
  run(out rc ${ARGN})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAIL: ${ARGN}\n${out}")
  endif()
  set(OUT "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK}")
file(WRITE "${WORK}/src/ops/relu_twice.py" [=[
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2.0

def get_inputs():
    return [torch.randn(1024, 256)]

def get_init_inputs():
    return []
]=])
file(WRITE "${WORK}/src/main.cpp" [=[
#include <egg/relu_twice.h>
int main() { return egg::relu_twice::kOut0Numel == 1024 * 256 ? 0 : 1; }
]=])
file(WRITE "${WORK}/src/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.25)
project(vendored LANGUAGES CXX CUDA)
find_package(EGG REQUIRED)
add_executable(app main.cpp)
egg_kernel(app ops/relu_twice.py ARCH sm_90 VENDOR_DIR vendor)
]=])
set(common -G Ninja -DCMAKE_MAKE_PROGRAM=${NINJA} -DCMAKE_CUDA_COMPILER=${NVCC} -DEGG_DIR=${EGG_BUILD_DIR}
    -DEGG_CACHE_DIR=${WORK}/cache)
set(vendored "${WORK}/src/vendor/relu_twice")

# An absent copy in "use" mode: a configure error that says how to make it.
run(out rc "${CMAKE_COMMAND}" -S "${WORK}/src" -B "${WORK}/use0" ${common} -DEGG_VENDOR_MODE=use)
if(rc EQUAL 0 OR NOT out MATCHES "vendored kernel is[ \n]+incomplete" OR NOT out MATCHES "egg_vendor_update_relu_twice")
  message(FATAL_ERROR "FAIL: a missing vendored kernel was not a clear configure error:\n${out}")
endif()

# Check mode, then the update target writes the copy.
must_pass("${CMAKE_COMMAND}" -S "${WORK}/src" -B "${WORK}/check" ${common} -DEGG_VENDOR_MODE=check
          -DEGG_PYTHON=${PYTHON})
must_pass("${NINJA}" -C "${WORK}/check" egg_vendor_update)
foreach(f relu_twice.cu include/egg/relu_twice.h manifest.json)
  if(NOT EXISTS "${vendored}/${f}")
    message(FATAL_ERROR "FAIL: egg_vendor_update did not write ${vendored}/${f}")
  endif()
endforeach()
if(EXISTS "${vendored}/relu_twice.d")
  message(FATAL_ERROR "FAIL: the depfile was vendored")
endif()

# Use mode: compiles the copy; no generator runs, no Python is needed.
must_pass("${CMAKE_COMMAND}" -S "${WORK}/src" -B "${WORK}/use" ${common} -DEGG_VENDOR_MODE=use
          -DEGG_PYTHON=/nonexistent/python3)
must_pass("${NINJA}" -C "${WORK}/use" -v app)
if(OUT MATCHES "egg-gen" OR NOT OUT MATCHES "vendor/relu_twice/relu_twice.cu")
  message(FATAL_ERROR "FAIL: use mode generated instead of compiling the vendored kernel:\n${OUT}")
endif()

# Check mode passes while the copy is current...
must_pass("${NINJA}" -C "${WORK}/check" app)
# ...and fails, naming the update command, once it is edited.
file(APPEND "${vendored}/relu_twice.cu" "// a hand edit\n")
run(out rc "${NINJA}" -C "${WORK}/check" app)
if(rc EQUAL 0 OR NOT out MATCHES "differs" OR NOT out MATCHES "a hand edit"
   OR NOT out MATCHES "egg_vendor_update_relu_twice")
  message(FATAL_ERROR "FAIL: check mode did not catch the edited copy:\n${out}")
endif()
message(STATUS "vendoring: update, use, check (current and stale) all behave")
