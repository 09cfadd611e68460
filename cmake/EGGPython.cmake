# egg_find_python(<outvar>)
#
# Finds the Python interpreter that runs EGG's op frontend and checks that it imports torch.
#   - the cache variable EGG_PYTHON (or else the environment variable EGG_PYTHON, which is then
#     written to the cache), when set, names the interpreter (no search);
#   - otherwise find_package(Python3 COMPONENTS Interpreter) picks it (an active virtualenv first).
# On success <outvar> is set to the interpreter's path. A successful check is cached
# (EGG_PYTHON_TORCH_VERSION and an internal key), so a reconfigure does not start Python again;
# a failed check is never cached, so installing torch and reconfiguring is enough.
#
# Used by EGG's own build (cmake/EGGDependencies.cmake) and by EGGConfig.cmake in downstream projects.

include_guard(GLOBAL)
cmake_policy(PUSH)
cmake_policy(VERSION 3.25)

set(EGG_PYTHON "" CACHE FILEPATH
    "Python interpreter (with torch) that runs EGG's op frontend; empty: find Python3")

function(egg_find_python outvar)
  set(_from_env OFF)
  if(NOT EGG_PYTHON AND NOT "$ENV{EGG_PYTHON}" STREQUAL "")
    set(EGG_PYTHON "$ENV{EGG_PYTHON}")  # the environment variable, when the cache one is empty
    set(_from_env ON)
  endif()
  if(EGG_PYTHON)
    set(_py "${EGG_PYTHON}")
    if(NOT IS_ABSOLUTE "${_py}")
      find_program(_egg_py_abs NAMES "${_py}" NO_CACHE)
      if(_egg_py_abs)
        set(_py "${_egg_py_abs}")
      endif()
    endif()
    if(NOT EXISTS "${_py}")
      message(FATAL_ERROR
        "EGG: EGG_PYTHON is set to '${EGG_PYTHON}', which does not exist.\n"
        "Set -DEGG_PYTHON=/path/to/python (a Python 3 with torch installed), or leave it empty "
        "to let CMake find Python3.")
    endif()
  else()
    find_package(Python3 COMPONENTS Interpreter QUIET)
    if(NOT Python3_Interpreter_FOUND)
      message(FATAL_ERROR
        "EGG: no Python 3 interpreter found. EGG reads op.py files with Python and PyTorch.\n"
        "Install Python 3 and torch (`pip install torch==2.11.0`), or point EGG at an interpreter "
        "that has torch with -DEGG_PYTHON=/path/to/python.")
    endif()
    set(_py "${Python3_EXECUTABLE}")
  endif()

  # The cached check is keyed by the interpreter path and its modification time.
  file(TIMESTAMP "${_py}" _py_stamp "%Y%m%dT%H%M%S" UTC)
  set(_key "${_py}|${_py_stamp}")
  if(NOT "${_EGG_PYTHON_CHECKED}" STREQUAL "${_key}")
    execute_process(
      COMMAND "${_py}" -c "import sys, torch; sys.stdout.write(torch.__version__ + '\\n' + sys.executable)"
      RESULT_VARIABLE _rc
      OUTPUT_VARIABLE _ver
      ERROR_VARIABLE _err
      TIMEOUT 300)
    if(NOT _rc EQUAL 0)
      string(STRIP "${_err}" _err)
      string(REGEX REPLACE "^.*\n" "" _last "${_err}")
      message(FATAL_ERROR
        "EGG: the Python interpreter ${_py} cannot import torch (${_last}).\n"
        "EGG reads op.py files with PyTorch. Either install torch into that interpreter:\n"
        "    ${_py} -m pip install torch==2.11.0\n"
        "or point EGG at an interpreter that has it: -DEGG_PYTHON=/path/to/python")
    endif()
    # Output: the torch version, then the interpreter's real path (no pyenv shim or symlink
    # chain to resolve on every generation). An explicit EGG_PYTHON is kept as given.
    string(REPLACE "\n" ";" _lines "${_ver}")
    list(GET _lines 0 _ver)
    list(LENGTH _lines _n)
    set(_real "${_py}")
    if(NOT EGG_PYTHON AND _n GREATER 1)
      list(GET _lines 1 _real)
      if(NOT EXISTS "${_real}")
        set(_real "${_py}")
      endif()
    endif()
    set(EGG_PYTHON_TORCH_VERSION "${_ver}" CACHE INTERNAL "torch version of EGG's Python")
    set(_EGG_PYTHON_REAL "${_real}" CACHE INTERNAL "EGG's Python interpreter")
    set(_EGG_PYTHON_CHECKED "${_key}" CACHE INTERNAL "EGG's Python interpreter check")
    if(NOT _ver MATCHES "^2\\.11\\.")
      message(STATUS "EGG: Python ${_real} has torch ${_ver} (EGG is tested with torch 2.11.0)")
    else()
      message(STATUS "EGG: Python ${_real} (torch ${_ver})")
    endif()
  endif()
  if(_from_env)
    # Remembered in the cache: a reconfigure that Ninja starts by itself after a CMakeLists.txt
    # changes (outside tools/setup.sh, without the environment variable) uses the same Python.
    set_property(CACHE EGG_PYTHON PROPERTY VALUE "${EGG_PYTHON}")
  endif()
  set(${outvar} "${_EGG_PYTHON_REAL}" PARENT_SCOPE)
endfunction()

cmake_policy(POP)
